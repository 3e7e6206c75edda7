"""Run under mpiexec by test_ingest.py: every rank builds its rows of graphs whose edges are split
among the ranks in several ways, and they must be graph/build.py's one-process graph byte for
byte. Each rank checks; rank 0 prints "checked N" when every rank found every case right, else
each problem, and the job exits 1. Arguments: the test data folder, the bytes per MPI message,
and "gpu" to give each rank's edges on its GPU (built there, its exchanges staged through the host
over MPI; ranks may share a GPU) or "nccl" (a GPU per rank: exchanged and gathered over NCCL too)."""

import sys
from functools import partial
from pathlib import Path

import numpy as np
from mpi4py import MPI

from tcdist import io
from tcdist.errors import TcdistError
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.graph.work import probes_before
from tcdist.ranks import exchange, spread
from tcdist.ranks.comm import node_local
from tcdist.ranks.ingest import build_rows, gather_graph
from tcdist.xp import array_module, to_numpy

comm = MPI.COMM_WORLD.Dup()
DATA = Path(sys.argv[1])
exchange.PIECE_BYTES = int(sys.argv[2])
ON_GPU = sys.argv[3:] in (["gpu"], ["nccl"])
problems = []
GPUS = None
if ON_GPU:
    import cupy

    from tcdist.ranks import nccl

    cupy.cuda.Device(node_local(comm)[0] % cupy.cuda.runtime.getDeviceCount()).use()
    if sys.argv[3] == "nccl":
        GPUS = nccl.communicator(comm)


def check(what, good):
    if not good:
        problems.append(f"rank {comm.rank}: {what}")


def sparse(edges, seed):
    """The same graph with its ids spread up to 2^62."""
    top = int(max(edges.src.max(), edges.dst.max())) + 1
    ids = np.unique(np.random.default_rng(seed).integers(0, 2**62, 2 * top + 64))[:top]
    np.random.default_rng(seed + 1).shuffle(ids)  # their order unlike the dense ids'
    return EdgeList(ids[edges.src], ids[edges.dst], edges.name + " sparse")


def messy(seed):
    """Random edges with self loops, repeats and both directions, ids with gaps."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, 300, 2000) * 7, rng.integers(0, 300, 2000) * 7
    src[:100] = dst[:100]
    return EdgeList(np.concatenate([src, dst[:500], src[:50]]), np.concatenate([dst, src[:500], dst[:50]]), "messy")


def splits(size, ranks):
    """Where each rank's share of `size` edges starts, split in several ways."""
    rng = np.random.default_rng(size)
    even = np.arange(ranks + 1) * size // ranks
    uneven = np.concatenate([[0], np.sort(rng.integers(0, size + 1, ranks - 1)), [size]])
    empty_ends = np.minimum(np.concatenate([[0], np.arange(ranks) * size // max(ranks - 2, 1)]), size)
    empty_ends[-1] = size  # the first and the last rank empty, the others even
    all_on_last = np.concatenate([np.zeros(ranks, np.int64), [size]])
    all_on_first = np.concatenate([[0], np.full(ranks, size)])
    return {"even": even, "uneven": uneven, "empty ranks": empty_ends,
            "all on the last": all_on_last, "all on the first": all_on_first}


def work_bounds(graph, ranks):
    """graph/work.py's even_work bounds of the one-process graph, empty runs kept."""
    before = probes_before(graph) + graph.rowptr
    goals = [int(before[-1]) * k // ranks for k in range(ranks + 1)]
    bounds = np.searchsorted(before, goals, side="left")
    bounds[0], bounds[-1] = 0, graph.n
    return bounds


def compare(name, whole, share, gpu_room=None):
    if ON_GPU:
        share = EdgeList(cupy.asarray(share.src), cupy.asarray(share.dst), share.name)
    rows = build_rows(comm, share, GPUS, gpu_room)
    check(f"{name}: rows where the edges were", all(array_module(x) is array_module(share.src)
                                                    for x in (rows.rowptr, rows.col, rows.original_id)))
    built_on_host = any("built the graph on the host" in w for w in rows.warnings)
    check(f"{name}: built on the host {built_on_host}, with {gpu_room} bytes", built_on_host == (gpu_room == 0))
    a, b = rows.first_row, rows.end_row
    check(f"{name}: bounds {rows.bounds} not even_work's", np.array_equal(rows.bounds, work_bounds(whole, comm.size)))
    check(f"{name}: facts", (rows.n, rows.m, rows.self_loops, rows.duplicates, rows.reciprocal, rows.degrees)
          == (whole.n, whole.m, whole.self_loops, whole.duplicates, whole.reciprocal, whole.degrees))
    check(f"{name}: first edge", rows.first_edge == whole.rowptr[a])
    rowptr, col, original_id = (to_numpy(x) for x in (rows.rowptr, rows.col, rows.original_id))
    check(f"{name}: rowptr", rowptr.dtype == np.int64 and np.array_equal(rowptr, whole.rowptr[a : b + 1] - whole.rowptr[a]))
    check(f"{name}: col", col.dtype == whole.col.dtype
          and np.array_equal(col, whole.col[whole.rowptr[a] : whole.rowptr[b]]))
    check(f"{name}: original ids", np.array_equal(original_id, whole.original_id[a:b]))
    over_nccl = [("nccl", gather_graph(comm, rows, GPUS))] if GPUS is not None else []
    for how, gathered in [("mpi", gather_graph(comm, rows))] + over_nccl:
        for part in ("rowptr", "col", "original_id"):
            mine, one = getattr(gathered, part), getattr(whole, part)
            check(f"{name}: gathered {part} over {how}", array_module(mine) is array_module(share.src)
                  and mine.dtype == one.dtype and to_numpy(mine).tobytes() == one.tobytes())
        check(f"{name}: fingerprint over {how}", gathered.fingerprint() == whole.fingerprint())
        check(f"{name}: gathered facts over {how}",
              (gathered.self_loops, gathered.duplicates, gathered.reciprocal, gathered.degrees)
              == (whole.self_loops, whole.duplicates, whole.reciprocal, whole.degrees))


def check_exchange(xp):
    """alltoallv and allgatherv (over MPI, and over NCCL for CuPy arrays) against what each rank
    knows it must receive."""
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 40, (comm.size, comm.size))  # counts[s, t]: what s sends t, known to all
    send = xp.asarray(np.concatenate([np.arange(counts[comm.rank, t]) + 1000 * comm.rank + 100_000 * t
                                      for t in range(comm.size)]).astype(np.int64))
    want = np.concatenate([np.arange(counts[s, comm.rank]) + 1000 * s + 100_000 * comm.rank for s in range(comm.size)])
    block = xp.full(comm.rank * 3, comm.rank, np.uint32)
    gathered = np.repeat(np.arange(comm.size), np.arange(comm.size) * 3)
    ways = [("mpi", exchange.alltoallv, exchange.allgatherv)]
    if GPUS is not None:
        ways.append(("nccl", partial(nccl.alltoallv, gpus=GPUS), partial(nccl.allgatherv, gpus=GPUS)))
    for how, alltoallv, allgatherv in ways:
        got, got_counts = alltoallv(comm, send=send, counts=counts[comm.rank])
        check(f"alltoallv over {how}", array_module(got) is xp and np.array_equal(to_numpy(got), want)
              and np.array_equal(got_counts, counts[:, comm.rank]))
        whole = allgatherv(comm, block=block)
        check(f"allgatherv over {how}", array_module(whole) is xp and np.array_equal(to_numpy(whole), gathered))


def check_spread():
    """Each of spread.py's steps against NumPy on every rank's data together (the same draws on
    every rank, each rank taking its own)."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 500, comm.size)
    sizes[0] = 0  # a rank with nothing
    ids = [np.unique(rng.integers(0, 2**62, s)) for s in sizes]
    found, held, first = spread.places(comm, ids[comm.rank])
    union = np.unique(np.concatenate(ids))
    check("places", np.array_equal(found, np.searchsorted(union, ids[comm.rank]))
          and np.array_equal(held, union[first : first + held.size]) and sum(comm.allgather(held.size)) == union.size)
    keys = [rng.integers(0, 1000, s).astype(np.uint64) for s in sizes]
    ranges = comm.allgather(spread.sort_across(comm, keys[comm.rank], shift=1))
    halves = [r >> np.uint64(1) for r in ranges if r.size]
    check("sort_across", np.array_equal(np.concatenate(ranges), np.sort(np.concatenate(keys)))
          and all(a[-1] < b[0] for a, b in zip(halves, halves[1:])))
    for span in (1000, 10**6):  # a bincount over the span, and a sort
        bounds = np.concatenate([[0], np.sort(rng.integers(0, span + 1, comm.size - 1)), [span]])
        new = np.concatenate([[0], np.sort(rng.integers(0, span + 1, comm.size - 1)), [span]])
        table = rng.integers(0, 10**12, span)
        index = [rng.integers(0, span, s) for s in sizes]
        weights = [rng.integers(0, 100, s) for s in sizes]
        lo, hi = bounds[comm.rank], bounds[comm.rank + 1]
        check(f"read over {span}", np.array_equal(spread.read(comm, index[comm.rank], bounds, table[lo:hi]),
                                                  table[index[comm.rank]]))
        counted, added = np.zeros(span, np.int64), np.zeros(span, np.int64)
        np.add.at(counted, np.concatenate(index), 1)
        np.add.at(added, np.concatenate(index), np.concatenate(weights))
        check(f"count over {span}", np.array_equal(spread.count(comm, index[comm.rank], bounds), counted[lo:hi]))
        order = np.argsort(index[comm.rank])
        check(f"add over {span}", np.array_equal(
            spread.add(comm, index[comm.rank][order], weights[comm.rank][order], bounds), added[lo:hi]))
        check(f"move over {span}", np.array_equal(spread.move(comm, table[lo:hi], bounds, new),
                                                  table[new[comm.rank] : new[comm.rank + 1]]))


def check_labels_refused():
    try:
        build_rows(comm, EdgeList(np.zeros(1, np.int64), np.ones(1, np.int64), "named",
                                  labels=np.array(["a", "b"]) if comm.rank == comm.size - 1 else None))
        check("labels not refused", False)
    except TcdistError as error:
        check(f"labels: {error}", "ids that are names" in str(error))


check_exchange(cupy if ON_GPU else np)
check_spread()
check_labels_refused()
graphs = [io.generate("rmat:10"), io.generate("er:3000:12000"), io.generate("grid:20:30"), messy(3),
          io.read(DATA / "p2p-Gnutella08.txt.gz"), io.read(DATA / "ca-GrQc.mtx.gz"), EdgeList(np.zeros(0, np.int64),
          np.zeros(0, np.int64), "empty"), EdgeList(np.arange(5), np.arange(5), "only self loops")]
graphs += [sparse(graphs[0], 11), sparse(graphs[3], 12)]
cases = 0
for edges in graphs:
    whole = build_graph(edges)
    strided = np.arange(comm.rank, len(edges), comm.size)  # a vertex's edges on every rank
    compare(f"{edges.name} strided", whole, EdgeList(edges.src[strided], edges.dst[strided], edges.name))
    cases += 1
    for split, starts in splits(len(edges), comm.size).items():
        mine = slice(int(starts[comm.rank]), int(starts[comm.rank + 1]))
        compare(f"{edges.name} {split}", whole, EdgeList(edges.src[mine], edges.dst[mine], edges.name))
        cases += 1

if ON_GPU:  # no room on the GPUs for the build: every rank builds on the host, the rows back on the GPU
    edges = graphs[0]
    mine = slice(comm.rank * len(edges) // comm.size, (comm.rank + 1) * len(edges) // comm.size)
    compare(f"{edges.name} no room", build_graph(edges), EdgeList(edges.src[mine], edges.dst[mine], edges.name), 0)

found = [p for ps in comm.gather(problems) or [] for p in ps]
if comm.rank == 0:
    print("\n".join(found) if found else f"checked {cases}")
sys.exit(1 if comm.bcast(bool(found)) else 0)
