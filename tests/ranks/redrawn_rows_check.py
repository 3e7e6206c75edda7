"""Run under mpiexec by test_redrawn_rows.py: every rank builds its rows with nothing of its share of
the raw edges held (ranks/redrawn_rows.py), from a generator's range of edges drawn again and from
a text file's share read once into scratch (generators.drawn_again: RMAT's permutation made once); the ranks' rows together must be graph/build.py's
graph of all the edges, array for array, in ranges of few keys and in one. Rank 0 prints
"checked N" when every rank found every case right, else each problem, and the job exits 1.
Arguments: an empty folder (the text file, and each rank's scratch)."""

import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from tcdist import io
from tcdist.graph.build import build_graph
from tcdist.io import generators, scratch
from tcdist.ranks.ingest import gather_graph
from tcdist.ranks.redrawn_rows import SpilledShare, build_rows_again

comm = MPI.COMM_WORLD.Dup()
FOLDER = Path(sys.argv[1])
problems = []


def check(what, good):
    if not good:
        problems.append(f"rank {comm.rank}: {what}")


def compare(name, rows, whole):
    together = gather_graph(comm, rows)
    check(f"{name}: rows {rows.first_row}..{rows.end_row} of {rows.n}", 0 <= rows.first_row <= rows.end_row <= rows.n)
    for array in ("rowptr", "col", "original_id"):
        mine, one = getattr(together, array), getattr(whole, array)
        check(f"{name}: {array}", mine.dtype == one.dtype and np.array_equal(mine, one))
    for fact in ("n", "m", "self_loops", "duplicates", "reciprocal"):
        check(f"{name}: {fact} {getattr(together, fact)} against {getattr(whole, fact)}",
              getattr(together, fact) == getattr(whole, fact))


cases = 0
for spec in ["rmat:11", "er:2000:8000"]:
    whole = build_graph(io.generate(spec))
    span, m, _ = generators.pieces(spec)
    lo, hi = m * comm.rank // comm.size, m * (comm.rank + 1) // comm.size
    for keys in (3000, 1 << 40):
        rows = build_rows_again(comm, generators.drawn_again(spec, within=(lo, hi), size=777), span, spec, keys)
        compare(f"{spec} in ranges of {keys} keys", rows, whole)
        cases += 1

text = FOLDER / "g.txt"
if comm.rank == 0:
    edges = io.generate("rmat:10")
    np.savetxt(text, np.stack([edges.src, edges.dst], axis=1), fmt="%d", header="a comment line")
comm.Barrier()
whole = build_graph(io.read(str(text)))
own = FOLDER / f"scratch-{comm.rank}"
own.mkdir()
with scratch.using(str(own)):
    share = SpilledShare(str(text), comm.rank, comm.size, 3, 1000, 500)
    share.together(comm)
    check("the text's pairs read once", share.read_bytes > 0)
    rows = build_rows_again(comm, share.pieces, share.span, str(text), 2000, share.warnings)
    share.close()
compare("text in ranges of 2000 keys", rows, whole)
cases += 1

found = comm.gather(problems, root=0)
if comm.rank == 0:
    problems = [p for ps in found for p in ps]
    print("\n".join(problems) if problems else f"checked {cases}")
    sys.exit(1 if problems else 0)
