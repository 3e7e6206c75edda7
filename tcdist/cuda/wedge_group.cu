// Wedge groups: G lanes of a warp per local vertex u walk the paths u -> v -> w of N+(u) (here
// "wedges": d+(v) of them for each v, some 150 per vertex on ER of mean degree 25, not the
// rule's C(d+(u), 2)), all flattened into one index range, so the lanes read consecutive
// entries of N+(v) (the forward kernel's thread reads a row alone, a sector per step), and look
// each w up in N+(u), held in shared memory when it fits. For even out-degrees too large for a
// thread per vertex to stay busy and too small for a block per vertex (ER: d+ about 12).
// Every w is looked up in the whole of N+(u), not only after v: an edge has one direction, so of
// a triangle's two paths from u exactly one is stored, even between a local vertex and a proxy
// (whose ids do not follow the orientation across the two sets).
// A row of more than ROW entries is taken ROW v's at a time, w looked up in global memory.
// At G = 8 a block's shared memory is 21 KB (int ids), but 40 registers a thread hold an SM to
// 6 blocks of 256 threads (Nsight Compute on nvidia-h200: 75 % occupancy).
constexpr int ROW = 32;

template <typename T>
__device__ __forceinline__ int row_contains(const T* shared_row, const T* global_row, int len, T w) {
    return len <= ROW ? sorted_contains(shared_row, len, w) : sorted_contains(global_row, len, w);
}

template <typename T, int G, int DEPTH>  // DEPTH: the wedges a lane loads at once
__global__ void __launch_bounds__(256) wedge_group(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                   i64 n_local, u64* total) {
    constexpr int GROUPS = 256 / G;
    __shared__ T row[GROUPS][ROW];           // N+(u), or ROW of its v's at a time
    __shared__ i64 start[GROUPS][ROW];       // rowptr[v] of each v
    __shared__ i64 before[GROUPS][ROW + 1];  // wedges of the v's before each (a prefix sum of d+(v))
    const int lane = threadIdx.x % G, group = threadIdx.x / G;
    const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << (threadIdx.x % 32 / G * G);
    T* my_row = row[group];
    i64* my_start = start[group];
    i64* my_before = before[group];
    u64 found = 0;
    for (i64 u = (i64)blockIdx.x * GROUPS + group; u < n_local; u += (i64)gridDim.x * GROUPS) {
        const i64 begin = rowptr[u];
        const int len = (int)(rowptr[u + 1] - begin);
        for (int first = 0; first < len; first += ROW) {
            const int chunk = min(ROW, len - first);
            i64 carry = 0;
            if (lane == 0) my_before[0] = 0;
            for (int base = 0; base < chunk; base += G) {
                const int i = base + lane;
                i64 wedges = 0;
                if (i < chunk) {
                    const T v = col[begin + first + i];
                    const i64 s = rowptr[v];
                    my_row[i] = v;
                    my_start[i] = s;
                    wedges = rowptr[v + 1] - s;
                }
                for (int offset = 1; offset < G; offset <<= 1) {  // inclusive scan across the group
                    const i64 x = __shfl_up_sync(mask, wedges, offset, G);
                    if (lane >= offset) wedges += x;
                }
                if (i < chunk) my_before[i + 1] = carry + wedges;
                carry += __shfl_sync(mask, wedges, G - 1, G);
            }
            __syncwarp(mask);
            int j = 0;  // the v of wedge k: k only grows, so j only moves forward
            for (i64 k0 = lane; k0 < carry; k0 += DEPTH * G) {
                T w[DEPTH];  // DEPTH independent loads in flight before any lookup waits on one
#pragma unroll
                for (int t = 0; t < DEPTH; ++t) {
                    const i64 k = k0 + (i64)t * G;
                    w[t] = (T)-1;
                    if (k < carry) {
                        while (my_before[j + 1] <= k) ++j;
                        w[t] = col[my_start[j] + (k - my_before[j])];
                    }
                }
#pragma unroll
                for (int t = 0; t < DEPTH; ++t)
                    if (w[t] >= 0) found += row_contains(my_row, col + begin, len, w[t]);
            }
            __syncwarp(mask);
        }
    }
    block_add(found, total);
}
