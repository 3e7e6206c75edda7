// LSTC's parts built on the GPU (partition/gpu_parts.py launches them). The graph's rows come a
// chunk at a time: rows first .. first + rows - 1, row r's edges at col[rowptr[r] - base ..
// rowptr[r + 1] - base) (rowptr: the chunk's rows + 1 offsets into the whole graph, base the
// first of them), so that the same passes read a graph on the GPU (one view of it per chunk) and
// one streamed from host memory. A warp walks a row at a time (C: its column type).
//
// First, for a group of 32 parts (lowest .. lowest + 31: a bit each in a vertex's mask), the
// masks of Algorithm 1 and 2: out (in N+(L)), member (in L, N+(L) or N-(L)) and alive (L and
// what is reachable from it along induced edges). Then a part at a time: its flags (a byte a
// vertex, the masks below), each kept row's length, then the kept edges renumbered in place.

#define LOCAL 1   // in the part's L
#define OUT 2     // in N+(L): a target of a local row
#define MEMBER 4  // in L, N+(L) or N-(L): an end of an induced edge
#define KEEP 8    // a vertex of the part after its pruning
#define MINIMAL 1 // a prune mode whose kept edges are not just those between kept vertices

#define EACH_ROW(r, rows) for (i64 r = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < (rows); \
                               r += ((i64)gridDim.x * blockDim.x) >> 5)
#define EACH(v, n) for (i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x; v < (n); v += (i64)gridDim.x * blockDim.x)

// The bit of v's part in the group's masks (none if its part is not in the group).
template <typename A>
__device__ __forceinline__ unsigned local_bit(const A* part, i64 v, i64 lowest) {
    const i64 p = (i64)part[v] - lowest;
    return p >= 0 && p < 32 ? 1u << p : 0u;
}

// out[t] gets the bit of every local row's part with an edge to t; into[v]: the parts of v's targets.
template <typename C, typename A>
__global__ void part_marks(const i64* rowptr, const C* col, i64 base, i64 first, i64 rows, const A* part, i64 lowest,
                           unsigned* out, unsigned* into) {
    const int lane = threadIdx.x & 31;
    EACH_ROW(r, rows) {
        const i64 v = first + r;
        const unsigned own = local_bit(part, v, lowest);
        unsigned reached = 0;
        for (i64 e = rowptr[r] - base + lane; e < rowptr[r + 1] - base; e += 32) {
            const C t = col[e];
            if (own && !(out[t] & own)) atomicOr(out + t, own);  // written only where missing: hubs are every row's
            reached |= local_bit(part, t, lowest);
        }
        for (int offset = 16; offset > 0; offset >>= 1) reached |= __shfl_xor_sync(0xffffffffu, reached, offset);
        if (lane == 0) into[v] = reached;
    }
}

// Once the marks are made: member = L | N+(L) | N-(L) (in place of into), alive = L | N+(L).
template <typename A>
__global__ void part_members(const A* part, i64 lowest, i64 n, const unsigned* out, unsigned* member,
                             unsigned* alive) {
    EACH(v, n) {
        const unsigned reached = local_bit(part, v, lowest) | out[v];
        member[v] |= reached;
        alive[v] = reached;
    }
}

// A round of Algorithm 2 over a chunk's rows: each row's live bits (live: of the chunk's rows,
// or none: the row's alive mask) pushed into the member targets lacking them; the bits a row of
// this chunk gains are added to gained (of the chunk's rows: the next round's live), and *changed
// set. Targets come after their row (the rank order is topological), so once a chunk's rounds
// end, its rows are final.
template <typename C>
__global__ void part_push(const i64* rowptr, const C* col, i64 base, i64 first, i64 rows, const unsigned* member,
                          const unsigned* live, unsigned* alive, unsigned* gained, u64* changed) {
    const int lane = threadIdx.x & 31;
    EACH_ROW(r, rows) {
        unsigned bits = 0;
        if (lane == 0) bits = live ? live[r] : alive[first + r];
        bits = __shfl_sync(0xffffffffu, bits, 0);  // one read for the warp: another may add to it meanwhile
        if (!bits) continue;
        bool more = false;
        for (i64 e = rowptr[r] - base + lane; e < rowptr[r + 1] - base; e += 32) {
            const C t = col[e];
            const unsigned add = bits & member[t] & ~alive[t];
            if (add) {
                const unsigned now = add & ~atomicOr(alive + t, add);
                if (now && t < first + rows) {
                    atomicOr(gained + (t - first), now);
                    more = true;
                }
            }
        }
        if (__any_sync(0xffffffffu, more) && lane == 0) *changed = 1;
    }
}

// Part lowest + bit's flags out of the group's masks (out: none where its prune mode needs no OUT).
template <typename A>
__global__ void part_flags(const A* part, i64 lowest, int bit, i64 n, const unsigned* out, const unsigned* member,
                           const unsigned* keep, unsigned char* flags) {
    EACH(v, n) {
        const unsigned mask = 1u << bit;
        flags[v] = ((i64)part[v] == lowest + bit ? LOCAL : 0) | (out && (out[v] & mask) ? OUT : 0) |
                   (member[v] & mask ? MEMBER : 0) | (keep[v] & mask ? KEEP : 0);
    }
}

__device__ __forceinline__ bool kept_edge(unsigned char from, unsigned char to, int mode) {
    return mode == MINIMAL ? (from & LOCAL) || ((from & OUT) && (to & OUT)) : (from & KEEP) && (to & KEEP);
}

// Of every member row: its induced edges, summed into *induced; of every kept row, at its new id
// (I: the part's id type), its kept edges and how many of them end at a local vertex.
template <typename C, typename I>
__global__ void part_rows(const i64* rowptr, const C* col, i64 base, i64 first, i64 rows, const unsigned char* flags,
                          int mode, const I* new_id, i64* kept, i64* kept_locals, u64* induced) {
    const int lane = threadIdx.x & 31;
    u64 induced_here = 0;
    EACH_ROW(r, rows) {
        const i64 v = first + r;
        const unsigned char from = flags[v];
        if (!(from & MEMBER)) continue;
        i64 edges = 0, locals = 0;
        for (i64 e = rowptr[r] - base + lane; e < rowptr[r + 1] - base; e += 32) {
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
            kept[new_id[v]] = edges;
            kept_locals[new_id[v]] = locals;
        }
    }
    block_add(induced_here, induced);
}

// Each kept edge's target, renumbered, at its place in the part: its row at part_rowptr[new_id[v]],
// the row's local targets first, then its proxies, each in the graph's order.
template <typename C, typename I>
__global__ void part_place(const i64* rowptr, const C* col, i64 base, i64 first, i64 rows, const unsigned char* flags,
                           int mode, const I* new_id, const i64* part_rowptr, const i64* kept_locals, I* part_col) {
    const int lane = threadIdx.x & 31;
    const unsigned before = (1u << lane) - 1u;  // the lanes below this one
    EACH_ROW(r, rows) {
        const i64 v = first + r;
        const unsigned char from = flags[v];
        if (!(from & KEEP)) continue;
        i64 at_local = part_rowptr[new_id[v]], at_proxy = at_local + kept_locals[new_id[v]];
        const i64 end = rowptr[r + 1] - base;
        for (i64 start = rowptr[r] - base; start < end; start += 32) {
            const i64 e = start + lane;
            C t = 0;
            unsigned char to = 0;
            if (e < end) {
                t = col[e];
                to = flags[t];
            }
            const bool k = e < end && kept_edge(from, to, mode);
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

// The part's work (Part's statistics): the lengths of the rows its local rows' edges reach.
template <typename I>
__global__ void part_probes(const i64* rowptr, const I* col, i64 edges, u64* total) {
    u64 mine = 0;
    EACH(e, edges) mine += rowptr[col[e] + 1] - rowptr[col[e]];
    block_add(mine, total);
}
