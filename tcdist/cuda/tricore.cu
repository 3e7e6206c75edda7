// TRICORE-style (Hu, Liu & Huang, SC 2018, section IV): one warp per local oriented edge (u, v),
// grid-stride. The warp counts |N+(u) ∩ N+(v)|: it caches 32 evenly spaced pivots of the longer
// list in shared memory (the top levels of its binary search tree), and each lane takes elements
// of the shorter list, finds their segment among the pivots, then binary-searches that segment in
// global memory. A triangle u < v < w is found once, at its edge (u, v). Rows are strictly
// increasing, so a pivot k <= x < pivot k + 1 puts x in segment k.
template <typename T>
__global__ void __launch_bounds__(256) tricore(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                               i64 n_local, u64* total) {
    __shared__ T pivots[8][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 local_edges = rowptr[n_local];  // local rows come first
    u64 found = 0;
    for (i64 e = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; e < local_edges; e += warps) {
        i64 lo = 0, hi = n_local;  // the row u holding edge e
        while (hi - lo > 1) {
            const i64 mid = (lo + hi) >> 1;
            if (rowptr[mid] <= e) lo = mid; else hi = mid;
        }
        const i64 u = lo, v = (i64)col[e];
        const T* a = col + rowptr[u];
        const T* b = col + rowptr[v];
        i64 na = rowptr[u + 1] - rowptr[u], nb = rowptr[v + 1] - rowptr[v];
        if (na > nb) {  // a: the shorter list, walked; b: the longer, searched
            const T* t = a; a = b; b = t;
            const i64 n = na; na = nb; nb = n;
        }
        if (na == 0) continue;  // the same for the whole warp
        __syncwarp();
        pivots[warp][lane] = b[(i64)lane * nb / 32];
        __syncwarp();
        for (i64 i = lane; i < na; i += 32) {
            const T x = a[i];
            if (pivots[warp][0] > x) continue;
            int k = 0;
            for (int step = 16; step > 0; step >>= 1)
                if (pivots[warp][k + step] <= x) k += step;
            const i64 start = (i64)k * nb / 32, stop = (i64)(k + 1) * nb / 32;
            found += sorted_contains(b + start, (int)(stop - start), x);
        }
    }
    block_add(found, total);
}
