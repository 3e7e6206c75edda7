"""Matrix Market coordinate files (pattern, integer, real or complex; general or symmetric), 1-based."""

import numpy as np

from tcdist.errors import InputError
from tcdist.graph.edges import EdgeList
from tcdist.io.text import read_pairs

_FIELDS = {"pattern", "integer", "real", "complex"}
_SYMMETRIES = {"general", "symmetric", "skew-symmetric", "hermitian"}
_HEAD_BYTES = 1 << 20  # banner, comments and size line must lie within the first MiB


def _banner(path, line):
    words = line.decode("utf-8", "replace").split()
    if not words or words[0].lower() != "%%matrixmarket":
        raise InputError(path, "bad Matrix Market banner: the first line must start with %%MatrixMarket", 1)
    if len(words) != 5:
        raise InputError(path, "bad Matrix Market banner: expected '%%MatrixMarket matrix coordinate FIELD "
                               "SYMMETRY'", 1)
    obj, fmt, field, symmetry = (w.lower() for w in words[1:])
    if obj != "matrix":
        raise InputError(path, f"bad Matrix Market banner: object '{obj}' is not 'matrix'", 1)
    if fmt == "array":
        raise InputError(path, "Matrix Market 'array' (dense) format is not a graph; tcdist reads 'coordinate' "
                               "files", 1)
    if fmt != "coordinate":
        raise InputError(path, f"bad Matrix Market banner: unknown format '{fmt}'", 1)
    if field not in _FIELDS:
        raise InputError(path, f"bad Matrix Market banner: unknown field '{field}'", 1)
    if symmetry not in _SYMMETRIES:
        raise InputError(path, f"bad Matrix Market banner: unknown symmetry '{symmetry}'", 1)


def _size_line(path, number, line):
    words = line.split()
    if len(words) != 3 or not all(w.isdigit() for w in words):
        shown = line.decode("utf-8", "replace").strip()[:40]
        raise InputError(path, f"bad Matrix Market size line '{shown}': expected 'ROWS COLUMNS ENTRIES'", number)
    rows, cols, entries = (int(w) for w in words)
    if rows != cols:
        raise InputError(path, f"a {rows} x {cols} matrix is not an adjacency matrix (it must be square)", number)
    return rows, entries


def read_mtx(path, stream=None):
    """Read a Matrix Market coordinate file as the edges (i-1, j-1) of its entries."""
    declared = {}

    def header(chunk):
        if not chunk:
            raise InputError(path, "empty file: no Matrix Market banner", 1)
        head = bytes(chunk[:_HEAD_BYTES])
        lines = head.split(b"\n")
        if len(chunk) > _HEAD_BYTES or not lines[-1]:
            lines.pop()  # cut by the head's size, or the empty rest after the final newline
        offset = 0
        for number, line in enumerate(lines, 1):
            offset += len(line) + 1
            if number == 1:
                _banner(path, line)
            elif line.strip() and not line.lstrip().startswith(b"%"):
                declared["n"], declared["entries"] = _size_line(path, number, line)
                return offset, number, " "
        raise InputError(path, "no Matrix Market size line")

    def in_range(a, b):
        n = declared["n"]
        bad = np.flatnonzero((a < 1) | (a > n) | (b < 1) | (b > n))
        if bad.size == 0:
            return None
        row = int(bad[0])
        return row, f"entry ({a[row]}, {b[row]}) is out of range 1..{n}"

    src, dst = read_pairs(path, header, in_range, stream)
    if src.size != declared["entries"]:
        raise InputError(path, f"the size line declares {declared['entries']} entries but the file holds {src.size}")
    src -= 1
    dst -= 1
    return EdgeList(src, dst, str(path))
