"""The edge-line grammar on random text, against an independent reading with regular expressions
(two commas with nothing between, or one that opens a line, leave an empty field: a missing id):
the same pairs in the same order, or the same first bad line; wherever blocks and ranges fall, and
whether a small block is parsed compiled or in whole-array NumPy."""

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdist import compiled
from tcdist.errors import InputError
from tcdist.io import engines, grammar, text

PIECES = [b"0", b"7", b"12", b"-0", b"-3", b"+3", b"007", b"9223372036854775807", b"9223372036854775808",
          b"99999999999999999999", b"0x1", b"a", b"\x00", b"\xff", b" ", b"\t", b",", b"\v", b"\r", b"\n", b"\r\n",
          b"#", b"%", b"1 2\n", b"3\t4\r\n", b"5,6\r", b"8 9 x\n", b"10 11 # c\n", b"\n\n",
          b"1,,2\n", b",3,4\n", b"5, ,6\n", b"7,8,,\n"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join)
VALID = st.lists(st.sampled_from([b"1 2\n", b"3\t4\r\n", b"5,6\r", b"8 9 x\n", b"10 11 # c\n", b"# c\n", b"\n",
                                  b"  12   13  \n", b"9223372036854775807 0\r\n", b"-0 4\n", b"%\r", b"14,15,,x\n"]),
                 max_size=80).map(b"".join)


def reference(data: bytes):
    """The pairs of data, or the number of its first bad line."""
    pairs = []
    for number, line in enumerate(re.split(rb"\r\n|\r|\n", data), 1):
        data_part = re.split(rb"[#%]", line, maxsplit=1)[0].strip(b" \t\v\f")
        tokens = re.split(rb"[ \t\v\f]*,[ \t\v\f]*|[ \t\v\f]+", data_part)  # '' for an empty field
        if tokens == [b""]:
            continue
        if len(tokens) < 2 or not all(re.fullmatch(rb"-?[0-9]+", t) for t in tokens[:2]):
            return number
        u, v = int(tokens[0]), int(tokens[1])
        if min(u, v) < 0 or max(u, v) > 2**63 - 1:
            return number
        pairs.append((u, v))
    return pairs


def parsed(data: bytes, gpu_room=None):
    """read_pairs' pairs of data (no header), or the line its error names."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "g.txt"
        path.write_bytes(data)
        try:
            a, b = text.read_pairs(str(path), lambda head: (0, 0), gpu_room=gpu_room)
        except InputError as error:
            return int(re.search(r"g\.txt:(\d+):", str(error)).group(1))
    a, b = (x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else x for x in (a, b))
    return list(zip(a.tolist(), b.tolist()))


def check(data, monkeypatch, block, piece, gpu_room=None, module=engines, small=False):
    """small: blocks parsed in whole-array NumPy where it can (as before Numba loads), else compiled."""
    if b"\x00" in data[:8192] or not data:
        return  # refused as binary, or no data: other tests
    monkeypatch.setattr(compiled, "is_loaded", lambda: False)
    monkeypatch.setattr(grammar, "SMALL_BLOCK_BYTES", 1 << 30 if small else -1)
    monkeypatch.setattr(text, "CHUNK_BYTES", block)
    monkeypatch.setattr(module, "RANGE_BYTES", piece)
    assert parsed(data, gpu_room) == reference(data), (block, piece)


@settings(max_examples=300, deadline=None)
@given(data=TEXTS, block=st.sampled_from([3, 16, 1 << 20]), piece=st.sampled_from([1, 5, 64, 1 << 16]),
       small=st.booleans())
def test_random_text_on_the_cpu(data, block, piece, small):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check(data, monkeypatch, block, piece, small=small)


@settings(max_examples=150, deadline=None)
@given(data=VALID, block=st.sampled_from([5, 64, 1 << 20]), piece=st.sampled_from([1, 7, 1 << 16]),
       small=st.booleans())
def test_valid_text_on_the_cpu(data, block, piece, small):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check(data, monkeypatch, block, piece, small=small)


@settings(max_examples=500, deadline=None)
@given(data=TEXTS | VALID)
def test_a_small_block_in_numpy_reads_as_compiled_or_leaves_it_to_the_compiled_parse(data):
    """parse_small gives the reference's pairs and the compiled parse's line count, or declines a
    block with a bad line or an id of 20 characters or more; never a block of good short lines."""
    buf = np.frombuffer(data, np.uint8).copy()
    small = grammar.parse_small(buf)
    scratch = np.empty(grammar.scratch_edges(buf.size, 1), np.int64)
    _, lines, _, _ = grammar.parse_range(buf, 0, buf.size, scratch, scratch.copy(), 0)
    if small is None:
        assert isinstance(reference(data), int) or re.search(rb"[^ \t\v\f,\r\n#%]{20}", data) or \
            re.search(rb"(^|[\r\n,])[ \t\v\f]*,", data), data  # (or a field that may be empty)
    else:
        assert list(zip(small[0].tolist(), small[1].tolist())) == reference(data)
        assert small[2] == lines


@pytest.mark.gpu
@settings(max_examples=300, deadline=None)
@given(data=TEXTS | VALID, block=st.sampled_from([3, 16, 1 << 20]), piece=st.sampled_from([1, 5, 128]),
       room=st.sampled_from([1 << 30, 2000]))
def test_random_text_on_the_gpu(data, block, piece, room):
    """room 2000: the edges move to the host part way (the CPU engine goes on)."""
    from tcdist.io import gpu_parse

    with pytest.MonkeyPatch.context() as monkeypatch:
        check(data, monkeypatch, block, piece, room, gpu_parse)
