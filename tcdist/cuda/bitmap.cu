// Bitmap (the L^T L / bitmap approach): a block takes local vertices u in turn, sets the bits of
// N+(u) in a bitmap of its own (global memory), then its warps take the v of N+(u) and their
// lanes test every w of N+(v) against the bitmap; the words it set are cleared before the next u
// (they hold no other row's bits). A triangle u < v < w is found once, from u.
//
// With HUBS, a bitmap holds a bit for the highest ids only: those of [lo2, n) in its first
// top_words words, and those of [lo1, hi1) (the top of a part's local ids, which its proxies
// follow) in the words after; an id outside both is looked up in N+(u) by a binary search. Ids
// follow the orientation, which is by degree, and the w that are tested are almost all the
// highest: on RMAT-22, 99.1 % of the tests are of the top n/64 ids. So the bitmaps' memory is
// bounded (a budget: issue 8). A warp finds where N+(v) reaches lo2 (once per v, a search where
// its first id lies below), tests the ids below one by one, and the rest in the loop of the
// kernel without HUBS, through a pointer shifted by lo2 / 32 words (lo2 and lo1 are multiples of
// 32): a version that mapped every w to its bit ran 2.1x the instructions (ncu, RMAT-22). A block
// also walks only the v of N+(u) in [v_lo, v_hi), the rows that hold columns: in a slice
// (partition/slices.py) the others are empty, and a source row meets them in every slice.
// Without HUBS (a bit per vertex), every check of either compiles away.
//
// With SHARED (and HUBS), the top_words words of [lo2, n) lie in the block's shared memory, zeroed
// as it starts, and the block's bitmap in global memory holds only [lo1, hi1), below lo2: nearly
// every test is of the highest ids, and shared memory answers it at a fraction of L2's latency.
template <typename T, bool HUBS, bool SHARED>
__global__ void __launch_bounds__(256) bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                    i64 n_local, unsigned* __restrict__ bitmaps, i64 words,
                                                    i64 lo1, i64 hi1, i64 lo2, i64 top_words, i64 v_lo, i64 v_hi,
                                                    u64* total) {
    extern __shared__ unsigned shared_words[];
    unsigned* own = bitmaps + (i64)blockIdx.x * words;
    unsigned* top = (SHARED ? shared_words : own) - (HUBS ? lo2 >> 5 : 0);  // id w's word: top[w >> 5]
    unsigned* low = (SHARED ? own : own + top_words) - (lo1 >> 5);          // [lo1, hi1): low[w >> 5]
    if (SHARED) {
        for (i64 i = threadIdx.x; i < top_words; i += blockDim.x) shared_words[i] = 0u;
        __syncthreads();
    }
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
            const i64 x = (i64)col[e];
            if (!HUBS || x >= lo2) atomicOr(top + (x >> 5), 1u << (x & 31));
            else if (x >= lo1 && x < hi1) atomicOr(low + (x >> 5), 1u << (x & 31));
        }
        __syncthreads();
        for (i64 e = first + warp; e < last; e += warps) {
            const i64 v = (i64)col[e];
            i64 f = rowptr[v];
            const i64 row_end = rowptr[v + 1];
            if (HUBS && f < row_end && (i64)col[f] < lo2) {
                const i64 split = lower_bound(col, f, row_end, lo2);
                for (i64 g = f + lane; g < split; g += 32) {  // below the hubs: rare
                    const i64 w = (i64)col[g];
                    found += w >= lo1 && w < hi1 ? (low[w >> 5] >> (w & 31)) & 1u
                                                 : sorted_contains(col + begin, (int)(end - begin), col[g]);
                }
                f = split;
            }
            for (f += lane; f < row_end; f += 32) {
                const i64 w = (i64)col[f];
                found += (top[w >> 5] >> (w & 31)) & 1u;
            }
        }
        __syncthreads();
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = (i64)col[e];
            if (!HUBS || x >= lo2) top[x >> 5] = 0u;
            else if (x >= lo1 && x < hi1) low[x >> 5] = 0u;
        }
        __syncthreads();
    }
    block_add(found, total);
}
