"""LSTC workload partitioning and the HDF5 partition store."""

from __future__ import annotations

import sys

import numpy as np

from tcdist.config import PRUNE_MODES, SCHEMES
from tcdist.errors import OptionError
from tcdist.graph.build import COMPILED_FROM
from tcdist.graph.graph import Graph
from tcdist.partition.build import build_parts, iter_parts
from tcdist.partition.host import iter_parts_host
from tcdist.partition.incoming import MASK_PARTS
from tcdist.partition.lanes import iter_parts_lanes
from tcdist.partition.part import Part, Partitioning
from tcdist.partition.schemes import assign


def check_parts(num_parts: int, graph: Graph) -> None:
    """Refuse more parts than vertices: the algorithms allow empty parts, but a user asking for
    10^9 parts of a small graph would only wait for memory to run out."""
    if num_parts > max(graph.n, 1):
        raise OptionError(f"{{parts}} {num_parts:,} is more than the {graph.n:,} vertices of "
                          f"{graph.name or 'the graph'}: "
                          "every part needs a vertex")


def partition_graph(graph: Graph, num_parts: int, *, scheme: str = "random", prune: str = "lstc",
                    seed: int = 0, lazy: bool = False, reversed_edges=None, streamed=None) -> Partitioning:
    """Partition an oriented graph into num_parts self-contained parts (LSTC Algorithms 1-2).
    lazy: parts come as an iterator, built as it is walked (on the host up to 64 parts one at a
    time on every core, more a few at a time, on a GPU or of a graph of fewer than COMPILED_FROM
    edges one), to write a store or count them without holding every part; reversed_edges: on the
    host, a function returning host.transpose(graph) (called for over 64 parts), when the caller
    partitions the graph several times; streamed (lazy, the graph on the host): the parts are built on the current GPU
    from the graph's rows streamed there, where streamed(sizes, held) says one of those sizes
    (Part.sizes) fits the GPU beside the builder's held bytes (else that part is built on the
    host, to be counted in slices)."""
    assignment = assign(graph, scheme, num_parts, seed)
    if streamed is not None and graph.xp is np:
        from tcdist.partition.gpu_parts import iter_parts_streamed

        parts = iter_parts_streamed(graph, assignment, num_parts, prune, streamed)
    elif graph.xp is np and graph.m >= COMPILED_FROM:  # on the host: compiled; eight parts from each pass over the
        # edges, else parts on threads (a smaller graph's parts in whole-array NumPy: faster than loading those)
        lanes = num_parts <= MASK_PARTS and sys.byteorder == "little"  # (lanes.py: a word's byte j is its bits 8j..)
        parts = iter_parts_lanes(graph, assignment, num_parts, prune) if lanes else \
            iter_parts_host(graph, assignment, num_parts, prune, reversed_edges=reversed_edges)
        parts = parts if lazy else list(parts)
    else:  # on a GPU, or a small graph on the host: a part at a time, in whole-array passes
        parts = iter_parts(graph, assignment, num_parts, prune) if lazy else build_parts(graph, assignment, num_parts,
                                                                                        prune)
    return Partitioning(parts=parts, graph=graph, num_parts=num_parts, scheme=scheme, prune=prune, seed=seed,
                        assignment=assignment)

__all__ = ["check_parts", "PRUNE_MODES", "SCHEMES", "Part", "Partitioning", "assign", "build_parts", "partition_graph"]
