"""Text graphs read at disk speed: large blocks of whole lines, parsed on every core (or on a
GPU) by one grammar (grammar.py), read ahead on a thread of their own while the last block is
parsed. The first block's head goes through the reader's own header rule; a bad line is named
with its number (counted by the parse) and its problem (found by the few lines of Python below,
on the error path only).
"""

import io
import os
import queue
import re
import shlex
import sys
import threading
from contextlib import contextmanager

import numpy as np

from tcdist import progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import InputError, names_advice
from tcdist.io import engines, gzipped
from tcdist.io.grammar import SMALL_BLOCK_BYTES

CHUNK_BYTES = 32 << 20  # a block: large enough for every core, small enough to read ahead
MAX_LINE_BYTES = 64 << 20  # no edge-list line is this long: past it the input is not an edge list
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
# UTF-32 LE's mark starts with UTF-16 LE's, so the longer marks are tried first
FOREIGN_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32", "big-endian"), (b"\xff\xfe\x00\x00", "UTF-32", "little-endian"),
                (b"\xfe\xff", "UTF-16", "big-endian"), (b"\xff\xfe", "UTF-16", "little-endian"))
# other compressors: (their magic bytes, what the data is, the suffix of its files, what writes it out whole)
COMPRESSED = ((re.compile(rb"BZh[1-9](\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)"), "bzip2-compressed data",
               ".bz2", "bzcat"),
              (re.compile(rb"\xfd7zXZ\x00"), "xz-compressed data", ".xz", "xzcat"),
              (re.compile(rb"\x28\xb5\x2f\xfd"), "zstd-compressed data", ".zst", "zstdcat"),
              (re.compile(rb"PK(\x03\x04|\x05\x06)"), "a zip archive", ".zip", "unzip -p"))
INT64_MAX = 2**63 - 1
_COMMENT = (b"#", b"%")
_DECIMAL = re.compile(rb"-?[0-9]+")
NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # any written number
_LINE_END = re.compile(rb"\r\n|\r|\n")
BLOCKS_AHEAD = 2  # blocks read while one is parsed
GPU_BLOCKS = 8  # a GPU parses text where it has room for this many blocks (with their edges and counts)


@contextmanager
def open_binary(path, parallel: bool = True):
    """A byte stream of the file ('-': standard input), gunzipped when its first bytes say gzip
    (gzipped.py; parallel=False: on one core, for a look at its head), with what tells the file's
    bytes read so far (for progress: the raw file, or rapidgzip's count). Nothing seeks, so pipes,
    FIFOs and <(...) read like files; the stream can peek, for sniffing formats without consuming
    input."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")
    inflated = None
    try:
        stream, read_so_far = raw, raw
        refuse_compressed(raw.peek(10)[:10], path)
        if raw.peek(2)[:2] == GZIP_MAGIC:
            if parallel and gzipped.parallel(path):
                inflated = gzipped.Inflated(path)
                stream, read_so_far = io.BufferedReader(inflated, 1 << 20), inflated.read_so_far
            else:
                stream = gzipped.one_stream(raw)
        skip_byte_order_mark(stream, path)
        yield stream, read_so_far
    finally:
        if inflated is not None:
            inflated.close()
        if raw is not sys.stdin.buffer:
            raw.close()


def refuse_compressed(head, path):
    """Refuse data of a compressor other than gzip by its magic bytes, with the command that
    recompresses it as gzip (or, for standard input, that decompresses it on the way in)."""
    for magic, what, suffix, cat in COMPRESSED:
        if magic.match(head):
            if path == "-":
                raise InputError(path, f"{what}, which tcdist does not read; decompress it on the way in "
                                       f"({cat} FILE | tcdist ...)")
            name = os.fspath(path)
            out = (name[: -len(suffix)] if name.lower().endswith(suffix) else name) + ".gz"
            raise InputError(path, f"{what}, which tcdist does not read; it reads gzip: "
                                   f"{cat} {shlex.quote(name)} | gzip > {shlex.quote(out)}")


def skip_byte_order_mark(stream, path):
    """Consume a UTF-8 byte-order mark (else it sticks to the first field); refuse UTF-16 and
    UTF-32 text by theirs. A peek: the stream is not read past the mark."""
    try:
        head = stream.peek(4)[:4]
    except gzipped.ERRORS:
        raise InputError(path, "truncated or corrupt gzip data") from None
    if head.startswith(UTF8_BOM):
        stream.read(len(UTF8_BOM))
        return
    for mark, encoding, order in FOREIGN_BOMS:
        if head.startswith(mark):
            raise foreign_text(path, encoding, order)


def foreign_text(path, encoding, order) -> InputError:
    """The refusal of UTF-16 or UTF-32 text, with the command that converts it: iconv told the byte
    order (without it, iconv takes the machine's or big-endian where no mark says)."""
    return InputError(path, f"the file is {encoding} ({order}) text; convert it to UTF-8 or ASCII "
                            f"(iconv -f {encoding}{'BE' if order == 'big-endian' else 'LE'} -t UTF-8)")


def is_csv(path) -> bool:
    """Whether a path names a .csv file (gzipped or not), whose first line may be its header row."""
    return str(path).lower().removesuffix(".gz").endswith(".csv")


def is_gzip(path) -> bool:
    """Whether the file at path starts with gzip's magic bytes."""
    with open(path, "rb") as f:
        return f.read(len(GZIP_MAGIC)) == GZIP_MAGIC


def is_stream(path) -> bool:
    """Standard input, a pipe, a FIFO or a device: read once, front to back."""
    return path == "-" or not os.path.isfile(path)


def _read_into(stream, path, view):
    """Fill view from the stream as far as it goes; the number of bytes read."""
    filled = 0
    try:
        while filled < len(view):
            got = stream.readinto(view[filled:])
            if not got:
                break
            filled += got
    except gzipped.ERRORS:
        raise InputError(path, "truncated or corrupt gzip data") from None
    return filled


def read_block(stream, path, size):
    """Up to ``size`` bytes from the stream, broken gzip data as an InputError."""
    buf = bytearray(size)
    return bytes(buf[: _read_into(stream, path, memoryview(buf))])


def refuse_binary(head, path):
    """Refuse data that is not a text graph: UTF-16 text without a byte-order mark (open_binary
    refuses it by its mark), or a NUL byte near the start. Other bytes that are not UTF-8 (a
    Latin-1 comment, say) are the parser's business: in a comment they are skipped, in an id they
    are an error naming the line."""
    sample = bytes(head[:8192])
    lanes = [sample[k::2].count(0) / max(len(sample) // 2, 1) for k in (0, 1)]  # NUL share of even, odd bytes
    if len(sample) >= 8 and max(lanes) > 0.75 and min(lanes) < 0.25:  # ASCII as UTF-16: NUL the high byte
        raise foreign_text(path, "UTF-16", "big-endian" if lanes[0] > lanes[1] else "little-endian")
    nul = sample.find(b"\x00")
    if nul >= 0:
        raise InputError(path, f"binary data (NUL byte at offset {nul}), not a text graph")


def data_lines(chunk):
    """(index, tokens) of the lines of a chunk that hold data, comments cut at '#' or '%'; an empty
    field between commas (or before a line's first comma) is an empty token."""
    for i, line in enumerate(bytes(chunk).split(b"\n")):
        cut = min((p for p in (line.find(c) for c in _COMMENT) if p >= 0), default=len(line))
        tokens = [token for field in line[:cut].split(b",") for token in (field.split() or [b""])]
        if any(tokens) or len(tokens) > 1:  # (commas alone: empty fields)
            yield i, tokens


def show(token):
    """A token as it may appear in a one-line message: at most 24 characters, anything not
    printable (a NUL, a control byte, a byte that is not UTF-8) written as an escape."""
    text = token.decode("utf-8", "backslashreplace")
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text if len(text) <= 24 else text[:21] + "..."


def _id_problem(token):
    if not token:
        return "a vertex id is missing (an empty field between commas)"
    if not _DECIMAL.fullmatch(token):
        hint = "" if NUMBER.fullmatch(token) else f"; {names_advice()}"
        return f"'{show(token)}' is not an integer vertex id (decimal digits only{hint})"
    digits = token.lstrip(b"-").lstrip(b"0")
    if token.startswith(b"-") and digits:
        return f"negative vertex id {show(token)}"
    if len(digits) > 19 or int(digits or b"0") > INT64_MAX:  # int() of a long run: Python refuses 4,300 digits
        return f"vertex id {show(token)} is out of range (largest allowed is 2^63-1)"
    return None


def edge_problem(tokens):
    """Why a data line's fields are not an edge (the grammar's rule, said in words), or None."""
    if len(tokens) < 2:
        return f"expected two vertex ids, found one field '{show(tokens[0])}'"
    return _id_problem(tokens[0]) or _id_problem(tokens[1])


def locate_problem(chunk, first_line):
    """(line, problem) of the first line that is not two integer ids (error path only)."""
    for i, tokens in data_lines(chunk):
        problem = edge_problem(tokens)
        if problem:
            return first_line + i, problem
    return None, "could not be parsed as an edge list"


def line_of_row(chunk, first_line, row):
    """Line number of the row-th data line of a chunk (error path only)."""
    for k, (i, _) in enumerate(data_lines(chunk)):
        if k == row:
            return first_line + i
    return None


def split_lines(head) -> list[tuple[int, bytes, int]]:
    """(start, line, end past its line end) of every line of head, at LF, CRLF or lone CR ends;
    a last line without an end included."""
    head = bytes(head)
    lines, start = [], 0
    for found in _LINE_END.finditer(head):
        lines.append((start, head[start:found.start()], found.end()))
        start = found.end()
    if start < len(head):
        lines.append((start, head[start:], len(head)))
    return lines


def unified(block) -> bytes:
    """A block with every line end an LF (error path only: data_lines splits at LF)."""
    return bytes(block).replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def last_line_end(buf, end) -> int:
    """Where the last whole line of buf[:end] ends (0: none). A CR as the very last byte is left
    for the next block, which may bring its LF."""
    window = 1 << 16
    while True:
        lo = max(end - 1 - window, 0)
        tail = bytes(buf[lo : end - 1])
        cut = max(tail.rfind(b"\n"), tail.rfind(b"\r")) + 1
        if buf[end - 1] == 10:
            return end
        if cut:
            return lo + cut
        if lo == 0:
            return 0
        window *= 8


def _blocks(stream, raw, path, size, stop, allocate, start=0):
    """(block of whole lines, bytes of the file read so far) until the end of the stream; each
    block lies in one of BLOCKS_AHEAD + 1 buffers used in turn, so a block is only written again
    once the two after it have been taken. start: where the stream begins in the file (0: the
    file's head, looked at for binary data)."""
    buffers = [allocate(0) for _ in range(BLOCKS_AHEAD + 1)]
    rest = np.empty(0, np.uint8)
    turn, first, offset = 0, start == 0, start  # offset: of this block's first byte in the (uncompressed) stream
    seekable = not is_stream(path)
    while not stop.is_set():
        want = rest.size + size
        if buffers[turn].size < want:
            buffers[turn] = allocate(max(want, 2 * size))
        buf = buffers[turn]
        buf[: rest.size] = rest
        end = rest.size + _read_into(stream, path, memoryview(buf)[rest.size : want])
        if end == 0:
            return
        if first:
            refuse_binary(buf[:end], path)
            first = False
        at_eof = end < want  # _read_into stops short only at the end of the stream
        cut = end if at_eof else last_line_end(buf, end)
        if cut == 0:
            if end > MAX_LINE_BYTES:
                where = f"the first {end:,} bytes" if offset == 0 else f"{end:,} bytes from byte {offset:,}"
                raise InputError(path, f"no line end in {where}: not a text edge list", 1 if offset == 0 else None)
            rest = buf[:end].copy()
            continue
        offset += cut
        rest = buf[cut:end].copy()
        yield buf[:cut], raw.tell() if seekable else None
        if at_eof:
            return
        turn = (turn + 1) % len(buffers)


def first_block(stream, path) -> np.ndarray:
    """The first block of whole lines of a stream as read_pairs reads it (empty at once at its end)."""
    blocks = _blocks(stream, stream, path, CHUNK_BYTES, threading.Event(), lambda nbytes: np.empty(nbytes, np.uint8))
    return next((block for block, _ in blocks), np.empty(0, np.uint8))


def read_ahead(stream, raw, path, allocate, size=None, start=0):
    """The blocks of a stream, read on a thread of its own BLOCKS_AHEAD blocks ahead of their use,
    into buffers from allocate(nbytes); start: where the stream begins in the file."""
    stop = threading.Event()
    ready = queue.Queue(BLOCKS_AHEAD - 1)
    done = object()

    def hand_over(item) -> bool:
        """Put item in the queue once there is room; False when the reader is stopped first."""
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in _blocks(stream, raw, path, size or CHUNK_BYTES, stop, allocate, start):
                if not hand_over(item):
                    return
            hand_over(done)
        except BaseException as failed:  # raised again where the blocks are used
            hand_over(failed)

    reader = threading.Thread(target=produce, name="tcdist-read-ahead", daemon=True)
    reader.start()
    try:
        while (item := ready.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def read_pairs(path, header, validate=None, stream=None, gpu_room=None):
    """Read a text file of integer pairs in blocks.

    ``header(head) -> (bytes to skip, lines to skip)`` handles what precedes the data in the first
    block; ``validate(a, b) -> (row, problem) | None`` checks a block's ids beyond the grammar.
    stream: an already open (stream, raw) pair from open_binary (input that can be read once).
    gpu_room: parse on the current GPU while the edges and their build fit in these bytes (engines.py).
    Returns two int64 arrays (CuPy where parsed on the GPU).
    """
    if stream is None:
        with open_binary(path) as opened:
            return read_pairs(path, header, validate, opened, gpu_room)
    stream, raw = stream
    size = 0 if is_stream(path) else os.path.getsize(path)
    engine = engine_for(size if stream is raw else 0, gpu_room)  # gzip: its size does not estimate the edges
    with progress.bar(size or None, f"read {os.path.basename(path)}", "B", True) as bar:
        engine = parse_blocks(path, read_ahead(stream, raw, path, engine.allocate), engine, validate, header, bar)
    return engine.pairs()


def parse_blocks(path, blocks, engine, validate=None, header=None, bar=None, line=1):
    """The engine after parsing blocks of whole lines ((block, bytes of the file read so far) each),
    the first of them from line ``line``; header: as read_pairs's, for the first block."""
    first = header is not None
    for block, read_so_far in blocks:
        if first:
            skip_bytes, skip_lines = header(block)  # each reader looks at its own head of it
            block, line, first = block[skip_bytes:], line + skip_lines, False
        engine = _parse_block(engine, block, line, path, validate, read_so_far)
        line += engine.lines
        if bar is not None:
            bar.update((read_so_far or bar.n + block.size) - bar.n)
    if first:
        header(b"")
    return engine


def parse_peak_bytes(file_bytes: int) -> int:
    """Host bytes a reading of file_bytes of text takes at its peak beyond the pairs it makes: a
    block's parse, the compiled one's or, for a small block, whole-array NumPy's."""
    return max(model.SMALL_PARSE_BYTES_PER_TEXT_BYTE * min(file_bytes, SMALL_BLOCK_BYTES),
               model.PARSE_BYTES_PER_TEXT_BYTE * min(file_bytes, CHUNK_BYTES))


def engine_for(file_bytes: int, gpu_room: int | None):
    """The engine for a read of file_bytes (0: unknown): the current GPU's where gpu_room bytes hold
    a few blocks, else the host's."""
    if gpu_room is None or gpu_room < GPU_BLOCKS * CHUNK_BYTES:
        return engines.CpuEngine(file_bytes)
    from tcdist.io.gpu_parse import GpuEngine

    return GpuEngine(file_bytes, gpu_room)


def _parse_block(engine, block, line, path, validate, read_so_far):
    """The engine after parsing a block (another one where the edges moved to the host); a bad
    line or id as an InputError naming it. read_so_far: the file's bytes read with this block
    (compressed, for gzip), which with the file's size estimates the whole input."""
    bad = engine.parse(block)
    if bad is not None:
        offset, before = bad
        rest = bytes(block[offset : offset + MAX_LINE_BYTES])
        one_line = rest[: min((p for p in (rest.find(b"\n"), rest.find(b"\r")) if p >= 0), default=len(rest))]
        raise InputError(path, locate_problem(one_line, line + before)[1], line + before)
    engine.read_bytes = read_so_far if read_so_far is not None else engine.read_bytes + block.size
    engine = engine.settled(lambda nbytes, edges: memory.require(
        nbytes, f"reading {path} ({f'about {edges:,} edges' if engine.file_bytes else f'{edges:,} edges so far'})",
        "convert it once on a machine with more memory (tcdist convert GRAPH OUT.h5), or give the job more memory"))
    if validate is not None:
        found = validate(*engine.last_block())
        if found is not None:
            row, problem = found
            raise InputError(path, problem, line_of_row(unified(block), line, row))
    return engine
