// Bitmap (the L^T L / bitmap approach): a block takes local vertices u in turn, sets the bits of
// N+(u) in a bitmap of its own (global memory), then its warps take the v of N+(u) and their
// lanes test every w of N+(v) against the bitmap; the words it set are cleared before the next u
// (they hold no other row's bits). A triangle u < v < w is found once, from u.
//
// With HUBS, a bitmap holds a bit for the highest ids only, `words` x 32 of them: those of
// [lo2, n) and of [lo1, hi1) (below the local rows' end, where a part's proxies follow its local
// vertices); an id outside both is looked up in N+(u) by a binary search. Ids follow the
// orientation, which is by degree, and the w that are tested are almost all the highest: on
// RMAT-22, 99.1 % of the tests are of the top n/64 ids. So the bitmaps' memory is bounded (a
// budget: issue 8) at the price of a search per rare w. A block also walks only the v of N+(u)
// in [v_lo, v_hi), the rows that hold columns: in a slice (partition/slices.py) the others are
// empty, and a source row meets them in every slice. Without HUBS (a bit per vertex), the kernel
// compiles as it was before both.
__device__ __forceinline__ i64 hub_bit(i64 x, i64 lo1, i64 hi1, i64 lo2, i64 above) {
    return x >= lo2 ? x - lo2 : (x >= lo1 && x < hi1 ? above + x - lo1 : -1);
}

template <typename T>
__device__ __forceinline__ i64 lower_bound(const T* col, i64 lo, i64 hi, i64 key) {
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if ((i64)col[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

template <typename T, bool HUBS>
__global__ void __launch_bounds__(256) bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                    i64 n_local, unsigned* __restrict__ bitmaps, i64 words,
                                                    i64 lo1, i64 hi1, i64 lo2, i64 v_lo, i64 v_hi, u64* total) {
    unsigned* bits = bitmaps + (i64)blockIdx.x * words;
    const i64 above = (words * 32) - (hi1 - lo1);  // the bits of [lo2, n) come first
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u64 found = 0;
    for (i64 u = blockIdx.x; u < n_local; u += gridDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        if (end - begin < 2) continue;  // the same for the whole block
        i64 first = begin, last = end;  // the v of N+(u) whose rows may hold columns
        if (HUBS) {
            if ((i64)col[begin] < v_lo) first = lower_bound(col, begin, end, v_lo);
            if ((i64)col[end - 1] >= v_hi) last = lower_bound(col, first, end, v_hi);
            if (first == last) continue;
        }
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = HUBS ? hub_bit((i64)col[e], lo1, hi1, lo2, above) : (i64)col[e];
            if (!HUBS || x >= 0) atomicOr(bits + (x >> 5), 1u << (x & 31));
        }
        __syncthreads();
        for (i64 e = first + warp; e < last; e += warps) {
            const i64 v = (i64)col[e];
            for (i64 f = rowptr[v] + lane; f < rowptr[v + 1]; f += 32) {
                const T w = col[f];
                const i64 x = HUBS ? hub_bit((i64)w, lo1, hi1, lo2, above) : (i64)w;
                if (!HUBS || x >= 0) found += (bits[x >> 5] >> (x & 31)) & 1u;
                else found += sorted_contains(col + begin, (int)(end - begin), w);
            }
        }
        __syncthreads();
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = HUBS ? hub_bit((i64)col[e], lo1, hi1, lo2, above) : (i64)col[e];
            if (!HUBS || x >= 0) bits[x >> 5] = 0u;
        }
        __syncthreads();
    }
    block_add(found, total);
}
