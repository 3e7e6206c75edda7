"""Matrix Market coordinate files (pattern, integer, real or complex; general or symmetric), 1-based."""

import numpy as np

from tcdist.errors import InputError
from tcdist.graph.edges import EdgeList
from tcdist.io.text import read_pairs, split_lines
from tcdist.xp import array_module

_FIELDS = {"pattern", "integer", "real", "complex"}
_SYMMETRIES = {"general", "symmetric", "skew-symmetric", "hermitian"}
HEAD_BYTES = 1 << 20  # banner, comments and size line must lie within the first MiB


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
    if len(words) != 3 or not all(w.isdigit() and len(w) <= 19 for w in words):  # int() refuses long runs
        shown = line.decode("utf-8", "replace").strip()[:40]
        raise InputError(path, f"bad Matrix Market size line '{shown}': expected 'ROWS COLUMNS ENTRIES'", number)
    rows, cols, entries = (int(w) for w in words)
    if rows != cols:
        raise InputError(path, f"a {rows} x {cols} matrix is not an adjacency matrix (it must be square)", number)
    return rows, entries


def _first_outside(a, b, lo: int, hi: int) -> int | None:
    """The first row with an id outside lo..hi, or None: on the GPU one pass of tcdist's own (no
    CuPy kernel to compile), on the host four reductions (the rows searched only where one fails)."""
    if not a.size:
        return None
    if array_module(a) is not np:
        from tcdist.graph import gpu_build

        return gpu_build.first_outside(a, b, lo, hi)
    if min(a.min(), b.min()) >= lo and max(a.max(), b.max()) <= hi:
        return None
    return int(np.flatnonzero((a < lo) | (a > hi) | (b < lo) | (b > hi))[0])


def header_rule(path, declared: dict):
    """The header rule of read_pairs: banner, comments and size line, whose numbers go into declared
    ('n', 'entries'). header(head, partial=True) looks at a head that may stop short of the first
    block (whole lines): None where the size line is not in it yet."""
    def header(head, partial=False):
        if partial and not len(head):
            return None
        if not len(head):
            raise InputError(path, "empty file: no Matrix Market banner", 1)
        lines = split_lines(head[:HEAD_BYTES])
        if len(head) > HEAD_BYTES and lines:
            lines.pop()  # may be cut
        for number, (_, line, end) in enumerate(lines, 1):
            if number == 1:
                _banner(path, line)
            elif line.strip() and not line.lstrip().startswith(b"%"):
                declared["n"], declared["entries"] = _size_line(path, number, line)
                return end, number
        if partial:
            return None
        raise InputError(path, f"no Matrix Market size line within the first {HEAD_BYTES >> 20} MiB")

    return header


def range_check(path, declared: dict):
    """read_pairs's validate: every id within 1..n of the size line."""
    def in_range(a, b):
        n = declared["n"]
        row = _first_outside(a, b, 1, n)
        return None if row is None else (row, f"entry ({int(a[row])}, {int(b[row])}) is out of range 1..{n}")

    return in_range


def entries_problem(declared: dict, found: int) -> str | None:
    """Why the entries read do not match the size line, or None."""
    if found != declared["entries"]:
        return f"the size line declares {declared['entries']} entries but the file holds {found}"
    return None


def zero_based(src, dst) -> None:
    """Matrix Market's 1-based ids made 0-based, in place."""
    if array_module(src) is np:
        src -= 1
        dst -= 1
    else:  # (a pass of the program the range check compiled, not a CuPy kernel of its own)
        from tcdist.graph import gpu_build

        gpu_build.shift_ids(src, dst, -1)


def read_mtx(path, stream=None, gpu_room=None):
    """Read a Matrix Market coordinate file as the edges (i-1, j-1) of its entries (parsed on the
    GPU given gpu_room)."""
    declared = {}
    src, dst = read_pairs(path, header_rule(path, declared), range_check(path, declared), stream, gpu_room)
    problem = entries_problem(declared, src.size)
    if problem:
        raise InputError(path, problem)
    zero_based(src, dst)
    return EdgeList(src, dst, str(path))
