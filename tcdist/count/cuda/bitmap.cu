// Bitmap (the L^T L / bitmap approach): a block takes local vertices u in turn, sets the bits of
// N+(u) in a bitmap of its own (global memory, one bit per vertex of the part), then its warps
// take the v of N+(u) and their lanes test every w of N+(v) against the bitmap; the words it set
// are cleared before the next u (they hold no other row's bits). A triangle u < v < w is found
// once, from u.
template <typename T>
__global__ void __launch_bounds__(256) bitmap_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                    i64 n_local, unsigned* __restrict__ bitmaps, i64 words,
                                                    u64* total) {
    unsigned* bits = bitmaps + (i64)blockIdx.x * words;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u64 found = 0;
    for (i64 u = blockIdx.x; u < n_local; u += gridDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        if (end - begin < 2) continue;  // the same for the whole block
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) {
            const i64 x = (i64)col[e];
            atomicOr(bits + (x >> 5), 1u << (x & 31));
        }
        __syncthreads();
        for (i64 e = begin + warp; e < end; e += warps) {
            const i64 v = (i64)col[e];
            for (i64 f = rowptr[v] + lane; f < rowptr[v + 1]; f += 32) {
                const i64 w = (i64)col[f];
                found += (bits[w >> 5] >> (w & 31)) & 1u;
            }
        }
        __syncthreads();
        for (i64 e = begin + threadIdx.x; e < end; e += blockDim.x) bits[(i64)col[e] >> 5] = 0u;
        __syncthreads();
    }
    block_add(found, total);
}
