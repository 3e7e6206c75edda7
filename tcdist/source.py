"""What a user gives tcdist, turned into a Graph: a path, a generator spec, an in-memory graph,
or a partition store (which is counted as it was written)."""

from __future__ import annotations

import math
import os
import time
from importlib import resources

import numpy as np

from tcdist import io, progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.device.core import Device
from tcdist.device.gpu import free_bytes as free_gpu_bytes
from tcdist.errors import OptionError, TcdistError
from tcdist.graph import Graph, build_graph, pieces_build, ranges_build, redrawn_build
from tcdist.graph.check import csr_problem
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import col_dtype
from tcdist.io import byte_ranges, generators, scratch
from tcdist.io.byte_ranges import count_line_ends, file_pieces
from tcdist.io.engines import PAIR_BYTES
from tcdist.io.grammar import SMALL_BLOCK_BYTES
from tcdist.io.objects import edges_of
from tcdist.io.scratch import DiskColumns
from tcdist.io.seal import read_seal
from tcdist.io.shares import read_share
from tcdist.io.text import is_gzip, is_stream, parse_peak_bytes
from tcdist.partition.store import FORMAT as STORE_FORMAT
from tcdist.partition.store import Store
from tcdist.results import Timings

Source = object  # None, a path, a spec, a Graph, an EdgeList, or an in-memory graph (io/objects.py)
EMBEDDED_NAME = "ego-Facebook (embedded)"
EMBEDDED_TRIANGLES = 1_612_010
RANGE_KEYS_AT_LEAST = 1 << 22  # keys a range below which copies and launches cost more than the host's build
PIECE_EDGES_AT_LEAST = 1 << 18  # and below this many edges a piece
REDRAWN_RANGES_AT_MOST = 64  # a graph drawn again for each of more ranges than this takes longer than it is worth
REDRAWN_PIECE_EDGES_AT_LEAST = 1 << 16  # or in pieces smaller than this
REREAD_SAMPLE_BYTES = 1 << 22  # a file's first bytes, whose lines estimate its edges
SHORTEST_LINE_BYTES = 4  # an edge's line: "0 1\n"
REREAD_PIECE_SHARE = 4  # a file read again in pieces that take at most this fraction of the host's room
REREAD_HELD_SHARE = 2  # and its parsed pairs kept on the GPU where they take at most this fraction of its room


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
    """A spec's raw edges, on the GPU (gpu: a Device or 'gpu') where they and their build fit it;
    else the Graph built from its pieces (graph/pieces_build.py) where that fits the GPU, else
    built on the host with the GPU sorting a range of keys at a time (graph/ranges_build.py);
    with no GPU, the raw edges on the host where they fit there, else the Graph built from its
    pieces there."""
    raw = io.spec_edges(spec)
    if gpu is not None:
        import cupy

        room = _gpu_room(gpu)
        made = io.pieces(spec, seed=seed, xp=cupy)  # (only rmat and er draw on a GPU; nothing is drawn here)
        vertices = min(made[0], 2 * raw) if made else raw
        need = max(model.gpu_generated_bytes(raw, generators.permuted(spec), generators.PIECE_EDGES),
                   model.gpu_build_bytes(raw, vertices))
        edges = graph = None
        try:
            if need < room:
                edges = io.generate(spec, seed=seed, xp=cupy)
            else:
                graph = _from_pieces(spec, made, cupy, room, timings) or _in_ranges(spec, seed, room, timings)
        except MemoryError:  # over its estimate (CuPy's OutOfMemoryError): the host's way, as if it had not fit
            pass
        if edges is not None or graph is not None:
            return edges if edges is not None else graph
        cupy.get_default_memory_pool().free_all_blocks()  # here, where the failed arrays are gone
    room, _ = memory.available()
    if raw * (model.GENERATED_BYTES_PER_EDGE + model.BUILD_BYTES_PER_EDGE) > room:
        graph = _from_pieces(spec, io.pieces(spec, seed=seed), np, room, timings) or \
            _redrawn(spec, seed, np, room, timings)
        if graph is not None:
            return graph
    return io.generate(spec, seed=seed)  # (on the host: it says so if that does not fit either)


def _from_pieces(spec: str, made, xp, room: int, timings: Timings) -> Graph | None:
    """The Graph of a spec built from its pieces (made: io.pieces on xp, nothing drawn yet) on xp's
    device where that fits room (else None, as for a spec that has no pieces or ids that do not
    pack); the drawing of the pieces timed as generate, the rest as build."""
    if made is None or not pieces_build.packs(made[0]) or \
            model.pieces_build_bytes(made[1], made[0], generators.PIECE_EDGES, pieces_build.STEP) > room:
        return None
    span, m, pieces = made
    return _timed(lambda drawn: pieces_build.build_from_pieces(span, m, drawn(), spec, xp), lambda: pieces, xp,
                  timings)


def _in_ranges(spec: str, seed: int, room: int, timings: Timings) -> Graph | None:
    """The Graph of a spec, on the host, its pieces drawn and its keys sorted on the GPU a range
    at a time (graph/ranges_build.py) in room bytes; None where that does not fit or pay."""
    import cupy

    made = io.pieces(spec)
    planned = made and _ranges_plan(room, made[0], made[1], spec, generators.permuted(spec), redraw=True)
    if not planned:
        return None
    if planned == "redraw":
        return _redrawn(spec, seed, cupy, room, timings)
    span, m, _ = made
    piece, keys, ranked = planned
    pieces = io.pieces(spec, seed=seed, xp=cupy, size=piece)[2]
    return _timed(lambda drawn: ranges_build.build_in_ranges(span, m, drawn(), spec, cupy, keys, ranked),
                  lambda: pieces, cupy, timings)


def _redrawn(spec: str, seed: int, xp, room: int, timings: Timings) -> Graph | None:
    """The Graph of a spec, on the host, its pieces drawn again for every range of keys on xp's
    device (graph/redrawn_build.py) in room bytes there; None where its ids do not pack or a range
    or a piece worth the passes does not fit; refused where the host cannot hold the graph."""
    made = io.pieces(spec)
    if not made or not pieces_build.packs(made[0]):
        return None
    span, m, _ = made
    room, csr = _redrawn_room(span, m, spec, xp, room - model.GPU_PERMUTATION_BYTES_PER_ID * generators.permuted(spec))
    piece = max(min(generators.PIECE_EDGES, max(0, room // 4) // model.PIECE_BYTES_PER_EDGE),
                min(m, REDRAWN_PIECE_EDGES_AT_LEAST))
    return _redrawn_from(span, m, lambda: io.pieces(spec, seed=seed, xp=xp, size=piece)[2], spec, xp, room,
                         model.PIECE_BYTES_PER_EDGE * piece, timings, "generate", csr)


def _reread(path: str, gpu, timings: Timings) -> Graph | None:
    """The Graph of a text or Matrix Market file (not compressed) whose edges and their build the
    host cannot hold, built on the GPU given (a Device or 'gpu') or the host's cores, the file read
    again for every range of keys (graph/redrawn_build.py) in pieces of its lines, each parsed as a
    rank parses its share; None where the file is read whole (it fits, it is another kind, or its
    ids do not pack: the reading says what it needs)."""
    room, _ = memory.available()
    try:
        if is_stream(path) or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        if size // SHORTEST_LINE_BYTES * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE) + parse_peak_bytes(size) <= room:
            return None  # (every file that fits, known from its size alone: no byte read here)
        if is_gzip(path) or io.detect_format(path) == "h5":
            return None
        sample = min(size, REREAD_SAMPLE_BYTES)
        edges = max(1, count_line_ends(file_pieces(path, 0, sample))) * size // max(1, sample)  # comments: at most
    except OSError:  # the reading says what is wrong with the path
        return None
    if edges * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE) + parse_peak_bytes(size) <= room:
        return None
    budget, per_byte = room // REREAD_PIECE_SHARE, edges * model.PIECE_BYTES_PER_EDGE / size
    piece = budget / (model.PARSE_BYTES_PER_TEXT_BYTE + per_byte)  # its parse's peak, then its pairs and keys
    if piece <= SMALL_BLOCK_BYTES:  # (parsed in whole-array NumPy while Numba is not loaded)
        piece = budget / (model.SMALL_PARSE_BYTES_PER_TEXT_BYTE + per_byte)
    count = max(1, math.ceil(size / piece))
    whole_gpu = _gpu_room(gpu) if gpu is not None else 0
    gpu_room = whole_gpu // REREAD_PIECE_SHARE if gpu is not None else None  # a piece parsed there
    xp = np
    if gpu is not None:
        import cupy as xp

    columns = np.dtype(col_dtype(2 * edges)).itemsize * edges
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
                held = _held(held, src, dst, top, whole_gpu // REREAD_HELD_SHARE)
            if spilled is not None:
                spilled.write(at[-1], src)
                spilled.write(at[-1] + src.size, dst)
                at.append(at[-1] + 2 * src.size)
            shares[-1].edges = src = dst = None
        shares[0].check_together([share.facts for share in shares])
        timings.add("read", began)
        span = top + 1
        if not span or not pieces_build.packs(span):
            return None  # (the whole reading says what it needs)
        if gpu is not None:  # (no piece parsed there once the pairs are held)
            room = whole_gpu - _held_bytes(held) if held else gpu_room * (REREAD_PIECE_SHARE - 1)
        else:
            room -= parse_peak_bytes(-(-size // count))
        room, csr = _redrawn_room(span, edges, path, xp, room, estimated=True)
        piece = model.PIECE_BYTES_PER_EDGE * -(-edges // count)  # a piece's pairs, keys and selections
        graph = _redrawn_from(span, edges, pieces, path, xp, room, piece, timings, "read", csr, lower, estimated=True)
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


def _redrawn_room(span: int, m: int, name: str, xp, room: int, estimated: bool = False) -> tuple[int, str]:
    """(xp's device's room left beside the graph, where its CSR is laid out: "host", "device" or
    "disk") of a graph built drawn again, of m raw edges (at most) with ids below span, in room
    bytes of xp's device: on the host where it holds it, else on a GPU that does, else its columns
    on disk (io/scratch.py), the host holding the row pointers; refused where it cannot hold those."""
    columns = np.dtype(col_dtype(span)).itemsize * m
    pointers = 8 * span
    host = model.REDRAWN_HOST_BYTES_PER_ID * span  # its rank order and a range plan's counts
    free = memory.available()[0]
    if columns + pointers + host <= free:
        return room - (columns + pointers + host) * (xp is np), "host"
    if xp is not np and columns + 2 * pointers < room:  # (the rank order there too)
        memory.require(host, _building(name, m, estimated, "device"), "count it on a host with more memory")
        return room - columns - 2 * pointers, "device"
    memory.require(pointers + host, _building(name, m, estimated, "disk"), "count it on a host with more memory")
    scratch.check_room(columns)  # (before any pass: the columns are written once the vertices are ranked)
    return room - (pointers + host) * (xp is np), "disk"


def _building(name: str, m: int, estimated: bool, csr: str) -> str:
    """What a refusal of a graph built drawn or read again says it needed memory for."""
    return f"building the graph of {name} ({'about ' * estimated}{m:,} raw edges)" + \
        {"host": "", "device": " on the GPU", "disk": " with its columns on disk"}[csr]


def _redrawn_from(span: int, m: int, pieces, name: str, xp, room: int, piece: int, timings: Timings, stage: str,
                  csr: str, counted=None, estimated: bool = False) -> Graph | None:
    """build_redrawn of m raw edges (at most) with ids below span, pieces() afresh on each pass, in
    room bytes of xp's device beside a piece of piece bytes, its CSR laid out where csr says
    (_redrawn_room), the lower ends counted already where given; where a range worth the passes
    does not fit, None on a GPU (the host's way next), refused on the host with the least it needs."""
    per_key = model.RANGES_BYTES_PER_KEY if xp is not np else model.HOST_RANGE_BYTES_PER_KEY
    keys = ranges_build.range_keys(room - piece, span, per_key)
    if keys < m / REDRAWN_RANGES_AT_MOST:
        if xp is not np:
            return None
        least = piece + model.RANGES_BYTES_PER_ID * span + per_key * -(-m // REDRAWN_RANGES_AT_MOST)
        memory.require(memory.available()[0] - room + least, _building(name, m, estimated, csr),
                       "count it on a host with more memory")
        keys = max(keys, 1)
    columns = DiskColumns if csr == "disk" else None
    return _timed(lambda drawn: redrawn_build.build_redrawn(span, drawn, name, xp, keys, csr == "device", columns,
                                                            counted), pieces, xp, timings, stage)


def _edges_in_ranges(edges, room: int) -> Graph | None:
    """The Graph of an edge list held on the host that does not fit the GPU, its keys sorted
    there a range at a time (graph/ranges_build.py); None where that does not fit or pay."""
    import cupy

    m = len(edges)
    span = int(max(edges.src.max(), edges.dst.max())) + 1 if m > RANGE_KEYS_AT_LEAST else 0
    planned = span and _ranges_plan(room, span, m, edges.name)
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


def _ranges_plan(room: int, span: int, m: int, name: str, permuted: int = 0, redraw: bool = False):
    """(raw edges a piece, keys a range, whether the vertices are ranked on the GPU) of m raw
    edges with ids below span built in ranges in room bytes of a GPU (permuted: ids of RMAT's
    permutation drawn there); None where the ids do not pack or a range or a piece worth the
    passes does not fit; where the host cannot hold the build, "redraw" where redraw (a generator,
    drawn again instead: redrawn_build.py), else refused."""
    if not pieces_build.packs(span):
        return None
    keys = ranges_build.range_keys(room, span)
    spare = (room - model.GPU_PERMUTATION_BYTES_PER_ID * permuted) // (model.PIECE_BYTES_PER_EDGE +
                                                                       model.RANGES_HELD_BYTES_PER_EDGE)
    piece = min(generators.PIECE_EDGES, 1 << max(0, spare.bit_length() - 1))
    if keys < RANGE_KEYS_AT_LEAST or spare < PIECE_EDGES_AT_LEAST:
        return None
    host = model.RANGES_HOST_BYTES_PER_EDGE * m + model.RANGES_HOST_BYTES_PER_ID * span
    if redraw and host > memory.available()[0]:
        return "redraw"
    memory.require(host, f"building the graph of {name} ({m:,} raw edges)", "count it on a host with more memory")
    return piece, keys, model.GPU_RANK_BYTES_PER_ID * span <= room


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
