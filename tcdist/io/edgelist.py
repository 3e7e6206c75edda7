"""SNAP, KONECT and Graph Challenge edge lists: two integer ids per line, anything after ignored."""

import re

import numpy as np

from tcdist.graph.edges import EdgeList
from tcdist.io.text import data_lines, read_pairs, show, sniff_delimiter

_HEAD_BYTES = 1 << 16  # a header is looked for in the file's first 64 KiB
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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


def _may_be_data(tokens):
    """An edge or a damaged one ('1.0 2.0', '1 x', '+3 4'; the parser names what is wrong): two or
    more fields, one of them a number. A lone field cannot be an edge (a vertex count, say)."""
    return len(tokens) >= 2 and any(_NUMBER.fullmatch(t) for t in tokens)


def _header(path, warnings):
    """Lines before the first edge whose fields are all words (a header without '#', as some SNAP
    files have) are skipped with one warning naming them; a line with a number among several fields
    is data, so a bad one is an error, as it is after the first edge."""
    def header(chunk):
        data = [(end, i, tokens, raw) for end, i, tokens, raw in _leading_lines(chunk) if tokens]
        if not data:
            return 0, 0, " "
        first = next((k for k, line in enumerate(data) if _may_be_data(line[2])), 0)
        end, i, tokens, raw = data[first]
        if first:
            skipped = data[:first]
            where = f"{skipped[0][1] + 1}" + (f"-{skipped[-1][1] + 1}" if first > 1 else "")
            shown = ", ".join(f"'{show(b' '.join(line[2]))}'" for line in skipped[:3]) + (", ..." if first > 3 else "")
            warnings.append(f"{path}:{where}: skipped {'a header line' if first == 1 else f'{first} header lines'} "
                            f"before the first edge ({shown})")
        return end - len(raw) - 1, i, sniff_delimiter(raw)

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
