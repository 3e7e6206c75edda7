"""The start of a run on several ranks where every rank reads: each reads its share of the input
(io/shares.py) and builds its rows of the one graph (ranks/ingest.py), at once. GPU ranks whose
device the whole graph fits all-gather the rows there (replicated: each counts shares of them, as
ranks/prepare.py's replicated run does). Otherwise rank 0 receives the rows, and the run goes on
from its graph as when rank 0 reads: CPU ranks then share it in each node's memory, once per node
(an all-gather would hold it once per rank), and a graph over a rank's budget is counted in
slices or parts.

A source only one process can read, or options only rank 0 can serve (a store, names as ids,
per-edge counts, a partitioning asked for) leave the reading to rank 0 (ingests() says which);
so do GPU ranks given text or a generator: the ranks' build runs on the host, where one process
builds the graph on its GPU several times faster.
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import numpy as np

from tcdist.budget import model
from tcdist.budget.sizes import size_text
from tcdist.graph.graph import Graph
from tcdist.io import detect_format
from tcdist.io.generators import is_spec
from tcdist.io.shares import read_share
from tcdist.io.text import is_stream
from tcdist.ranks.exchange import alltoallv
from tcdist.ranks.guard import collective
from tcdist.ranks.ingest import Rows, build_rows, degree_summary_across, gather_graph
from tcdist.ranks.prepare import Held, _replicated
from tcdist.source import open_store_source
from tcdist.xp import array_module


def ingests(comm, source, config, on_gpu: bool) -> bool:
    """Whether every rank reads its share of source: several ranks, a file or a generator spec
    (on GPU ranks, a graph file: its rows need no build), and nothing asked for that one reader
    must serve."""
    if comm.size < 2 or not isinstance(source, (str, os.PathLike)):
        return False
    if config.labels or config.store is not None or config.resume or config.per_edge or config.scheme is not None \
            or config.prune is not None or config.parts not in (None, "auto"):
        return False
    path = os.fspath(source)
    if not os.path.exists(path):
        return is_spec(path) and not on_gpu  # (a name that is neither: rank 0's read says what is wrong)
    if is_stream(path) or not os.path.isfile(path) or on_gpu and detect_format(path) != "h5":
        return False
    if not all(comm.allgather(os.access(path, os.R_OK))):  # (hosts with no shared file system: rank 0 reads)
        return False
    store = open_store_source(path)
    if store is not None:
        store.close()
        return False
    return True


def ingest(comm, source, config, device, timings, rank_budget: int, debug: bool = False):
    """Every rank reads and builds its rows. Returns (prepared, held, shared) of a replicated run,
    the whole graph on every rank's device; or, where it does not fit there, (None, graph): the
    graph on rank 0 (None on the others), from which rank 0 prepares the run."""
    t0 = time.perf_counter()
    xp = _array_module(device)
    share = collective(comm, lambda: _read(comm, source, config, device, xp), debug=debug)
    facts = comm.allgather(share.facts)
    collective(comm, lambda: share.check_together(facts), debug=debug)
    timings.read += time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = collective(comm, lambda: _rows(comm, share), debug=debug)
    timings.build += time.perf_counter() - t0
    col_bytes = np.dtype(rows.col.dtype).itemsize
    need = device.need(rows.n, rows.m, rows.n, col_bytes)
    if device.is_gpu:  # the whole graph there, and each share copied from it
        need += model.csr_bytes(rows.n, rows.m, rows.n, col_bytes)
    if not device.is_gpu or need > rank_budget:  # rank 0 takes the graph, and shares it or plans slices or parts
        t0 = time.perf_counter()
        graph = collective(comm, lambda: _to_rank_zero(comm, rows), debug=debug)
        timings.share += time.perf_counter() - t0
        return None, graph, share.read_bytes
    t0 = time.perf_counter()
    graph = collective(comm, lambda: _all_gathered(comm, rows), debug=debug)
    received = graph.rowptr.nbytes + graph.col.nbytes - rows.rowptr.nbytes - rows.col.nbytes
    timings.share += time.perf_counter() - t0
    held = Held(graph=graph)
    reason = f"the graph needs {size_text(need)} on a device and every rank may take {size_text(rank_budget)}; " \
             "every rank read its share and has the whole graph"
    prepared = _replicated(held, comm.size, reason, timings, None, wedge_weight=device.wedge_weight)
    prepared.header["warnings"] = list(rows.warnings)
    shared = SimpleNamespace(arrays={"rowptr": graph.rowptr, "col": graph.col}, received=received,
                             via="all-gather", close=lambda: None)
    return (prepared, held, shared), graph, share.read_bytes


def _array_module(device):
    if not device.is_gpu:
        return np
    import cupy

    return cupy


def _read(comm, source, config, device, xp):
    if not device.is_gpu:
        return read_share(source, comm.rank, comm.size, seed=config.seed, comm=comm)
    device.warming.wait()  # the text is parsed on the GPU: not beside the warm-up
    with device.using():
        return read_share(source, comm.rank, comm.size, seed=config.seed, gpu_room=device.room(), xp=xp, comm=comm)


def _rows(comm, share) -> Rows:
    """This rank's rows: built from every rank's edges, or read from a graph file as they are."""
    if share.rows is None:
        return build_rows(comm, share.edges)
    read, h = share.rows, share.rows.header
    first_edge = int(read.rowptr[0]) if read.rowptr.size else 0
    rowptr = np.asarray(read.rowptr, np.int64) - first_edge
    bounds = np.array([*comm.allgather(read.first_row), h["n"]], np.int64)
    return Rows(first_row=read.first_row, end_row=read.end_row, first_edge=first_edge, rowptr=rowptr,
                col=read.col, original_id=read.original_id, bounds=bounds, n=h["n"], m=h["m"],
                self_loops=h["self_loops"], duplicates=h["duplicates"], reciprocal=h["reciprocal"],
                degrees=degree_summary_across(comm, rowptr, h["n"], h["m"]), name=h["name"])


def _all_gathered(comm, rows) -> Graph:
    return gather_graph(comm, rows)


def _to_rank_zero(comm, rows) -> Graph | None:
    """The whole graph on rank 0's host (None on the other ranks): every rank's rows sent there."""

    def to_zero(array):
        array = np.ascontiguousarray(array if array_module(array) is np else array.get())
        counts = np.zeros(comm.size, np.int64)
        counts[0] = array.size
        return alltoallv(comm, array, counts)[0]

    rowptr = to_zero(rows.rowptr[1:] + rows.first_edge)
    col, original_id = to_zero(rows.col), to_zero(rows.original_id)
    if comm.rank != 0:
        return None
    return Graph(rowptr=np.concatenate([np.zeros(1, np.int64), rowptr]), col=col, original_id=original_id,
                 name=rows.name, self_loops=rows.self_loops, duplicates=rows.duplicates, reciprocal=rows.reciprocal,
                 warnings=list(rows.warnings), degrees=dict(rows.degrees))

