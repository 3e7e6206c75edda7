"""Every rank reads its share of the input: read_share(source, rank, ranks) -> Share.

- A text edge list or Matrix Market file: its data cut into byte ranges at line starts, after the
  header (byte_ranges.py); each rank parses its range with the one-process reader's engines (on
  its GPU given gpu_room). The ranks' edges together are the one-process reader's edges.
- A gzip file: cut at its members where it is BGZF (gzip_shares.py); a single gzip stream cannot
  be cut, so one rank per host (given the communicator; else every rank) inflates it, and each
  rank parses every R-th block of its lines.
- A tcdist graph file: a contiguous range of rows of its oriented CSR (h5rows.py).
- A generator spec: edges m*k/R..m*(k+1)/R of those generate() makes, drawn by rank k alone (rmat
  and er; the other generators are small closed forms, made whole and cut).
- An in-memory object, standard input, or text read with labels (ids that are names, numbered
  together): rank 0's share is all of it, the other ranks' are empty.

Errors are the one-process reader's: every rank reads the head of a file, so a bad header or
banner is raised by all; binary data by rank 0; a bad line by the rank that reads it, named by
its number in the file (for byte ranges, the first failing rank's is the first in the file).
What only the ranks together can check (a Matrix Market file's number of entries, a graph
file's digest and structure) is checked by Share.check_together with every rank's Share.facts
(comm.allgather): it raises on every rank what one process raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import InputError
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import Graph
from tcdist.io import byte_ranges, check_readable, detect_format, generators, gzip_shares, h5rows, mtx
from tcdist.io.generators import is_spec
from tcdist.io.h5rows import Rows
from tcdist.io.text import is_gzip, is_stream


@dataclass
class Share:
    """What a rank read: raw edges (an EdgeList of its lines or pieces, src and dst int64 on the
    array module they were made with) or, for a tcdist graph file, its rows (h5rows.Rows);
    read_bytes, the bytes of files it read. facts: what check_together needs of it (small, picklable)."""

    name: str
    read_bytes: int = 0
    edges: EdgeList | None = None
    rows: Rows | None = None
    facts: object = None
    _together: object = field(default=None, repr=False)

    def check_together(self, facts: list) -> None:
        """Raise, on every rank alike, what one process reading the whole source raises and no
        rank could tell alone; facts: every rank's Share.facts, in rank order."""
        if self._together is not None:
            self._together(facts)


def read_share(source, rank: int, ranks: int, *, seed: int = 0, gpu_room: int | None = None, xp=np,
               labels: bool = False, comm=None) -> Share:
    """Rank's share of a source: a path (edge list, Matrix Market, tcdist graph file; optionally
    gzipped), a generator spec, or an in-memory graph (rank 0's share: a Graph as rows, all of
    them; the other ranks' shares are then empty edges). gpu_room: text is parsed
    on the current GPU while its edges and their build fit in that many bytes (as io.read);
    xp: the array module a generator draws with. labels: a text edge list whose ids are names,
    read whole by rank 0 (names are numbered together). comm: the ranks' communicator (rank and
    ranks its own), with which a single gzip stream is inflated once per host, not by every rank."""
    if not 0 <= rank < ranks:
        raise ValueError(f"rank {rank} of {ranks}")
    if isinstance(source, (str, os.PathLike)) and is_spec(source) and not os.path.exists(source):
        return _generated(os.fspath(source), rank, ranks, seed, xp)
    if not isinstance(source, (str, os.PathLike)):
        return _root_only(source, rank, ranks, "an in-memory graph")
    path = os.fspath(source)
    check_readable(path)
    if labels or is_stream(path):
        what = "names numbered together" if labels else "a stream read once"
        return _root_only(path, rank, ranks, what, labels=labels, gpu_room=gpu_room)
    fmt = detect_format(path)
    if fmt == "h5":
        rows, read, facts = h5rows.read_rows(path, rank, ranks)
        return Share(path, read, rows=rows, facts=facts, _together=lambda every: h5rows.check_together(path, every))
    if is_gzip(path):
        return _edge_share(path, fmt, rank, *gzip_shares.read_pairs(path, fmt, rank, ranks, gpu_room, comm))
    rules = byte_ranges.rules_of(path, fmt)
    lines = byte_ranges.range_of(path, rank, ranks, rules)
    src, dst, read = byte_ranges.read_range(path, lines, rules, gpu_room)
    return _edge_share(path, fmt, rank, rules, src, dst, read + lines.read_bytes)


def _edge_share(path, fmt: str, rank: int, rules, src, dst, read_bytes: int) -> Share:
    """The Share of a rank's parsed pairs: Matrix Market's made 0-based, its entries counted
    together; the header's warnings on rank 0 only."""
    warnings = rules.warnings if rank == 0 else []
    if fmt != "mtx":
        return Share(path, read_bytes, edges=EdgeList(src, dst, path, warnings))
    mtx.zero_based(src, dst)
    declared = rules.declared

    def together(every):
        problem = mtx.entries_problem(declared, sum(every))
        if problem:
            raise InputError(path, problem)

    return Share(path, read_bytes, edges=EdgeList(src, dst, path, warnings), facts=int(src.size), _together=together)


def _generated(spec: str, rank: int, ranks: int, seed: int, xp) -> Share:
    """Rank's equal share of the edges a spec makes, drawn by it alone."""
    made = generators.pieces(spec, seed=seed, xp=xp)  # (nothing drawn: how many edges there are)
    if made is None:
        edges = generators.generate(spec, seed=seed)
        lo, hi = len(edges) * rank // ranks, len(edges) * (rank + 1) // ranks
        return Share(spec, edges=EdgeList(edges.src[lo:hi].copy(), edges.dst[lo:hi].copy(), spec))
    lo, hi = made[1] * rank // ranks, made[1] * (rank + 1) // ranks
    if xp is np:
        memory.require(model.GENERATED_BYTES_PER_EDGE * (hi - lo), f"generating edges {lo:,}..{hi:,} of '{spec}'",
                       "generate a smaller graph, or on more ranks or hosts")
    src, dst, at = xp.empty(hi - lo, np.int64), xp.empty(hi - lo, np.int64), 0
    for s, d in generators.pieces(spec, seed=seed, xp=xp, within=(lo, hi))[2]:
        src[at : at + s.size], dst[at : at + s.size] = s, d
        at += s.size
    return Share(spec, edges=EdgeList(src, dst, spec))


def _root_only(source, rank: int, ranks: int, what: str, labels: bool = False, gpu_room: int | None = None) -> Share:
    """Rank 0 reads the whole source (in-memory objects stay with the caller's rank; a stream is read
    once; names are numbered together); the other ranks' shares are empty."""
    from tcdist.io import read
    from tcdist.io.objects import edges_of

    name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else what
    if rank != 0:
        empty = np.empty(0, np.int64)
        return Share(name, edges=EdgeList(empty, empty.copy(), name))
    if not isinstance(source, (str, os.PathLike)):
        if isinstance(source, Graph):
            return Share(name, rows=Rows(0, source.rowptr, source.col, source.original_id, _header_of(source)))
        return Share(name, edges=edges_of(source))
    loaded = read(source, gpu_room=None if labels else gpu_room, labels=labels)
    if ranks > 1:
        loaded.warnings.append(f"{source}: read whole by rank 0 ({what} cannot be shared out among ranks)")
    return Share(name, 0 if is_stream(source) else os.path.getsize(source), edges=loaded)


def _header_of(graph: Graph) -> dict:
    return {"n": graph.n, "m": graph.m, "self_loops": int(graph.self_loops), "duplicates": int(graph.duplicates),
            "reciprocal": int(graph.reciprocal), "name": graph.name, "fingerprint": graph.fingerprint()}
