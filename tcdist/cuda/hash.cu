// Hash (Skiff-style, first version): the prepare step gives every local vertex u a hash table of
// N+(u) in global memory (open addressing, linear probing, at most half full; -1 is empty),
// filled lock-free with atomicCAS by one thread per edge. The count walks, one warp per local
// edge (u, v), the lanes over N+(v), each looking its w up in u's table. A triangle u < v < w is
// found once, at its edge (u, v). (Skiff's warp-wide buckets and its shared-memory tables for
// small vertices are not here yet.)

// A start slot from the high 32 bits of a 64-bit multiplicative hash: tables of hub vertices are
// far larger than 2^16 slots.
__device__ __forceinline__ unsigned global_slot(long long key, unsigned mask) {
    return (unsigned)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

// The local row u that holds local edge e: rowptr[u] <= e < rowptr[u + 1].
__device__ __forceinline__ i64 row_of_edge(const i64* rowptr, i64 n_local, i64 e) {
    i64 lo = 0, hi = n_local;
    while (hi - lo > 1) {
        const i64 mid = (lo + hi) >> 1;
        if (rowptr[mid] <= e) lo = mid; else hi = mid;
    }
    return lo;
}

template <typename T>
__global__ void __launch_bounds__(256) hash_build(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                  i64 n_local, const i64* __restrict__ table_start, T* tables) {
    const i64 edges = rowptr[n_local];
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < edges; e += (i64)gridDim.x * blockDim.x) {
        const i64 u = row_of_edge(rowptr, n_local, e);
        T* table = tables + table_start[u];
        const unsigned mask = (unsigned)(table_start[u + 1] - table_start[u] - 1);
        const T key = col[e];
        unsigned s = global_slot((long long)key, mask);
        while (shared_cas(table + s, (T)-1, key) != (T)-1) s = (s + 1) & mask;
    }
}

template <typename T>
__global__ void __launch_bounds__(256) hash_count(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                  i64 n_local, const i64* __restrict__ table_start,
                                                  const T* __restrict__ tables, u64* total) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 edges = rowptr[n_local];
    u64 found = 0;
    for (i64 e = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; e < edges; e += warps) {
        const i64 u = row_of_edge(rowptr, n_local, e), v = (i64)col[e];
        const T* table = tables + table_start[u];
        const unsigned mask = (unsigned)(table_start[u + 1] - table_start[u] - 1);
        for (i64 f = rowptr[v] + lane; f < rowptr[v + 1]; f += 32) {
            const T w = col[f];
            for (unsigned s = global_slot((long long)w, mask);; s = (s + 1) & mask) {
                const T at = table[s];
                if (at == w) { ++found; break; }
                if (at == (T)-1) break;
            }
        }
    }
    block_add(found, total);
}
