// Shared device helpers for tcdist's kernels. NVRTC compiles these with the kernel sources
// (joined into one string, so CuPy's compile cache sees every change).
typedef long long i64;
typedef unsigned long long u64;

// Is key in the sorted array a[0, len)? Lower-bound binary search.
template <typename T>
__device__ __forceinline__ int sorted_contains(const T* a, int len, T key) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < len && a[lo] == key;
}

__device__ __forceinline__ u64 warp_sum(u64 x) {
    for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_down_sync(0xffffffffu, x, offset);
    return x;
}

// Add every thread's count to *total with one atomic per block (warp shuffles, then warp 0).
// Every thread of the block must call it.
__device__ __forceinline__ void block_add(u64 mine, u64* total) {
    __shared__ u64 warp_totals[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    mine = warp_sum(mine);
    __syncthreads();
    if (lane == 0) warp_totals[warp] = mine;
    __syncthreads();
    if (warp == 0) {
        mine = lane < (int)((blockDim.x + 31) >> 5) ? warp_totals[lane] : 0ull;
        mine = warp_sum(mine);
        if (lane == 0 && mine) atomicAdd(total, mine);
    }
}

// First index in sorted a[lo, hi) whose value is >= key (global memory).
template <typename T>
__device__ __forceinline__ i64 lower_bound(const T* __restrict__ a, i64 lo, i64 hi, T key) {
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// First index in sorted a[lo, hi) whose value is > key (global memory).
template <typename T>
__device__ __forceinline__ i64 upper_bound(const T* __restrict__ a, i64 lo, i64 hi, T key) {
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (a[mid] <= key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Inclusive prefix sum across a warp.
__device__ __forceinline__ i64 warp_inclusive_scan(i64 x) {
    const int lane = threadIdx.x & 31;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const i64 y = __shfl_up_sync(0xffffffffu, x, offset);
        if (lane >= offset) x += y;
    }
    return x;
}

// Exclusive prefix sum across the block (blockDim.x a multiple of 32); *sum gets the total.
// buffer: 33 shared slots. Every thread of the block must call it.
__device__ __forceinline__ i64 block_exclusive_scan(i64 x, i64* buffer, i64* sum) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const i64 inclusive = warp_inclusive_scan(x);
    __syncthreads();
    if (lane == 31) buffer[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const i64 t = lane < warps ? buffer[lane] : 0;
        const i64 t_inclusive = warp_inclusive_scan(t);
        if (lane < warps) buffer[lane] = t_inclusive - t;
        if (lane == warps - 1) buffer[32] = t_inclusive;
    }
    __syncthreads();
    *sum = buffer[32];
    return buffer[warp] + inclusive - x;
}

// Index j in [0, count) of the last entry with before[j] <= p (before is non-decreasing, before[0] = 0).
__device__ __forceinline__ int segment_of(const i64* before, int count, i64 p) {
    int lo = 0, hi = count - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (before[mid] <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
}
