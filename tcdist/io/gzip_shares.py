"""Gzip input read by several ranks.

A BGZF file (gzip members of at most 64 KiB, each saying its size: bgzip, samtools) is cut at its
members: rank k inflates the members from the first one at or after k/R of the file (past the
header's), owns the lines that start after a line end inside what they hold (rank 0: from the
data's start) and inflates on into the next rank's members only to finish its last line.

A file whose members are not all BGZF (a plain gzip member appended: cat a.bgz b.gz) cannot be
cut. Given the communicator, the ranks tell each other whether one met such a member and where
their walks of the members began and ended: where one did, or the walks do not join up (a rank's
cut may skip the BGZF members just before a plain one, which no rank then reads), every rank
reads the file as a single stream, as one process reads it. Without it, every rank walks the
members' headers first, and cuts the file only where all are BGZF.

A single gzip stream (or members that do not say their size) cannot be cut: its data is known
only once all before it is inflated. Rank k parses the blocks of lines k, k+R, ..., so the ranks
together parse each line once. Given the ranks' communicator, the first rank of each host
inflates the stream, parses its own blocks and sends the host's other ranks theirs; without it,
every rank inflates the whole stream itself.
"""

from __future__ import annotations

import io
import itertools
import os

import numpy as np
from isal import isal_zlib

from tcdist.errors import InputError
from tcdist.io import byte_ranges, text

BGZF_HEAD = 18  # a member's header: gzip's 10 bytes, XLEN, and the 'BC' field with the member's size
BGZF_MAGIC = b"\x1f\x8b\x08\x04"
BGZF_FIELD = b"\x06\x00BC\x02\x00"  # XLEN 6, then subfield 'BC' of 2 bytes
CHAIN = 4  # members a candidate's sizes must lead through (or to the file's end) to be taken for a member start
SCAN_BYTES = 4 << 10  # read at a time while looking for a member start (a member is at most 64 KiB)
PIECE_BYTES = 4 << 20  # inflated at a time
LF, CR = 10, 13


class NotBgzf(Exception):
    """A member that is not BGZF: the file cannot be cut at its members (not an OSError: that is
    corrupt gzip data, InputError's business)."""


def is_bgzf(head: bytes) -> bool:
    return head[:4] == BGZF_MAGIC and head[10:16] == BGZF_FIELD


def _member_size(head: bytes) -> int:
    return int.from_bytes(head[16:18], "little") + 1


def _is_member_start(f, at: int, size: int) -> bool:
    """Whether a member starts at offset at: its size and those of the CHAIN - 1 members after it
    lead from header to header (or to the end of the file)."""
    for _ in range(CHAIN):
        if at == size:
            return True
        f.seek(at)
        head = f.read(BGZF_HEAD)
        if not is_bgzf(head):
            return False
        at += _member_size(head)
    return at <= size


def member_at_or_after(f, p: int, size: int) -> tuple[int, int]:
    """(the first member start at or after p, or size; bytes read)."""
    read, step = 0, SCAN_BYTES
    while p < size:
        f.seek(p)
        buf = f.read(step + len(BGZF_MAGIC) - 1)
        read += len(buf)
        found = buf.find(BGZF_MAGIC)
        while 0 <= found < step:
            read += BGZF_HEAD * CHAIN
            if _is_member_start(f, p + found, size):
                return p + found, read
            found = buf.find(BGZF_MAGIC, found + 1)
        p += step
    return size, read


def _first_member_from(f, data_start: int, size: int) -> tuple[int, int]:
    """(the first member whose data starts at or after the inflated offset data_start, bytes read):
    members walked from the file's start, their sizes added (a header is short)."""
    at, inflated, read = 0, 0, 0
    while at < size and inflated < data_start:
        f.seek(at)
        head = f.read(BGZF_HEAD)
        if not is_bgzf(head):
            raise NotBgzf
        at += _member_size(head)
        f.seek(at - 4)
        inflated += int.from_bytes(f.read(4), "little")  # the member's ISIZE
        read += BGZF_HEAD + 4
    return at, read


class _Stream(io.RawIOBase):
    """A stream of the bytes of an iterator of uint8 arrays; tell(): what tell() says (the file's bytes read)."""

    def __init__(self, pieces, tell):
        self._pieces, self._rest, self._tell = pieces, memoryview(b""), tell

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        while not len(self._rest):
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._rest = memoryview(piece).cast("B")
        got = min(len(view), len(self._rest))
        view[:got] = self._rest[:got]
        self._rest = self._rest[got:]
        return got

    def tell(self) -> int:
        return self._tell()


def _pread(f, at: int, size: int) -> bytes:
    """size bytes of f at offset at, its position untouched: a failed share counts the lines before
    it from the same file while its read-ahead thread may still be reading (seek and read raced)."""
    return os.pread(f.fileno(), size, at)


def members(f, lo: int, span_end: int, size: int, taken: dict):
    """(inflated data, whether it is the span's) of the members from offset lo: each member that
    starts before span_end whole, then the next ones a little at a time (read as far as taken).
    Bytes read are added to taken['bytes']; taken['past_span']: the first member start at or past
    span_end (or the file's end) that the walk reaches."""
    at = lo
    while at < size:
        if at >= span_end:
            taken.setdefault("past_span", at)
        head = _pread(f, at, BGZF_HEAD)
        if not is_bgzf(head):
            raise NotBgzf
        end = at + _member_size(head)
        if at < span_end:
            member = _pread(f, at, end - at)
            taken["bytes"] += len(member)
            yield np.frombuffer(isal_zlib.decompress(member, wbits=31), np.uint8), True
        else:
            inflate = isal_zlib.decompressobj(wbits=31)
            while not inflate.eof and at < end:
                chunk = _pread(f, at, min(SCAN_BYTES, end - at))
                if not chunk:
                    raise EOFError("a member cut short")
                taken["bytes"], at = taken["bytes"] + len(chunk), at + len(chunk)
                yield np.frombuffer(inflate.decompress(chunk), np.uint8), False
        at = end
    taken.setdefault("past_span", at)


def owned(pieces, begin: int | None, found: dict):
    """The bytes of X (the data of pieces: (uint8 array, whether in the span)) a rank owns, in
    pieces: from the first line start q1 >= 1 (or from begin) to the first line start q2 past the
    span's end, X's end if none. A line starts after an LF, or after a CR not followed by an LF.
    found['q1']: q1 once found."""
    at, last, span_end, q1 = 0, None, None, begin
    found["q1"] = q1
    for piece, in_span in pieces:
        if not in_span and span_end is None:
            span_end = at
        if not piece.size:
            continue
        seen = piece if last is None else np.concatenate((np.array([last], np.uint8), piece))
        base = at - (last is not None)  # X's offset of seen[0]
        starts = base + 1 + np.flatnonzero((seen[:-1] == LF) | ((seen[:-1] == CR) & (seen[1:] != LF)))
        if q1 is None:
            later = starts[starts >= 1]
            q1 = found["q1"] = int(later[0]) if later.size else None
        q2 = None
        if span_end is not None:
            past = starts[starts > span_end]
            q2 = int(past[0]) if past.size else None
        if q1 is not None:
            lo, hi = max(q1, at), at + piece.size if q2 is None else q2
            if hi > lo:
                yield piece[lo - at : hi - at]
        if q2 is not None:
            return
        last, at = piece[-1], at + piece.size


def _bgzf_share(path, fmt: str, rank: int, ranks: int, gpu_room: int | None):
    """((rules, src, dst, bytes read) of rank's share, (the first member it read, the first member
    start past its span its walk reached)); NotBgzf where it met a member that is not BGZF."""
    rules = byte_ranges.rules_of(path, fmt)
    start, first_line, read = byte_ranges.data_start(path, rules, check_binary=rank == 0)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        past_header, looked = _first_member_from(f, start, size)
        lo, hi = (max(byte_ranges.cut(size, 0, k, ranks), past_header) if 0 < k < ranks else 0 if k == 0 else size
                  for k in (rank, rank + 1))
        if rank:
            lo, scanned = member_at_or_after(f, lo, size)
            looked += scanned
        taken, found = {"bytes": 0}, {}
        region = owned(members(f, lo, hi, size, taken), start if rank == 0 else None, found)
        stream = _Stream(region, lambda: taken["bytes"])
        engine = text.engine_for(0, gpu_room)
        try:
            engine = text.parse_blocks(path, text.read_ahead(stream, stream, path, engine.allocate, start=max(lo, 1)),
                                       engine, rules.validate, line=first_line if rank == 0 else 1)
        except InputError as bad:
            if bad.line is None or rank == 0:
                raise
            before = itertools.chain((piece for piece, _ in members(f, 0, lo, lo, {"bytes": 0})),
                                     byte_ranges.first_bytes((piece for piece, _ in
                                                              members(f, lo, size, size, {"bytes": 0})), found["q1"]))
            raise InputError(path, bad.problem, bad.line + byte_ranges.count_line_ends(before)) from None
    src, dst = engine.pairs()
    return (rules, src, dst, read + looked + taken["bytes"]), (lo, taken["past_span"])


def _stream_share(path, fmt: str, rank: int, ranks: int, gpu_room: int | None):
    """Every R-th block of lines of a gzip stream, from rank's: the whole stream inflated."""
    rules = byte_ranges.rules_of(path, fmt)
    engine = text.engine_for(0, gpu_room)
    with text.open_binary(path) as (stream, raw):
        blocks = enumerate(text.read_ahead(stream, raw, path, engine.allocate))
        at, i = 0, -1  # at: the (inflated) offset of a block
        for i, (block, read_so_far) in blocks:
            line = None
            if i == 0:
                skip, lines = rules.header(block)
                block, at, line = block[skip:], skip, 1 + lines
            if i % ranks == rank:
                engine = _parse_own(path, rules, engine, block, read_so_far, at, line)
            at += block.size
        if i < 0:
            rules.header(b"")
    src, dst = engine.pairs()
    return rules, src, dst, os.path.getsize(path)


def _lines_before(path, offset: int) -> int:
    """Lines that end before offset (a line start) in a gzip stream's data (its byte-order mark aside)."""
    def pieces(stream):
        while piece := text.read_block(stream, path, PIECE_BYTES):
            yield np.frombuffer(piece, np.uint8)

    with text.open_binary(path) as (stream, _):
        return byte_ranges.count_line_ends(byte_ranges.first_bytes(pieces(stream), offset))


def _node_stream_share(path, fmt: str, comm, gpu_room: int | None):
    """Every R-th block of lines of a gzip stream, from rank's: the stream inflated by the first
    rank of each host, which parses its own blocks and sends the others theirs."""
    from mpi4py import MPI

    rules = byte_ranges.rules_of(path, fmt)
    engine = text.engine_for(0, gpu_room)
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    try:
        members = node.allgather(comm.rank)
        if node.rank == 0:
            engine = _inflate_for_node(path, rules, comm, node, members, engine)
            read = os.path.getsize(path)
        else:
            engine = _parse_sent(path, rules, node, engine)
            read = 0
    finally:
        node.Free()
    src, dst = engine.pairs()
    return rules, src, dst, read


SENDS_AHEAD = 2  # blocks sent to a rank and not yet taken, before the host's inflating rank waits for it


def _inflate_for_node(path, rules, comm, node, members: list, engine):
    """The host's first rank: the whole stream inflated, its own blocks parsed, the host's other
    ranks sent theirs (block, its offset, its first line where known); then each the header's
    facts, or the error that ended the stream."""
    pending = {k: [] for k in range(1, node.size)}
    ends = {k: ("end", rules.declared) for k in pending}
    try:
        with text.open_binary(path) as (stream, raw):
            at, i = 0, -1
            for i, (block, read_so_far) in enumerate(text.read_ahead(stream, raw, path, engine.allocate)):
                line = None
                if i == 0:
                    skip, lines = rules.header(block)
                    block, at, line = block[skip:], skip, 1 + lines
                owner = i % comm.size
                if owner == comm.rank:
                    engine = _parse_own(path, rules, engine, block, read_so_far, at, line)
                elif owner in members:
                    k = members.index(owner)
                    if len(pending[k]) >= SENDS_AHEAD:
                        pending[k].pop(0).wait()
                    pending[k].append(node.isend(("block", at, line, rules.declared, np.array(block)), dest=k))
                at += block.size
            if i < 0:
                rules.header(b"")
    except InputError as failed:
        ends = {k: ("failed", failed.path, failed.problem, failed.line) for k in pending}
        raise
    except BaseException as failed:
        ends = {k: ("failed", path, f"{type(failed).__name__}: {failed}", None) for k in pending}
        raise
    finally:
        for k, sent in pending.items():
            for request in sent:
                request.wait()
            node.send(ends[k], dest=k)
    return engine


def _parse_sent(path, rules, node, engine):
    """A host's other rank: the blocks its first rank sends parsed until the end; the first bad line
    raised once all are taken (so the sender never waits for it)."""
    failed = None
    while True:
        message = node.recv(source=0)
        if message[0] == "failed":
            raise failed or InputError(*message[1:])
        if message[0] == "end":
            if failed is not None:
                raise failed
            rules.declared.update(message[1])
            return engine
        _, at, line, declared, block = message
        rules.declared.update(declared)  # (a Matrix Market file's ids are checked against its size line)
        if failed is None:
            try:
                engine = _parse_own(path, rules, engine, block, None, at, line)
            except InputError as bad:
                failed = bad


def _parse_own(path, rules, engine, block, read_so_far, at: int, line: int | None):
    """The engine after parsing a block of a stream at offset at (its first line's number where
    known, else counted when a line is bad)."""
    try:
        return text.parse_blocks(path, [(block, read_so_far)], engine, rules.validate, line=line or 1)
    except InputError as bad:
        if bad.line is None or line is not None:
            raise
        raise InputError(path, bad.problem, bad.line + _lines_before(path, at)) from None


def read_pairs(path, fmt: str, rank: int, ranks: int, gpu_room: int | None, comm=None):
    """(the reader's rules, src, dst, bytes read) of rank's share of a gzip edge list or Matrix
    Market file ('edgelist' or 'mtx'). comm: the ranks' communicator, with which a single stream is
    inflated once per host."""
    with open(path, "rb") as f:
        cut = ranks > 1 and is_bgzf(f.read(BGZF_HEAD)) and (comm is not None or _all_bgzf(f))
    if cut:
        share = _cut_share(path, fmt, rank, ranks, gpu_room, comm)
        if share is not None:
            return share
    if comm is not None and ranks > 1:
        return _node_stream_share(path, fmt, comm, gpu_room)
    return _stream_share(path, fmt, rank, ranks, gpu_room)


def _all_bgzf(f) -> bool:
    """Whether every member of the open file is BGZF: their headers walked from its start."""
    at, size = 0, os.fstat(f.fileno()).st_size
    while at < size:
        head = _pread(f, at, BGZF_HEAD)
        if not is_bgzf(head):
            return False
        at += _member_size(head)
    return True


def _cut_share(path, fmt: str, rank: int, ranks: int, gpu_room: int | None, comm):
    """Rank's share of a BGZF file cut at its members (read_pairs's), or None on every rank where
    its members are not all BGZF. Given comm, the ranks tell each other what they walked: each
    rank's members are BGZF from its first to the first past its span, and where each of those
    is the next rank's first (the last rank's: the file's end), the walks together are every
    member from the file's start."""
    failed = share = walked = None
    try:
        share, walked = _bgzf_share(path, fmt, rank, ranks, gpu_room)
    except NotBgzf:
        pass
    except Exception as e:  # raised once the others know whether to read the file as one stream
        failed, walked = e, False
    every = comm.allgather(walked) if comm is not None else [walked]
    joined = all(a[1] == b[0] for a, b in zip(every, every[1:]) if a and b)  # (a failed rank's: unknown)
    if None in every or not joined:
        return None
    if failed is not None:
        raise failed
    return share
