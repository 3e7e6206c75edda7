"""A generated graph built from its pieces, for a device that cannot hold its raw edges: each
piece (io.generators.pieces) is packed at once into directed keys, 8 bytes an edge, where the raw
edges and the whole build take GPU_BUILD_BYTES_PER_EDGE. The keys are sorted and made distinct (the
repeated and reciprocal edges counted as build.py counts them), the ids compacted in place
(which keeps the keys' order), then the graph is oriented and laid out as build.py does (on the
GPU with gpu_build's passes). The same Graph as build_graph(generate(spec)), at about
model.pieces_build_bytes at its peak: RMAT-26 in some 25 GB of a GPU.
"""

from __future__ import annotations

import numpy as np

from tcdist import progress
from tcdist.errors import TcdistError
from tcdist.graph import build
from tcdist.graph.degrees import degree_summary
from tcdist.graph.graph import MAX_VERTICES, Graph

STEP = 1 << 26  # keys remapped at a time (the temporaries of a step beside the keys)


def packs(span: int) -> bool:
    """Whether ids below span pack as directed keys: (lo * span + hi) * 2 + direction < 2^64."""
    return 2 * span * span <= 1 << 64


def build_from_pieces(span: int, m: int, pieces, name: str, xp=np) -> Graph:
    """The Graph of m raw edges with ids below span, given as (src, dst) pieces on xp's device."""
    on_gpu = xp is not np
    with progress.bar(4, f"build {name}", "steps") as bar:
        directed, loops = _directed(span, m, pieces, xp)
        bar.update()
        if on_gpu:
            from tcdist.graph import gpu_build

            keys, duplicates, reciprocal = gpu_build.distinct_undirected(directed, directed.size)
        else:
            keys, duplicates, reciprocal = build.distinct_undirected(directed)
            keys = keys.view(np.uint64)
        del directed
        ids = _compacted(keys, span, xp)
        n = int(ids.size)
        if n > MAX_VERTICES:
            raise TcdistError(f"{name}: {n} vertices; tcdist handles at most {MAX_VERTICES}")
        bar.update()
        if on_gpu:
            order, oriented = gpu_build.orient(keys, n)
            bar.update()
            rowptr, col = gpu_build.csr(oriented, n)
            original_id = gpu_build.take(ids, order)
        else:
            order, oriented = build.orient(keys.view(np.int64), n)
            del keys
            bar.update()
            rowptr, col = build.csr_from_sorted_keys(build.sort(oriented), n)
            original_id = ids[order]
        bar.update()
    return Graph(rowptr=rowptr, col=col, original_id=original_id, name=name, self_loops=loops,
                 duplicates=duplicates, reciprocal=reciprocal, degrees=degree_summary(rowptr, n))


def _directed(span: int, m: int, pieces, xp):
    """(the sorted directed keys of the edges that are not self loops, the self loops): each piece
    packed as it comes, so no more than one piece of raw edges is held."""
    keys, kept, loops = xp.empty(m, np.uint64), 0, 0
    for src, dst in pieces:
        packed, dropped = pack(src, dst, span, xp)
        del src, dst
        keys[kept : kept + packed.size] = packed
        kept, loops = kept + packed.size, loops + dropped
        del packed
    keys = keys[:kept]
    if xp is np:
        return build.sort(keys), loops
    from tcdist.graph import gpu_build

    gpu_build.sort(keys)
    return keys, loops


def pack(src, dst, span: int, xp):
    """(the directed keys (lo * span + hi) * 2 + (src > dst) of the edges that are not self loops,
    how many self loops there were)."""
    keep = src != dst
    src, dst = src[keep], dst[keep]
    lo, hi = xp.minimum(src, dst).astype(np.uint64), xp.maximum(src, dst).astype(np.uint64)
    return (lo * np.uint64(span) + hi) * np.uint64(2) + (src > dst).astype(np.uint64), int(keep.size - src.size)


def _compacted(keys, span: int, xp):
    """The ids that have an edge, in order; keys (lo * span + hi, sorted) are rewritten in place as
    lo' * n + hi' of the ids' places, which keeps them sorted."""
    present = xp.zeros(span, bool)
    for lo in range(0, keys.size, STEP):
        step = keys[lo : lo + STEP]
        present[(step // np.uint64(span)).astype(np.int64)] = True
        present[(step % np.uint64(span)).astype(np.int64)] = True
    new_id = (xp.cumsum(present, dtype=np.int64) - 1).astype(np.uint64)
    ids = xp.flatnonzero(present).astype(np.int64)
    del present
    n = np.uint64(ids.size)
    for lo in range(0, keys.size, STEP):
        step = keys[lo : lo + STEP]
        lo_id, hi_id = (step // np.uint64(span)).astype(np.int64), (step % np.uint64(span)).astype(np.int64)
        step[...] = new_id[lo_id] * n + new_id[hi_id]
    return ids
