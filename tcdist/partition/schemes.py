"""Vertex partitioning schemes: each maps every vertex to a part in [0, P).

A scheme is one function ``(graph, num_parts, seed) -> int array of length n``; name it in
config.SCHEMES and register it in _BY_NAME.
"""

import os
import sys
from contextlib import contextmanager

import numpy as np

from tcdist import progress
from tcdist.config import SCHEMES
from tcdist.errors import OptionError, TcdistError
from tcdist.xp import segment_ids, to_numpy


def random_scheme(graph, num_parts, seed):
    """Each vertex in a part drawn uniformly (LSTC's choice); reproducible for a seed."""
    return np.random.default_rng(seed).integers(0, num_parts, graph.n)


def contiguous_scheme(graph, num_parts, seed):
    """Equal chunks of the rank order (LSTC Table 6)."""
    return np.arange(graph.n, dtype=np.int64) * num_parts // max(graph.n, 1)


def metis_scheme(graph, num_parts, seed):
    """METIS (pymetis) on the undirected graph: fewer cut edges, so fewer proxies."""
    try:
        import pymetis
    except ImportError:
        raise OptionError("{scheme} metis needs pymetis: pip install 'tcdist[metis]'") from None
    if num_parts == 1 or graph.n == 0:
        return np.zeros(graph.n, np.int64)
    rowptr, col = to_numpy(graph.rowptr), to_numpy(graph.col).astype(np.int64)
    src = segment_ids(np.diff(rowptr))
    keys = np.sort(np.concatenate([src * graph.n + col, col * graph.n + src]))
    starts = np.zeros(graph.n + 1, np.int64)
    np.cumsum(np.bincount(keys // graph.n, minlength=graph.n), out=starts[1:])
    adjacency = pymetis.CSRAdjacency(starts.astype(np.int32), (keys % graph.n).astype(np.int32))
    progress.note(f"METIS: {graph.n:,} vertices and {graph.m:,} edges into {num_parts} parts, on one core (about a "
                  "second per million edges; pymetis reports nothing until it is done)")
    with _stdout_to_stderr():  # METIS prints its diagnostics on stdout, which --json keeps for the record
        result = pymetis.part_graph(num_parts, adjacency, options=pymetis.Options(seed=seed % 2**31))
    return np.asarray(result.vertex_part, np.int64)


@contextmanager
def _stdout_to_stderr():
    """Point file descriptor 1 at stderr for a while (C libraries write to it directly)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_BY_NAME = dict(zip(SCHEMES, (random_scheme, contiguous_scheme, metis_scheme)))


def assign(graph, scheme, num_parts, seed=0):
    """The part of every vertex under a named scheme, on the graph's array module."""
    parts = np.asarray(_BY_NAME[scheme](graph, num_parts, seed), np.int64)
    if parts.shape != (graph.n,) or (parts.size and (parts.min() < 0 or parts.max() >= num_parts)):
        raise TcdistError(f"scheme '{scheme}' did not give every vertex a part in [0, {num_parts})")
    return graph.xp.asarray(parts)
