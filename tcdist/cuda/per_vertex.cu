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

// The same credits from a thread per local vertex u, as cuda/forward.cu finds triangles: for
// small out-degrees (grids, sparse ER), where a warp per edge would idle most of its lanes on
// rows of a few entries. Each w common to N+(u)[i+1..] and N+(v) (and each proxy p after a
// local v in u's row with v in N+(p)) closes a triangle; w's credit is an atomic per triangle,
// v's one per v, u's one per thread.
template <typename T>
__global__ void __launch_bounds__(256) forward_per_vertex(const i64* __restrict__ rowptr, const T* __restrict__ col,
                                                          i64 n_local, u64* triangles) {
    for (i64 u = (i64)blockIdx.x * blockDim.x + threadIdx.x; u < n_local; u += (i64)gridDim.x * blockDim.x) {
        const i64 begin = rowptr[u], end = rowptr[u + 1];
        u64 at_u = 0;
        for (i64 i = begin; i + 1 < end; ++i) {
            const T v = col[i];
            u64 at_v = 0;
            i64 a = i + 1, b = rowptr[v];
            const i64 b_end = rowptr[v + 1];
            while (a < end && b < b_end) {
                const T x = col[a], y = col[b];
                if (x == y) {
                    ++at_v;
                    atomicAdd(triangles + x, 1ull);
                }
                a += x <= y;
                b += y <= x;
            }
            if ((i64)v < n_local && (i64)col[end - 1] >= n_local) {
                for (i64 w = i + 1; w < end; ++w) {
                    const T p = col[w];
                    if ((i64)p >= n_local && sorted_contains(col + rowptr[p], (int)(rowptr[p + 1] - rowptr[p]), v)) {
                        ++at_v;
                        atomicAdd(triangles + p, 1ull);
                    }
                }
            }
            if (at_v) atomicAdd(triangles + v, at_v);
            at_u += at_v;
        }
        if (at_u) atomicAdd(triangles + u, at_u);
    }
}
