// WETRIC-style (wedge-parallel): every wedge (u; v_i, v_j), i < j, of a local vertex u is one unit
// of work, and a thread takes `spread` consecutive wedges of a static map: wedge_start[u] is the
// prefix sum of C(d+(u), 2) (64-bit, made by the prepare step), so a thread finds its first wedge
// by a binary search over u and an unranking of (i, j), then walks on. A wedge closes when v_j is
// in N+(v_i): ids follow the orientation among a part's local vertices and among its proxies
// (each set in rank order), so only a wedge of a local v_i and a proxy v_j (v_i < n_local <= v_j,
// either direction possible) also looks for v_i in N+(v_j).
__device__ __forceinline__ i64 pairs_before(i64 i, i64 d) { return i * (2 * d - i - 1) / 2; }

template <typename T>
__global__ void __launch_bounds__(256) wetric(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                              const i64* __restrict__ wedge_start, i64 n_local, i64 spread,
                                              u64* total) {
    const i64 wedges = wedge_start[n_local];
    const i64 threads = (i64)gridDim.x * blockDim.x;
    u64 found = 0;
    for (i64 first = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * spread; first < wedges; first += threads * spread) {
        i64 lo = 0, hi = n_local;  // wedge_start[lo] <= first < wedge_start[lo + 1]: u has a wedge
        while (hi - lo > 1) {
            const i64 mid = (lo + hi) >> 1;
            if (wedge_start[mid] <= first) lo = mid; else hi = mid;
        }
        i64 u = lo, d = rowptr[u + 1] - rowptr[u];
        const i64 r = first - wedge_start[u];
        const double q = (double)(2 * d - 1);
        i64 i = (i64)((q - sqrt(q * q - 8.0 * (double)r)) / 2.0);  // then made exact
        if (i < 0) i = 0;
        while (i > 0 && pairs_before(i, d) > r) --i;
        while (pairs_before(i + 1, d) <= r) ++i;
        i64 j = r - pairs_before(i, d) + i + 1;
        const i64 last = first + spread < wedges ? first + spread : wedges;
        for (i64 g = first; g < last; ++g) {
            while (j >= d) {  // the next wedge: the next i, or the next u that has one
                ++i;
                j = i + 1;
                if (j >= d) {
                    do {
                        ++u;
                        d = rowptr[u + 1] - rowptr[u];
                    } while (d < 2);
                    i = 0;
                    j = 1;
                }
            }
            const T x = col[rowptr[u] + i], y = col[rowptr[u] + j];
            found += sorted_contains(col + rowptr[x], (int)(rowptr[x + 1] - rowptr[x]), y) ||
                     ((i64)x < n_local && (i64)y >= n_local &&
                      sorted_contains(col + rowptr[y], (int)(rowptr[y + 1] - rowptr[y]), x));
            ++j;
        }
    }
    block_add(found, total);
}
