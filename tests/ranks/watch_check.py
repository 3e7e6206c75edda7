"""Run under mpiexec by test_ingest.py: every rank builds its rows of a graph through
guard.watched, as GPU ranks do: first the one-process graph's rows; then the last rank runs out
of memory between two exchanges (its edges' keys). Every rank must end with an error, none
waiting for the failed rank: rank 0 prints a JSON list of "TYPE: MESSAGE", what each raised."""

from mpi4py import MPI
from watched_failure import out_of_memory, report

from tcdist import io
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.ranks import ingest
from tcdist.ranks.guard import watched

comm = MPI.COMM_WORLD.Dup()
edges = io.generate("rmat:10")
mine = slice(comm.rank * len(edges) // comm.size, (comm.rank + 1) * len(edges) // comm.size)
share = EdgeList(edges.src[mine], edges.dst[mine], "g")
rows = watched(comm, lambda watching: ingest.build_rows(watching, share))  # first with no failure: the graph's rows
assert ingest.gather_graph(comm, rows).fingerprint() == build_graph(edges).fingerprint()
if comm.rank == comm.size - 1:
    ingest.directed_keys = out_of_memory
report(comm, lambda: watched(comm, lambda watching: ingest.build_rows(watching, share)), "built")
