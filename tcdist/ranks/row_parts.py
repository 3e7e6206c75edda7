"""Parts across ranks: each rank counts the LSTC part of its own rows, and no rank receives the
whole graph: a rank holds its rows and the rows of their targets on other ranks (on a skewed
graph the first ranks' rows reach the hubs, whose rows are most of it: docs/ranks.md).

A rank's locals L are its rows first_row..end_row of the one oriented CSR (ranks/ingest.py), its
proxies P the targets of those rows outside them. Its part is LSTC's with the "minimal" pruning
for the assignment "each vertex to the rank owning its row": L, N+(L) = L's targets, L's
out-edges and the edges inside N+(L), laid out as partition/build.py lays out every part
(renumbered locals first, then proxies, each in rank order; each row's targets locals first).
The ranks hold consecutive rows and an edge goes from a lower row to a higher, so every proxy
lies at or above end_row and so do its targets: of each proxy's row only the targets that are
proxies too are kept, and the renumbering keeps the order of the global ids. A triangle
u < v < w is counted by the part of u: u's row holds v and w, and v's row is local or a proxy's,
holding w, a target of u. Algorithm 2 would keep further proxies (those reachable from L beyond
N+(L)), which need other ranks' in-edges to find and add nothing to the count. For the same
reason LSTC's induced counts (V_ind, E_ind: N-(L) and its edges lie on other ranks) are not
taken: a part's v_ind and e_ind are those of L ∪ N+(L), its v_res and e_res.

Each rank asks the owners of its proxies for their rows' lengths (ids out, lengths back, one
all-to-all each way), then for the rows themselves in steps, each step's messages a small
fraction of a rank's rows and proxy rows, so that what a rank holds of the graph at once (its
rows, the part growing from them, the rows in flight either way) stays near its own rows and its
proxies' rows: its own columns become the part's head (the arrays grown in place: a large block's
pages are remapped, not copied), each proxy row is filtered and renumbered into the tail as it
arrives, and the head is renumbered last (the owner serves others' asks from it until then).
The part is made in host memory, whatever device counts it: the pipeline copies it to a GPU, or
counts it in slices where it does not fit (ranks/pipeline.py).

Under --host-memory-limit, a rank whose rows and proxy rows exceed its share of its host's limit
spills: its part's columns go to a scratch file of its own (io/scratch.py, on its own host), each
proxy row written there as it arrives and its own rows, renumbered, written last; it holds its
rows, its part's row pointers and ids, and the rows in flight, and counts the part a slice at a
time read from the file, within what its share leaves (budget/slices.pieces).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import numpy as np

from tcdist.budget.model import csr_bytes
from tcdist.budget.sizes import size_text
from tcdist.errors import OptionError
from tcdist.graph.graph import col_dtype
from tcdist.io.scratch import DiskColumns
from tcdist.partition.part import Part
from tcdist.ranks.exchange import alltoallv, offsets
from tcdist.ranks.spread import cut
from tcdist.xp import segment_ids, to_numpy

STEP_SHARE = 4  # a step's messages: at most 1/(STEP_SHARE * ranks) of the least rank's rows and proxy rows
MOST_STEPS = 64  # but no more steps than this for the rank that asks for most
LEAST_STEP_BYTES = 4 << 10  # nor steps of fewer bytes (a small graph: a few steps)
RENUMBER_CHUNK = 1 << 22  # columns renumbered at once: the temporaries stay small
TEMPORARY_STEPS = 10  # what finding a step's proxies' places takes beside it (a search's temporaries), in steps
TABLE_SHARE = 1  # a table of proxies' places may take this many times the bytes of a rank's columns


class GraphBytes:
    """The bytes of the graph's arrays a rank holds (its rows, the part made of them, the rows in
    flight either way), and the most it held at once."""

    def __init__(self):
        self.now = self.peak = 0

    def hold(self, nbytes: int) -> None:
        self.now += int(nbytes)
        self.peak = max(self.peak, self.now)

    def let_go(self, nbytes: int) -> None:
        self.now -= int(nbytes)


class _Places:
    """Each id's place among the proxies (sorted global ids above this rank's rows), -1 for an id
    that is none: read from a table of the ids above the rows where it takes no more than
    TABLE_SHARE times room (bytes: the rank's columns), else found by binary search (RMAT-19 on
    two ranks: each rank's part made in 0.26 s, against 0.88 s searching)."""

    def __init__(self, proxies, end: int, n: int, room: int):
        self.proxies, self.end, self.table = proxies, end, None
        if 4 * (n - end) <= TABLE_SHARE * room and proxies.size < 2**31:
            self.table = np.full(n - end, -1, np.int32)
            self.table[proxies - end] = np.arange(proxies.size, dtype=np.int32)

    def __call__(self, ids) -> np.ndarray:
        """The places of ids, each at or above the rows' end."""
        if self.table is not None:
            return self.table[ids - self.end]
        if not self.proxies.size:
            return np.full(ids.size, -1, np.int64)
        at = np.minimum(np.searchsorted(self.proxies, ids), self.proxies.size - 1)
        return np.where(self.proxies[at] == ids, at, -1)


@dataclass
class RowPart:
    """A rank's part of its own rows, what it held of the graph at most while making it, and the
    bytes of the proxy rows it received."""

    part: Part
    graph_peak_bytes: int
    received_bytes: int
    room: int | None = None  # a part whose columns lie on disk: the host memory its count may take


@dataclass
class RowPlan:
    """What a rank asked of the others before fetching: its rows (own: [rowptr, col], which the part
    grows from: nothing else may hold them), its proxies and their rows' lengths, the bytes of a
    fetch's step, the graph bytes it holds, what each rank needs; where it spills, its part's
    columns on disk and what its share of the host's limit leaves beside its part's row pointers
    and ids."""

    own: list
    first: int
    end: int
    n: int
    bounds: np.ndarray
    proxies: np.ndarray
    lengths: np.ndarray
    step: int
    held: GraphBytes
    needs: list  # every rank's _Needs
    columns: DiskColumns | None = None
    room: int | None = None


def row_plan(comm, rows, host_memory_limit: int | None = None, ranks_here: int = 1) -> RowPlan:
    """The plan of this rank's part of its rows (ranks/ingest.Rows: taken over, its rowptr and col
    given up to the plan). With host_memory_limit (bytes a host's ranks may hold of the graph), a
    rank whose rows and proxy rows exceed its host's limit shared among its ranks_here ranks spills
    its part's columns to scratch; one whose rows and part's row pointers exceed it even so is the
    same error on every rank, before any row is fetched."""
    own = [to_numpy(rows.rowptr), to_numpy(rows.col)]
    rows.rowptr = rows.col = None
    first, end, bounds = rows.first_row, rows.end_row, np.asarray(rows.bounds, np.int64)
    held = GraphBytes()
    held.hold(own[0].nbytes + own[1].nbytes)
    proxies = np.unique(own[1][own[1] >= end]).astype(np.int64)
    lengths = _lengths_asked(comm, proxies, own[0], first, bounds)
    col_bytes, size = own[1].itemsize, end - first + proxies.size
    asked = 8 * proxies.size + col_bytes * int(lengths.sum())
    rows_bytes = csr_bytes(end - first, own[1].size, 0, col_bytes)
    spilled = own[1].nbytes + 16 * size + 8  # its columns, its part's row pointers and ids: the part's columns on disk
    everyone = comm.allgather(_Needs(rows_bytes + asked, asked, spilled, socket.gethostname()))
    step = max(min(needs.mine for needs in everyone) // (STEP_SHARE * comm.size),
               max(needs.asked for needs in everyone) // MOST_STEPS, LEAST_STEP_BYTES)
    columns = room = None
    if host_memory_limit is not None:
        allowed = comm.allgather(host_memory_limit // ranks_here)
        step = _step_within(comm, everyone, allowed, host_memory_limit, step)
        if everyone[comm.rank].mine > allowed[comm.rank]:
            columns = DiskColumns(own[1].size + int(lengths.sum()), col_dtype(size), "a rank's part's columns")
            room = allowed[comm.rank] - 16 * size - 8
    return RowPlan(own, first, end, rows.n, bounds, proxies, lengths, step, held, everyone, columns, room)


@dataclass
class _Needs:
    """What a rank holds of the graph while it makes its part: in memory (mine, of which asked: its
    proxies and their rows), or with its part's columns spilled to disk; and its host's name."""

    mine: int
    asked: int
    spilled: int
    host: str


def _step_within(comm, everyone: list[_Needs], allowed: list[int], limit: int, step: int) -> int:
    """The bytes of a fetch's step where some ranks spill: small enough for the rows in flight (a
    step's asks of every rank and its answers) to fit beside what the spilling rank with the least
    room holds. Where a rank's share of its host's limit holds neither its part in memory nor its
    rows and its part's row pointers with the columns on disk, the same error on every rank."""
    flight = comm.size + 1 + TEMPORARY_STEPS  # a step's bytes asked of others, up to comm.size answers, their places
    over = [r for r, needs in enumerate(everyone) if needs.mine > allowed[r]]
    short = [r for r in over if everyone[r].spilled + flight * LEAST_STEP_BYTES > allowed[r]]
    if short:
        r = max(short, key=lambda r: min(everyone[r].mine, everyone[r].spilled) - allowed[r])
        needs = everyone[r]
        raise OptionError(
            f"rank {r} on {needs.host} needs {size_text(needs.mine)} of host memory for its rows "
            f"({size_text(needs.mine - needs.asked)}) and the rows of their out-neighbours on other ranks "
            f"({size_text(needs.asked)}), or {size_text(needs.spilled + flight * LEAST_STEP_BYTES)} with its part's "
            f"columns on scratch, over the {size_text(allowed[r])} that {{host_memory_limit}} {size_text(limit)} "
            "leaves each rank of its host; count on more hosts, or give a larger {host_memory_limit}")
    if not over:
        return step
    return min(step, min(allowed[r] - everyone[r].spilled for r in over) // flight)


def row_part(comm, plan: RowPlan) -> RowPart:
    """This rank's part (index comm.rank), made by plan (its rows taken from it). comm may be a
    guard.Watched: a rank out of memory between the fetch's exchanges ends every rank, none waiting."""
    places = _Places(plan.proxies, plan.end, plan.n, 0 if plan.columns is not None else plan.own[1].nbytes)
    part, received = _made(comm, plan, places)
    return RowPart(part, plan.held.peak, received, plan.room)


def _lengths_asked(comm, proxies, rowptr, first: int, bounds) -> np.ndarray:
    """The lengths of the proxies' rows, asked of their owners (every rank answers the others)."""
    wanted, wanted_counts = alltoallv(comm, proxies, cut(proxies, bounds[1:-1]))
    local = wanted - first
    lengths, _ = alltoallv(comm, rowptr[local + 1] - rowptr[local], wanted_counts)
    return lengths


def _made(comm, plan: RowPlan, places: _Places) -> tuple[Part, int]:
    """The part, from this rank's rows (plan.own: [rowptr, col], global ids; taken) and its proxies'
    rows fetched in steps of about plan.step bytes, its columns in memory or on disk (plan.columns);
    and the bytes of proxy rows received."""
    own, first, end, lengths, held, columns = plan.own, plan.first, plan.end, plan.lengths, plan.held, plan.columns
    proxies = places.proxies
    n_local, own_edges, size = end - first, own[1].size, end - first + proxies.size
    upper = own_edges + int(lengths.sum())
    rowptr, itemsize = _grown(own, 0, size + 1, held), own[1].itemsize
    if columns is None:
        col = _grown(own, 1, upper, held)
        own_col = col[:own_edges]  # global ids until every rank is served
    else:
        own_col, own[1] = own[1], None
    own_rowptr = rowptr[: n_local + 1]
    starts = np.cumsum(lengths) - lengths
    per_step = max(plan.step // itemsize, 1)
    mine = -(-(upper - own_edges) // per_step)
    cuts = np.searchsorted(starts, np.arange(mine + 1) * per_step)
    cuts[-1] = proxies.size
    kept = np.zeros(proxies.size, np.int64)
    fill, received = own_edges, 0
    for k in range(max(comm.allgather(mine))):
        a, b = (int(cuts[k]), int(cuts[k + 1])) if k < mine else (0, 0)
        batch = proxies[a:b]
        wanted, wanted_counts = alltoallv(comm, batch, cut(batch, plan.bounds[1:-1]))
        answer, answer_counts = _rows_of(own_rowptr, own_col, wanted - first, wanted_counts)
        held.hold(answer.nbytes)
        got, _ = alltoallv(comm, answer, answer_counts)
        held.hold(got.nbytes)
        held.let_go(answer.nbytes)
        del answer
        received += got.nbytes
        if got.size:  # keep the targets that are proxies too (none is local: they lie above this rank's rows)
            at = places(got)
            hit = at >= 0
            kept[a:b] = np.bincount(segment_ids(lengths[a:b])[hit], minlength=b - a)
            taken = n_local + at[hit]
            if columns is None:
                col[fill : fill + taken.size] = taken
            else:
                columns.write(fill, taken)
            fill += taken.size
        held.let_go(got.nbytes)
        del got
    np.cumsum(kept, out=rowptr[n_local + 1 :])
    rowptr[n_local + 1 :] += own_edges
    global_id = np.concatenate([np.arange(first, end, dtype=np.int64), proxies])
    if columns is not None:
        chunk = max(plan.step // 64, 1 << 10)  # (its temporaries within a step's bytes)
        work = _written_head(columns, own_col, rowptr, first, end, places, chunk)
        held.let_go(own_col.nbytes)
        del own_col
        columns.cut(fill)
        return Part.make(index=comm.rank, rowptr=rowptr, col=columns, global_id=global_id, n_local=n_local,
                         v_ind=size, e_ind=fill, work=work), received
    _renumber(own_col, own_edges, first, end, places)
    del own_rowptr, own_col
    box = [col]
    del col
    col = _shrunk(box, fill, held)
    if col.dtype != col_dtype(size):  # (a graph of over 2^31 vertices whose part has fewer)
        narrow = col.astype(col_dtype(size))
        held.hold(narrow.nbytes)
        held.let_go(col.nbytes)
        col = narrow
    part = Part.make(index=comm.rank, rowptr=rowptr, col=col, global_id=global_id, n_local=n_local, v_ind=size,
                     e_ind=fill)
    return part, received


def _written_head(columns: DiskColumns, head, rowptr, first: int, end: int, places: _Places, chunk: int) -> int:
    """The local rows' columns (head: global ids) renumbered (_renumber) and written at the start of
    the columns on disk, chunk at a time; returns the part's work (part_stats: the local rows'
    probes), taken meanwhile."""
    work = 0
    for lo in range(0, head.size, chunk):
        run = head[lo : lo + chunk]
        _renumber(run, run.size, first, end, places)
        columns.write(lo, run)
        work += int((rowptr[run + 1] - rowptr[run]).sum())
    return work


def _renumber(col, edges: int, first: int, end: int, places: _Places) -> None:
    """The first edges columns, global ids, renumbered in place as the part's: this rank's rows
    from 0 on, the proxies after them in their order."""
    for lo in range(0, edges, RENUMBER_CHUNK):
        head = col[lo : min(lo + RENUMBER_CHUNK, edges)]
        far = head >= end
        head[far] = end - first + places(head[far])
        head[~far] -= first


def _rows_of(rowptr, col, local, counts) -> tuple[np.ndarray, np.ndarray]:
    """The rows local (asked by the ranks counts[r] at a time), end to end, and how many columns go
    to each rank."""
    begin, length = rowptr[local], rowptr[local + 1] - rowptr[local]
    ends = np.zeros(length.size + 1, np.int64)
    np.cumsum(length, out=ends[1:])
    at = np.repeat(begin - ends[:-1], length) + np.arange(int(ends[-1]))
    return col[at], np.diff(ends[offsets(counts)])


def _grown(box: list, i: int, size: int, held: GraphBytes) -> np.ndarray:
    """box[i] (taken from the box) with room for size elements, its values first: resized in place
    where nothing else holds it (realloc: a large block's pages are moved, not copied), else copied."""
    array, box[i] = box[i], None
    before = array.nbytes
    try:
        array.resize(size, refcheck=True)
    except ValueError:  # a view, or held elsewhere too (a graph file's rows, kept by their reader)
        grown = np.zeros(size, array.dtype)
        grown[: array.size] = array
        held.hold(grown.nbytes)
        held.let_go(before)
        return grown
    held.hold(array.nbytes - before)
    return array


def _shrunk(box: list, size: int, held: GraphBytes) -> np.ndarray:
    """box[0] (taken from the box) cut to its first size elements, the rest given back where it can be."""
    array, box[0] = box[0], None
    before = array.nbytes
    try:
        array.resize(size, refcheck=True)
    except ValueError:
        return array[:size]
    held.let_go(before - array.nbytes)
    return array
