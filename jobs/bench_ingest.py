"""Every rank builds its rows of one graph (tcdist/ranks/ingest.py): each step's seconds on every
rank, under the launcher; the all-gather of the rows into the whole graph (the replicated mode);
and the all-to-all-v's speed over MPI from host memory, MPI staged from a GPU, and NCCL.

    mpirun -n 4 python jobs/bench_ingest.py --graph rmat:24 --graph rmat:25 --gpu --baseline \\
        --exchange 64MiB 1GiB --device nvidia-h200-x4 --out $OUT/ingest-h200x4.json

Each rank makes its own share of the raw edges: an rmat spec's edges lo..hi drawn where they
fall (rank r: edges r m / R .. (r + 1) m / R), any other spec or file made whole on every rank
and cut the same way (small graphs only). With --gpu each rank binds the GPU of its node-local
rank (one rank a GPU: NCCL takes no two ranks on one) and its edges start there (the rows come
back there; the all-gather runs over MPI and, with NCCL, GPU to GPU). --baseline: rank 0 also
builds the whole graph in one process (graph/build.py, on the host, or its GPU with --gpu) and
checks the gathered graph against it.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
from meta import metadata
from mpi4py import MPI

from tcdist import io
from tcdist.budget.sizes import parse_size
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.io import generators
from tcdist.ranks import exchange
from tcdist.ranks.comm import node_local
from tcdist.ranks.ingest import build_rows, gather_graph
from tcdist.xp import to_numpy


def share(spec, comm, xp):
    """This rank's raw edges of spec, and how many edges all ranks have."""
    parsed = generators._parsed(spec) if generators.is_spec(spec) else None
    if parsed and parsed[0] == "rmat":
        scale, edge_factor = parsed[1][0], (parsed[1][1] if len(parsed[1]) > 1 else 16)
        plan = generators._rmat_plan(scale, edge_factor, 0, xp)
        m = plan[0]
        lo, hi = comm.rank * m // comm.size, (comm.rank + 1) * m // comm.size
        src, dst = xp.empty(hi - lo, np.int64), xp.empty(hi - lo, np.int64)
        for at in range(lo, hi, generators.PIECE_EDGES):
            end = min(hi, at + generators.PIECE_EDGES)
            generators._rmat_piece(scale, plan, at, src[at - lo : end - lo], dst[at - lo : end - lo])
        return EdgeList(src, dst, spec), m
    whole = io.read(spec) if os.path.exists(spec) else io.generate(spec)
    m = len(whole)
    mine = slice(comm.rank * m // comm.size, (comm.rank + 1) * m // comm.size)
    return EdgeList(xp.asarray(whole.src[mine]), xp.asarray(whole.dst[mine]), spec), m


def synchronized(comm, xp, fn):
    """(fn's value, the seconds from a barrier to this rank's end of it)."""
    comm.Barrier()
    t0 = time.perf_counter()
    value = fn()
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()
    return value, time.perf_counter() - t0


def bench_graph(spec, comm, xp, gpus, baseline):
    made, make_s = synchronized(comm, xp, lambda: share(spec, comm, xp))
    edges, m_raw = made
    rows, build_s = synchronized(comm, xp, lambda: build_rows(comm, edges))
    graph, gather_s = synchronized(comm, xp, lambda: gather_graph(comm, rows))
    record = {"rank": comm.rank, "raw_edges": len(edges), "rows": rows.end_row - rows.first_row,
              "edges": int(rows.col.size), "share_s": make_s, "build_rows_s": build_s, "steps_s": rows.seconds,
              "gather_mpi_s": gather_s}
    if gpus is not None:
        del graph
        graph, record["gather_nccl_s"] = synchronized(comm, xp, lambda: gather_graph(comm, rows, gpus))
    fingerprint, original_id = graph.fingerprint(), (to_numpy(graph.original_id) if baseline and comm.rank == 0 else None)
    del graph
    ranks = comm.gather(record)
    if comm.rank != 0:
        return None
    result = {"graph": spec, "raw_edges": m_raw, "n": rows.n, "m": rows.m, "ranks": ranks,
              "build_rows_s": max(r["build_rows_s"] for r in ranks),
              "steps_s": {k: max(r["steps_s"][k] for r in ranks) for k in rows.seconds},
              "gather_mpi_s": max(r["gather_mpi_s"] for r in ranks)}
    if gpus is not None:
        result["gather_nccl_s"] = max(r["gather_nccl_s"] for r in ranks)
    if baseline:
        whole = io.generate(spec, xp=xp) if generators.is_spec(spec) else io.read(spec)
        if xp is not np:
            whole = EdgeList(xp.asarray(whole.src), xp.asarray(whole.dst), spec)
        t0 = time.perf_counter()
        one = build_graph(whole)
        if xp is not np:
            xp.cuda.get_current_stream().synchronize()
        result["one_process_build_s"] = time.perf_counter() - t0
        result["same_as_one_process"] = one.fingerprint() == fingerprint and bool(
            np.array_equal(to_numpy(one.original_id), original_id))
    return result


def bench_exchange(size, comm, xp, gpus, repeat):
    """Seconds of an all-to-all-v of size bytes per rank (int64, an equal share to every rank)."""
    count = size // 8
    counts = np.full(comm.size, count // comm.size, np.int64)
    ways = {"mpi_host": (np, lambda a: exchange.alltoallv(comm, a, counts))}
    if xp is not np:
        from tcdist.ranks import nccl

        ways["mpi_staged_gpu"] = (xp, lambda a: exchange.alltoallv(comm, a, counts))
        ways["nccl"] = (xp, lambda a: nccl.alltoallv(comm, gpus, a, counts))
    result = {"bytes_per_rank": int(counts.sum() * 8)}
    for name, (module, fn) in ways.items():
        send = module.arange(int(counts.sum()), dtype=np.int64)
        fn(send)  # warm: connections, NCCL's channels
        times = [synchronized(comm, module, lambda: fn(send))[1] for _ in range(repeat)]
        result[name + "_s"] = max(comm.allgather(min(times)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", action="append", default=[], help="a spec or file (repeatable)")
    parser.add_argument("--gpu", action="store_true", help="each rank's edges and rows on its GPU")
    parser.add_argument("--baseline", action="store_true", help="rank 0 also builds the whole graph in one process")
    parser.add_argument("--exchange", nargs="*", default=[], help="all-to-all-v sizes per rank to time (e.g. 1GiB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=None, help="JSON file (default: $OUT/ingest.json, else results/ingest.json)")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD.Dup()
    xp, gpus = np, None
    if args.gpu:
        import cupy

        from tcdist.ranks import nccl

        cupy.cuda.Device(node_local(comm)[0] % cupy.cuda.runtime.getDeviceCount()).use()
        xp, gpus = cupy, nccl.communicator(comm)
    record = {**metadata(args.device), "ranks": comm.size, "gpu": args.gpu,
              "graphs": [bench_graph(spec, comm, xp, gpus, args.baseline) for spec in args.graph],
              "exchange": [bench_exchange(parse_size(s), comm, xp, gpus, args.repeat) for s in args.exchange]}
    if comm.rank == 0:
        out = args.out or os.path.join(os.environ.get("OUT", "results"), "ingest.json")
        with open(out, "w") as f:
            json.dump(record, f, indent=1)
        json.dump({k: record[k] for k in ("ranks", "graphs", "exchange")}, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
