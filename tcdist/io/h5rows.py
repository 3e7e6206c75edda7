"""A tcdist graph file read by several ranks, each a contiguous range of rows of its oriented CSR.

Rows are cut so that every rank reads about as many bytes (a row costs its rowptr and
original_id entries and its columns): each cut is found by a binary search over rowptr, a few
entries read. A rank reads its rows as HDF5 hyperslabs and checks what it can alone (the
structure of its rows); the digest covers whole arrays, so each rank takes the crc32 of its
pieces of the digest's 64 MiB blocks, and check_together joins every rank's pieces
(crc32_combine) into the digest one process checks, and says the first problem as one process
says it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from isal import isal_zlib

from tcdist.errors import InputError
from tcdist.graph.check import FALLS, PROBLEMS, rows_problems
from tcdist.io import h5graph
from tcdist.io.hdf5 import CHECKSUM_BLOCK as DIGEST_BLOCK
from tcdist.io.hdf5 import check_format, damage_is_input_error, digest, integer_dataset, open_h5, plain, read_attrs

ROW_BYTES = 16  # a row's rowptr and original_id entries


@dataclass
class Rows:
    """Rows first_row..end_row-1 of a graph file's oriented CSR. rowptr is not rebased: it holds
    rowptr[first_row : end_row + 1] as stored, so col holds the columns from rowptr[0] to
    rowptr[-1] of the whole graph's col; original_id is that of these rows. header: the file's
    attributes (n, m, self_loops, duplicates, reciprocal, name, fingerprint)."""

    first_row: int
    rowptr: object
    col: object
    original_id: object
    header: dict

    @property
    def end_row(self) -> int:
        return self.first_row + int(self.rowptr.size) - 1


def _bytes_before(rowptr, row: int, itemsize: int) -> int:
    """Bytes of the arrays that rows 0..row-1 take (rowptr[row] read from the file)."""
    return ROW_BYTES * row + itemsize * int(rowptr[row])


def row_cut(rowptr, n: int, itemsize: int, k: int, ranks: int) -> tuple[int, int]:
    """(the first row of rank k: the least row whose rows before take k/ranks of the bytes, entries
    read): a binary search over rowptr (a damaged, falling rowptr gives some cut; the checks say)."""
    if k == 0 or n == 0:
        return 0, 0
    if k == ranks:
        return n, 0
    total = ROW_BYTES * n + itemsize * max(int(rowptr[n]), 0)
    want, lo, hi, probes = total * k // ranks, 0, n, 1
    while lo < hi:
        mid = (lo + hi) // 2
        probes += 1
        if _bytes_before(rowptr, mid, itemsize) < want:
            lo = mid + 1
        else:
            hi = mid
    return lo, 8 * probes


def _problems(rowptr, col, first: int, n: int, m: int) -> int:
    """FALLS, or the problems of check.rows_problems, of rows first.. (rowptr not rebased), as
    csr_problem finds them for the whole graph."""
    end = first + rowptr.size - 1
    if (first == 0 and int(rowptr[0]) != 0) or (end == n and int(rowptr[-1]) != m) or \
            bool((rowptr[1:] < rowptr[:-1]).any()):
        return FALLS
    return rows_problems(rowptr - rowptr[0], col, n, first)


def _pieces(name: str, data: np.ndarray, offset: int) -> list:
    """(array, block, offset in it, length, crc32) of the digest's blocks that bytes offset.. of an
    array (data: those bytes) meet."""
    raw, out, at = memoryview(np.ascontiguousarray(data)).cast("B"), [], 0
    while at < len(raw):
        block, inside = divmod(offset + at, DIGEST_BLOCK)
        length = min(DIGEST_BLOCK - inside, len(raw) - at)
        out.append((name, block, inside, length, isal_zlib.crc32(raw[at : at + length])))
        at += length
    return out


def read_rows(path, rank: int, ranks: int) -> tuple[Rows, int, dict]:
    """(rank's rows, bytes read, what check_together needs of this rank) of a graph file."""
    with open_h5(path) as f, damage_is_input_error(path):
        check_format(path, f, h5graph.FORMAT, h5graph.VERSION)
        header = read_attrs(path, f, h5graph.ATTRS, "graph header")
        rowptr, col, original_id = (integer_dataset(path, f, name) for name in h5graph.ARRAYS)
        n, m = max(rowptr.shape[0] - 1, 0), col.shape[0]
        (first, probed), (end, probed_end) = (row_cut(rowptr, n, col.dtype.itemsize, k, ranks)
                                              for k in (rank, rank + 1))
        mine = rowptr[first : end + 1]
        lo, hi = (int(mine[0]), int(mine[-1])) if mine.size else (0, 0)
        sound = 0 <= lo <= hi <= m
        cols = col[lo:hi] if sound else np.zeros(0, col.dtype)
        ids = original_id[first:end]
        stored = plain(f.attrs.get("digest", ""))
        shapes = {name: (str(f[name].dtype), list(f[name].shape)) for name in h5graph.ARRAYS}
    own_rowptr = mine if end == n else mine[:-1]  # (each entry in one rank's checksum: the next rank's first)
    pieces = _pieces("rowptr", own_rowptr, 8 * first) + _pieces("col", cols, cols.dtype.itemsize * lo) + \
        _pieces("original_id", ids, 8 * first)
    flags = (_problems(mine, cols, first, n, m) if sound else FALLS) if mine.size else 0
    facts = {"pieces": pieces, "flags": flags, "shapes": shapes, "header": header, "digest": stored}
    read = probed + probed_end + mine.nbytes + cols.nbytes + ids.nbytes
    return Rows(first, mine, cols, ids, header), read, facts


def _block_crcs(pieces: list, name: str, size: int) -> list | None:
    """The crc32 of every 64 MiB block of an array of size bytes, from the ranks' pieces of it
    (None where they do not cover it: rows cut by a damaged rowptr)."""
    crcs, at_block = [], {}
    for array, block, inside, length, crc in sorted(p for p in pieces if p[0] == name):
        done, joined = at_block.get(block, (0, 0))
        if inside != done:
            return None
        at_block[block] = (done + length, isal_zlib.crc32_combine(joined, crc, length))
    for block in range(-(-size // DIGEST_BLOCK)):
        done, joined = at_block.get(block, (0, 0))
        if done != min(DIGEST_BLOCK, size - block * DIGEST_BLOCK):
            return None
        crcs.append(joined)
    return crcs


def check_together(path, facts: list) -> None:
    """Raise what one process raises reading the whole file, from every rank's facts (read_rows's):
    a digest that does not match, a CSR a kernel cannot trust, sizes that disagree."""
    first = facts[0]
    header, shapes = first["header"], first["shapes"]
    pieces = [piece for fact in facts for piece in fact["pieces"]]
    checksums = {}
    for name, (dtype, shape) in shapes.items():
        crcs = _block_crcs(pieces, name, np.dtype(dtype).itemsize * (shape[0] if shape else 0))
        checksums[name] = [dtype, shape, crcs]
    if any(crcs is None for _, _, crcs in checksums.values()) or digest(header, checksums) != first["digest"]:
        raise InputError(path, "the graph's arrays or attributes do not match its digest (corrupt or altered)")
    found = 0
    for fact in facts:
        found |= fact["flags"]
    n = shapes["rowptr"][1][0] - 1
    problem = next((text.format(last=n - 1) for bit, text in PROBLEMS.items() if found & bit), None)
    if problem is None and (shapes["original_id"][1][0] != n or (n, shapes["col"][1][0]) != (header["n"], header["m"])):
        problem = "original_id, n or m do not match the CSR"
    if problem:
        raise InputError(path, f"inconsistent CSR arrays: {problem}")
