// The statistics --kernel auto's rule reads (count/auto.py), in one pass over the row pointers:
// stats[0] += sum over local u of C(d+(u), 2), the wedges; stats[1] = max d+(u); stats[2] = the
// local edges (rows start at 0). One launch and one copy back, where whole-array steps would
// each launch and allocate: on a grid the rule must cost a fraction of forward's 0.2 ms count.
template <typename I>
__global__ void __launch_bounds__(256) degree_stats(const I* __restrict__ rowptr, i64 n_local, u64* stats) {
    u64 wedges = 0, longest = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) stats[2] = (u64)rowptr[n_local];
    for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < n_local; u += (i64)gridDim.x * blockDim.x) {
        const u64 d = (u64)(rowptr[u + 1] - rowptr[u]);
        wedges += d & 1 ? d * ((d - 1) / 2) : d / 2 * (d - 1);  // no overflow of d (d - 1)
        longest = max(longest, d);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        longest = max(longest, __shfl_down_sync(0xffffffffu, longest, offset));
    if ((threadIdx.x & 31) == 0 && longest) atomicMax(stats + 1, longest);
    block_add(wedges, stats);
}
