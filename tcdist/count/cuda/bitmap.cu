// Bitmap (the L^T L / bitmap approach): a block takes local vertices u in turn, sets the bits of
// N+(u) in a bitmap of its own (global memory), then its warps take the v of N+(u) and their
// lanes test every w of N+(v) against the bitmap; the words it set are cleared before the next u
// (they hold no other row's bits). A triangle u < v < w is found once, from u.
//
// A bitmap is a window of `words` x 32 ids from a base, not one bit per vertex, so that its
// memory is bounded (a budget: issue 8). The first window starts at N+(u)'s least id: every w
// tested is above some v of N+(u), so no id below it is ever tested; a w past the window ends its
// lane's walk of N+(v) (rows are sorted). Where N+(u) spans more ids than a window holds, the
// block goes on with a window from the least id not yet covered; a v of an earlier window then
// starts its walk at the window's base (a binary search of N+(v)), a later v is not walked yet.
// On skewed graphs ids are degree ranks, the long rows are the hubs', high and close together,
// so a window of n/16 ids adds a search per 200 tests or so (RMAT-20), and a window of n none.
template <typename T>
__global__ void __launch_bounds__(256) bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                    i64 n_local, unsigned* __restrict__ bitmaps, i64 words,
                                                    u64* total) {
    unsigned* bits = bitmaps + (i64)blockIdx.x * words;
    const i64 span = words * 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u64 found = 0;
    for (i64 u = blockIdx.x; u < n_local; u += gridDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        if (end - begin < 2) continue;  // the same for the whole block
        for (i64 start = begin; start < end;) {
            const i64 base = (i64)col[start], limit = base + span;
            i64 lo = (i64)col[end - 1] < limit ? end : start, hi = end;  // stop: the first of N+(u) past
            while (lo < hi) {                                          // the window, every thread alike
                const i64 mid = (lo + hi) >> 1;
                if ((i64)col[mid] < limit) lo = mid + 1; else hi = mid;
            }
            const i64 stop = lo;
            for (i64 e = start + threadIdx.x; e < stop; e += blockDim.x) {
                const i64 x = (i64)col[e] - base;
                atomicOr(bits + (x >> 5), 1u << (x & 31));
            }
            __syncthreads();
            for (i64 e = begin + warp; e < stop; e += warps) {
                const i64 v = (i64)col[e];
                i64 f = rowptr[v];
                const i64 row_end = rowptr[v + 1];
                if (e < start) {  // v lies below the window: its walk starts at the base
                    i64 a = f, b = row_end;
                    while (a < b) {
                        const i64 mid = (a + b) >> 1;
                        if ((i64)col[mid] < base) a = mid + 1; else b = mid;
                    }
                    f = a;
                }
                for (f += lane; f < row_end; f += 32) {
                    const i64 w = (i64)col[f] - base;
                    if (w >= span) break;
                    found += (bits[w >> 5] >> (w & 31)) & 1u;
                }
            }
            __syncthreads();
            for (i64 e = start + threadIdx.x; e < stop; e += blockDim.x) bits[((i64)col[e] - base) >> 5] = 0u;
            __syncthreads();
            start = stop;
        }
    }
    block_add(found, total);
}
