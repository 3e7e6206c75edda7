"""LSTC Algorithms 1 and 2 for all parts at once, in whole-array passes (NumPy or CuPy).

Every (part, vertex) pair that a part needs is a *member*, flagged LOCAL (the vertex is in
the part), OUT (it has an in-edge from a local vertex: N+(L)) or IN (an out-edge to one:
N-(L)). One sort of packed keys finds all members of all parts; expanding each member's
row of the global CSR and looking the targets up among the members gives every part's
induced subgraph; no part costs a pass over the whole graph. Parts are built in groups whose
candidate edges are bounded, so many parts of a large graph do not hold their temporaries
at the same time.

Algorithm 2 removes, until none is left, proxies of in-degree 0 and their out-edges. The
oriented graph is acyclic, so what survives is exactly L and the proxies reachable from L
along induced edges: a proxy on such a path always keeps the in-edge from its predecessor,
and the unreachable proxies only have in-edges from each other, so their sources go first,
then theirs. That fixpoint is computed here as forward reachability, one pass over the
induced edges per level.
"""

from tcdist import progress
from tcdist.config import PRUNE_MODES
from tcdist.graph.graph import col_dtype
from tcdist.partition.part import Part
from tcdist.xp import array_module, segment_ids, select

LOCAL, OUT, IN = 1, 2, 4
_BATCH = 1 << 24  # candidate edges expanded at a time, to bound memory


def locals_first(run, run_start, is_local):
    """Destination of each element when every run is stably reordered with its ``is_local``
    elements first. ``run`` is the (non-decreasing) run of each element, ``run_start`` where
    each run begins. A stable partition: linear, no sort, no search."""
    xp = array_module(run)
    size = is_local.size
    before = xp.zeros(size + 1, dtype=xp.int64)
    xp.cumsum(is_local, out=before[1:])
    run_end = xp.append(run_start[1:], size)
    locals_in_run = (before[run_end] - before[run_start])[run]
    start = run_start[run]
    locals_before = before[:-1] - before[start]
    others_before = xp.arange(size, dtype=xp.int64) - start - locals_before
    return start + xp.where(is_local, locals_before, locals_in_run + others_before)


def _members(rowptr, col, assignment, n):
    """Sorted member keys (part * n + vertex) of all parts, with their OR-ed flags."""
    xp = array_module(rowptr)
    src = segment_ids(xp.diff(rowptr))
    dst = col.astype(xp.int64)
    vertices = xp.arange(n, dtype=xp.int64)
    packed = xp.concatenate([
        (assignment * n + vertices) * 8 + LOCAL,
        (assignment[src] * n + dst) * 8 + OUT,
        (assignment[dst] * n + src) * 8 + IN,
    ])
    del src, dst
    packed = xp.sort(packed)
    keys, flags = packed >> 3, packed & 7
    del packed
    first = xp.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    member_of = xp.cumsum(first, dtype=xp.int64) - 1
    (unique_keys,) = select(first, keys)
    member_flags = xp.zeros(unique_keys.size, dtype=xp.int64)
    for bit in (LOCAL, OUT, IN):
        hit = xp.zeros(unique_keys.size, dtype=bool)
        hit[select((flags & bit) != 0, member_of)[0]] = True
        member_flags |= hit * bit
    return unique_keys, member_flags


def _induced_edges(rowptr, col, member_offset, member_vertex):
    """(source member, target member) of every induced edge of every part, grouped by source
    member in member order, targets in global rank order within a row.

    Part by part, a slot table maps each member vertex to its member index; it is filled
    and cleared for the part's members only, so all parts cost O(n + members + candidates).
    """
    xp = array_module(rowptr)
    out_degree = xp.diff(rowptr)
    slot = xp.full(rowptr.size - 1, -1, dtype=xp.int64)
    sources, targets = [], []
    for lo, hi in zip(member_offset[:-1].tolist(), member_offset[1:].tolist()):
        vertices = member_vertex[lo:hi]
        slot[vertices] = xp.arange(lo, hi, dtype=xp.int64)
        counts = out_degree[vertices]
        ends = xp.cumsum(counts)
        first = 0
        while first < hi - lo:
            base = int(ends[first - 1]) if first else 0
            limit = xp.asarray([base + _BATCH], dtype=xp.int64)
            last = max(first + 1, int(xp.searchsorted(ends, limit, side="right")[0]))
            row = segment_ids(counts[first:last])
            offset = xp.arange(row.size, dtype=xp.int64) - (ends[first:last] - counts[first:last] - base)[row]
            target = slot[col[rowptr[vertices[first + row]] + offset]]
            hit = target >= 0
            sources.append(lo + first + row[hit])
            targets.append(target[hit])
            first = last
        slot[vertices] = -1
    if not sources:
        empty = xp.empty(0, dtype=xp.int64)
        return empty, empty
    return xp.concatenate(sources), xp.concatenate(targets)


def _prune(xp, mode, flags, src_m, tgt_m):
    """(member kept, edge kept) for a prune mode."""
    is_local = (flags & LOCAL) != 0
    if mode == "none":
        return xp.ones(flags.size, dtype=bool), xp.ones(src_m.size, dtype=bool)
    if mode == "minimal":
        near = (flags & (LOCAL | OUT)) != 0
        is_out = (flags & OUT) != 0
        return near, is_local[src_m] | (is_out[src_m] & is_out[tgt_m])
    alive = is_local.copy()
    while True:
        reach = alive[src_m] & ~alive[tgt_m]
        if not bool(reach.any()):
            return alive, alive[src_m]
        alive[select(reach, tgt_m)[0]] = True


def build_parts(graph, assignment, num_parts, prune="lstc"):
    """The parts of LSTC's workload partitioning of an oriented graph.

    assignment: the part (0..num_parts-1) of every vertex. prune: 'lstc' (Algorithm 2),
    'none' (the induced subgraphs as built) or 'minimal' (only L, N+(L), the out-edges of L
    and the edges inside N+(L)). Each Part lists its local vertices first.
    """
    if prune not in PRUNE_MODES:
        raise ValueError(f"unknown prune mode {prune!r}")
    with progress.bar(num_parts + 2, f"partition into {num_parts} parts", "steps") as bar:
        return _build_parts(graph, assignment, num_parts, prune, bar)


GROUP_CANDIDATES = 1 << 28  # candidate edges of the parts built together (about 20 GB of temporaries)


def _groups(out_degree, m_offset, m_vertex):
    """Runs [first, last) of consecutive parts whose candidate edges (the out-degrees of their
    members) stay within GROUP_CANDIDATES, so the parts' temporaries never coexist for a large
    graph in many parts; a part above the bound is a group of its own."""
    xp = array_module(m_offset)
    per_member = xp.zeros(m_vertex.size + 1, dtype=xp.int64)
    xp.cumsum(out_degree[m_vertex], out=per_member[1:])
    ends = per_member[m_offset].tolist()
    groups, first = [], 0
    for last in range(1, len(ends)):
        if last - first > 1 and ends[last] - ends[first] > GROUP_CANDIDATES:
            groups.append((first, last - 1))
            first = last - 1
    groups.append((first, len(ends) - 1))
    return groups


def _build_parts(graph, assignment, num_parts, prune, bar):
    xp = graph.xp
    n, rowptr, col = graph.n, graph.rowptr, graph.col
    assignment = assignment.astype(xp.int64)

    keys, flags = _members(rowptr, col, assignment, n)
    part, vertex = keys // n, keys % n
    boundaries = xp.arange(num_parts + 1, dtype=xp.int64)
    m_offset = xp.searchsorted(part, boundaries)
    order = locals_first(part, m_offset[:-1], (flags & LOCAL) != 0)  # member order: part, locals first, rank
    m_part, m_vertex, m_flags = (xp.empty_like(a) for a in (part, vertex, flags))
    m_part[order], m_vertex[order], m_flags[order] = part, vertex, flags
    del part, vertex, flags, keys, order
    bar.update()
    parts = []
    for first, last in _groups(xp.diff(rowptr), m_offset, m_vertex):
        lo, hi = int(m_offset[first]), int(m_offset[last])
        parts += _build_group(rowptr, col, first, m_offset[first : last + 1] - lo, m_part[lo:hi] - first,
                              m_vertex[lo:hi], m_flags[lo:hi], prune, bar)
    bar.update()
    return parts


def _build_group(rowptr, col, first, m_offset, m_part, m_vertex, m_flags, prune, bar):
    """Parts first, first + 1, ... from their members (indices and parts relative to the group)."""
    xp = array_module(rowptr)
    num_parts = m_offset.size - 1
    boundaries = xp.arange(num_parts + 1, dtype=xp.int64)
    src_m, tgt_m = _induced_edges(rowptr, col, m_offset, m_vertex)
    keep_m, keep_e = _prune(xp, prune, m_flags, src_m, tgt_m)

    v_ind = xp.diff(m_offset)
    e_ind = xp.bincount(m_part[src_m], minlength=num_parts)
    n_local = xp.bincount(select((m_flags & LOCAL) != 0, m_part)[0], minlength=num_parts)

    kept_index = xp.cumsum(keep_m, dtype=xp.int64) - 1
    k_part, k_vertex = select(keep_m, m_part, m_vertex)
    k_offset = xp.searchsorted(k_part, boundaries)
    src_m, tgt_m = select(keep_e, src_m, tgt_m)
    src_k, tgt_k = kept_index[src_m], kept_index[tgt_m]
    tgt_local = (m_flags[tgt_m] & LOCAL) != 0
    del src_m, tgt_m, keep_e
    row_length = xp.bincount(src_k, minlength=k_part.size)
    row_start = xp.cumsum(row_length) - row_length
    placed = locals_first(src_k, row_start, tgt_local)  # rows sorted by the new ids: locals first
    col_k = xp.empty_like(tgt_k)
    col_k[placed] = tgt_k - k_offset[k_part[tgt_k]]
    e_offset = xp.zeros(num_parts + 1, dtype=xp.int64)
    xp.cumsum(xp.bincount(k_part[src_k], minlength=num_parts), out=e_offset[1:])

    parts = []
    for i in range(num_parts):
        lo, hi = int(k_offset[i]), int(k_offset[i + 1])
        size = hi - lo
        rowptr_i = xp.zeros(size + 1, dtype=xp.int64)
        xp.cumsum(row_length[lo:hi], out=rowptr_i[1:])
        col_i = col_k[int(e_offset[i]) : int(e_offset[i + 1])].astype(col_dtype(size))
        parts.append(Part.make(
            index=first + i,
            rowptr=rowptr_i,
            col=col_i,
            global_id=k_vertex[lo:hi].copy(),
            n_local=int(n_local[i]),
            v_ind=int(v_ind[i]),
            e_ind=int(e_ind[i]),
        ))
        bar.update()
    return parts
