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
// empty, and a source row meets them in every slice. Without HUBS (a bit per vertex), every
// check of either compiles away.
template <typename T> struct Unsigned;
template <> struct Unsigned<int> { typedef unsigned type; };
template <> struct Unsigned<long long> { typedef unsigned long long type; };

// Whether w is in N+(u), for a w below the hubs' bits: in the range of the local rows' top, by
// its bit, else by a search of N+(u). Rare (a search per 100 tests on RMAT-22 at n/64 bits).
template <typename T, typename U>
__device__ __noinline__ unsigned below_hubs(const unsigned* bits, T w, T lo1, U width1, U above, const T* row, int len) {
    const U x = (U)(w - lo1);
    if (x < width1) return (bits[(above + x) >> 5] >> ((above + x) & 31)) & 1u;
    return sorted_contains(row, len, w);
}

template <typename T>
__device__ __forceinline__ i64 lower_bound(const T* col, i64 lo, i64 hi, i64 key) {
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if ((i64)col[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Ids are compared as T, and their offsets from a range's start as T's unsigned type: an id
// below the start wraps past every width (the loop runs a compare more than without HUBS; the
// first version, in 64 bits with both ranges tested in line, ran 2.1x the instructions).
template <typename T, bool HUBS>
__global__ void __launch_bounds__(256) bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                    i64 n_local, unsigned* __restrict__ bitmaps, i64 words,
                                                    i64 lo1_, i64 hi1_, i64 lo2_, i64 v_lo, i64 v_hi, u64* total) {
    typedef typename Unsigned<T>::type U;
    unsigned* bits = bitmaps + (i64)blockIdx.x * words;
    const T lo1 = (T)lo1_, lo2 = (T)lo2_;
    const U width1 = (U)(hi1_ - lo1_), above = (U)(words * 32 - (hi1_ - lo1_));  // [lo2, n) takes the first bits
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
            const T w = col[e];
            U x = HUBS ? (U)(w - lo2) : (U)w;
            if (HUBS && x >= above) x = (U)(w - lo1) < width1 ? above + (U)(w - lo1) : ~(U)0;
            if (!HUBS || x != ~(U)0) atomicOr(bits + (x >> 5), 1u << (x & 31));
        }
        __syncthreads();
        for (i64 e = first + warp; e < last; e += warps) {
            const i64 v = (i64)col[e];
            for (i64 f = rowptr[v] + lane; f < rowptr[v + 1]; f += 32) {
                const T w = col[f];
                const U x = HUBS ? (U)(w - lo2) : (U)w;
                if (!HUBS || x < above) found += (bits[x >> 5] >> (x & 31)) & 1u;
                else found += below_hubs(bits, w, lo1, width1, above, col + begin, (int)(end - begin));
            }
        }
        __syncthreads();
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const T w = col[e];
            U x = HUBS ? (U)(w - lo2) : (U)w;
            if (HUBS && x >= above) x = (U)(w - lo1) < width1 ? above + (U)(w - lo1) : ~(U)0;
            if (!HUBS || x != ~(U)0) bits[x >> 5] = 0u;
        }
        __syncthreads();
    }
    block_add(found, total);
}
