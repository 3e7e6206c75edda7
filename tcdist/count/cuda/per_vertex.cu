// Per-vertex triangles: every triangle whose lowest vertex u is local credits u, v and w.
//
// One warp per local oriented edge (u, v), grid-stride. A triangle u < v < w is found at its
// edge (u, v) as w in both N+(u) and N+(v) (all of N+(u): a part numbers its local vertices
// first, so ids do not follow rank and w may sit before v in u's row); the warp walks the
// shorter of the two lists and looks each element up in the other (both sorted). Each lane adds 1 to w for every
// w it finds; the warp's sum goes to u and to v with one atomic each. Counts are exact
// (unsigned 64-bit atomics), whatever order they land in.
template <typename T>
__global__ void lstc_per_vertex(const i64* rowptr, const T* col, i64 n_local, u64* triangles) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 local_edges = rowptr[n_local];  // local rows come first
    for (i64 e = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; e < local_edges; e += warps) {
        i64 lo = 0, hi = n_local;  // the row u that holds edge e: rowptr[u] <= e < rowptr[u + 1]
        while (hi - lo > 1) {
            const i64 mid = (lo + hi) >> 1;
            if (rowptr[mid] <= e) lo = mid; else hi = mid;
        }
        const i64 u = lo, v = (i64)col[e];
        const T* out_u = col + rowptr[u];
        const i64 n_u = rowptr[u + 1] - rowptr[u];
        const T* out_v = col + rowptr[v];
        const i64 n_v = rowptr[v + 1] - rowptr[v];
        const bool walk_u = n_u <= n_v;
        const T* walk = walk_u ? out_u : out_v;
        const T* look = walk_u ? out_v : out_u;
        const i64 n_walk = walk_u ? n_u : n_v, n_look = walk_u ? n_v : n_u;
        u64 found = 0;
        for (i64 i = lane; i < n_walk; i += 32) {
            const T w = walk[i];
            if (sorted_contains(look, (int)n_look, w)) {
                ++found;
                atomicAdd(triangles + w, 1ull);
            }
        }
        found = warp_sum(found);
        if (lane == 0 && found) {
            atomicAdd(triangles + u, found);
            atomicAdd(triangles + v, found);
        }
    }
}
