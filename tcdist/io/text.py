"""Bulk parsing of integer pairs from text, at disk speed.

Text is read in chunks of whole lines. Each chunk is first handed to pyarrow's
multithreaded CSV reader as it is (the fast path: SNAP, KONECT and Matrix Market bodies
are regular). A chunk the fast path rejects (runs of blanks, comments in the middle,
ragged extra columns) is rewritten by whole-array NumPy passes into canonical
``a b\\n`` lines and parsed again. Only when that fails too is the chunk scanned line by
line, to name the first bad line in the error message.
"""

import gzip
import io
import os
import re
import sys
import zlib
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tcdist import progress
from tcdist.budget import host as memory
from tcdist.errors import InputError

CHUNK_BYTES = 32 << 20
MAX_LINE_BYTES = 64 << 20  # no edge-list line is this long: past it the input is not an edge list
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
# UTF-32 LE's mark starts with UTF-16 LE's, so the longer marks are tried first
FOREIGN_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32", "big-endian"), (b"\xff\xfe\x00\x00", "UTF-32", "little-endian"),
                (b"\xfe\xff", "UTF-16", "big-endian"), (b"\xff\xfe", "UTF-16", "little-endian"))
INT64_MAX = 2**63 - 1
_COMMENT = (b"#", b"%")
_DECIMAL = re.compile(rb"-?[0-9]+")
_SEPARATORS = b" \t\r\v\f,"


@contextmanager
def open_binary(path):
    """A byte stream of the file ('-': standard input), gunzipped when its first bytes say gzip,
    with the raw file for progress. Nothing seeks, so pipes, FIFOs and <(...) read like files;
    the stream can peek, for sniffing formats without consuming input."""
    raw = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        stream = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:
            stream = io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"), 1 << 20)
        skip_byte_order_mark(stream, path)
        yield stream, raw
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def skip_byte_order_mark(stream, path):
    """Consume a UTF-8 byte-order mark (else it sticks to the first field); refuse UTF-16 and
    UTF-32 text by theirs. A peek: the stream is not read past the mark."""
    try:
        head = stream.peek(4)[:4]
    except (EOFError, OSError, zlib.error):
        raise InputError(path, "truncated or corrupt gzip data") from None
    if head.startswith(UTF8_BOM):
        stream.read(len(UTF8_BOM))
        return
    for mark, encoding, order in FOREIGN_BOMS:
        if head.startswith(mark):
            raise InputError(path, f"the file is {encoding} ({order}) text; convert it to UTF-8 or ASCII "
                                   f"(iconv -f {encoding} -t UTF-8)")


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
    except (EOFError, OSError, zlib.error):
        raise InputError(path, "truncated or corrupt gzip data") from None
    return filled


def read_block(stream, path, size):
    """Up to ``size`` bytes from the stream, broken gzip data as an InputError."""
    buf = bytearray(size)
    return bytes(buf[: _read_into(stream, path, memoryview(buf))])


def iter_chunks(stream, path, size=None):
    """Yield (memoryview of whole lines, number of its first line).

    A line ends at LF, CRLF or a lone CR, on every path: chunks holding a CR are rewritten
    with LF ends (a CR at the end of what was read waits for the next read, which may bring
    its LF), so the parsers, the header sniffing and the line numbers only ever see LF.
    Each chunk gets a fresh buffer that starts with the partial line the last one left.
    """
    size = size or CHUNK_BYTES
    rest = b""
    line = 1
    while True:
        buf = bytearray(len(rest) + size)
        buf[: len(rest)] = rest
        end = len(rest) + _read_into(stream, path, memoryview(buf)[len(rest):])
        at_eof = end < len(buf)  # _read_into stops short only at the end of the stream
        if end == 0:
            return
        if line == 1 and not rest:
            refuse_binary(buf[:end], path)
        held = 0 if at_eof or buf[end - 1] != 13 else 1  # a CR that may be the first half of a CRLF
        if buf.find(b"\r", 0, end) >= 0:
            unified = bytes(buf[: end - held]).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            buf = bytearray(unified + buf[end - held : end])
            end = len(buf)
        if at_eof:  # the last chunk takes the last line, newline or not
            yield memoryview(buf)[:end], line
            return
        cut = buf.rfind(b"\n", 0, end - held) + 1
        if cut == 0:
            if end > MAX_LINE_BYTES:
                raise InputError(path, f"no line end in the first {end:,} bytes: not a text edge list", line)
            rest = bytes(buf[:end])
            continue
        rest = bytes(buf[cut:end])
        yield memoryview(buf)[:cut], line
        line += buf.count(b"\n", 0, cut)


def refuse_binary(head, path):
    """Refuse data that is not a text graph: UTF-16 text without a byte-order mark (open_binary
    refuses it by its mark), or a NUL byte near the start. Other bytes that are not UTF-8 (a
    Latin-1 comment, say) are the parser's business: in a comment they are skipped, in an id they
    are an error naming the line."""
    sample = bytes(head[:8192])
    lanes = [sample[k::2].count(0) / max(len(sample) // 2, 1) for k in (0, 1)]  # NUL share of even, odd bytes
    if len(sample) >= 8 and max(lanes) > 0.75 and min(lanes) < 0.25:
        raise InputError(path, "UTF-16 text; tcdist reads ASCII or UTF-8 (convert it: iconv -f UTF-16 -t UTF-8)")
    nul = sample.find(b"\x00")
    if nul >= 0:
        raise InputError(path, f"binary data (NUL byte at offset {nul}), not a text graph")


def data_lines(chunk):
    """(index, tokens) of the lines of a chunk that hold data, comments cut at '#' or '%'."""
    for i, line in enumerate(bytes(chunk).split(b"\n")):
        cut = min((p for p in (line.find(c) for c in _COMMENT) if p >= 0), default=len(line))
        tokens = line[:cut].replace(b",", b" ").split()
        if tokens:
            yield i, tokens


def show(token):
    """A token as it may appear in a one-line message: at most 24 characters, anything not
    printable (a NUL, a control byte, a byte that is not UTF-8) written as an escape."""
    text = token.decode("utf-8", "backslashreplace")
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return text if len(text) <= 24 else text[:21] + "..."


def _token_problem(token):
    if not _DECIMAL.fullmatch(token):
        return f"'{show(token)}' is not an integer vertex id (decimal digits only)"
    value = int(token)
    if value < 0:
        return f"negative vertex id {value}"
    if value > INT64_MAX:
        return f"vertex id {show(token)} is out of range (largest allowed is 2^63-1)"
    return None


def locate_problem(chunk, first_line):
    """(line, problem) of the first line that is not two integer ids (error path only)."""
    for i, tokens in data_lines(chunk):
        if len(tokens) < 2:
            return first_line + i, f"expected two vertex ids, found one field '{show(tokens[0])}'"
        for token in tokens[:2]:
            problem = _token_problem(token)
            if problem:
                return first_line + i, problem
    return None, "could not be parsed as an edge list"


def line_of_row(chunk, first_line, row):
    """Line number of the row-th data line of a chunk (error path only)."""
    for k, (i, _) in enumerate(data_lines(chunk)):
        if k == row:
            return first_line + i
    return None


def _table_pairs(table):
    a, b = table.column(0), table.column(1)
    if a.null_count or b.null_count:
        raise pa.ArrowInvalid("empty field")
    return a.to_numpy(), b.to_numpy()


def _parse_regular(chunk, delimiter):
    """Fast path: the chunk as it is, first two of any number of columns."""
    table = pcsv.read_csv(
        pa.py_buffer(chunk),
        read_options=pcsv.ReadOptions(autogenerate_column_names=True, block_size=4 << 20),
        parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False),
        convert_options=pcsv.ConvertOptions(
            include_columns=["f0", "f1"], column_types={"f0": pa.int64(), "f1": pa.int64()}
        ),
    )
    return _table_pairs(table)


def normalise(chunk):
    """Rewrite a chunk as 'a b' lines: comments and extra columns cut, separators folded to one blank."""
    a = np.frombuffer(chunk, np.uint8)
    idx = np.arange(a.size, dtype=np.int32)  # chunks are far below 2^31 bytes
    newline = a == 10
    last_newline = np.maximum.accumulate(np.where(newline, idx, -1))
    last_comment = np.maximum.accumulate(np.where((a == 35) | (a == 37), idx, -1))
    separator = np.isin(a, np.frombuffer(_SEPARATORS, np.uint8)) | (last_comment > last_newline)
    token = ~separator & ~newline
    start = token.copy()
    start[1:] &= ~token[:-1]
    starts = np.cumsum(start, dtype=np.int32)
    ordinal = starts - np.maximum.accumulate(np.where(newline, starts, 0))
    keep = (token & (ordinal <= 2)) | newline
    blank = np.zeros_like(keep)
    blank[:-1] = start[1:] & (ordinal[1:] == 2)
    out = a.copy()
    out[blank] = 32
    return out[keep | blank].tobytes()


def _parse_canonical(text):
    if not bytes(text).strip():
        empty = np.empty(0, np.int64)
        return empty, empty
    table = pcsv.read_csv(
        pa.py_buffer(text),
        read_options=pcsv.ReadOptions(column_names=["f0", "f1"], block_size=4 << 20),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"f0": pa.int64(), "f1": pa.int64()}),
    )
    return _table_pairs(table)


def _hex_like(text):
    """pyarrow reads '0x10' as 16; ids are decimal, so text with an x takes the checked path."""
    text = bytes(text)  # a memoryview's `in` compares items, not bytes
    return text.find(b"x") >= 0 or text.find(b"X") >= 0


def parse_chunk(chunk, first_line, delimiter, path):
    """Two int64 arrays from a chunk, or an InputError naming the first bad line."""
    if not _hex_like(chunk):
        try:
            return _parse_regular(chunk, delimiter)
        except (pa.ArrowInvalid, KeyError):
            pass
    try:
        text = normalise(chunk)
        if _hex_like(text):
            raise pa.ArrowInvalid("a hexadecimal id")
        return _parse_canonical(text)
    except pa.ArrowInvalid:
        line, problem = locate_problem(chunk, first_line)
        raise InputError(path, problem, line) from None


def sniff_delimiter(line):
    """The field separator of a data line: tab, comma or blank."""
    for d in (b"\t", b","):
        if d in line:
            return d.decode()
    return " "


def read_pairs(path, header, validate, stream=None):
    """Read a text file of integer pairs in bulk.

    ``header(first_chunk) -> (bytes to skip, lines to skip, delimiter)`` handles what
    precedes the data; ``validate(a, b) -> (row, problem) | None`` checks ids per chunk.
    stream: an already open (stream, raw) pair from open_binary (input that can be read once).
    Returns two int64 arrays.
    """
    if stream is None:
        with open_binary(path) as opened:
            return read_pairs(path, header, validate, opened)
    stream, raw = stream
    srcs, dsts = [], []
    size = 0 if is_stream(path) else os.path.getsize(path)
    held, checked = 0, 0
    with progress.bar(size or None, f"read {os.path.basename(path)}", "B", True) as bar:
        first = True
        for chunk, line in iter_chunks(stream, path):
            if first:
                skip_bytes, skip_lines, delimiter = header(chunk)
                chunk, line, first = chunk[skip_bytes:], line + skip_lines, False
            a, b = parse_chunk(chunk, line, delimiter, path)
            bad = validate(a, b)
            if bad is not None:
                row, problem = bad
                raise InputError(path, problem, line_of_row(chunk, line, row))
            srcs.append(a)
            dsts.append(b)
            held += a.nbytes + b.nbytes
            bar.update((raw.tell() if size else bar.n + len(chunk)) - bar.n)
            if held > 2 * checked:  # after the first chunk, then whenever what is held doubles
                _require_room(path, held, held * size // max(raw.tell(), 1) if size else held)
                checked = held
        if first:
            header(b"")
    if not srcs:
        empty = np.empty(0, np.int64)
        return empty, empty
    _require_room(path, held, held)
    return np.concatenate(srcs), np.concatenate(dsts)


def _require_room(path, held: int, whole: int) -> None:
    """Refuse early when the file's pairs (estimated from what was read so far) and their
    concatenation will not fit: whole bytes of pairs, held of them already in memory."""
    memory.require(2 * whole - held, f"reading {path} (about {whole // 16:,} edges)",
                   "convert it once on a machine with more memory (tcdist convert GRAPH OUT.h5), or give the "
                   "job more memory")
