"""Where a graph is built and where it lies, decided once, before any edge is drawn or read, from
the source's facts (a generator's raw edges and ids' bound; a file's size and the lines of its
first bytes), the GPU's room, the host's (its free memory, or --host-memory-limit) and the scratch
folder's; and how a built graph is counted (counted_as: whole, replicated, slices or parts, by one
process or by ranks). source.py carries a Build out, ranks/prepare.py the count's mode; `tcdist
count GRAPH --plan` shows both (for_count, the mode from the sizes the plan expects: count_mode)
without counting.

A generator's build is the first of these that fits:
  whole        its raw edges drawn on the GPU and built there (graph/build.py on CuPy)
  pieces       its pieces drawn one at a time, their keys made distinct a step at a time
               (graph/pieces_build.py), on the GPU, else (no GPU, or none fits) on the host
  ranges       pieces drawn on the GPU and sorted there a range of keys at a time, the sorted runs
               on the host (graph/ranges_build.py)
  drawn again  nothing of the raw edges kept: the pieces drawn again for every range of keys
               (graph/redrawn_build.py), on the GPU, else on the host; its CSR on the host, else
               on the GPU, else its columns on disk (io/scratch.py)
  whole        on the host (refused, saying what it needs, where it does not fit)
A text file whose edges and their build the host cannot hold is read again (as drawn again, the
file read in pieces for every range; the pairs of its first reading held on the GPU or spilled to
scratch where they fit); any other input is read whole.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import asdict, dataclass

import numpy as np

from tcdist import io
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.budget.search import STALLED
from tcdist.budget.sizes import size_text
from tcdist.budget.slices import refuse_unsliceable, slice_plan
from tcdist.errors import TcdistError, named
from tcdist.graph import pieces_build, ranges_build
from tcdist.graph.graph import col_dtype
from tcdist.io import generators, grammar, scratch
from tcdist.io.byte_ranges import count_line_ends, file_pieces
from tcdist.io.engines import PAIR_BYTES
from tcdist.io.grammar import SMALL_BLOCK_BYTES
from tcdist.io.text import is_gzip, is_stream, parse_peak_bytes
from tcdist.partition import Part, partition_graph

RANGE_KEYS_AT_LEAST = 1 << 22  # keys a range below which copies and launches cost more than the host's build
PIECE_EDGES_AT_LEAST = 1 << 18  # and below this many edges a piece
REDRAWN_RANGES_AT_MOST = 64  # a graph drawn again for each of more ranges than this takes longer than it is worth
REDRAWN_PIECE_EDGES_AT_LEAST = 1 << 16  # or in pieces smaller than this
REREAD_SAMPLE_BYTES = 1 << 22  # a file's first bytes, whose lines estimate its edges
SHORTEST_LINE_BYTES = 4  # an edge's line: "0 1\n"
REREAD_PIECE_SHARE = 4  # a file read again in pieces that take at most this fraction of the host's room
REREAD_HELD_SHARE = 2  # and its parsed pairs kept on the GPU where they take at most this fraction of its room
ACROSS = "parts across ranks"  # the mode where no rank receives the graph (ranks/row_parts.py)
COPIES_AT_ROOT = 2  # rank 0's host holds a graph it receives twice: the rows it receives, its node's shared copy
RANKS_AGAIN_KEYS_AT_LEAST = 1 << 12  # a rank's share built again in ranges of fewer keys (over all ranks) is not
RANKS_AGAIN_PIECES = 4  # a rank's share of a text file read once in this many pieces, their pairs to scratch


@dataclass
class Build:
    """How a graph is built: the way (above), the device whose memory it works in ("gpu" or
    "host"), where its CSR lies ("gpu", "host" or "disk"), and what each place holds at most."""

    way: str
    device: str
    csr: str
    raw_edges: int
    span: int = 0            # ids below this (0: known once read)
    estimated: bool = False  # raw_edges estimated from a file's first lines
    room: int = 0            # the bytes of the device the build works in, beside the graph
    piece: int = 0           # raw edges a piece
    keys: int = 0            # keys a range
    ranked: bool = False     # (ranges) the vertices ranked on the GPU
    pieces: int = 0          # (read again) the file's pieces
    host_bytes: int = 0
    gpu_bytes: int = 0
    disk_bytes: int = 0

    def to_dict(self) -> dict:
        return {k: v if isinstance(v, (str, bool)) else int(v)  # (NumPy integers too)
                for k, v in asdict(self).items() if v or k in ("way", "device", "csr", "raw_edges")}

    def lines(self) -> list[str]:
        """What `--plan` prints of it."""
        about = "about " * self.estimated
        where = {"gpu": "on the GPU", "host": "on the host's cores"}[self.device]
        passes = f", {self.pieces} pieces a pass" if self.pieces else ""
        edges = f"{about}{self.raw_edges:,} raw edges" if self.raw_edges else "its edges known once read"
        held = ", ".join(f"{place} {size_text(nbytes)}" for place, nbytes in
                         (("host", self.host_bytes), ("GPU", self.gpu_bytes), ("disk", self.disk_bytes)) if nbytes)
        if self.way == "rows":
            return [f"build   every rank builds its rows from its share, {where} ({edges} in all)"]
        if self.way.startswith("rows "):  # (its share drawn or read again: none held)
            return [f"build   every rank builds its rows with its share {self.way[5:]} in pieces of {self.piece:,} "
                    f"raw edges for every range of {self.keys:,} keys over the ranks, none of it held ({edges} in "
                    f"all), {where}"]
        lies = {"host": "in host memory", "gpu": "on the GPU", "disk": "its columns on disk"}[self.csr]
        return [f"build   {self.way} {where} ({edges}{passes})",
                f"graph   {lies}" + (f"; at most {held}" if held else "")]


def generated(spec: str, gpu_room: int | None) -> Build:
    """The build of a generator spec, with gpu_room bytes of a GPU (None: no GPU)."""
    raw = io.spec_edges(spec)
    made = io.pieces(spec)  # (its bound and raw edges: nothing is drawn)
    span, m = made[:2] if made else (0, raw)
    permuted = generators.permuted(spec)
    if gpu_room is not None:
        need = max(model.gpu_generated_bytes(raw, permuted, generators.PIECE_EDGES),
                   model.gpu_build_bytes(raw, min(span, 2 * raw) if made else raw))
        if need < gpu_room:
            return Build("whole", "gpu", "gpu", raw, span, gpu_bytes=need, room=gpu_room)
        pieces = made and _pieces(span, m, gpu_room, "gpu")
        if pieces:
            return pieces
        planned = made and ranges(gpu_room, span, m, spec, permuted, redraw=True)
        if planned == "redraw":
            drawn = redrawn(span, m, spec, "gpu", gpu_room - model.GPU_PERMUTATION_BYTES_PER_ID * permuted)
            if drawn is not None:
                return drawn
        elif planned:
            piece, keys, ranked = planned
            return Build("ranges", "gpu", "host", m, span, room=gpu_room, piece=piece, keys=keys, ranked=ranked,
                         host_bytes=model.RANGES_HOST_BYTES_PER_EDGE * m + model.RANGES_HOST_BYTES_PER_ID * span,
                         gpu_bytes=gpu_room)
    host_room, _ = memory.available()
    whole = raw * (model.GENERATED_BYTES_PER_EDGE + model.BUILD_BYTES_PER_EDGE)
    if whole > host_room and made:
        built = _pieces(span, m, host_room, "host") or \
            redrawn(span, m, spec, "host", host_room - model.GPU_PERMUTATION_BYTES_PER_ID * permuted)
        if built is not None:
            return built
    return Build("whole", "host", "host", raw, span, host_bytes=whole)


def _pieces(span: int, m: int, room: int, device: str) -> Build | None:
    """Built from its pieces in room bytes of the device, where that fits."""
    need = model.pieces_build_bytes(m, span, generators.PIECE_EDGES, pieces_build.STEP)
    if not pieces_build.packs(span) or need > room:
        return None
    return Build("pieces", device, device, m, span, room=room, **{f"{device}_bytes": need})


def ranges(room: int, span: int, m: int, name: str, permuted: int = 0, redraw: bool = False):
    """(raw edges a piece, keys a range, whether the vertices are ranked on the GPU) of m raw
    edges with ids below span built in ranges in room bytes of a GPU (permuted: ids of RMAT's
    permutation drawn there); None where the ids do not pack or a range or a piece worth the
    passes does not fit; where the host cannot hold the build, "redraw" where redraw (a generator,
    drawn again instead), else refused."""
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


def redrawn(span: int, m: int, name: str, device: str, room: int, piece_bytes: int | None = None,
            estimated: bool = False) -> Build | None:
    """Drawn (or read) again for every range of keys, in room bytes of the device beside a piece of
    piece_bytes (None: a generator's pieces, sized to the room), its CSR where it fits (layout);
    None where its ids do not pack, or on a GPU where a range worth the passes does not fit (the
    host's way next); refused on the host with the least it needs."""
    if not pieces_build.packs(span):
        return None
    per_key = model.RANGES_BYTES_PER_KEY if device == "gpu" else model.HOST_RANGE_BYTES_PER_KEY
    for columns_on_disk in (False, True):  # the CSR in memory where the ranges fit beside it, else its columns on disk
        left, csr, held = layout(span, m, name, device, room, estimated, columns_on_disk)
        piece, piece_held = 0, piece_bytes
        if piece_bytes is None:
            piece = max(min(generators.PIECE_EDGES, max(0, left // 4) // model.PIECE_BYTES_PER_EDGE),
                        min(m, REDRAWN_PIECE_EDGES_AT_LEAST))
            piece_held = model.PIECE_BYTES_PER_EDGE * piece
        keys = ranges_build.range_keys(left - piece_held, span, per_key)
        if keys >= m / REDRAWN_RANGES_AT_MOST or device == "gpu" or csr == "disk":
            break
    room = left
    if keys < m / REDRAWN_RANGES_AT_MOST:
        if device == "gpu":
            return None
        least = piece_held + model.RANGES_BYTES_PER_ID * span + per_key * -(-m // REDRAWN_RANGES_AT_MOST)
        memory.require(memory.available()[0] - room + least, _building(name, m, estimated, csr),
                       "count it on a host with more memory")
        keys = max(keys, 1)
    held[f"{device}_bytes"] = held.get(f"{device}_bytes", 0) + room
    return Build("drawn again", device, csr, m, span, estimated, room=room, piece=piece, keys=keys, **held)


def layout(span: int, m: int, name: str, device: str, room: int, estimated: bool = False,
           columns_on_disk: bool = False) -> tuple[int, str, dict]:
    """(the device's room left beside the graph, where a graph built drawn or read again lays out
    its CSR, the bytes each place holds of it: _placement, or its columns on disk where asked) of m
    raw edges (at most) with ids below span, in room bytes of the device; refused where the host
    cannot hold its part, or the scratch folder its columns."""
    left, csr, held = _placement(span, m, device, room, memory.available()[0], columns_on_disk)
    if csr != "host":
        memory.require(held["host_bytes"], _building(name, m, estimated, csr), "count it on a host with more memory")
    if csr == "disk":
        scratch.check_room(held["disk_bytes"])  # (before any pass: the columns are written once it is ranked)
    return left, csr, held


def _placement(span: int, m: int, device: str, room: int, host_room: int,
               columns_on_disk: bool = False) -> tuple[int, str, dict]:
    """The CSR on the host where it takes at most half of host_room (the other half is the
    count's), else on a GPU that holds it, else (or where asked) its columns on disk
    (io/scratch.py), the host holding the row pointers: (the device's room left beside the graph,
    where, the bytes each place holds)."""
    columns = np.dtype(col_dtype(span)).itemsize * m
    pointers = 8 * span
    host = model.REDRAWN_HOST_BYTES_PER_ID * span  # its rank order and a range plan's counts
    if not columns_on_disk and columns + pointers + host <= host_room // 2:
        whole = columns + pointers + host
        return room - whole * (device == "host"), "host", {"host_bytes": whole}
    if not columns_on_disk and device == "gpu" and columns + 2 * pointers < room:  # (the rank order there too)
        return room - columns - 2 * pointers, "gpu", {"host_bytes": host, "gpu_bytes": columns + 2 * pointers}
    return room - (pointers + host) * (device == "host"), "disk", {"host_bytes": pointers + host, "disk_bytes": columns}


def _building(name: str, m: int, estimated: bool, csr: str) -> str:
    """What a refusal of a graph built drawn or read again says it needed memory for."""
    return f"building the graph of {name} ({'about ' * estimated}{m:,} raw edges)" + \
        {"host": "", "gpu": " on the GPU", "disk": " with its columns on disk"}[csr]


@dataclass
class Reading:
    """A text file read again: its estimated edges, in how many pieces, each parsed in gpu_room
    bytes of the GPU (None: on the host's cores) of its whole_gpu, host_room the host's room, the
    columns' bytes (their dtype as for ids below twice the edges)."""

    edges: int
    pieces: int
    gpu_room: int | None
    whole_gpu: int
    host_room: int
    columns: int
    piece_bytes: int  # what a piece's reading holds at its peak: its parse and its pairs
    ids: int = 0  # the largest id of its first bytes + 1 (0: not read there)

    def build(self) -> Build:
        """Its build as planned before reading: the ids' bound, and so where its CSR lies, is known
        once read (here the bound its first bytes show, else as if below twice the edges)."""
        device = "host" if self.gpu_room is None else "gpu"
        room = self.whole_gpu if device == "gpu" else self.host_room
        span = self.ids or 2 * self.edges
        read = 8 * span + self.piece_bytes  # (held once read: the lower ends' counts, a piece's reading at its peak)
        _, csr, held = _placement(span, self.edges, device, room, self.host_room - read)
        return Build("read again", device, csr, self.edges, span, True, pieces=self.pieces, **held)


def read_again(path: str, gpu_room: int | None) -> Reading | None:
    """A text or Matrix Market file (not compressed) whose edges and their build the host cannot
    hold, read again in pieces, parsed on a GPU of gpu_room bytes (None: on the host's cores);
    None where the file is read whole (it fits, it is another kind, or it cannot be read: the
    reading says why)."""
    room, _ = memory.available()
    try:
        if is_stream(path) or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        if size // SHORTEST_LINE_BYTES * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE) + parse_peak_bytes(size) <= room:
            return None  # (every file that fits, known from its size alone: no byte read here)
        if is_gzip(path) or io.detect_format(path) == "h5":
            return None
        edges, ids = _sampled(path, size)
    except OSError:  # the reading says what is wrong with the path
        return None
    if edges * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE) + parse_peak_bytes(size) <= room:
        return None
    budget, per_byte = room // REREAD_PIECE_SHARE, edges * model.PIECE_BYTES_PER_EDGE / size
    piece = budget / (model.PARSE_BYTES_PER_TEXT_BYTE + per_byte)  # its parse's peak, then its pairs and keys
    if piece <= SMALL_BLOCK_BYTES:  # (parsed in whole-array NumPy while Numba is not loaded)
        piece = budget / (model.SMALL_PARSE_BYTES_PER_TEXT_BYTE + per_byte)
    count = max(1, math.ceil(size / piece))
    held = parse_peak_bytes(-(-size // count)) + PAIR_BYTES * -(-edges // count)
    return Reading(edges, count, None if gpu_room is None else gpu_room // REREAD_PIECE_SHARE, gpu_room or 0, room,
                   np.dtype(col_dtype(2 * edges)).itemsize * edges, held, ids)


def _sampled(path: str, size: int) -> tuple[int, int]:
    """(its edges, about: its size over the bytes a line of its first bytes takes (comments counted
    as edges: at most), the largest id there + 1, 0 where they are not plain pairs) of a text file."""
    head = np.concatenate([np.empty(0, np.uint8), *file_pieces(path, 0, min(size, REREAD_SAMPLE_BYTES))])
    edges = max(1, count_line_ends([head])) * size // max(1, head.size)
    lines = np.flatnonzero(head == ord("\n"))
    parsed = grammar.parse_small(head[: int(lines[-1]) + 1]) if lines.size else None
    return edges, int(max(parsed[0].max(), parsed[1].max())) + 1 if parsed and parsed[0].size else 0


def rows_again(raw: int, span: int, room: int) -> tuple[int, int] | None:
    """(the keys, over all ranks, a range may hold, the raw edges a piece) where a rank's share of raw
    edges with ids below span is built with nothing of it held, drawn or read again in pieces for
    every range (ranks/redrawn_rows.py): where its build in memory (its pairs and their build) takes
    more than room, its share of its host's --host-memory-limit, and the counts over every id, its
    rows, a range of keys and a piece fit room (seven eighths of what is left, and one: a piece of
    fewer edges draws as fast, a range of fewer keys takes another pass). None where it is built in
    memory (fits room, or this does not fit either: the ranks' build in memory takes what it needs,
    the limit binding the graph's arrays after it: docs/ranks.md)."""
    if raw * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE) <= room:
        return None
    return again_sized(raw, span, room)


def again_sized(raw: int, span: int, room: int) -> tuple[int, int] | None:
    """rows_again's (keys a range, raw edges a piece) in room, whether or not the share's build in
    memory would fit it; None where they do not fit, or the ids do not pack as keys."""
    if not pieces_build.packs(span):
        return None
    left = room - model.RANKS_AGAIN_BYTES_PER_ID * span - model.RANKS_AGAIN_BYTES_PER_EDGE * raw
    keys, piece = 7 * left // (8 * model.RANKS_AGAIN_BYTES_PER_KEY), left // (8 * model.PIECE_BYTES_PER_EDGE)
    return (keys, piece) if keys >= RANKS_AGAIN_KEYS_AT_LEAST else None


def shares_again(source: str, ranks: int, room: int, seed: int = 0) -> tuple[str, int, int, int] | None:
    """Where ranks each build their rows with nothing of their share held (rows_again, in room
    bytes a rank): (how, "drawn again" for a generator's share, "read again" for a plain text or
    Matrix Market file's, parsed once to scratch; the keys a range may hold; the raw edges a piece;
    the ids' bound, a file's estimated from its first bytes; a share's raw edges, a file's
    estimated); else None."""
    if io.is_spec(source) and not os.path.exists(source):
        made = generators.pieces(source, seed=seed)
        if made is None:
            return None
        span, raw, how = made[0], -(-made[1] // ranks), "drawn again"
    elif not os.path.isfile(source) or is_gzip(source) or io.detect_format(source) == "h5":
        return None
    else:
        edges, span = _sampled(source, os.path.getsize(source))
        raw, how = -(-edges // ranks), "read again"
    again = rows_again(raw, span, room) if span else None
    return None if again is None else (how, *again, span, raw)


def rows_placed(on_gpu: bool, need: int, rank_budget: int, whole: int, limit: int | None, root_room) -> tuple[str, str]:
    """Where the ranks' rows go once every rank has built its own (ranks/replicate.py): "replicated"
    where GPU ranks' devices hold the graph (need bytes there, each rank may take rank_budget):
    all-gathered onto every one; else "rank 0" where its host can hold the graph twice (whole: its
    CSR's bytes), within limit (a host's), else within root_room() (what rank 0's host has free,
    asked only then); else ACROSS, each rank counting the part of its own rows. With why."""
    if on_gpu and need <= rank_budget:
        return "replicated", f"the graph needs {size_text(need)} on a device and every rank may take " \
                             f"{size_text(rank_budget)}; every rank read its share and has the whole graph"
    held = COPIES_AT_ROOT * whole
    if limit is not None:
        return ("rank 0", "") if held <= limit else \
            (ACROSS, named(f"rank 0's host would hold the graph twice ({size_text(held)}: the rows it receives and "
                           f"its node's shared copy), over the {size_text(limit)} of {{host_memory_limit}}"))
    room = root_room()
    return ("rank 0", "") if held <= room else \
        (ACROSS, f"rank 0's host would hold the graph twice ({size_text(held)}), over the {size_text(room)} it has "
                 "free")


@dataclass
class Ranks:
    """The ranks of a job, as a plan sees them: how many, on how many hosts, whether every rank
    reads its share (else rank 0 reads the graph alone), the least device memory a rank may take."""

    ranks: int
    hosts: int
    shares: bool
    budget: int
    host_limit: int | None = None  # what a host's ranks may hold of the graph (--host-memory-limit)
    per_host: int = 1  # the most ranks a host has

    def line(self) -> str:
        reads = "every rank reads its share and builds its rows" if self.shares else "rank 0 reads the graph alone"
        return f"ranks   {self.ranks} on {self.hosts} host{'s' * (self.hosts > 1)}: {reads}; each may take " \
               f"{size_text(self.budget)} of its device"


def for_count(source: str, device, parts, ranks: Ranks | None = None) -> dict:
    """The plan of a count of source (a path or a spec) on device (a Device; rank 0's, with ranks):
    the source's facts, the budgets, its build (above) and its count (count_mode); what `tcdist
    count GRAPH --plan` shows, decided as the count decides it, nothing read but a file's first
    bytes."""
    gpu_room = device.room() if device.is_gpu else None
    host_room, host_limit = memory.available()
    generator = io.is_spec(source) and not os.path.exists(source)
    if not generator:
        io.check_readable(source)  # (the count's own one line for a path that is not there or not a file)
    if ranks is not None and ranks.shares:  # (no rank builds the whole graph: ranks/ingest.py)
        raw, span = (io.spec_edges(source), (io.pieces(source) or [0])[0]) if generator else \
            _sampled(source, os.path.getsize(source))
        again = None if device.is_gpu or ranks.host_limit is None else \
            shares_again(source, ranks.ranks, ranks.host_limit // ranks.per_host)
        build = Build("rows" if again is None else f"rows {again[0]}", "gpu" if device.is_gpu else "host", "host",
                      raw, span, not generator, keys=0 if again is None else again[1],
                      piece=0 if again is None else again[2])
    elif generator:
        build = generated(source, gpu_room)
    else:
        reading = read_again(source, gpu_room)
        build = reading.build() if reading is not None else _read_whole(source, device)
    span = build.span or 2 * build.raw_edges  # (a file's ids as if dense)
    mode, why = count_mode(span, build.raw_edges, build.csr, device, parts, ranks)
    return {"source": source, "build": build.to_dict(), "count": {"mode": mode, "why": why},
            **({"ranks": asdict(ranks)} if ranks else {}),
            "budgets": {"host": host_room, "host_limit": host_limit, "gpu": gpu_room or 0,
                        "scratch": scratch.folder(), "scratch_free": _free(scratch.folder())},
            "lines": [*([ranks.line()] if ranks else []), *build.lines(), f"count   {mode}: {why}",
                      f"budgets host {size_text(host_room)} ({host_limit})" +
                      (f", GPU {size_text(gpu_room)}" if gpu_room else "") +
                      f", scratch {scratch.folder()} ({size_text(_free(scratch.folder()))} free)"]}


def _read_whole(path: str, device) -> Build:
    """A file read whole: its edges estimated from its size and first lines (text) or read from its
    header (a tcdist graph file); where its CSR lies as the reading leaves it."""
    where = "gpu" if device.is_gpu else "host"
    try:
        size = os.path.getsize(path)
        if io.detect_format(path) == "h5":
            from tcdist.io.h5graph import read_header

            attrs = read_header(path)
            return Build("whole", "host", "host", attrs["m"], attrs["n"], host_bytes=size)
        edges, ids = (0, 0) if is_gzip(path) else _sampled(path, size)
    except OSError:  # (standard input, or a path the count will say is wrong)
        return Build("whole", where, where, 0, estimated=True)
    need = edges * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE)
    return Build("whole", where, where, edges, ids, estimated=True, **{f"{where}_bytes": need})


def count_mode(span: int, m: int, csr: str, device, parts, ranks: Ranks | None = None) -> tuple[str, str]:
    """(the mode, why) of a count of a graph of at most m edges with ids below span whose CSR lies
    in csr: by one process, whole where it fits the device's budget, else in slices (budget/slices.py:
    the slices chosen once it is built); by ranks, replicated where it fits every rank's device, else
    decided once built (counted_as, replicate.ingest); or in the parts asked for (ranks/prepare.py)."""
    if not m:
        return "decided once read", "the input's edges are not known before it is read (standard input, gzip)"
    if parts == "auto":
        return "parts", "as few LSTC parts as fit the budget, chosen from the degrees once the graph is built"
    if parts is not None and parts > 1:
        return "parts", f"{parts} LSTC parts, asked for"
    if csr == "disk":
        return "slices", "its columns lie on disk: read a slice at a time"
    need, budget = device.need(span, m, span, np.dtype(col_dtype(span)).itemsize), device.budget()
    if ranks is not None:
        held = COPIES_AT_ROOT * model.csr_bytes(span, m, span, np.dtype(col_dtype(span)).itemsize)
        if ranks.shares and ranks.host_limit is not None and held > ranks.host_limit:
            return ACROSS, f"the graph twice (about {size_text(held)}) is over the " \
                                         f"{size_text(ranks.host_limit)} a host may hold: each rank counts the part " \
                                         "of its own rows (once built, a part over its rank's share of the limit " \
                                         "has its columns written to scratch)"
        if need <= ranks.budget:
            return "replicated", f"at most {size_text(need)} on a device, within the {size_text(ranks.budget)} each " \
                                 "rank may take: every rank counts shares of its rows"
        return "decided once built", f"at most {size_text(need)} on a device, over the {size_text(ranks.budget)} " \
                                     "each rank may take: slices of it from host memory, or parts (docs/ranks.md)"
    if need <= budget:
        return "whole", f"at most {size_text(need)} on the device, within its {size_text(budget)}"
    return "slices", f"at most {size_text(need)} on the device, over its {size_text(budget)}"


def _free(folder: str) -> int:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return 0


def counted_as(graph, config, device, ranks: int, rank_budget: int | None) -> tuple[str, str, bool, list | None]:
    """(the mode, why, whether from host memory, its slices) of the count of a built graph by
    ranks ranks, each of rank_budget bytes of device memory (several ranks): whole (one rank, where
    the graph fits its device or is sliced), replicated (every rank holds the whole graph: on its
    device where it fits, else from host memory, in shares or in the slices of slice_plan), else
    parts ("" why: the only mode)."""
    if config.whole and ranks == 1 and (device.memory_limit is None or sliceable_whole(graph, device)):
        return "whole", "", False, None
    if ranks > 1 and config.per_edge:
        return "parts", "per-edge counts are made in whole parts", False, None
    if not (ranks > 1 and graph.n and config.parts in (None, "auto") and config.store is None and
            config.scheme is None and config.prune is None):
        return "parts", "" if ranks == 1 else "the graph has no vertex" if not graph.n else \
            "asked for by the options given", False, None
    need = device.need(graph.n, graph.m, graph.n, graph.col.itemsize)
    if device.is_gpu:  # the graph is held on rank 0's GPU too, where the ranks open it
        need += model.csr_bytes(graph.n, graph.col.size, graph.n, graph.col.itemsize)
    if need <= rank_budget:
        return "replicated", f"the graph needs {size_text(need)} on a device and every rank may take " \
                             f"{size_text(rank_budget)}", False, None
    why = f"the graph needs {size_text(need)} on a device, over the {size_text(rank_budget)} a rank may take"
    if config.parts is not None:  # (--parts auto asks for LSTC's parts)
        return "parts", why, False, None
    try:  # slices of the whole graph replicate nothing, where LSTC's parts of a skewed graph each hold
        # its dense core (86 % of RMAT-26's edges in each of 8 random parts)
        sliced = slice_plan(device, Part(0, graph.rowptr, graph.col, None, graph.n, {}), rank_budget)
    except TcdistError:  # no slice fits: parts, whose fewer rows a slice holds the pointers of
        return "parts", f"{why}, nor does any slice of it", False, None
    return "replicated", f"{why}: every rank counts {'slices' if sliced else 'shares'} of it that fit, from host " \
                         "memory", True, sliced


def sliceable_whole(graph, device) -> bool:
    """Whether the whole graph fits the device's budget or has a slice that does."""
    if device.need(graph.n, graph.m, graph.n, graph.col.itemsize) <= device.budget():
        return True  # (without a pass over its rows)
    try:
        refuse_unsliceable(device, Part(0, graph.rowptr, graph.col, None, graph.n, {}), "")
    except TcdistError:
        return False
    return True


SLICEABLE_PARTS = 64  # at most this many times the parts asked for, to find parts whose slices fit


def sliceable_parts(graph, config, device, scheme: str, prune: str, parts: int, advice: str,
                    warnings: list) -> int:
    """The fewest parts from parts on (doubled, up to SLICEABLE_PARTS times as many) each of
    which has a slice that fits the device's budget: a slice holds the pointers of all its part's
    rows, which more parts have fewer of (budget/slices.py), until a dense core keeps them (the
    rows of the part refused stall). Where none do, the first refusal, with advice."""
    first, tried, rows = None, parts, []
    while True:
        made = [Part(0, graph.rowptr, graph.col, None, graph.n, {})] if tried == 1 else \
            partition_graph(graph, tried, scheme=scheme, prune=prune, seed=config.seed, lazy=True).parts
        refused = None
        for part in made:
            try:
                refuse_unsliceable(device, part, advice)
            except TcdistError as e:
                refused = e
                rows.append(part.rowptr.size - 1)
                break
        if refused is None:
            if tried > parts:
                warnings.append(f"{first}".replace(f"; {advice}", "") + f"; counting {tried} parts, whose slices fit")
            return tried
        first = first or refused
        stalled = len(rows) >= 3 and rows[-1] > STALLED * rows[-3]
        if stalled or tried >= min(graph.n, SLICEABLE_PARTS * parts):
            raise first from None
        tried = min(2 * tried, graph.n, SLICEABLE_PARTS * parts)


def streaming_fits(device, graph):
    """Where a GPU builds the parts of a graph in host memory from its rows streamed to it: whether
    a part of given sizes fits beside the builder's held bytes; None where the builder's state and
    a part's build would not fit the device's budget (the host builds them)."""
    if not device.is_gpu:
        return None
    from tcdist.partition.gpu_parts import StreamedRows

    budget = device.budget()
    if model.gpu_stream_bytes(graph.n, StreamedRows.bytes(graph.rowptr, graph.col)) > budget:
        return None
    return lambda sizes, held: device.need(*sizes) + held <= budget
