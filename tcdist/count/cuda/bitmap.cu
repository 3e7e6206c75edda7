// Bitmap (the L^T L / bitmap approach): a block takes local vertices u in turn, sets the bits of
// N+(u) in a bitmap of its own (global memory), then its warps take the v of N+(u) and their
// lanes test every w of N+(v) against the bitmap; the words it set are cleared before the next u
// (they hold no other row's bits). A triangle u < v < w is found once, from u.
//
// A bitmap is a window of `words` x 32 ids from a base, not one bit per vertex, so that its
// memory is bounded (a budget: issue 8). The first window starts at N+(u)'s least id, below which
// no w can match (a lane passes over such w: only a proxy's row holds ids below its own, local
// ones, registry.py); a w past the window ends its lane's walk of N+(v) (rows are sorted). Where
// N+(u) spans more ids than a window holds, the block goes on with a window from the least id not
// yet covered, and walks every v of N+(u) again from the first w at or past the base (a binary
// search of N+(v) where its first w lies below it), but for a local v past the window, whose w
// all lie above v. The first window has no search, and no load that the old kernel did not. On a
// whole graph with ids as degree ranks, where the long rows are the hubs', high and close
// together, a window of n/16 ids adds a search per 200 tests or so (RMAT-20), and one of n none.
//
// WINDOWED is a template argument: with bitmaps of a bit per vertex (window 0) the base is 0 and
// every check of the windows compiles away, which leaves the kernel as it was before windows
// (0.81 s on RMAT-25 on nvidia-h200, where the checks left in cost 1.19 s).
template <typename T, bool WINDOWED>
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
        for (i64 start = begin, stop = end; start < end; start = stop) {
            const i64 base = WINDOWED ? (i64)col[start] : 0;
            if (WINDOWED) {  // stop: the first of N+(u) past the window, found by every thread alike
                i64 hi = end;
                for (stop = (i64)col[end - 1] - base < span ? end : start; stop < hi;) {
                    const i64 mid = (stop + hi) >> 1;
                    if ((i64)col[mid] - base < span) stop = mid + 1; else hi = mid;
                }
            }
            for (i64 e = start + threadIdx.x; e < stop; e += blockDim.x) {
                const i64 x = (i64)col[e] - base;
                atomicOr(bits + (x >> 5), 1u << (x & 31));
            }
            __syncthreads();
            for (i64 e = begin + warp; e < end; e += warps) {
                const i64 v = (i64)col[e];
                if (WINDOWED && v < n_local && v - base >= span) continue;  // a local v: its w lie above it
                i64 f = rowptr[v];
                const i64 row_end = rowptr[v + 1];
                if (WINDOWED && start > begin && f < row_end && (i64)col[f] < base) {
                    for (i64 b = row_end; f < b;) {
                        const i64 mid = (f + b) >> 1;
                        if ((i64)col[mid] < base) f = mid + 1; else b = mid;
                    }
                }
                for (f += lane; f < row_end; f += 32) {
                    const i64 w = (i64)col[f] - base;
                    if (WINDOWED && (u64)w >= (u64)span) {  // past the window, or below it (a proxy's local w)
                        if (w < 0) continue;
                        break;
                    }
                    found += (bits[w >> 5] >> (w & 31)) & 1u;
                }
            }
            __syncthreads();
            for (i64 e = start + threadIdx.x; e < stop; e += blockDim.x) bits[((i64)col[e] - base) >> 5] = 0u;
            __syncthreads();
        }
    }
    block_add(found, total);
}
