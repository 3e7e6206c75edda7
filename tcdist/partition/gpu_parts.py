"""LSTC's parts built on a GPU by passes of cuda/parts.cu over the graph's rows, a chunk of rows
at a time: views of a graph that lies on the GPU, or copies of one in host memory streamed there
(the next chunk's copy under way while the passes read this one), so that a GPU builds the
parts of a graph larger than its memory.

Each 32 parts share their masks, made with the first of them (two streams of the rows: the
marks of Algorithm 1, then Algorithm 2 as reachability, chunk by chunk in rank order, which is
topological). A part then takes two streams: each kept row's length, then its kept edges
renumbered in place. The same parts, bit for bit, as build.py's and the host's builders.

Imported only for the GPU backend; importing it imports CuPy.
"""

from __future__ import annotations

import cupy
import numpy as np

from tcdist.cuda import launch
from tcdist.cuda.build import COL_TYPES, PARTS
from tcdist.graph.graph import col_dtype
from tcdist.partition.part import Part
from tcdist.xp import array_module, copy_to_device, register_pages, to_numpy, unregister_pages

MODES = {"lstc": 0, "none": 0, "minimal": 1}  # parts.cu: edges kept between kept vertices, or MINIMAL's rule
GROUP = 32  # parts whose masks are made together: a bit each of a vertex's uint32
THREADS = 256
CHUNK_EDGES = 1 << 26  # edges of a chunk of rows (256 MiB of int32 columns)
CHUNK_ROWS = 1 << 24   # and rows at most
_NONE = np.uintp(0)  # a null pointer: an array a kernel is given none of


def _grid(items: int) -> tuple[int]:
    return (max(1, min(-(-items // THREADS), launch.MAX_GRID >> 8)),)


def _launch(name: str, items: int, *args) -> None:
    """A launch of parts.cu's instance `name` over items (rows a warp each, or vertices)."""
    launch.named(PARTS, name)(_grid(items), (THREADS,), args)


def _type(dtype) -> str:
    return "unsigned char" if np.dtype(dtype) == np.uint8 else COL_TYPES[np.dtype(dtype)]


class Chunk:
    """Rows first .. first + rows - 1 of a graph on the current GPU: rowptr (their rows + 1
    offsets into the whole graph), col (from offset base on)."""

    __slots__ = ("first", "rows", "base", "rowptr", "col")

    def __init__(self, first, rows, base, rowptr, col):
        self.first, self.rows, self.base, self.rowptr, self.col = first, rows, base, rowptr, col

    def args(self) -> tuple:
        return self.rowptr, self.col, np.int64(self.base), np.int64(self.first), np.int64(self.rows)


def chunk_bounds(rowptr, edges: int = CHUNK_EDGES, rows: int = CHUNK_ROWS) -> np.ndarray:
    """The first row of each chunk and the end (on the host; rowptr on either): runs of at most
    `rows` rows and about `edges` edges (a long row's more)."""
    xp = array_module(rowptr)
    n = rowptr.size - 1
    marks = xp.arange(0, int(rowptr[-1]), edges, dtype=xp.int64)
    starts = np.union1d(to_numpy(xp.searchsorted(rowptr, marks, side="right")) - 1, np.arange(0, n, rows))
    return np.append(starts[(starts >= 0) & (starts < n)], n).astype(np.int64)


class ResidentRows:
    """The rows of a graph that lies on the GPU, a view at a time."""

    def __init__(self, rowptr, col, edges: int = CHUNK_EDGES, rows: int = CHUNK_ROWS):
        self.rowptr, self.col, self.n, self.dtype = rowptr, col, rowptr.size - 1, col.dtype
        self.bounds = chunk_bounds(rowptr, edges, rows)

    def chunks(self):
        for a, b in zip(self.bounds[:-1], self.bounds[1:]):
            yield Chunk(int(a), int(b - a), 0, self.rowptr[a:b + 1], self.col)

    def close(self) -> None:
        pass


class StreamedRows:
    """The rows of a graph in host memory, copied to the GPU a chunk at a time into two buffers
    used in turn, on a stream of their own: the next chunk's copy runs while the current stream's
    passes read this one. Its pages are registered (pinned where they lie) while it streams."""

    def __init__(self, rowptr: np.ndarray, col: np.ndarray, edges: int = CHUNK_EDGES, rows: int = CHUNK_ROWS):
        self.rowptr, self.col, self.n, self.dtype = rowptr, col, rowptr.size - 1, col.dtype
        self.bounds = chunk_bounds(rowptr, edges, rows)
        rows = int(np.diff(self.bounds).max(initial=0))
        edges = int(np.diff(rowptr[self.bounds]).max(initial=0))
        self.copies = cupy.cuda.Stream(non_blocking=True)
        self.buffers = [(cupy.empty(rows + 1, cupy.int64), cupy.empty(edges, col.dtype))
                        for _ in range(min(2, self.bounds.size - 1))]  # (one chunk: one buffer)
        self.used = [None, None]  # the event after which the passes are done with each buffer
        self.registered = register_pages((rowptr, col))  # last: nothing after it fails and leaves them registered

    @staticmethod
    def bytes(rowptr: np.ndarray, col: np.ndarray) -> int:
        """Device bytes its buffers take."""
        bounds = chunk_bounds(rowptr)
        return min(2, bounds.size - 1) * (8 * (int(np.diff(bounds).max(initial=0)) + 1)
                                          + col.itemsize * int(np.diff(rowptr[bounds]).max(initial=0)))

    def _copy(self, k: int):
        """Chunk k's copy started into buffer k % 2: (the chunk, the event that ends its copy)."""
        a, b = int(self.bounds[k]), int(self.bounds[k + 1])
        e0, e1 = int(self.rowptr[a]), int(self.rowptr[b])
        rowptr, col = self.buffers[k % 2]
        rowptr, col = rowptr[:b - a + 1], col[:e1 - e0]
        if self.used[k % 2] is not None:
            self.copies.wait_event(self.used[k % 2])
        copy_to_device(rowptr, self.rowptr[a:b + 1], self.copies)
        copy_to_device(col, self.col[e0:e1], self.copies)
        done = cupy.cuda.Event()
        done.record(self.copies)
        return Chunk(a, b - a, e0, rowptr, col), done

    def chunks(self):
        last = self.bounds.size - 1
        coming = self._copy(0) if last else None
        for k in range(last):
            chunk, copied = coming
            coming = self._copy(k + 1) if k + 1 < last else None
            stream = cupy.cuda.get_current_stream()
            stream.wait_event(copied)
            try:
                yield chunk
            finally:  # (a walk left early too: the next copy into this buffer waits for what was launched)
                used = cupy.cuda.Event()
                used.record(stream)
                self.used[k % 2] = used

    def close(self) -> None:
        """Its buffers given back and its pages unregistered, once every copy is done (again: nothing)."""
        if self.registered is None and not self.buffers:
            return
        try:
            self.copies.synchronize()
        finally:
            self.buffers = []
            registered, self.registered = self.registered, None
            unregister_pages(registered)


class GpuParts:
    """Any part of LSTC's partitioning of a graph whose rows (ResidentRows or StreamedRows) the
    current GPU reads, built when asked; the masks of each 32 parts are made when the first of
    them is asked for and kept until a part of another group is. fits(sizes, held), if given,
    says whether a part of these sizes (Part.sizes) fits the GPU beside held bytes: where not,
    build() gives None (its arrays given back)."""

    def __init__(self, rows, assignment, num_parts: int, prune: str = "lstc", fits=None):
        self.rows, self.prune, self.n, self.fits = rows, prune, rows.n, fits
        dtype = np.uint8 if num_parts <= 256 else np.int32
        self.part = cupy.asarray(assignment.astype(dtype, copy=False))  # cast where it lies: a byte a vertex copied
        self.group, self.masks = -1, None

    def held(self) -> int:
        """Device bytes kept between parts: the vertices' parts, the masks, the rows' buffers."""
        return self.part.nbytes + sum(m.nbytes for m in self.masks or () if m is not None) + \
            sum(a.nbytes for pair in getattr(self.rows, "buffers", ()) for a in pair)

    def build(self, index: int) -> Part | None:
        lowest = index - index % GROUP
        if lowest != self.group:
            self.masks = None  # (their memory back first)
            self.masks, self.group = self._masks(lowest), lowest
        out, member, keep = self.masks
        n, part_type, col_type = self.n, _type(self.part.dtype), _type(self.rows.dtype)
        flags = cupy.empty(n, cupy.uint8)
        _launch(f"part_flags<{part_type}>", n, self.part, np.int64(lowest), np.int32(index - lowest), np.int64(n),
                out if out is not None else _NONE, member, keep, flags)
        v_ind = int(cupy.count_nonzero(flags & 4))  # MEMBER
        (locals_,) = cupy.nonzero(flags & 1)  # LOCAL
        (proxies,) = cupy.nonzero((flags & 9) == 8)  # KEEP, not LOCAL
        n_local, size = int(locals_.size), int(locals_.size + proxies.size)
        global_id = cupy.concatenate([locals_, proxies]).astype(cupy.int64, copy=False)
        del locals_, proxies
        ids = col_dtype(size)  # the part's own ids: int32 while they fit, as its columns are
        new_id = cupy.empty(n, ids)
        new_id[global_id] = cupy.arange(size, dtype=ids)
        kept, kept_locals = cupy.zeros(size, cupy.int64), cupy.zeros(size, cupy.int64)
        induced = cupy.zeros(1, cupy.uint64)
        mode, kernel = np.int32(MODES[self.prune]), f"<{col_type}, {_type(ids)}>"
        for chunk in self.rows.chunks():
            _launch("part_rows" + kernel, 32 * chunk.rows, *chunk.args(), flags, mode, new_id, kept, kept_locals,
                    induced)
        part_rowptr = cupy.zeros(size + 1, cupy.int64)
        cupy.cumsum(kept, out=part_rowptr[1:])
        del kept
        edges = int(part_rowptr[-1])
        if self.fits is not None and not self.fits((size, edges, n_local, np.dtype(ids).itemsize),
                                                   self.held() + global_id.nbytes + flags.nbytes + new_id.nbytes
                                                   + kept_locals.nbytes):
            return None
        part_col = cupy.empty(edges, ids)
        for chunk in self.rows.chunks():
            _launch("part_place" + kernel, 32 * chunk.rows, *chunk.args(), flags, mode, new_id, part_rowptr,
                    kept_locals, part_col)
        del flags, new_id, kept_locals
        probes, local_edges = cupy.zeros(1, cupy.uint64), int(part_rowptr[n_local])
        _launch(f"part_probes<{_type(ids)}>", local_edges, part_rowptr, part_col, np.int64(local_edges), probes)
        return Part.make(index=index, rowptr=part_rowptr, col=part_col, global_id=global_id, n_local=n_local,
                         v_ind=v_ind, e_ind=int(induced.get()[0]), work=int(probes.get()[0]))

    def _masks(self, lowest: int):
        """(out, where the prune mode needs it; member; keep) of parts lowest .. lowest + 31."""
        n, part_type, col_type = self.n, _type(self.part.dtype), _type(self.rows.dtype)
        out, member = cupy.zeros(n, cupy.uint32), cupy.empty(n, cupy.uint32)
        for chunk in self.rows.chunks():
            _launch(f"part_marks<{col_type}, {part_type}>", 32 * chunk.rows, *chunk.args(), self.part,
                    np.int64(lowest), out, member)
        alive = cupy.empty(n, cupy.uint32)
        _launch(f"part_members<{part_type}>", n, self.part, np.int64(lowest), np.int64(n), out, member, alive)
        if self.prune == "none":
            return None, member, member
        if self.prune == "minimal":
            return out, member, alive
        del out
        self._reach(member, alive)
        return None, member, alive

    def _reach(self, member, alive) -> None:
        """Algorithm 2's fixpoint into alive, chunk by chunk in rank order: a chunk's rows push
        their alive bits, then, round after round, the bits its rows gained."""
        push = launch.named(PARTS, f"part_push<{_type(self.rows.dtype)}>")
        changed = cupy.zeros(1, cupy.uint64)
        gained, live = None, None
        for chunk in self.rows.chunks():
            if gained is None or gained.size < chunk.rows:
                gained, live = cupy.empty(chunk.rows, cupy.uint32), cupy.empty(chunk.rows, cupy.uint32)
            grid, bits = _grid(32 * chunk.rows), _NONE  # the first round: every row's alive bits
            while True:
                gained[:chunk.rows].fill(0)
                changed.fill(0)
                push(grid, (THREADS,), (*chunk.args(), member, bits, alive, gained, changed))
                if not int(changed.get()[0]):
                    break
                live, gained = gained, live  # the bits gained are the next round's to push
                bits = live


class StreamedParts:
    """Parts of a graph in host memory built on the current GPU from its rows streamed there
    (GpuParts over StreamedRows), while fits(sizes, held) says each fits beside the builder: from
    the first that does not, build() gives None, the builder given back (its buffers, masks and
    the graph's registered pages), and None again after; close() gives it back too (again: nothing)."""

    def __init__(self, graph, assignment, num_parts: int, prune: str, fits):
        self.rows = StreamedRows(np.asarray(graph.rowptr), np.asarray(graph.col))
        try:
            self.parts = GpuParts(self.rows, assignment, num_parts, prune, fits)
        except BaseException:
            self.rows.close()  # its pages registered: not left so
            raise

    def build(self, index: int) -> Part | None:
        part = self.parts.build(index) if self.parts is not None else None
        if part is None:
            self.close()
        return part

    def close(self) -> None:
        self.parts = None
        self.rows.close()


def iter_parts_streamed(graph, assignment, num_parts: int, prune: str, fits):
    """Every part of LSTC's partitioning of a graph in host memory, in part order as the iterator
    is walked: built on the current GPU (StreamedParts) while each fits; from the first that does
    not on, built on the host, to be counted in slices."""
    from tcdist import compiled, progress
    from tcdist.partition.host import PartBuilder

    streamed, on_host = StreamedParts(graph, assignment, num_parts, prune, fits), None
    try:
        with progress.bar(num_parts, f"partition into {num_parts} parts on the GPU", "parts") as bar:
            for p in range(num_parts):
                part = streamed.build(p)
                if part is None:
                    if on_host is None:
                        on_host = PartBuilder(graph, assignment, num_parts, prune)
                    part = on_host.build(p, max(compiled.get_threads(), 1))
                bar.update()
                if p == num_parts - 1:  # the builder's memory and pages let go of before the last part counts
                    streamed.close()
                yield part
    finally:  # (a walk left early: closed by its taker, see ranks/prepare.py's Held.release)
        streamed.close()
