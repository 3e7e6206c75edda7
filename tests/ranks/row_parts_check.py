"""Run under mpiexec by test_row_parts.py: every rank builds its rows of graphs whose edges are split
among the ranks, then its part across ranks (ranks/row_parts.py), which must be partition/build.py's
part of that rank, pruned "minimal", for the assignment "each vertex to the rank owning its row",
array for array; the parts' counts (the CPU kernel) must add up to the one-process count, and each
rank's peak of graph bytes stay within 1.5 times its rows and the proxy rows it asked for. Made
again under a host limit below the largest rank's part in memory, a rank over it spills its part's
columns to scratch: the same part, its peak within the limit, nothing left in scratch after. Rank 0
prints "checked N" when every rank found every case right, else each problem, and the job exits 1.
Arguments: the test data folder, the bytes per MPI message, the least bytes of a step, how many
times a rank's columns' bytes a table of the proxies' places may take (0: none, a search), and an
empty folder for the ranks' scratch."""

import os
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from tcdist import io
from tcdist.budget.model import csr_bytes
from tcdist.count.cpu import count_merge
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.io import scratch
from tcdist.partition.build import ArrayPartBuilder
from tcdist.ranks import exchange, row_parts
from tcdist.ranks.ingest import build_rows

comm = MPI.COMM_WORLD.Dup()
DATA = Path(sys.argv[1])
exchange.PIECE_BYTES = int(sys.argv[2])
row_parts.LEAST_STEP_BYTES = int(sys.argv[3])
row_parts.TABLE_SHARE = int(sys.argv[4])
SCRATCH = Path(sys.argv[5]) / str(comm.rank)  # each rank's own folder: what it leaves there is its own
SCRATCH.mkdir()
problems = []


def check(what, good):
    if not good:
        problems.append(f"rank {comm.rank}: {what}")


def compare(name, whole, share, alone):
    rows = build_rows(comm, share)
    a, b = rows.first_row, rows.end_row
    col_bytes = rows.col.itemsize
    own = csr_bytes(b - a, int(rows.col.size), 0, col_bytes)
    owner = np.searchsorted(rows.bounds, np.arange(whole.n), side="right") - 1
    plan = row_parts.row_plan(comm, rows)
    check(f"{name}: rows given up", rows.col is None and rows.rowptr is None)
    needs = plan.needs
    made = row_parts.row_part(comm, plan)
    expected = ArrayPartBuilder(whole, owner, "minimal").build(comm.rank)
    same(name, made.part, expected, b - a)
    part = made.part
    proxies = part.global_id[part.n_local :]
    asked = 8 * proxies.size + col_bytes * int(np.diff(whole.rowptr)[proxies].sum()) if proxies.size else 0
    check(f"{name}: peak {made.graph_peak_bytes} over 1.5 x ({own} + {asked})",
          part.stats["bytes"] <= made.graph_peak_bytes <= 1.5 * (own + asked))
    check(f"{name}: received {made.received_bytes}", made.received_bytes == asked - 8 * proxies.size)
    total = comm.allreduce(count_merge(part.rowptr, part.col, part.n_local), op=MPI.SUM)
    check(f"{name}: {total} triangles, one process {alone}", total == alone)
    # a host limit below the largest rank's part in memory that every rank fits with its columns on disk
    least = max(n.spilled for n in needs) + (comm.size + 1) * row_parts.LEAST_STEP_BYTES
    if least >= max(n.mine for n in needs):
        return 0  # (no rank holds less with its part's columns on disk)
    limit = (least + max(n.mine for n in needs)) // 2  # (not the least: steps of a few bytes would be thousands)
    with scratch.using(str(SCRATCH)):
        spilled = row_parts.row_part(comm, row_parts.row_plan(comm, build_rows(comm, share), limit))
        on_disk = spilled.part.col
        check(f"{name}: spilled {spilled.room} where it needs {needs[comm.rank].mine} of {limit}",
              (spilled.room is not None) == (needs[comm.rank].mine > limit) and spilled.graph_peak_bytes <= limit)
        if spilled.room is not None:
            check(f"{name}: spilled into {on_disk.path}", os.path.dirname(on_disk.path) == str(SCRATCH))
            spilled.part.col = on_disk[0 : on_disk.size]
        same(f"{name} spilled", spilled.part, expected, b - a)
    check(f"{name}: scratch left {os.listdir(SCRATCH)}", not os.listdir(SCRATCH))
    return 1


def same(name, part, expected, rows):
    """part is partition/build.py's part expected (of rows local rows), array for array."""
    check(f"{name}: index {part.index}", part.index == comm.rank)
    check(f"{name}: n_local", part.n_local == expected.n_local == rows)
    for array in ("rowptr", "col", "global_id"):
        mine, one = getattr(part, array), getattr(expected, array)
        check(f"{name}: {array} {mine} against {one}", mine.dtype == one.dtype and np.array_equal(mine, one))
    for stat in ("v_res", "e_res", "bytes", "work"):
        check(f"{name}: {stat}", part.stats[stat] == expected.stats[stat])


graphs = [io.generate("rmat:12"), io.generate("er:3000:12000"), io.generate("grid:20:30"),
          io.read(DATA / "p2p-Gnutella08.txt.gz"), io.read(DATA / "ca-GrQc.mtx.gz"),
          io.read(DATA / "email-Enron.txt.gz"), EdgeList(np.zeros(0, np.int64), np.zeros(0, np.int64), "empty"),
          EdgeList(np.array([0, 1, 0]), np.array([1, 2, 2]), "one triangle")]
cases = spills = 0
for edges in graphs:
    whole = build_graph(edges)
    alone = count_merge(whole.rowptr, whole.col, whole.n)
    even = np.arange(comm.size + 1) * len(edges) // comm.size
    mine = slice(int(even[comm.rank]), int(even[comm.rank + 1]))
    spills += compare(f"{edges.name} even", whole, EdgeList(edges.src[mine], edges.dst[mine], edges.name), alone)
    strided = np.arange(comm.rank, len(edges), comm.size)
    spills += compare(f"{edges.name} strided", whole, EdgeList(edges.src[strided], edges.dst[strided], edges.name),
                      alone)
    cases += 2
check(f"{spills} cases spilled", spills > 0 or comm.size == 1)

found = comm.gather(problems, root=0)
if comm.rank == 0:
    problems = [p for ps in found for p in ps]
    print("\n".join(problems) if problems else f"checked {cases}")
    sys.exit(1 if problems else 0)
