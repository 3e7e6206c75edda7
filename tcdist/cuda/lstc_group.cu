// tcdist's refinement of LSTC's kernel: the same block per local vertex u, the same tile of
// N+(u) in shared memory and the same binary search, but the block's threads form groups of
// G; group g takes the v in N+(u) at positions g, g + TILE/G, ... at once (Algorithm 3 walks
// them one after another, so a short N+(v) leaves most of the block idle), and its G lanes
// walk N+(v) round-robin. Rows are sorted, so a lane stops at the first w above the tile.
// vertices: the u to count (nullptr: 0 .. count-1). HASHED: the tile is also put in a
// shared-memory hash set and looked up there (about 1.5 probes) instead of binary-searched.
template <typename Col, int TILE, int G, bool HASHED>
__global__ void __launch_bounds__(TILE) lstc_group(const i64* __restrict__ rowptr, const Col* __restrict__ col,
                                                  const i64* __restrict__ vertices, i64 count, u64* total) {
    constexpr int GROUPS = TILE / G;
    __shared__ Col tile[TILE];
    __shared__ Col table[HASHED ? 2 * TILE : 1];
    const int group = threadIdx.x / G, lane = threadIdx.x % G;
    u64 found = 0;
    for (i64 index = blockIdx.x; index < count; index += gridDim.x) {
        const i64 u = vertices ? vertices[index] : index;
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        if (end - begin < 2) continue;
        for (i64 first = begin; first < end; first += TILE) {
            const int len = (int)(end - first < TILE ? end - first : TILE);
            const unsigned mask = HASHED ? table_size(len) - 1 : 0;
            __syncthreads();
            if (threadIdx.x < len) tile[threadIdx.x] = col[first + threadIdx.x];
            if (HASHED)
                for (unsigned s = threadIdx.x; s <= mask; s += TILE) table[s] = (Col)-1;
            __syncthreads();
            if (HASHED) {
                if (threadIdx.x < len) hash_insert(table, mask, tile[threadIdx.x]);
                __syncthreads();
            }
            const Col lowest = tile[0], highest = tile[len - 1];
            for (i64 e = begin + group; e < end; e += GROUPS) {
                const Col v = col[e];
                const i64 v_begin = rowptr[v];
                const Col* row = col + v_begin;
                const int v_len = (int)(rowptr[v + 1] - v_begin);  // rows are shorter than 2^31
                for (int k = lane; k < v_len; k += G) {
                    const Col w = row[k];
                    if (w > highest) break;
                    if (w >= lowest) found += HASHED ? hash_contains(table, mask, w) : sorted_contains(tile, len, w);
                }
            }
        }
    }
    block_add(found, total);
}

// The same walk for rows of 2..32 out-neighbours, one warp per vertex u (8 per block), its
// N+(u) in a 32-entry tile of the warp's own.
template <typename Col, int G, bool HASHED>
__global__ void __launch_bounds__(256) lstc_group_warp(const i64* __restrict__ rowptr, const Col* __restrict__ col,
                                                      const i64* __restrict__ vertices, i64 count, u64* total) {
    constexpr int WARPS = 8, GROUPS = 32 / G;
    __shared__ Col tiles[WARPS][32];
    __shared__ Col tables[WARPS][HASHED ? 64 : 1];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, group = lane / G, member = lane % G;
    Col* tile = tiles[warp];
    Col* table = tables[warp];
    u64 found = 0;
    for (i64 index = (i64)blockIdx.x * WARPS + warp; index < count; index += (i64)gridDim.x * WARPS) {
        const i64 u = vertices[index];
        const i64 begin = rowptr[u];
        const int len = (int)(rowptr[u + 1] - begin);
        __syncwarp();
        if (lane < len) tile[lane] = col[begin + lane];
        if (HASHED) {
            table[lane] = (Col)-1;
            table[lane + 32] = (Col)-1;
            __syncwarp();
            if (lane < len) hash_insert(table, 63u, tile[lane]);
        }
        __syncwarp();
        const Col lowest = tile[0], highest = tile[len - 1];
        for (int e = group; e < len; e += GROUPS) {
            const Col v = tile[e];
            const i64 v_begin = rowptr[v];
            const Col* row = col + v_begin;
            const int v_len = (int)(rowptr[v + 1] - v_begin);
            for (int k = member; k < v_len; k += G) {
                const Col w = row[k];
                if (w > highest) break;
                if (w >= lowest) found += HASHED ? hash_contains(table, 63u, w) : sorted_contains(tile, len, w);
            }
        }
    }
    block_add(found, total);
}
