"""What a user gives tcdist, turned into a Graph: a path, a generator spec, an in-memory graph,
or a partition store (which is counted as it was written)."""

from __future__ import annotations

import os
import time
from importlib import resources

import numpy as np

from tcdist import io, plan, progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.device.core import Device
from tcdist.device.gpu import free_bytes as free_gpu_bytes
from tcdist.device.gpu import problem as gpu_problem
from tcdist.errors import OptionError, TcdistError
from tcdist.graph import Graph, build_graph, pieces_build, ranges_build, redrawn_build
from tcdist.graph.check import csr_problem
from tcdist.graph.edges import EdgeList
from tcdist.io import byte_ranges, scratch
from tcdist.io.engines import PAIR_BYTES
from tcdist.io.objects import edges_of
from tcdist.io.scratch import DiskColumns
from tcdist.io.seal import read_seal
from tcdist.io.shares import read_share
from tcdist.io.text import parse_peak_bytes
from tcdist.partition.store import FORMAT as STORE_FORMAT
from tcdist.partition.store import Store
from tcdist.results import Timings

Source = object  # None, a path, a spec, a Graph, an EdgeList, or an in-memory graph (io/objects.py)
EMBEDDED_NAME = "ego-Facebook (embedded)"
EMBEDDED_TRIANGLES = 1_612_010


def embedded_path() -> str:
    """The ego-Facebook edge list shipped inside the package."""
    return str(resources.files("tcdist") / "data" / "facebook_combined.txt.gz")


def _gpu_room(device: Device | str) -> int:
    """Bytes the GPU may give to building the graph: what is free, under the memory limit if any."""
    return device.room() if isinstance(device, Device) else free_gpu_bytes()


def _upload_edges(edges, timings, room: int):
    """Move an edge list to the GPU to build there when its edges fit (its vertices are not known
    yet: a build that runs out of memory there goes on on the host); else it is built on the host."""
    import cupy

    if not isinstance(edges.src, cupy.ndarray) and model.edges_build_on_gpu(len(edges), room):
        t0 = time.perf_counter()
        edges.src, edges.dst = cupy.asarray(edges.src), cupy.asarray(edges.dst)
        cupy.cuda.Device().synchronize()
        timings.transfer += time.perf_counter() - t0
    return edges


def load_graph(source: Source = None, *, seed: int = 0, timings: Timings | None = None,
               device: Device | str = "cpu", labels: bool = False) -> Graph:
    """The cleaned, oriented Graph of a source.

    source: None (the embedded ego-Facebook graph), a file path (edge list, Matrix Market,
    tcdist HDF5; optionally gzipped), a generator spec such as ``"rmat:18"``, a scipy sparse
    matrix, a networkx graph, a pandas/cuDF frame or PyArrow table of edges, two arrays of
    vertex ids, an (m, 2) array or a list of (source, target) pairs (ids that are not integers
    are labels, kept as graph.labels), an EdgeList as io.read gives it (built as it lies), or a
    Graph (returned as it is).
    device: a GPU Device (or 'gpu') builds the graph with CuPy on the current device when it
    fits there, under the Device's memory limit if it has one (generators then draw on the GPU);
    the graph's arrays stay where they were built.
    timings: receives the generate or read, build and (on a GPU) transfer seconds.
    labels: the source is a text edge list whose ids are names (kept as graph.labels).
    """
    if not isinstance(device, Device):
        if device not in ("cpu", "gpu"):
            raise TcdistError(f"device must be 'cpu', 'gpu' or a Device, got {device!r}")
        if device == "gpu" and (reason := gpu_problem()) is not None:
            raise TcdistError(f"device 'gpu': {reason}")
    on_gpu = device.is_gpu if isinstance(device, Device) else device == "gpu"
    timings = Timings() if timings is None else timings
    began = Timings.clock()
    generated = isinstance(source, (str, os.PathLike)) and io.is_spec(source) and not os.path.exists(source)
    if labels and (generated or not isinstance(source, (str, os.PathLike))):
        raise OptionError("{labels} reads text edge lists whose ids are names; give the path of one (other sources "
                          "keep ids that are not integers as labels by themselves)")
    if isinstance(source, Graph):
        problem = csr_problem(source.rowptr, source.col, source.n, ascending=True)
        if problem:
            raise TcdistError(f"a Graph whose CSR a kernel cannot trust: {problem}")
        loaded = source
    elif isinstance(source, EdgeList):
        loaded = source
    elif source is None:
        loaded = io.read(embedded_path())
        loaded.name = EMBEDDED_NAME
    elif generated:
        loaded = _generated(str(source), seed, device if on_gpu else None, timings)
    elif isinstance(source, (str, os.PathLike)):
        reread = None if labels else _reread(os.fspath(source), device if on_gpu else None, timings)
        if reread is not None:
            return reread
        loaded = io.read(os.fspath(source), gpu_room=_gpu_room(device) if on_gpu and not labels else None,
                         labels=labels)
    else:
        loaded = edges_of(source)
    if generated and not isinstance(loaded, Graph):  # (a graph built from pieces has timed its steps)
        timings.add("generate", began)
    elif not generated:
        timings.add("read", began)
    if isinstance(loaded, Graph):
        return loaded
    if on_gpu:
        loaded = _upload_edges(loaded, timings, _gpu_room(device))
    began = Timings.clock()
    try:
        graph = _edges_in_ranges(loaded, _gpu_room(device)) if on_gpu and isinstance(loaded.src, np.ndarray) else None
        if graph is None:
            graph = build_graph(loaded)
    except MemoryError:  # CuPy's OutOfMemoryError: more vertices than the estimate could know of
        if not on_gpu or isinstance(loaded.src, np.ndarray):
            raise
        graph = None
    if graph is None:  # here, where the failed build's arrays are gone
        import cupy

        loaded.src, loaded.dst = loaded.src.get(), loaded.dst.get()
        cupy.get_default_memory_pool().free_all_blocks()
        graph = build_graph(loaded)
    timings.add("build", began)
    return graph


def _generated(spec: str, seed: int, gpu, timings: Timings):
    """A spec's raw edges (an EdgeList) or its Graph, as its plan says (plan.generated), on the GPU
    given (a Device or 'gpu') or the host; a build on the GPU over its estimate (CuPy's
    OutOfMemoryError) is planned again on the host."""
    if gpu is not None:
        build = plan.generated(spec, _gpu_room(gpu))
        if build.device == "gpu":
            import cupy

            try:
                return _made(spec, seed, build, timings)
            except MemoryError:  # over its estimate: the host's way, as if it had not fit
                cupy.get_default_memory_pool().free_all_blocks()  # here, where the failed arrays are gone
        else:
            return _made(spec, seed, build, timings)
    return _made(spec, seed, plan.generated(spec, None), timings)


def _made(spec: str, seed: int, build: plan.Build, timings: Timings):
    """The build carried out: the drawing of the pieces timed as generate, the rest as build (a
    whole spec's raw edges are returned, load_graph builds them)."""
    xp = np
    if build.device == "gpu":
        import cupy as xp
    if build.way == "whole":
        return io.generate(spec, seed=seed, xp=xp)  # (on the host: it says so if that does not fit)
    span, m = build.span, build.raw_edges
    if build.way == "pieces":
        pieces = io.pieces(spec, seed=seed, xp=xp)[2]
        return _timed(lambda drawn: pieces_build.build_from_pieces(span, m, drawn(), spec, xp), lambda: pieces, xp,
                      timings)
    if build.way == "ranges":
        pieces = io.pieces(spec, seed=seed, xp=xp, size=build.piece)[2]
        return _timed(lambda drawn: ranges_build.build_in_ranges(span, m, drawn(), spec, xp, build.keys, build.ranked),
                      lambda: pieces, xp, timings)
    return _redrawn_from(build, lambda: io.pieces(spec, seed=seed, xp=xp, size=build.piece)[2], spec, xp, timings,
                         "generate")


def _reread(path: str, gpu, timings: Timings) -> Graph | None:
    """The Graph of a text or Matrix Market file (not compressed) whose edges and their build the
    host cannot hold, built on the GPU given (a Device or 'gpu') or the host's cores, the file read
    again for every range of keys (graph/redrawn_build.py) in pieces of its lines, each parsed as a
    rank parses its share; None where the file is read whole (it fits, it is another kind, or its
    ids do not pack: the reading says what it needs)."""
    reading = plan.read_again(path, _gpu_room(gpu) if gpu is not None else None)
    if reading is None:
        return None
    room, edges, count, gpu_room, whole_gpu = (reading.host_room, reading.edges, reading.pieces, reading.gpu_room,
                                               reading.whole_gpu)
    xp = np
    if gpu is not None:
        import cupy as xp

    columns = reading.columns
    if gpu is None and columns > room:  # its columns will go to disk: the scratch's room checked before any reading
        scratch.check_room(columns)
    spilled, at = _spilled_pairs(edges, columns * (columns > room)) if gpu is None else None, [0]  # (at: where
    #                                                                                   each piece's pairs begin)

    held = [] if gpu is not None else None  # the parsed pairs kept on the GPU where they fit: no reading again

    def pieces():
        if held:
            yield from held
            return
        for k in range(count):
            if spilled is not None:
                half = (at[k + 1] - at[k]) // 2
                yield spilled[at[k] : at[k] + half], spilled[at[k] + half : at[k + 1]]
                continue
            share = read_share(path, k, count, gpu_room=gpu_room)
            yield xp.asarray(share.edges.src), xp.asarray(share.edges.dst)

    try:
        began, shares, top, lower = Timings.clock(), [], -1, redrawn_build.LowerEnds(xp, path)
        for k in progress.iterate(range(count), count, f"read {path}"):  # a first reading: the ids' bound, the
            shares.append(read_share(path, k, count, gpu_room=gpu_room))  # lower ends, what pieces check together
            src, dst = xp.asarray(shares[-1].edges.src), xp.asarray(shares[-1].edges.dst)
            top = max(top, int(max(src.max(), dst.max())) if src.size else -1)
            lower.add(src, dst)
            if held is not None:
                held = _held(held, src, dst, top, whole_gpu // plan.REREAD_HELD_SHARE)
            if spilled is not None:
                spilled.write(at[-1], src)
                spilled.write(at[-1] + src.size, dst)
                at.append(at[-1] + 2 * src.size)
            shares[-1].edges = src = dst = None
        shares[0].check_together([share.facts for share in shares])
        memory.give_back_freed()  # (the pieces' parsing, freed: the room the layout is decided in, as planned)
        timings.add("read", began)
        span = top + 1
        if not span:
            return None  # (the whole reading says what it needs)
        if gpu is not None:  # (no piece parsed there once the pairs are held)
            room = whole_gpu - _held_bytes(held) if held else gpu_room * (plan.REREAD_PIECE_SHARE - 1)
        else:
            room -= parse_peak_bytes(-(-os.path.getsize(path) // count))
        piece = model.PIECE_BYTES_PER_EDGE * -(-edges // count)  # a piece's pairs, keys and selections
        build = plan.redrawn(span, edges, path, "host" if gpu is None else "gpu", room, piece, estimated=True)
        graph = None if build is None else _redrawn_from(build, pieces, path, xp, timings, "read", lower)
    finally:
        if spilled is not None:
            spilled.close()
    if graph is not None:
        graph.warnings = list(byte_ranges.rules_of(path, io.detect_format(path)).warnings)
    return graph


def _held(held: list | None, src, dst, top: int, room: int) -> list | None:
    """held with a piece's pairs on the GPU added (as int32 while the ids so far fit it), where all
    of them fit in room bytes; else None (the held pairs freed: the file is parsed again)."""
    if held is None:
        return None
    if top < 1 << 31:
        src, dst = src.astype(np.int32), dst.astype(np.int32)
    if _held_bytes(held) + src.nbytes + dst.nbytes > room:
        return None
    return [*held, (src, dst)]


def _held_bytes(held: list) -> int:
    return sum(src.nbytes + dst.nbytes for src, dst in held)


def _spilled_pairs(edges: int, beside: int) -> DiskColumns | None:
    """A scratch file for about edges parsed pairs, which the passes read back ten to twenty times
    faster than the host's cores parse text (a GPU parses it as fast as a disk gives the pairs back);
    None where the scratch folder has no room for them beside beside bytes (the text is parsed
    again instead)."""
    try:
        scratch.check_room(PAIR_BYTES * edges + beside, "the parsed pairs")
        return DiskColumns(2 * edges, np.int64, "the parsed pairs")
    except TcdistError:
        return None


def _redrawn_from(build: plan.Build, pieces, name: str, xp, timings: Timings, stage: str, counted=None) -> Graph:
    """A build drawn or read again carried out (redrawn_build.py), pieces() afresh on each pass, the
    lower ends counted already where given."""
    columns = DiskColumns if build.csr == "disk" else None
    return _timed(lambda drawn: redrawn_build.build_redrawn(build.span, drawn, name, xp, build.keys, build.csr == "gpu",
                                                            columns, counted), pieces, xp, timings, stage)


def _edges_in_ranges(edges, room: int) -> Graph | None:
    """The Graph of an edge list held on the host that does not fit the GPU, its keys sorted
    there a range at a time (graph/ranges_build.py); None where that does not fit or pay."""
    import cupy

    m = len(edges)
    span = int(max(edges.src.max(), edges.dst.max())) + 1 if m > plan.RANGE_KEYS_AT_LEAST else 0
    planned = span and plan.ranges(room, span, m, edges.name)
    if not planned:
        return None
    piece, keys, ranked = planned
    pieces = ((edges.src[lo : lo + piece], edges.dst[lo : lo + piece]) for lo in range(0, m, piece))
    try:
        graph = ranges_build.build_in_ranges(span, m, pieces, edges.name, cupy, keys, ranked)
    except MemoryError:  # over its estimate: the host builds it
        graph = None
    if graph is None:  # here, where the failed build's arrays are gone
        cupy.get_default_memory_pool().free_all_blocks()
        return None
    graph.warnings, graph.labels = list(edges.warnings), edges.labels
    return graph


def _timed(build, pieces, xp, timings: Timings, stage: str = "generate"):
    """build(drawn): drawn() the pieces of a fresh pieces(), their making timed as stage (generate
    or read) and the rest as build (compiling as compile)."""
    making = Timings()

    def drawn():
        made = pieces()
        while True:
            began = Timings.clock()
            piece = next(made, None)
            if xp is not np:
                xp.cuda.get_current_stream().synchronize()  # its draws are done when it is timed (the copies go on)
            making.add(stage, began)
            if piece is None:
                return
            yield piece

    began = Timings.clock()
    graph = build(drawn)
    memory.give_back_freed()  # (its passes' arrays, freed: the count's room under --host-memory-limit)
    timings.add("build", began)  # the drawing's compiling (this thread's) among it
    timings.build -= getattr(making, stage)
    setattr(timings, stage, getattr(timings, stage) + getattr(making, stage))
    return graph


def builds(source: Source) -> bool:
    """Whether load_graph builds the source's graph (text, a generator, an object), rather than
    reading one built already (tcdist HDF5, a Graph)."""
    if isinstance(source, Graph):
        return False
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        return io.detect_format(source) != "h5"
    return True


def is_store(source: Source) -> bool:
    """Whether source is the path of a partition store."""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source) or not os.access(source, os.R_OK):
        return False  # not a readable file: reading it as a graph says why, in one line
    found = read_seal(source)
    return found is not None and found[0]["format"] == STORE_FORMAT


def open_store_source(source: Source) -> Store | None:
    """A Store if source is the path of a partition store, else None."""
    return Store(source) if is_store(source) else None
