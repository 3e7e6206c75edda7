// Per-edge triangles: every triangle whose lowest vertex u is local credits its three edges.
//
// One warp per local oriented edge e = (u, v), grid-stride, as lstc_per_vertex: a triangle
// u -> v, u -> w, v -> w is found at e as w in both N+(u) and N+(v). The warp walks the shorter
// row and finds each element in the other by binary search, so each lane knows w's position in
// both rows: it adds 1 to the edges (u, w) and (v, w) there, and the warp's sum goes to e.
// triangles has one entry per CSR position (proxies' rows too: (v, w) lies in v's row).
// Counts are exact (unsigned 64-bit atomics), whatever order they land in.
template <typename T>
__global__ void lstc_per_edge(const i64* rowptr, const T* col, i64 n_local, u64* triangles) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 local_edges = rowptr[n_local];  // local rows come first
    for (i64 e = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; e < local_edges; e += warps) {
        const i64 u = lower_bound(rowptr, (i64)0, n_local + 1, e + 1) - 1;  // rowptr[u] <= e < rowptr[u + 1]
        const i64 v = (i64)col[e];
        const i64 n_u = rowptr[u + 1] - rowptr[u], n_v = rowptr[v + 1] - rowptr[v];
        const bool walk_u = n_u <= n_v;
        const i64 walk = walk_u ? rowptr[u] : rowptr[v], look = walk_u ? rowptr[v] : rowptr[u];
        const i64 n_walk = walk_u ? n_u : n_v, n_look = walk_u ? n_v : n_u;
        u64 found = 0;
        for (i64 i = lane; i < n_walk; i += 32) {
            const T w = col[walk + i];
            const i64 at = lower_bound(col, look, look + n_look, w);
            if (at < look + n_look && col[at] == w) {
                ++found;
                atomicAdd(triangles + walk + i, 1ull);
                atomicAdd(triangles + at, 1ull);
            }
        }
        found = warp_sum(found);
        if (lane == 0 && found) atomicAdd(triangles + e, found);
    }
}
