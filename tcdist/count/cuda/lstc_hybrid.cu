// tcdist's refinement of LSTC's kernel: the same search (N+(u) in shared memory, elements of
// N+(v) binary-searched in it), with
//  * each N+(v) trimmed to the value range of the tile before it is walked (two binary
//    searches), so later tiles of a long N+(u) do not rescan whole rows;
//  * the threads walking the concatenation of the trimmed rows of up to TILE vertices v
//    (consecutive threads, consecutive elements), so none idles on a short row;
//  * vertices with at most 32 out-neighbours handled one per warp (lstc_warp), the rest one
//    per block (lstc_flat), each over a list of vertices.

template <typename Col, int TILE>
__global__ void __launch_bounds__(TILE) lstc_flat(const i64* __restrict__ rowptr, const Col* __restrict__ col,
                                                 const i64* __restrict__ vertices, i64 count, u64* total) {
    __shared__ Col tile[TILE];
    __shared__ i64 row_at[TILE];
    __shared__ i64 before[TILE];
    __shared__ i64 scan[33];
    u64 found = 0;
    for (i64 index = blockIdx.x; index < count; index += gridDim.x) {
        const i64 u = vertices[index];
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        for (i64 first = begin; first < end; first += TILE) {
            const int len = (int)(end - first < TILE ? end - first : TILE);
            __syncthreads();
            if (threadIdx.x < len) tile[threadIdx.x] = col[first + threadIdx.x];
            __syncthreads();
            const Col lowest = tile[0], highest = tile[len - 1];
            for (i64 chunk = begin; chunk < end; chunk += TILE) {
                const int vs = (int)(end - chunk < TILE ? end - chunk : TILE);
                i64 a = 0, b = 0;
                if (threadIdx.x < vs) {
                    const Col v = col[chunk + threadIdx.x];
                    a = rowptr[v];
                    b = rowptr[v + 1];
                    a = lower_bound(col, a, b, lowest);
                    b = upper_bound(col, a, b, highest);
                }
                i64 walk;
                const i64 offset = block_exclusive_scan(b - a, scan, &walk);  // also fences the last walk
                if (threadIdx.x < vs) {
                    row_at[threadIdx.x] = a;
                    before[threadIdx.x] = offset;
                }
                __syncthreads();
                for (i64 p = threadIdx.x; p < walk; p += TILE) {
                    const int j = segment_of(before, vs, p);
                    found += sorted_contains(tile, len, col[row_at[j] + (p - before[j])]);
                }
            }
        }
    }
    block_add(found, total);
}

template <typename Col>
__global__ void __launch_bounds__(256) lstc_warp(const i64* __restrict__ rowptr, const Col* __restrict__ col,
                                                const i64* __restrict__ vertices, i64 count, u64* total) {
    constexpr int WARPS = 8;
    __shared__ Col tile[WARPS][32];
    __shared__ i64 row_at[WARPS][32];
    __shared__ i64 before[WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u64 found = 0;
    for (i64 index = (i64)blockIdx.x * WARPS + warp; index < count; index += (i64)gridDim.x * WARPS) {
        const i64 u = vertices[index];
        const i64 begin = rowptr[u];
        const int len = (int)(rowptr[u + 1] - begin);  // 2..32
        const Col v = lane < len ? col[begin + lane] : (Col)0;
        tile[warp][lane] = v;
        __syncwarp();
        const Col lowest = tile[warp][0], highest = tile[warp][len - 1];
        i64 a = 0, b = 0;
        if (lane < len) {
            a = lower_bound(col, rowptr[v], rowptr[v + 1], lowest);
            b = upper_bound(col, a, rowptr[v + 1], highest);
        }
        const i64 inclusive = warp_inclusive_scan(b - a);
        const i64 walk = __shfl_sync(0xffffffffu, inclusive, 31);
        row_at[warp][lane] = a;
        before[warp][lane] = inclusive - (b - a);
        __syncwarp();
        for (i64 p = lane; p < walk; p += 32) {
            const int j = segment_of(before[warp], len, p);
            found += sorted_contains(tile[warp], len, col[row_at[warp][j] + (p - before[warp][j])]);
        }
        __syncwarp();
    }
    block_add(found, total);
}
