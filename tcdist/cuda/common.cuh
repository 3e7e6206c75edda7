// Shared device helpers for tcdist's kernels. NVRTC compiles these with the kernel sources
// (joined into one string, so CuPy's compile cache sees every change).
typedef long long i64;
typedef unsigned long long u64;

// The first index in [lo, hi) of the sorted array a whose element is not below key (hi if none);
// I is the index type (int where rows are short, i64 where they may not be).
template <typename I, typename T, typename K>
__device__ __forceinline__ I lower_bound(const T* a, I lo, I hi, K key) {
    while (lo < hi) {
        const I mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is key in the sorted array a[0, len)?
template <typename T>
__device__ __forceinline__ int sorted_contains(const T* a, int len, T key) {
    const int at = lower_bound(a, 0, len, key);
    return at < len && a[at] == key;
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


// A set of vertex ids in shared memory, open addressing with linear probing; -1 marks empty.
// Ids are >= 0. size is a power of two of at least twice the number of keys.
__device__ __forceinline__ unsigned slot_of(long long key, unsigned mask) {
    return (unsigned)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

__device__ __forceinline__ unsigned slot_of(int key, unsigned mask) {  // 32-bit ids: 32-bit arithmetic
    return (((unsigned)key * 2654435761u) >> 16) & mask;
}

__device__ __forceinline__ int shared_cas(int* at, int expected, int value) { return atomicCAS(at, expected, value); }
__device__ __forceinline__ long long shared_cas(long long* at, long long expected, long long value) {
    return (long long)atomicCAS((unsigned long long*)at, (unsigned long long)expected, (unsigned long long)value);
}

template <typename T>
__device__ __forceinline__ void hash_insert(T* table, unsigned mask, T key) {
    unsigned s = slot_of(key, mask);
    while (shared_cas(table + s, (T)-1, key) != (T)-1) s = (s + 1) & mask;
}

template <typename T>
__device__ __forceinline__ int hash_contains(const T* table, unsigned mask, T key) {
    for (unsigned s = slot_of(key, mask);; s = (s + 1) & mask) {
        const T found = table[s];
        if (found == key) return 1;
        if (found == (T)-1) return 0;
    }
}

// Smallest power of two >= 2 * len (at least 32).
__device__ __forceinline__ unsigned table_size(int len) {
    unsigned size = 32;
    while (size < 2u * (unsigned)len) size <<= 1;
    return size;
}
