// LSTC's parts built on the GPU (partition/gpu_parts.py launches them): a warp walks a row of the
// oriented graph (C: its column type) at a time, so each row's edges are read together and the
// part's rows come out in the graph's order. A part is: the vertex flags (Algorithm 1's members,
// Algorithm 2's survivors), each kept row's length, then the kept edges renumbered in place.
// A vertex's flags are one byte: bits of the masks below.

#define LOCAL 1   // in the part's L
#define OUT 2     // in N+(L): a target of a local row
#define MEMBER 4  // in L, N+(L) or N-(L): an end of an induced edge
#define KEEP 8    // a vertex of the part after its pruning
#define MINIMAL 1 // a prune mode whose kept edges are not just those between kept vertices

#define EACH_ROW(v, n) for (i64 v = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; v < (n); \
                            v += ((i64)gridDim.x * blockDim.x) >> 5)

// out[t] = 1 for every target t of a local row; into[v] = 1 for every row v with a local target.
template <typename C>
__global__ void part_marks(const i64* rowptr, const C* col, const bool* local, i64 n, unsigned char* out,
                           unsigned char* into) {
    const int lane = threadIdx.x & 31;
    EACH_ROW(v, n) {
        const bool from_local = local[v];
        bool to_local = false;
        for (i64 e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32) {
            const C t = col[e];
            if (from_local) out[t] = 1;
            to_local |= local[t];
        }
        if (__any_sync(0xffffffffu, to_local) && lane == 0) into[v] = 1;
    }
}

// One level of Algorithm 2's fixpoint as reachability: every member target of a frontier row not
// reached yet is reached and on the next frontier; *changed set where any was.
template <typename C>
__global__ void part_reach(const i64* rowptr, const C* col, const bool* member, const unsigned char* front, i64 n,
                           unsigned char* alive, unsigned char* next, u64* changed) {
    const int lane = threadIdx.x & 31;
    EACH_ROW(v, n) {
        if (!front[v]) continue;
        bool reached = false;
        for (i64 e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32) {
            const C t = col[e];
            if (member[t] && !alive[t]) {
                alive[t] = 1;
                next[t] = 1;
                reached = true;
            }
        }
        if (__any_sync(0xffffffffu, reached) && lane == 0) *changed = 1;
    }
}

__device__ __forceinline__ bool kept_edge(unsigned char from, unsigned char to, int mode) {
    return mode == MINIMAL ? (from & LOCAL) || ((from & OUT) && (to & OUT)) : (from & KEEP) && (to & KEEP);
}

// Of every member row: its induced edges, summed into *induced; of every kept row, its kept edges
// and how many of them end at a local vertex.
template <typename C>
__global__ void part_rows(const i64* rowptr, const C* col, const unsigned char* flags, int mode, i64 n,
                          i64* kept, i64* kept_locals, u64* induced) {
    const int lane = threadIdx.x & 31;
    u64 induced_here = 0;
    EACH_ROW(v, n) {
        const unsigned char from = flags[v];
        if (!(from & MEMBER)) continue;
        i64 edges = 0, locals = 0;
        for (i64 e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32) {
            const unsigned char to = flags[col[e]];
            induced_here += (to & MEMBER) != 0;
            const bool k = kept_edge(from, to, mode);
            edges += k;
            locals += k && (to & LOCAL);
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            edges += __shfl_down_sync(0xffffffffu, edges, offset);
            locals += __shfl_down_sync(0xffffffffu, locals, offset);
        }
        if (lane == 0 && (from & KEEP)) {
            kept[v] = edges;
            kept_locals[v] = locals;
        }
    }
    block_add(induced_here, induced);
}

// Each kept edge's target, renumbered, at its place in the part: its row at part_rowptr[new_id[v]],
// the row's local targets first, then its proxies, each in the graph's order.
template <typename C, typename I>
__global__ void part_place(const i64* rowptr, const C* col, const unsigned char* flags, int mode, i64 n,
                           const I* new_id, const i64* part_rowptr, const i64* kept_locals, I* part_col) {
    const int lane = threadIdx.x & 31;
    const unsigned before = (1u << lane) - 1u;  // the lanes below this one
    EACH_ROW(v, n) {
        const unsigned char from = flags[v];
        if (!(from & KEEP)) continue;
        i64 at_local = part_rowptr[new_id[v]], at_proxy = at_local + kept_locals[v];
        for (i64 start = rowptr[v]; start < rowptr[v + 1]; start += 32) {
            const i64 e = start + lane;
            C t = 0;
            unsigned char to = 0;
            if (e < rowptr[v + 1]) {
                t = col[e];
                to = flags[t];
            }
            const bool k = e < rowptr[v + 1] && kept_edge(from, to, mode);
            const unsigned locals = __ballot_sync(0xffffffffu, k && (to & LOCAL));
            const unsigned proxies = __ballot_sync(0xffffffffu, k && !(to & LOCAL));
            if (k) {
                const i64 at = (to & LOCAL) ? at_local + __popc(locals & before) : at_proxy + __popc(proxies & before);
                part_col[at] = new_id[t];
            }
            at_local += __popc(locals);
            at_proxy += __popc(proxies);
        }
    }
}
