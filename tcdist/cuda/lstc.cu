// LSTC (Tamboli & Jatala, ICPE 2026), Algorithm 3: one thread block per local vertex u.
// N+(u) is loaded into shared memory a tile of TILE entries at a time (TILE = blockDim.x,
// as in the paper); for every v in N+(u) the block's threads walk N+(v) round-robin
// (consecutive threads, consecutive elements) and binary-search each element in the tile.
// Rows are sorted; ids need not grow along edges (a part lists its locals first).
template <typename Col, int TILE>
__global__ void __launch_bounds__(TILE) lstc_block(const i64* __restrict__ rowptr, const Col* __restrict__ col,
                                                  i64 n_local, u64* total) {
    __shared__ Col tile[TILE];
    u64 found = 0;
    for (i64 u = blockIdx.x; u < n_local; u += gridDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        if (end - begin < 2) continue;  // a triangle needs two out-neighbours; uniform in the block
        for (i64 first = begin; first < end; first += TILE) {
            const int len = (int)(end - first < TILE ? end - first : TILE);
            __syncthreads();  // the previous tile is no longer read
            if (threadIdx.x < len) tile[threadIdx.x] = col[first + threadIdx.x];
            __syncthreads();
            const Col lowest = tile[0], highest = tile[len - 1];
            for (i64 e = begin; e < end; ++e) {
                const Col v = col[e];
                const i64 v_end = rowptr[v + 1];
                for (i64 k = rowptr[v] + threadIdx.x; k < v_end; k += TILE) {
                    const Col w = col[k];
                    if (w >= lowest && w <= highest) found += sorted_contains(tile, len, w);
                }
            }
        }
    }
    block_add(found, total);
}
