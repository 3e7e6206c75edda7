// The whole-array passes of a GPU run before its count (graph/gpu_build.py launches them): the
// build (clean, compact, orient), the structural check of a CSR, the work estimate of its rows, the sums behind the text parse,
// and RMAT's draws (io/generators.py). Each pass does what the NumPy expression named beside it does, as graph/passes.py does
// on the host. One NVRTC program holds them all, so a fresh host compiles them once (where CuPy's
// own array operations would be some fifty programs), and every kernel is extern "C".

#define THREADS 256                    // every launch of this module: block_scan relies on it
#define ITEMS 16                       // a thread's items in a tiled pass
#define TILE (THREADS * ITEMS)         // a block's items in a tiled pass
#define NO_ID 0x7fffffffffffffffll     // sorts after every id: a self loop's ends
#define LOOP_KEY 0xffffffffffffffffull // sorts after every key: a self loop (2 n^2 < 2^64 - 1)

#define EACH(i, count) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (count); \
                            i += (i64)gridDim.x * blockDim.x)

// (the sum of x over the threads of the block before this one, the block's total); every thread
// of the block calls it.
__device__ __forceinline__ i64 block_scan(i64 x, i64& total) {
    __shared__ i64 warps[THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    i64 inclusive = x;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const i64 y = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += y;
    }
    if (lane == 31) warps[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        i64 w = lane < THREADS / 32 ? warps[lane] : 0;
        for (int offset = 1; offset < THREADS / 32; offset <<= 1) {
            const i64 y = __shfl_up_sync(0xffffffffu, w, offset);
            if (lane >= offset) w += y;
        }
        if (lane < THREADS / 32) warps[lane] = w;
    }
    __syncthreads();
    const i64 before = (warp ? warps[warp - 1] : 0) + inclusive - x;
    total = warps[THREADS / 32 - 1];
    __syncthreads();  // warps[] is free for the next call
    return before;
}

// stats[0] += (src == dst).sum(); stats[1] = max(src.max(), dst.max()) (ids are >= 0).
extern "C" __global__ void end_stats(const i64* src, const i64* dst, i64 m, u64* stats) {
    u64 loops = 0, top = 0;
    EACH(i, m) {
        loops += src[i] == dst[i];
        top = max(top, (u64)max(src[i], dst[i]));
    }
    for (int offset = 16; offset > 0; offset >>= 1) top = max(top, __shfl_down_sync(0xffffffffu, top, offset));
    if ((threadIdx.x & 31) == 0 && top) atomicMax(stats + 1, top);
    block_add(loops, stats);
}

// first[0] = min(first[0], the least i whose src[i] or dst[i] lies outside lo..hi).
extern "C" __global__ void first_outside(const i64* src, const i64* dst, i64 m, i64 lo, i64 hi, u64* first) {
    EACH(i, m) {
        if (src[i] < lo || src[i] > hi || dst[i] < lo || dst[i] > hi) {
            atomicMin(first, (u64)i);
            return;  // (a thread's items ascend: its first is its least)
        }
    }
}

// src += by; dst += by.
extern "C" __global__ void shift_ids(i64* src, i64* dst, i64 m, i64 by) {
    EACH(i, m) {
        src[i] += by;
        dst[i] += by;
    }
}

// present[src] = present[dst] = 1, of the edges that are not self loops.
extern "C" __global__ void mark_ends(const i64* src, const i64* dst, i64 m, unsigned char* present) {
    EACH(i, m) if (src[i] != dst[i]) present[src[i]] = present[dst[i]] = 1;
}

// out = concatenate([src, dst]), with NO_ID for both ends of a self loop.
extern "C" __global__ void spread_ends(const i64* src, const i64* dst, i64 m, i64* out) {
    EACH(i, m) {
        const bool loop = src[i] == dst[i];
        out[i] = loop ? NO_ID : src[i];
        out[m + i] = loop ? NO_ID : dst[i];
    }
}

// A compaction keeps item i where (PRESENT) flags[i] is set, writing i; or (DISTINCT) where
// keys[i] >> shift differs from the item before it in sorted keys, writing keys[i] >> shift.
#define PRESENT 0
#define DISTINCT 1

__device__ __forceinline__ bool kept(int mode, const unsigned char* flags, const u64* keys, int shift, i64 i) {
    return mode == PRESENT ? flags[i] != 0 : i == 0 || keys[i] >> shift != keys[i - 1] >> shift;
}

// per_tile[b] = the items tile b keeps; with DISTINCT, distinct[0] += the distinct keys (unshifted).
extern "C" __global__ void kept_per_tile(int mode, const unsigned char* flags, const u64* keys, int shift, i64 count,
                                         i64* per_tile, u64* distinct) {
    const i64 first = (i64)blockIdx.x * TILE + (i64)threadIdx.x * ITEMS;
    i64 mine = 0;
    u64 unshifted = 0;
    for (i64 i = first; i < min(first + ITEMS, count); ++i) {
        mine += kept(mode, flags, keys, shift, i);
        if (mode == DISTINCT) unshifted += i == 0 || keys[i] != keys[i - 1];
    }
    i64 total;
    block_scan(mine, total);
    if (threadIdx.x == 0) per_tile[blockIdx.x] = total;
    if (mode == DISTINCT) block_add(unshifted, distinct);
}

// The kept items written in order from tile_start[b] (the exclusive sum of per_tile); with
// PRESENT and position not null, also position[i] = where item i went.
extern "C" __global__ void compact(int mode, const unsigned char* flags, const u64* keys, int shift, i64 count,
                                   const i64* tile_start, u64* out, i64* position) {
    const i64 first = (i64)blockIdx.x * TILE + (i64)threadIdx.x * ITEMS;
    const i64 last = min(first + ITEMS, count);
    i64 mine = 0;
    for (i64 i = first; i < last; ++i) mine += kept(mode, flags, keys, shift, i);
    i64 total;
    i64 at = tile_start[blockIdx.x] + block_scan(mine, total);
    for (i64 i = first; i < last; ++i) {
        if (!kept(mode, flags, keys, shift, i)) continue;
        if (mode == PRESENT && position) position[i] = at;
        out[at++] = mode == PRESENT ? (u64)i : keys[i] >> shift;
    }
}

// (min(u, v) * n + max(u, v)) * 2 + (u > v) of the compacted ids u, v of each edge: new_id[src]
// (dense ids), else searchsorted(ids, src); LOOP_KEY for a self loop.
extern "C" __global__ void directed_keys(const i64* src, const i64* dst, i64 m, const i64* new_id, const i64* ids,
                                         i64 n, u64* out) {
    EACH(i, m) {
        const i64 a = src[i], b = dst[i];
        if (a == b) {
            out[i] = LOOP_KEY;
            continue;
        }
        const i64 u = new_id ? new_id[a] : lower_bound(ids, (i64)0, n, a);
        const i64 v = new_id ? new_id[b] : lower_bound(ids, (i64)0, n, b);
        out[i] = (u64)(min(u, v) * n + max(u, v)) * 2 + (u > v);
    }
}

// degree = bincount(keys // n) + bincount(keys % n), into a zeroed degree.
extern "C" __global__ void degrees(const u64* keys, i64 count, i64 n, u64* degree) {
    EACH(i, count) {
        const u64 lo = keys[i] / n;
        atomicAdd(degree + lo, 1ull);
        atomicAdd(degree + (keys[i] - lo * n), 1ull);
    }
}

// out = degree * n + arange(n): sorted, the vertices by (degree, id).
extern "C" __global__ void rank_keys(const u64* degree, i64 n, u64* out) {
    EACH(x, n) out[x] = degree[x] * n + x;
}

// order = sorted % n; rank[order] = arange(n).
extern "C" __global__ void ranks(const u64* sorted, i64 n, i64* order, i64* rank) {
    EACH(i, n) {
        const i64 x = (i64)(sorted[i] % n);
        order[i] = x;
        rank[x] = i;
    }
}

// a, b = rank[keys // n], rank[keys % n]; out = min(a, b) * n + max(a, b) (out may be keys).
extern "C" __global__ void oriented_keys(const u64* keys, i64 count, i64 n, const i64* rank, u64* out) {
    EACH(i, count) {
        const u64 lo = keys[i] / n;
        const i64 a = rank[lo], b = rank[keys[i] - lo * n];
        out[i] = (u64)(min(a, b) * n + max(a, b));
    }
}

// rowptr[x] = searchsorted(keys, x * n) for x in 0..n, of sorted keys.
extern "C" __global__ void row_starts(const u64* keys, i64 count, i64 n, i64* rowptr) {
    EACH(x, n + 1) rowptr[x] = lower_bound(keys, (i64)0, count, (u64)x * n);
}

// col = keys % n, in the column type.
template <typename C>
__device__ __forceinline__ void columns(const u64* keys, i64 count, i64 n, C* col) {
    EACH(i, count) col[i] = (C)(keys[i] % n);
}
extern "C" __global__ void columns_int(const u64* keys, i64 count, i64 n, int* col) { columns(keys, count, n, col); }
extern "C" __global__ void columns_long(const u64* keys, i64 count, i64 n, long long* col) {
    columns(keys, count, n, col);
}

// out = table[index].
extern "C" __global__ void gather(const i64* table, const i64* index, i64 count, i64* out) {
    EACH(i, count) out[i] = table[index[i]];
}

// What is wrong with an oriented CSR of n rows and m columns, as bits of problems: FALLS, rowptr
// falls somewhere; OUTSIDE, a column outside 0..n-1; UNSORTED, a row not strictly increasing;
// BACKWARD (with ascending), a row u whose first column is not above u. A warp per row; a row's
// bounds are clipped to 0..m, so that a broken rowptr reads nothing outside col.
#define FALLS 1u
#define OUTSIDE 2u
#define UNSORTED 4u
#define BACKWARD 8u

template <typename C>
__device__ __forceinline__ void csr_problems(const i64* rowptr, const C* col, i64 n, i64 m, int ascending,
                                             unsigned* problems) {
    const int lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    unsigned found = 0;
    for (i64 x = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; x < n; x += warps) {
        const i64 start = rowptr[x], end = rowptr[x + 1];
        const i64 lo = min(max(start, (i64)0), m), hi = min(max(end, lo), m);
        if (lane == 0 && end < start) found |= FALLS;
        if (lane == 0 && ascending && lo < hi && col[lo] <= x) found |= BACKWARD;
        for (i64 j = lo + lane; j < hi; j += 32) {
            const C c = col[j];
            if (c < 0 || c >= n) found |= OUTSIDE;
            if (j > lo && col[j - 1] >= c) found |= UNSORTED;
        }
    }
    if (found) atomicOr(problems, found);
}
extern "C" __global__ void csr_problems_int(const i64* rowptr, const int* col, i64 n, i64 m, int ascending,
                                            unsigned* problems) {
    csr_problems(rowptr, col, n, m, ascending, problems);
}
extern "C" __global__ void csr_problems_long(const i64* rowptr, const long long* col, i64 n, i64 m, int ascending,
                                             unsigned* problems) {
    csr_problems(rowptr, col, n, m, ascending, problems);
}

// work[x] = the edges of row x and the out-degrees of their targets (the probes that intersecting
// them takes: graph/work.py's estimate), a warp per row; tile_sums and exclusive_sum then give
// the work before each row.
template <typename C>
__device__ __forceinline__ void row_work(const i64* rowptr, const C* col, i64 n, i64* work) {
    const int lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 x = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; x < n; x += warps) {
        const i64 start = rowptr[x], end = rowptr[x + 1];
        i64 probes = 0;
        for (i64 j = start + lane; j < end; j += 32) {
            const i64 c = col[j];
            probes += rowptr[c + 1] - rowptr[c];
        }
        for (int offset = 16; offset; offset >>= 1) probes += __shfl_down_sync(0xffffffffu, probes, offset);
        if (lane == 0) work[x] = end - start + probes;
    }
}
extern "C" __global__ void row_work_int(const i64* rowptr, const int* col, i64 n, i64* work) {
    row_work(rowptr, col, n, work);
}
extern "C" __global__ void row_work_long(const i64* rowptr, const long long* col, i64 n, i64* work) {
    row_work(rowptr, col, n, work);
}

// per_tile[b] = the sum of tile b's values (exclusive_sum's tile_start is their exclusive sum).
extern "C" __global__ void tile_sums(const i64* values, i64 count, i64* per_tile) {
    const i64 first = (i64)blockIdx.x * TILE + (i64)threadIdx.x * ITEMS;
    i64 mine = 0;
    for (i64 i = first; i < min(first + ITEMS, count); ++i) mine += values[i];
    i64 total;
    block_scan(mine, total);
    if (threadIdx.x == 0) per_tile[blockIdx.x] = total;
}

// at[i] = searchsorted(sorted, goals[i]): the first j with sorted[j] >= goals[i] (count if none).
extern "C" __global__ void lower_bounds(const i64* sorted, i64 count, const i64* goals, i64 goals_count, i64* at) {
    EACH(i, goals_count) {
        const i64 goal = goals[i];
        i64 lo = 0, hi = count;
        while (lo < hi) {
            const i64 mid = lo + (hi - lo) / 2;
            if (sorted[mid] < goal) lo = mid + 1;
            else hi = mid;
        }
        at[i] = lo;
    }
}

// Of a parsed block's ranges (cuda/parse.cu): per_tile[b] = the edges of tile b; totals[0] += the
// lines; totals[1] = min(totals[1], the first range with a bad line).
extern "C" __global__ void range_totals(const i64* edges, const i64* lines, const i64* bad, i64 ranges,
                                        i64* per_tile, u64* totals) {
    const i64 first = (i64)blockIdx.x * TILE + (i64)threadIdx.x * ITEMS;
    i64 mine = 0;
    u64 counted = 0;
    for (i64 r = first; r < min(first + ITEMS, ranges); ++r) {
        mine += edges[r];
        counted += lines[r];
        if (bad[r] >= 0) atomicMin(totals + 1, (u64)r);
    }
    i64 total;
    block_scan(mine, total);
    if (threadIdx.x == 0) per_tile[blockIdx.x] = total;
    block_add(counted, totals);
}

// out = cumsum(values) - values, tile b from tile_start[b] (the exclusive sum of the tiles' sums);
// out may be values (each item is read by the thread that writes it, before it writes it).
extern "C" __global__ void exclusive_sum(const i64* values, i64 count, const i64* tile_start, i64* out) {
    const i64 first = (i64)blockIdx.x * TILE + (i64)threadIdx.x * ITEMS;
    const i64 last = min(first + ITEMS, count);
    i64 mine = 0;
    for (i64 i = first; i < last; ++i) mine += values[i];
    i64 total;
    i64 at = tile_start[blockIdx.x] + block_scan(mine, total);
    for (i64 i = first; i < last; ++i) {
        const i64 value = values[i];
        out[i] = at;
        at += value;
    }
}

// RMAT's edges lo .. lo + count of m, ids through perm, as io/draws.py's rmat draws them on the
// host: edge i of the block from b (block edges, fewer in the last) takes level l's bits from value
// first + b * scale + l * (that block's size) + (i - b) of splitmix64's sequence of key; a row bit
// is 1 where the high 24 bits reach row_cut, a column bit where the low 24 reach its row's cut.
extern "C" __global__ void rmat_edges(u64 key, i64 first, int scale, i64 m, i64 block, u64 row_cut,
                                      u64 col_cut0, u64 col_cut1, const i64* perm, i64 lo, i64 count,
                                      i64* src, i64* dst) {
    EACH(k, count) {
        const i64 i = lo + k, start = i / block * block;
        const i64 size = min(m, start + block) - start;
        const u64 at = (u64)(first + start * scale + i - start);
        i64 s = 0, d = 0;
        for (int level = 0; level < scale; ++level) {
            u64 z = (at + (u64)level * size + 1) * 0x9E3779B97F4A7C15ull + key;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            const bool row = (z >> 40) >= row_cut;
            s |= (i64)row << level;
            d |= (i64)((z & 0xFFFFFFull) >= (row ? col_cut1 : col_cut0)) << level;
        }
        src[k] = perm[s];
        dst[k] = perm[d];
    }
}
