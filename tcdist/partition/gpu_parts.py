"""A part of LSTC's partitioning built on the GPU where the graph lies: four kinds of pass of
cuda/parts.cu, each a warp to a row, in place of build.py's whole-array expressions (some thirty
passes over the edges a part, most of them over 64-bit temporaries): the vertex flags of
Algorithm 1, Algorithm 2's fixpoint as reachability a level at a time from N+(L), each kept
row's length, then the kept edges renumbered into the part. The same part, bit for bit, as
build.py's and the host's builders.

Imported only for the GPU backend; importing it imports CuPy.
"""

from __future__ import annotations

import cupy
import numpy as np

from tcdist.cuda import launch
from tcdist.cuda.build import COL_TYPES, PARTS
from tcdist.graph.graph import col_dtype
from tcdist.partition.part import Part

MODES = {"lstc": 0, "none": 0, "minimal": 1}  # parts.cu: edges kept between kept vertices, or MINIMAL's rule
THREADS = 256


def _rows(name: str, graph_col, n: int, *args, part_ids=None) -> None:
    """A launch of a parts.cu kernel over the n rows, a warp a row."""
    types = [COL_TYPES[graph_col.dtype]] + ([COL_TYPES[np.dtype(part_ids)]] if part_ids is not None else [])
    kernel = launch.named(PARTS, f"{name}<{', '.join(types)}>")
    blocks = max(1, min(-(-n * 32 // THREADS), launch.MAX_GRID >> 8))
    kernel((blocks,), (THREADS,), args)


def build_part(index: int, local, rowptr, col, prune: str) -> Part:
    """Part index of the oriented graph (rowptr, col) on the current GPU, local: its L (bool, n)."""
    n = local.size
    out, into = cupy.zeros(n, cupy.uint8), cupy.zeros(n, cupy.uint8)
    _rows("part_marks", col, n, rowptr, col, local, np.int64(n), out, into)
    out = out.view(bool)
    member = local | out | into.view(bool)
    del into
    if prune == "lstc":
        keep = _reachable(local, out, member, rowptr, col)
    elif prune == "none":
        keep = member
    else:
        keep = local | out
    # parts.cu's flag bits: LOCAL 1, OUT 2, MEMBER 4, KEEP 8
    flags = local.astype(cupy.uint8) | (out.astype(cupy.uint8) << 1) | (member.astype(cupy.uint8) << 2) | \
        (keep.astype(cupy.uint8) << 3)
    v_ind = int(member.sum())
    del out, member
    kept, kept_locals = cupy.zeros(n, cupy.int64), cupy.zeros(n, cupy.int64)
    induced = cupy.zeros(1, cupy.uint64)
    mode = np.int32(MODES[prune])
    _rows("part_rows", col, n, rowptr, col, flags, mode, np.int64(n), kept, kept_locals, induced)
    (locals_,) = cupy.nonzero(local)
    (proxies,) = cupy.nonzero(keep & ~local)
    del keep
    n_local, size = int(locals_.size), int(locals_.size + proxies.size)
    global_id = cupy.concatenate([locals_, proxies]).astype(cupy.int64)
    del locals_, proxies
    ids = col_dtype(size)  # the part's own ids: int32 while they fit, as its columns are
    new_id = cupy.empty(n, ids)
    new_id[global_id] = cupy.arange(size, dtype=ids)
    part_rowptr = cupy.zeros(size + 1, cupy.int64)
    cupy.cumsum(kept[global_id], out=part_rowptr[1:])
    del kept
    part_col = cupy.empty(int(part_rowptr[-1]), ids)
    _rows("part_place", col, n, rowptr, col, flags, mode, np.int64(n), new_id, part_rowptr, kept_locals, part_col,
          part_ids=ids)
    return Part.make(index=index, rowptr=part_rowptr, col=part_col, global_id=global_id, n_local=n_local,
                     v_ind=v_ind, e_ind=int(induced.get()[0]))


def _reachable(local, out, member, rowptr, col):
    """L and every member reachable from it along induced edges (Algorithm 2's fixpoint): N+(L) is
    reached at once (a local row's edges are all induced), then a level at a time from the
    vertices reached last, each row walked once."""
    n = local.size
    alive = (local | out).view(cupy.uint8)
    front = (out & ~local).view(cupy.uint8)
    changed = cupy.zeros(1, cupy.uint64)
    while True:
        next_ = cupy.zeros(n, cupy.uint8)
        changed[0] = 0
        _rows("part_reach", col, n, rowptr, col, member, front, np.int64(n), alive, next_, changed)
        if not int(changed.get()[0]):
            return alive.view(bool)
        front = next_
