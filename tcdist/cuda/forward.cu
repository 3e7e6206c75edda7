// Forward (Schank and Wagner's forward algorithm, one thread per local vertex): the thread of u
// takes every v = N+(u)[i] in turn and merges the rest of u's row, N+(u)[i+1..], with N+(v); both
// are sorted, so a common w closes the triangle once, from its lowest vertex u. No prepare step and
// no search for work: for graphs of small out-degrees (grids, meshes, sparse ER), where a block or
// a warp per vertex would idle and a wedge map costs more to build than the count.
// Ids follow the orientation among a part's local vertices and among its proxies, not between the
// two sets: for a local v, a proxy w after it in u's row may hold the edge as w -> v, so v is also
// looked for in N+(w) (never both: an edge has one direction).
template <typename T>
__global__ void __launch_bounds__(256) forward(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                               i64 n_local, u64* total) {
    u64 found = 0;
    for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < n_local; u += (i64)gridDim.x * blockDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        for (i64 i = begin; i + 1 < end; ++i) {
            const T v = col[i];
            i64 a = i + 1, b = rowptr[v];
            const i64 b_end = rowptr[v + 1];
            while (a < end && b < b_end) {
                const T x = col[a], y = col[b];
                found += x == y;
                a += x <= y;
                b += y <= x;
            }
            if ((i64)v < n_local && (i64)col[end - 1] >= n_local) {
                for (i64 w = i + 1; w < end; ++w) {
                    const T p = col[w];
                    if ((i64)p >= n_local)
                        found += sorted_contains(col + rowptr[p], (int)(rowptr[p + 1] - rowptr[p]), v);
                }
            }
        }
    }
    block_add(found, total);
}
