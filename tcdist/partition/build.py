"""LSTC Algorithms 1 and 2 a part at a time, in whole-array passes over the graph's edges
(NumPy; on the GPU where the graph lies, gpu_parts.py's passes make the same parts): a part is
made where it is counted, when it is due, and holds no more than its own arrays and a few flags
per vertex and edge.

For part i with local vertices L: its members are L, N+(L) (targets of L's out-edges) and N-(L)
(sources of L's in-edges); its induced edges join two members. Algorithm 2 removes, until none
is left, proxies of in-degree 0 and their out-edges. The oriented graph is acyclic, so what
survives is exactly L and the proxies reachable from L along induced edges: a proxy on such a
path always keeps the in-edge from its predecessor, and the unreachable proxies only have
in-edges from each other, so their sources go first, then theirs. That fixpoint is computed here
as forward reachability, one pass over the induced edges still unreached per level. The members
kept are renumbered locals first, each row's targets locals first, both in rank order: the same
parts, bit for bit, as the host's compiled builder (host.py).
"""

from contextlib import nullcontext

import numpy as np

from tcdist import progress
from tcdist.config import PRUNE_MODES
from tcdist.graph.graph import col_dtype
from tcdist.partition.part import Part
from tcdist.xp import array_module, segment_ids, select


def locals_first(run, run_start, is_local):
    """Each element's place within its run when every run is stably reordered with its
    ``is_local`` elements first. ``run`` is the (non-decreasing) run of each element, ``run_start``
    where each run begins. A stable partition: linear, no sort, no search."""
    xp = array_module(run)
    size = is_local.size
    before = xp.zeros(size + 1, dtype=xp.int64)
    xp.cumsum(is_local, out=before[1:])
    run_end = xp.append(run_start[1:], size)
    locals_in_run = (before[run_end] - before[run_start])[run]
    start = run_start[run]
    locals_before = before[:-1] - before[start]
    others_before = xp.arange(size, dtype=xp.int64) - start - locals_before
    return xp.where(is_local, locals_before, locals_in_run + others_before)


def iter_parts(graph, assignment, num_parts: int, prune: str = "lstc", indices=None):
    """The parts of LSTC's workload partitioning of an oriented graph, in part order (or those of
    indices, in that order), each built when the iterator reaches it (the graph's arrays and the
    part's own are all it holds).

    assignment: the part (0..num_parts-1) of every vertex. prune: 'lstc' (Algorithm 2), 'none'
    (the induced subgraphs as built) or 'minimal' (only L, N+(L), the out-edges of L and the edges
    inside N+(L)). Each Part lists its local vertices first.
    """
    builder = ArrayPartBuilder(graph, assignment, prune)
    for index in range(num_parts) if indices is None else indices:
        yield builder.build(index)


class ArrayPartBuilder:
    """Any part of a graph's partitioning, built when asked, where the graph lies; graph: anything
    with rowptr and col (a Graph, or a rank's copy of one)."""

    def __init__(self, graph, assignment, prune: str = "lstc"):
        if prune not in PRUNE_MODES:
            raise ValueError(f"unknown prune mode {prune!r}")
        self.graph, self.prune = graph, prune
        with _device_of(graph):
            if array_module(graph.col) is np:  # every edge's source, for all parts
                self.assignment = np.asarray(assignment)
                self.source, self.on_gpu = segment_ids(np.diff(graph.rowptr)).astype(graph.col.dtype), None
            else:  # the GPU's passes walk the rows instead
                from tcdist.partition import gpu_parts

                self.on_gpu = gpu_parts.GpuParts(gpu_parts.ResidentRows(graph.rowptr, graph.col), assignment,
                                                 int(assignment.max()) + 1 if assignment.size else 1, prune)

    def build(self, index: int) -> Part:
        with _device_of(self.graph):  # (each time: the walk may go on in another thread, whose device is its own)
            if self.on_gpu is not None:
                return self.on_gpu.build(index)
            return _part(index, self.assignment == index, self.source, self.graph.col, self.prune)


def _device_of(graph):
    """The GPU the graph lies on, as the current device (a CuPy context), or nothing to enter on the host."""
    return nullcontext() if isinstance(graph.col, np.ndarray) else graph.col.device


def build_parts(graph, assignment, num_parts: int, prune: str = "lstc") -> list:
    """iter_parts' parts, all of them (a progress bar on a terminal)."""
    with progress.bar(num_parts, f"partition into {num_parts} parts", "parts") as bar:
        return [bar.update() or part for part in iter_parts(graph, assignment, num_parts, prune)]


def _part(index: int, local, source, target, prune: str) -> Part:
    xp = array_module(target)
    n = local.size
    from_local = local[source]
    out, into = xp.zeros(n, bool), xp.zeros(n, bool)
    out[select(from_local, target)[0]] = True  # N+(L)
    into[select(local[target], source)[0]] = True  # N-(L)
    member = local | out | into
    induced = member[source] & member[target]
    v_ind, e_ind = int(member.sum()), int(induced.sum())
    if prune == "none":
        keep, kept = member, induced
    elif prune == "minimal":
        keep, kept = local | out, induced & (from_local | (out[source] & out[target]))
    else:
        keep = _reachable(local, source, target, induced)
        kept = induced & keep[source]
    del from_local, out, into, member, induced
    return _laid_out(index, local, keep, source, target, kept, v_ind, e_ind)


def _reachable(local, source, target, induced):
    """L and every member reachable from it along induced edges (Algorithm 2's fixpoint): a pass
    per level over the induced edges whose target is not reached yet."""
    alive = local.copy()
    edges_source, edges_target = select(induced & ~local[target], source, target)
    while edges_source.size:
        hit = alive[edges_source]
        if not bool(hit.any()):
            break
        alive[select(hit, edges_target)[0]] = True
        waiting = ~alive[edges_target]
        edges_source, edges_target = select(waiting, edges_source, edges_target)
    return alive


def _laid_out(index: int, local, keep, source, target, kept, v_ind: int, e_ind: int) -> Part:
    """The part of the kept members and edges: renumbered locals first, then proxies, each in rank
    order; each row's targets locals first, both in rank order."""
    xp = array_module(target)
    n = local.size
    (locals_,) = xp.nonzero(local)
    (proxies,) = xp.nonzero(keep & ~local)
    n_local, size = int(locals_.size), int(locals_.size + proxies.size)
    global_id = xp.concatenate([locals_, proxies]).astype(xp.int64)
    ids = col_dtype(size)  # the part's own ids: int32 while they fit, as its columns are
    new_id = xp.empty(n, ids)
    new_id[global_id] = xp.arange(size, dtype=ids)
    rows, columns = select(kept, source, target)  # in the graph's order: by source, then target, in rank order
    rows, columns = new_id[rows], new_id[columns]
    del new_id
    first = xp.ones(rows.size, bool)  # each row's first edge (a row's edges are together in the graph's order)
    first[1:] = rows[1:] != rows[:-1]
    (run_start,) = xp.nonzero(first)
    lengths = xp.zeros(size, xp.int64)
    lengths[rows[run_start]] = xp.diff(xp.append(run_start, rows.size))
    rowptr = xp.zeros(size + 1, xp.int64)
    xp.cumsum(lengths, out=rowptr[1:])
    del lengths
    run = xp.cumsum(first, dtype=xp.int64) - 1
    placed = locals_first(run, run_start, columns < n_local) + rowptr[rows]
    col = xp.empty(rows.size, ids)
    col[placed] = columns
    return Part.make(index=index, rowptr=rowptr, col=col, global_id=global_id, n_local=n_local, v_ind=v_ind,
                     e_ind=e_ind)
