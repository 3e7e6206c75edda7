"""LSTC parts of a graph in host memory, eight at a time from one set of passes over its edges,
each part then laid out on every core: for one rank that counts every part in order, as it goes.

host.py builds a part in passes of its own (its out-neighbours, its members, Algorithm 2, its
layout): about five passes over the edges a part, most of them repeated for every part. Here a
vertex holds a 64-bit word, a byte of host.py's flags (LOCAL, OUT, IN, ALIVE) for each of 8 parts
(its lane), and the passes that only need flags run once for those 8 parts:

1. one pass over the edges: a row's IN lanes (the parts of its out-neighbours) and OUT pushed
   into each out-neighbour's lane of the row's part (one read of the target's word, where LOCAL
   was set first), a byte store that every thread racing on it makes with the same value (into
   an array of their own, merged after, so no word is written by two threads);
2. Algorithm 2 (prune lstc): the locals and their out-neighbours are ALIVE; a round pushes ALIVE
   from the live lanes of a row into the member lanes of its out-neighbours (a byte store of the
   byte read with ALIVE added: no other flag changes meanwhile); the first round takes every row
   and counts each lane's induced edges (8 one-byte counters in a word, SWAR; under every prune
   mode), later rounds the rows that gained a lane, in parallel while many do; one pass in rank
   order (a topological order: u -> v implies u < v) then finishes exactly;
3. each part, on every core: its byte of flags out of the words and its members numbered (a scan
   of the vertices: locals in rank order, then proxies), one pass over the kept rows writing each
   row's kept targets into a slot of the row's length (locals from its start, proxies from its
   end), then the slots packed into the part's CSR. The same parts, bit for bit, as build.py's
   and host.py's. (Exact row lengths counted for 8 parts in the first round instead of slots
   wrote 4 GiB more while no part was counting: RMAT-27's first part came 6 s later.)
"""

import numpy as np

from tcdist import compiled, progress
from tcdist.compiled import jit, prange
from tcdist.graph.graph import col_dtype
from tcdist.graph.work import RANGES_PER_THREAD, even_rows
from tcdist.partition.host import ALIVE, IN, LOCAL, OUT, PRUNE_CODES, edge_stays, stays, vertices_by_part
from tcdist.partition.part import Part

LANES = 8  # parts a vertex's word holds: a byte of flags each (byte j, bits 8j..8j+7: a little-endian host's)
_ONES = 0x0101010101010101  # bit 0 of every lane
_PARALLEL_MARKS = 64  # a round that marks fewer than n / this many rows leaves the rest to one pass in rank order
_MOST_ROUNDS = 8  # parallel rounds of Algorithm 2 before that pass, however many rows they mark


@jit(parallel=True, cache=True, nogil=True)
def _marked(rowptr, col, part, first, bounds, prune):
    """Each vertex's word (step 1) for parts first .. first + 7; under prune lstc, ALIVE already
    on the lanes where it is LOCAL or OUT. LOCAL is set first in the bytes OUT is pushed into, so
    that one read of a target's word gives both its part (its row's IN) and whether its byte
    lacks OUT (the only flag written meanwhile: racing threads write it alike)."""
    n = rowptr.size - 1
    ones = np.uint64(_ONES)
    pushed = np.zeros(n * LANES, np.uint8)
    for v in prange(n):
        lane = np.int64(part[v]) - first
        if 0 <= lane < LANES:
            pushed[v * LANES + lane] = LOCAL
    words = pushed.view(np.uint64)
    state = np.empty(n, np.uint64)
    for c in prange(bounds.size - 1):
        for u in range(bounds[c], bounds[c + 1]):
            lane = np.int64(part[u]) - first
            own = 0 <= lane < LANES
            flags = np.uint64(0)
            for e in range(rowptr[u], rowptr[u + 1]):
                v = col[e]
                target = words[v]
                flags |= (target & ones) * np.uint64(IN)  # its part's lane (LOCAL, bit 0): IN on this row
                if own and not (target >> np.uint64(8 * lane)) & np.uint64(OUT):  # written only where missing
                    pushed[v * LANES + lane] = np.uint8((target >> np.uint64(8 * lane)) & np.uint64(LOCAL)) | OUT
            state[u] = flags
    for v in prange(n):
        word = state[v] | words[v]
        if prune == 0:
            word |= ((word | (word >> np.uint64(1))) & ones) << np.uint64(3)  # LOCAL or OUT: ALIVE
        state[v] = word
    return state


@jit(cache=True, nogil=True, inline="always")
def _members_of(word):
    """Bit 0 of each lane of word where the vertex is a member of that lane's part (any flag)."""
    ones = np.uint64(_ONES)
    return (word | (word >> np.uint64(1)) | (word >> np.uint64(2)) | (word >> np.uint64(3))) & ones


@jit(cache=True, nogil=True, inline="always")
def _push(col, begin, end, live, state, lanes, marked):
    """ALIVE from live (ALIVE bits of a row's lanes) into the member lanes of the targets
    col[begin:end] that lack it; each target given one is marked. Returns how many were."""
    news = 0
    for e in range(begin, end):
        v = col[e]
        word = state[v]
        add = live & (_members_of(word) << np.uint64(3)) & ~word
        if add:
            for j in range(LANES):
                if (add >> np.uint64(8 * j)) & np.uint64(ALIVE):
                    lanes[v * LANES + j] = np.uint8((word >> np.uint64(8 * j)) & np.uint64(0xFF)) | ALIVE
            marked[v] = 1
            news += 1
    return news


@jit(parallel=True, cache=True, nogil=True)
def _first_round(rowptr, col, state, bounds, push, marked):
    """(each lane's induced edges: both ends members; rows marked): every row's edges once, and
    with push Algorithm 2's first round from every row's live lanes."""
    runs = bounds.size - 1
    induced = np.zeros((runs, LANES), np.int64)
    news = np.zeros(runs, np.int64)
    lanes = state.view(np.uint8)
    alive_bits = np.uint64(_ONES * ALIVE)
    for c in prange(runs):
        counted = np.zeros(LANES, np.int64)  # not induced[c]: neighbouring runs' counters share its cache lines
        marks = 0
        for u in range(bounds[c], bounds[c + 1]):
            word = state[u]
            member = _members_of(word)
            if not member:
                continue
            tally, held = np.uint64(0), 0  # a byte a lane, emptied before one could pass 255
            for e in range(rowptr[u], rowptr[u + 1]):
                tally += member & _members_of(state[col[e]])
                held += 1
                if held == 255 or e == rowptr[u + 1] - 1:
                    for j in range(LANES):
                        counted[j] += np.int64((tally >> np.uint64(8 * j)) & np.uint64(0xFF))
                    tally, held = np.uint64(0), 0
            live = word & alive_bits
            if push and live:
                marks += _push(col, rowptr[u], rowptr[u + 1], live, state, lanes, marked)
        for j in range(LANES):
            induced[c, j] = counted[j]
        news[c] = marks
    total = np.zeros(LANES, np.int64)
    for c in range(runs):
        for j in range(LANES):
            total[j] += induced[c, j]
    return total, news.sum()


@jit(parallel=True, cache=True, nogil=True)
def _round(rowptr, col, state, bounds, frontier, marked):
    """A later round of Algorithm 2: from the rows of frontier (cleared), into marked."""
    lanes = state.view(np.uint8)
    alive_bits = np.uint64(_ONES * ALIVE)
    news = np.zeros(bounds.size - 1, np.int64)
    for c in prange(bounds.size - 1):
        marks = 0
        for u in range(bounds[c], bounds[c + 1]):
            if frontier[u]:
                frontier[u] = 0
                marks += _push(col, rowptr[u], rowptr[u + 1], state[u] & alive_bits, state, lanes, marked)
        news[c] = marks
    return news.sum()


@jit(cache=True, nogil=True)
def _last_round(rowptr, col, state, marked):
    """The rest of Algorithm 2 in one pass in rank order: a row marked is pushed when reached,
    and marks only rows after it."""
    lanes = state.view(np.uint8)
    alive_bits = np.uint64(_ONES * ALIVE)
    for u in range(rowptr.size - 1):
        if marked[u]:
            marked[u] = 0
            _push(col, rowptr[u], rowptr[u + 1], state[u] & alive_bits, state, lanes, marked)


@jit(parallel=True, cache=True, nogil=True)
def _numbered(state, lane, prune, local, flags, new_id, chunks):
    """(global ids of the part's kept members: locals, then proxies, each in rank order; its
    members): the part's flags out of the words, and every vertex's new id (-1 where not kept)."""
    n = state.size
    shift = np.uint64(8 * lane)
    proxies = np.zeros(chunks + 1, np.int64)
    members = np.zeros(chunks, np.int64)
    for c in prange(chunks):
        kept_here, members_here = 0, 0  # counted here, stored once: neighbouring chunks' share a cache line
        for v in range(c * n // chunks, (c + 1) * n // chunks):
            f = np.uint8((state[v] >> shift) & np.uint64(0xFF))
            flags[v] = f
            if f:
                members_here += 1
                if not f & LOCAL and stays(prune, f):
                    kept_here += 1
        proxies[c + 1] = kept_here
        members[c] = members_here
    for c in range(chunks):
        proxies[c + 1] += proxies[c]
    n_local = local.size
    global_id = np.empty(n_local + proxies[chunks], np.int64)
    for c in prange(chunks):
        k = n_local + proxies[c]
        for v in range(c * n // chunks, (c + 1) * n // chunks):
            f = flags[v]
            if f and not f & LOCAL and stays(prune, f):
                global_id[k] = v
                new_id[v] = k
                k += 1
            elif not f & LOCAL:
                new_id[v] = -1
    for i in prange(n_local):
        global_id[i] = local[i]
        new_id[local[i]] = i
    return global_id, members.sum()


@jit(parallel=True, cache=True, nogil=True)
def _runs(rowptr, rows, pieces):
    """(bounds of `pieces` runs of rows of about equal edges, a row counted as one more; where each
    run's slots begin, its rows' edges before it): a parallel prefix of the rows' work."""
    size = rows.size
    chunks = max(1, min(pieces, size))
    sums = np.zeros(chunks + 1, np.int64)
    for c in prange(chunks):
        total = 0
        for i in range(c * size // chunks, (c + 1) * size // chunks):
            total += 1 + rowptr[rows[i] + 1] - rowptr[rows[i]]
        sums[c + 1] = total
    for c in range(chunks):
        sums[c + 1] += sums[c]
    work = np.empty(size + 1, np.int64)
    work[0] = 0
    for c in prange(chunks):
        total = sums[c]
        for i in range(c * size // chunks, (c + 1) * size // chunks):
            total += 1 + rowptr[rows[i] + 1] - rowptr[rows[i]]
            work[i + 1] = total
    bounds = np.searchsorted(work, np.arange(pieces + 1) * work[size] // pieces)
    bounds[0], bounds[pieces] = 0, size
    starts = np.empty(pieces + 1, np.int64)
    for c in range(pieces + 1):
        starts[c] = work[bounds[c]] - bounds[c]
    return bounds, starts


@jit(parallel=True, cache=True, nogil=True)
def _slotted(rowptr, col, flags, new_id, rows, n_local, prune, bounds, starts, slots, near, far):
    """Each kept row's kept targets (new ids) into its slot of slots, as long as its row: locals
    from the slot's start, proxies from its end (both in rank order read forward); near, far: how
    many of each. Returns each run's kept edges."""
    runs = bounds.size - 1
    edges = np.zeros(runs, np.int64)
    for c in prange(runs):
        at, total = starts[c], 0
        for r in range(bounds[c], bounds[c + 1]):
            u = rows[r]
            source = flags[u]
            start, end = at, at + rowptr[u + 1] - rowptr[u]
            a, b = start, end
            for e in range(rowptr[u], rowptr[u + 1]):
                t = new_id[col[e]]  # kept members only (-1 else): all an edge from a kept row needs but 'minimal'
                if t >= 0 and (prune != 2 or edge_stays(prune, source, flags[col[e]])):
                    if t < n_local:
                        slots[a] = t
                        a += 1
                    else:
                        b -= 1
                        slots[b] = t
            near[r], far[r] = a - start, end - b
            total += near[r] + far[r]
            at = end
        edges[c] = total
    return edges


@jit(parallel=True, cache=True, nogil=True)
def _packed(rowptr, rows, bounds, starts, slots, near, far, offsets, part_rowptr, part_col):
    """The part's CSR from the slots: each run's rows from offsets[c] on, its proxies turned round."""
    part_rowptr[0] = 0
    for c in prange(bounds.size - 1):
        at, out = starts[c], offsets[c]
        for r in range(bounds[c], bounds[c + 1]):
            u = rows[r]
            for i in range(near[r]):
                part_col[out + i] = slots[at + i]
            out += near[r]
            end = at + rowptr[u + 1] - rowptr[u]
            for i in range(far[r]):
                part_col[out + i] = slots[end - 1 - i]
            out += far[r]
            part_rowptr[r + 1] = out
            at = end


@jit(parallel=True, cache=True, nogil=True)
def _probes(rowptr, col, n_local, bounds):
    """The part's work (part_stats): the lengths of the rows its local rows' edges reach, summed
    by runs of local rows (bounds)."""
    runs = bounds.size - 1
    probes = np.zeros(runs, np.int64)
    for c in prange(runs):
        total = 0  # counted here, stored once: neighbouring runs' sums share a cache line
        for e in range(rowptr[bounds[c]], rowptr[bounds[c + 1]]):
            total += rowptr[col[e] + 1] - rowptr[col[e]]
        probes[c] = total
    return probes.sum()


class LaneParts:
    """The parts of LSTC's partitioning of a graph held in host memory, built in part order on
    every core of the calling thread, the words of each eight parts made when the first of them is
    built (kept until the last is)."""

    def __init__(self, graph, assignment, num_parts, prune="lstc"):
        self.rowptr, self.col, self.n = np.asarray(graph.rowptr), np.asarray(graph.col), graph.n
        self.assignment, self.prune = np.asarray(assignment), PRUNE_CODES[prune]
        self.pieces = max(compiled.get_threads(), 1) * RANGES_PER_THREAD
        self.order, self.offsets = vertices_by_part(self.assignment, num_parts, self.pieces)
        self.flags, self.new_id = np.empty(self.n, np.uint8), np.empty(self.n, self.col.dtype)
        self.first, self.words, self.slots = -1, None, np.empty(0, self.col.dtype)

    def build(self, p: int) -> Part:
        """Part p: parts of one word are built fastest in turn (the words kept meanwhile)."""
        first = p - p % LANES
        if first != self.first:
            self.words = None  # (its memory back before the next words are made)
            self.words, self.first = self._words(first), first
        state, induced = self.words
        lane = p - first
        local = self.order[self.offsets[p]:self.offsets[p + 1]]
        rows, v_ind = _numbered(state, lane, self.prune, local, self.flags, self.new_id, self.pieces)
        bounds, starts = _runs(self.rowptr, rows, self.pieces)
        ids = col_dtype(rows.size)
        if self.slots.size < starts[-1] or self.slots.dtype != ids:  # kept for the next part: pages of a
            self.slots = None  # buffer made anew are faulted in anew, as many as the part's edges
            self.slots = np.empty(starts[-1], ids)
        slots = self.slots
        near, far = np.empty(rows.size, np.int64), np.empty(rows.size, np.int64)
        edges = _slotted(self.rowptr, self.col, self.flags, self.new_id, rows, local.size, self.prune, bounds, starts,
                         slots, near, far)
        offsets = np.concatenate([[0], np.cumsum(edges)]).astype(np.int64)
        part_rowptr, part_col = np.empty(rows.size + 1, np.int64), np.empty(offsets[-1], ids)
        _packed(self.rowptr, rows, bounds, starts, slots, near, far, offsets, part_rowptr, part_col)
        work = _probes(part_rowptr, part_col, local.size, even_rows(part_rowptr[:local.size + 1], self.pieces))
        return Part.make(index=p, rowptr=part_rowptr, col=part_col, global_id=rows, n_local=int(local.size),
                         v_ind=int(v_ind), e_ind=int(induced[lane]), work=work)

    def _words(self, first: int):
        """(every vertex's word for parts first .. first + 7, their induced edges)."""
        bounds = even_rows(self.rowptr, self.pieces)
        state = _marked(self.rowptr, self.col, self.assignment, first, bounds, self.prune)
        lstc = self.prune == PRUNE_CODES["lstc"]
        marked = np.zeros(self.n, np.uint8)
        induced, news = _first_round(self.rowptr, self.col, state, bounds, lstc, marked)
        if lstc:
            frontier, rounds = np.zeros(self.n, np.uint8), 1
            while news * _PARALLEL_MARKS >= self.n and rounds < _MOST_ROUNDS:
                frontier, marked = marked, frontier  # (frontier is left cleared by the round)
                news = _round(self.rowptr, self.col, state, bounds, frontier, marked)
                rounds += 1
            if news:
                _last_round(self.rowptr, self.col, state, marked)
        return state, induced


def iter_parts_lanes(graph, assignment, num_parts, prune="lstc"):
    """Every part of LSTC's partitioning of a graph in host memory, in part order, each built when
    the iterator reaches it (LaneParts), on every core of the thread that walks it."""
    with progress.bar(num_parts, f"partition into {num_parts} parts", "parts") as bar:
        builder = LaneParts(graph, assignment, num_parts, prune)
        for p in range(num_parts):
            part = builder.build(p)
            bar.update()
            yield part
