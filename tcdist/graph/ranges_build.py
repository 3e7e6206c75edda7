"""A graph built on a GPU too small to hold its edges' keys (under --gpu-memory-limit, or larger
than the GPU): the GPU sorts and the host holds. Pieces of raw edges are packed into directed keys
(pieces_build.pack) and sorted on the device a piece at a time, each sorted run copied to the
host; then a range of key values at a time is gathered from every run, sorted and made distinct
on the device, its vertices' degrees counted as it goes. Those copies run on a stream of their
own (_Copies), beside the draws and sorts of the next piece or range. The edges oriented by (degree, id) rank
take the same two passes, and their columns are laid out on the host range by range. The same
Graph as build_graph makes of the raw edges, on the host, with the device holding about
model.RANGES_BYTES_PER_ID an id and RANGES_BYTES_PER_KEY a key of a range (or a piece's
PIECE_BYTES_PER_EDGE an edge) at once.
"""

from __future__ import annotations

import numpy as np

from tcdist import progress
from tcdist.budget import model
from tcdist.errors import TcdistError
from tcdist.graph import build, passes
from tcdist.graph.degrees import degree_summary
from tcdist.graph.graph import MAX_VERTICES, Graph, col_dtype
from tcdist.graph.pieces_build import pack
from tcdist.xp import PAGE, copy_to_device, copy_to_host, register_pages, to_numpy, unregister_pages

SAMPLES_PER_RANGE = 2  # of every run, the keys sampled per range's worth: the ranges' cuts are chosen among them


def range_keys(room: int, span: int, per_key: int = model.RANGES_BYTES_PER_KEY) -> int:
    """Keys a range may hold in room bytes of a device beside the per-id arrays (0: none fit), a key
    taking per_key bytes (a GPU's, where the next range's keys come up beside; the host's are fewer)."""
    return max(0, (room - model.RANGES_BYTES_PER_ID * span) // per_key)


def build_in_ranges(span: int, m: int, pieces, name: str, xp, keys_per_range: int,
                    rank_on_device: bool = True) -> Graph:
    """The Graph, on the host, of m raw edges with ids below span given as (src, dst) pieces (on
    xp's device or the host), sorted on xp's device keys_per_range keys at a time; the vertices
    ranked there where rank_on_device, else on the host."""
    runs, undirected, col, registered = np.empty(m, np.uint64), np.empty(m, np.uint64), None, []
    try:
        with progress.bar(4, f"build {name}", "steps") as bar:
            registered.append(_register(runs, xp))
            bounds, loops = _sorted_runs(span, pieces, runs, xp)
            bar.update()
            registered.append(_register(undirected, xp))
            kept, degree, duplicates, reciprocal = _distinct(runs, bounds, span, keys_per_range, undirected, xp)
            bar.update()
            order, rank, n = ranked(degree, name, xp, rank_on_device)
            del degree
            bounds, row_length = _oriented_runs(undirected[:kept], runs, span, n, rank, keys_per_range, xp)
            del rank
            bar.update()
            rowptr = np.zeros(n + 1, np.int64)
            np.cumsum(to_numpy(row_length).astype(np.int64), out=rowptr[1:])
            col, at = np.empty(kept, col_dtype(n)), 0
            registered.append(_register(col, xp))
            for keys in _merged(runs, bounds, keys_per_range, xp, even=False):
                to_host((keys % np.uint64(n)).astype(col.dtype), col[at : at + keys.size], xp)
                at += keys.size
            bar.update()
    finally:  # (before the arrays are freed)
        for pages in registered:
            unregister_pages(pages)
    return Graph(rowptr=rowptr, col=col, original_id=order, name=name, self_loops=loops,
                 duplicates=duplicates, reciprocal=reciprocal, degrees=degree_summary(rowptr, n))


def _register(array, xp):
    """The array's pages, faulted in on every thread, registered with xp's device (None on the
    host, or where it refuses)."""
    if xp is np:
        return None
    passes.touch(array, max(1, PAGE // array.itemsize))
    return register_pages((array,))


def _sorted_runs(span: int, pieces, runs, xp):
    """(the runs' bounds in runs, the self loops dropped): runs filled with every piece's
    directed keys, each piece's sorted on the device and copied to the host while the next one
    is drawn."""
    bounds, loops, copies = [0], 0, _Copies(xp)
    try:
        for src, dst in pieces:
            keys, dropped = pack(xp.asarray(src), xp.asarray(dst), span, xp)
            del src, dst
            sort_in_place(keys, xp)
            copies.down(keys, runs[bounds[-1] : bounds[-1] + keys.size])
            bounds.append(bounds[-1] + keys.size)
            loops += dropped
            del keys  # (held by the copy until it ends, which the next piece's copy waits for)
    finally:
        copies.settle()  # the runs are read on the host next
    return np.array(bounds, np.int64), loops


def _distinct(runs, bounds, span: int, keys_per_range: int, undirected, xp):
    """(how many distinct undirected keys it wrote to undirected, sorted, every id's degree on the
    device, the repeated edges, the edges given both ways): a range of the runs' values at a
    time, each range's cuts even so that both directions of an edge fall in it."""
    degree = xp.zeros(span, np.uint64)
    kept = duplicates = reciprocal = 0
    for directed in _merged(runs, bounds, keys_per_range, xp, even=True):
        keys, repeated, both_ways = distinct_counted(directed, span, degree, xp)
        del directed
        duplicates, reciprocal = duplicates + repeated, reciprocal + both_ways
        to_host(keys, undirected[kept : kept + keys.size], xp)
        kept += keys.size
    return kept, degree, duplicates, reciprocal


def distinct_counted(directed, span: int, degree, xp):
    """(the distinct undirected keys (uint64) of sorted directed keys, repeated edges, edges given
    both ways), their ends' degrees added to degree (every id's, on xp's device)."""
    if xp is np:
        keys, repeated, both_ways = build.distinct_undirected(directed)
        keys = keys.view(np.uint64)
        for end in (keys // np.uint64(span), keys % np.uint64(span)):
            degree += np.bincount(end.astype(np.int64), minlength=span).astype(np.uint64)
        return keys, repeated, both_ways
    from tcdist.graph import gpu_build

    keys, repeated, both_ways = gpu_build.distinct_undirected(directed, directed.size)
    gpu_build.add_degrees(keys, span, degree)
    return keys, repeated, both_ways


def ranked(degree, name: str, xp, on_device: bool):
    """(the ids that have an edge by (degree, id) rank, on the host, every id's rank on xp's device
    (int32 where it fits), how many there are): ranked on the device where on_device (it holds
    GPU_RANK_BYTES_PER_ID an id), else on the host's threads."""
    where = xp if on_device else np
    if not on_device:
        degree = to_numpy(degree)
    ids = where.flatnonzero(degree)
    n = int(ids.size)
    if n > MAX_VERTICES:
        raise TcdistError(f"{name}: {n} vertices; tcdist handles at most {MAX_VERTICES}")
    if on_device:
        by_rank = degree[ids].astype(np.int64) * n + xp.arange(n, dtype=np.int64)
        sort_in_place(by_rank, xp)
        order = ids[by_rank % n]
    else:
        order = ids[build.rank_order(degree[ids])]
    del degree, ids
    rank = where.zeros(order.size and int(order.max()) + 1, col_dtype(n))
    rank[order] = where.arange(n, dtype=rank.dtype)
    return to_numpy(order), xp.asarray(rank), n


def _oriented_runs(undirected, runs, span: int, n: int, rank, keys_per_range: int, xp):
    """(the runs' bounds, every row's length): the edges' keys by rank (min * n + max) written
    over runs, sorted on the device keys_per_range at a time."""
    bounds, row_length = [0], xp.zeros(n, np.uint64)
    buffer = xp.empty(min(keys_per_range, undirected.size), np.uint64)  # (filled from the registered pages)
    for lo in range(0, undirected.size, keys_per_range):
        keys = buffer[: min(keys_per_range, undirected.size - lo)]
        _to_device(undirected[lo : lo + keys.size], keys, xp)
        a, b = rank[(keys // np.uint64(span)).astype(np.int64)], rank[(keys % np.uint64(span)).astype(np.int64)]
        del keys
        row = xp.minimum(a, b).astype(np.int64)
        if xp is np:
            row_length += np.bincount(row, minlength=n).astype(np.uint64)
        else:
            xp.add.at(row_length, row, np.uint64(1))  # (CuPy's bincount takes a workspace per bin)
        keys = (row * n + xp.maximum(a, b)).astype(np.uint64)
        del a, b, row
        sort_in_place(keys, xp)
        to_host(keys, runs[lo : lo + keys.size], xp)
        bounds.append(lo + keys.size)
    return np.array(bounds, np.int64), row_length


def _merged(runs, bounds, keys_per_range: int, xp, even: bool):
    """The values of sorted runs (runs[bounds[i]:bounds[i + 1]]) in order, a range at a time on
    the device, each range at most keys_per_range keys where its cuts allow (with even, every
    cut is an even value, so 2k and 2k + 1 fall in one range). The next range is copied up into a
    second buffer while one is sorted and used, so a caller is done with a range (its work given to
    the current stream) when it asks for the next."""
    cuts = _cuts(runs, bounds, keys_per_range, even)
    sizes = (cuts[1:] - cuts[:-1]).sum(axis=1)
    # two buffers, used in turn: the pool's blocks stay as they are
    buffers = [xp.empty(int(sizes.max()), np.uint64) for _ in range(min(2, sizes.size))]
    copies = _Copies(xp)

    def gather(k: int):
        """Range k's keys on their way up (its buffer's earlier range used by the work so far)."""
        keys, at = buffers[k % len(buffers)][: sizes[k]], 0
        copies.after_work()
        for start, lo, hi in zip(bounds[:-1], cuts[k], cuts[k + 1]):
            if hi > lo:
                copies.up(runs[start + lo : start + hi], keys[at : at + hi - lo])
                at += hi - lo
        return keys, copies.mark()

    try:
        pending = gather(0)
        for k in range(sizes.size):
            keys, copied = pending
            copies.wait(copied)
            if k + 1 < sizes.size:
                pending = gather(k + 1)
            sort_in_place(keys, xp)
            yield keys
            del keys
    finally:
        copies.settle()  # no copy still writing into the buffers once they are freed


def _cuts(runs, bounds, keys_per_range: int, even: bool):
    """Positions in every run (a row per cut, a column per run) where the ranges begin and, last,
    end: each cut a value sampled from the runs, chosen so that a range holds at most
    keys_per_range keys where the samples allow. A run's samples lie a stride apart, so the keys
    below a value are at most a stride times the samples below it, and at least that less a
    stride per run: the exact places are searched for the chosen cuts only."""
    starts, ends = bounds[:-1], bounds[1:]
    total, count = int(bounds[-1]), starts.size
    whole = np.stack([np.zeros(count, np.int64), ends - starts])
    if total <= keys_per_range:
        return whole
    stride = max(1, keys_per_range // (SAMPLES_PER_RANGE * count))
    samples = np.sort(np.concatenate([runs[a:b:stride] for a, b in zip(starts, ends)]))
    values = np.unique(samples & ~np.uint64(1) if even else samples)
    at_most = np.searchsorted(samples, values) * stride  # keys below each value, or fewer
    chosen, taken, last = [], 0, -1
    while total - taken > keys_per_range:
        cut = max(int(np.searchsorted(at_most, taken + keys_per_range, side="right")) - 1, last + 1)
        if cut >= values.size:
            break
        chosen.append([np.searchsorted(runs[a:b], values[cut]) for a, b in zip(starts, ends)])
        taken, last = int(sum(chosen[-1])), cut
    return np.concatenate([whole[:1], np.array(chosen, np.int64).reshape(-1, count), whole[1:]])


def sort_in_place(keys, xp) -> None:
    if xp is np:
        keys.sort()
    else:
        from tcdist.graph import gpu_build

        gpu_build.sort(keys)


def to_host(values, out, xp) -> None:
    if xp is np:
        out[...] = values
    else:
        copy_to_host(out, values)


def _to_device(values, out, xp) -> None:
    if xp is np:
        out[...] = values
    else:
        copy_to_device(out, values)


class _Copies:
    """Copies between the host's (registered) arrays and the device on a stream of their own, so
    that they run beside the passes and sorts of the current stream; on the host, plain copies."""

    def __init__(self, xp):
        self.xp = xp
        self.stream = None if xp is np else xp.cuda.Stream(non_blocking=True)
        self.held = None  # (device values, the event that ends their copy down)

    def after_work(self) -> None:
        """Copies started from now on wait for the work the current stream has been given."""
        if self.stream is not None:
            self.stream.wait_event(self.xp.cuda.get_current_stream().record())

    def up(self, values, out) -> None:
        if self.stream is None:
            out[...] = values
        else:
            copy_to_device(out, values, self.stream)

    def mark(self):
        """The event that ends the copies started so far (None on the host)."""
        return None if self.stream is None else self.stream.record()

    def wait(self, event) -> None:
        """The current stream's next work waits for the copies that event ends."""
        if event is not None:
            self.xp.cuda.get_current_stream().wait_event(event)

    def down(self, values, out) -> None:
        """out[...] = values once the current stream's work on them is done; values are held until
        then (the last copy down is waited for first: one is under way at a time)."""
        if self.stream is None:
            out[...] = values
            return
        self.finish()
        self.after_work()
        copy_to_host(out, values, self.stream, blocking=False)
        self.held = (values, self.stream.record())

    def finish(self) -> None:
        """Wait for the copy down under way, and let go of its values."""
        if self.held is not None:
            self.held[1].synchronize()
            self.held = None

    def settle(self) -> None:
        """Wait for every copy started."""
        if self.stream is not None:
            self.stream.synchronize()
        self.held = None
