"""SNAP, KONECT and Graph Challenge edge lists: two integer ids per line, anything after ignored."""

import numpy as np

from tcdist.io.edges import EdgeList
from tcdist.io.text import data_lines, read_pairs, show, sniff_delimiter

_HEAD_BYTES = 1 << 16


def _leading_lines(chunk):
    """(end offset, index, tokens, raw) of the first lines of a chunk (its last line too when the
    file ends without a newline)."""
    end = 0
    lines = bytes(chunk[:_HEAD_BYTES]).split(b"\n")
    if len(chunk) > _HEAD_BYTES or not lines[-1]:
        lines.pop()  # cut by the head's size, or the empty rest after the final newline
    for i, raw in enumerate(lines):
        end += len(raw) + 1
        tokens = next((t for _, t in data_lines(raw)), [])
        yield end, i, tokens, raw


def _header(path, warnings):
    def header(chunk):
        skip_bytes = skip_lines = 0
        lines = list(_leading_lines(chunk))
        data = [(end, i, tokens, raw) for end, i, tokens, raw in lines if tokens]
        if not data:
            return 0, 0, " "
        end, i, tokens, raw = data[0]
        skip_bytes, skip_lines = end - len(raw) - 1, i
        if len(tokens) == 1 and len(data) > 1 and len(data[1][2]) >= 2:
            warnings.append(f"{path}:{i + 1}: skipped a header line holding one field ('{show(tokens[0])}')")
            skip_bytes, skip_lines = end, i + 1
            raw = data[1][3]
        return skip_bytes, skip_lines, sniff_delimiter(raw)

    return header


def _nonnegative(a, b):
    bad = np.flatnonzero((a < 0) | (b < 0))
    if bad.size == 0:
        return None
    row = int(bad[0])
    return row, f"negative vertex id {min(int(a[row]), int(b[row]))}"


def read_edge_list(path, stream=None):
    """Read an edge list (plain or gzip); the name and line of a bad line are in the error."""
    warnings = []
    src, dst = read_pairs(path, _header(path, warnings), _nonnegative, stream)
    return EdgeList(src, dst, str(path), warnings)
