"""Run under mpiexec by test_row_parts.py: every rank makes its part across ranks through
guard.watched, as a run does; the last rank runs out of memory answering the others' asks for its
rows, between two exchanges of the fetch. Every rank must end with an error, none waiting for the
failed rank: rank 0 prints a JSON list of "TYPE: MESSAGE", what each raised."""

from mpi4py import MPI
from watched_failure import out_of_memory, report

from tcdist import io
from tcdist.graph.edges import EdgeList
from tcdist.ranks import row_parts
from tcdist.ranks.guard import watched
from tcdist.ranks.ingest import build_rows

comm = MPI.COMM_WORLD.Dup()
row_parts.LEAST_STEP_BYTES = 256  # a fetch of several steps
edges = io.generate("rmat:10")
mine = slice(comm.rank * len(edges) // comm.size, (comm.rank + 1) * len(edges) // comm.size)
plan = row_parts.row_plan(comm, build_rows(comm, EdgeList(edges.src[mine], edges.dst[mine], "g")))
if comm.rank == comm.size - 1:
    row_parts._rows_of = out_of_memory
report(comm, lambda: watched(comm, lambda watching: row_parts.row_part(watching, plan)), "made")
