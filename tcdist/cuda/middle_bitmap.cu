// Middle bitmap: each triangle u -> v, u -> w, v -> w found from its middle vertex v. The local
// rows' edges u -> v are listed by their head v (middle_in_edges, counted then listed: each as the
// span of u's row after v, or all of it where v is a proxy whose edges lead back to the local
// rows, as count/cpu.py's in_edges lists them); a block sets the bits of N+(v) in its bitmap and
// its warps test every w of the spans of v's in-edges against it. A triangle's wedge u -> v,
// u -> w is tested once: the work is the wedges of the local rows, not the bitmap kernel's
// sum over edges u -> v of d+(v) (3.6 times fewer on RMAT-20). An edge into a v with no edge of
// its own, or whose span is empty, is not listed. A v's in-edges are cut into tasks of at most
// `chunk`, so that a hub's (tens of thousands on RMAT) are spread over blocks.
//
// With SHARED, the words of the ids [lo2, n) lie in the block's shared memory (top_words of
// them, zeroed as it starts), and those below in its bitmap in global memory: the tested w are
// almost all of the highest ids, and shared memory answers them at a fraction of L2's latency.

// Whether an edge of row u into v is listed: v has an edge, and the span is not empty.
template <typename T>
__device__ __forceinline__ bool middle_listed(const i64* rowptr, const T* col, i64 n_local, i64 e, i64 end, i64 v,
                                              bool& back) {
    const i64 v_begin = rowptr[v], v_end = rowptr[v + 1];
    back = v >= n_local && v_begin < v_end && (i64)col[v_begin] < n_local;  // a proxy whose edges lead back
    return v_begin < v_end && (back || e + 1 < end);
}

// The listed edges by head, a warp per local row. Without LIST, at[v + 1] += the edges into v;
// with, at[v] (in_ptr[v] on entry) is v's next free place, and each edge's span col[first, stop)
// of its tail's row is written there.
template <typename T, typename S, bool LIST>
__global__ void middle_in_edges(const i64* __restrict__ rowptr, const T* __restrict__ col, i64 n_local,
                                unsigned long long* __restrict__ at, S* __restrict__ first, S* __restrict__ stop) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 u = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; u < n_local; u += warps) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        for (i64 e = begin + lane; e < end; e += 32) {
            const i64 v = (i64)col[e];
            bool back;
            if (!middle_listed(rowptr, col, n_local, e, end, v, back)) continue;
            if (!LIST) {
                atomicAdd(at + v + 1, 1ull);
            } else {
                const i64 i = (i64)atomicAdd(at + v, 1ull);
                first[i] = (S)(back ? begin : e + 1);
                stop[i] = (S)end;
            }
        }
    }
}

template <typename T, typename S, bool SHARED>
__global__ void __launch_bounds__(256) middle_bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                           const i64* __restrict__ in_ptr,
                                                           const S* __restrict__ first, const S* __restrict__ stop,
                                                           const i64* __restrict__ task_ptr,
                                                           const i64* __restrict__ task_v, i64 tasks,
                                                           i64 chunk, unsigned* __restrict__ bitmaps, i64 words,
                                                           i64 lo2, i64 top_words, u64* total) {
    extern __shared__ unsigned shared_words[];
    unsigned* low = bitmaps + (i64)blockIdx.x * words;  // without SHARED every id's word, low[w >> 5]; with, below lo2
    unsigned* top = shared_words - (lo2 >> 5);          // with SHARED, the word of an id from lo2 on: top[w >> 5]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (SHARED) {
        for (i64 i = threadIdx.x; i < top_words; i += blockDim.x) shared_words[i] = 0u;
        __syncthreads();
    }
    u64 found = 0;
    for (i64 t = blockIdx.x; t < tasks; t += gridDim.x) {
        const i64 v = task_v[t];
        const i64 lo = in_ptr[v] + (t - task_ptr[v]) * chunk, hi = min(lo + chunk, in_ptr[v + 1]);
        const i64 begin = rowptr[v], end = rowptr[v + 1];
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = (i64)col[e];
            if (SHARED && x >= lo2) atomicOr(top + (x >> 5), 1u << (x & 31));
            else atomicOr(low + (x >> 5), 1u << (x & 31));
        }
        __syncthreads();
        for (i64 k = lo + warp; k < hi; k += warps) {
            const i64 f_end = (i64)stop[k];
            for (i64 f = (i64)first[k] + lane; f < f_end; f += 32) {
                const i64 w = (i64)col[f];
                found += ((SHARED && w >= lo2 ? top[w >> 5] : low[w >> 5]) >> (w & 31)) & 1u;
            }
        }
        __syncthreads();
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = (i64)col[e];
            if (SHARED && x >= lo2) top[x >> 5] = 0u;
            else low[x >> 5] = 0u;
        }
        __syncthreads();  // (a word may hold bits of the next task's v too)
    }
    block_add(found, total);
}
