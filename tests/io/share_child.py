"""One rank of an MPI job in which every rank reads its share (run by test_shares_mpi.py).

    mpiexec -n R python share_child.py SOURCE [SEED [BLOCK_BYTES]]

Each rank reads its share of SOURCE (io.shares.read_share with the job's communicator), the ranks
make their joint checks, and rank 0 gathers every rank's edges (or rows) and prints one JSON line:
whether they are, as a multiset, what one process reads (io.read, io.generate), each rank's
read_bytes, and the error a rank met, if any (the first failing rank's, as a run reports it).
"""

import json
import sys
from collections import Counter

import numpy as np
from mpi4py import MPI

from tcdist.errors import TcdistError
from tcdist.io import generate, is_spec, read, text
from tcdist.io.shares import read_share


def pairs(src, dst) -> Counter:
    return Counter(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def main(source, seed):
    comm = MPI.COMM_WORLD
    error = None
    try:
        share = read_share(source, comm.rank, comm.size, seed=seed, comm=comm)
    except TcdistError as e:
        share, error = None, str(e)
    errors = comm.allgather(error)
    if any(errors):
        if comm.rank == 0:
            print(json.dumps({"error": next(e for e in errors if e), "failed": [k for k, e in enumerate(errors) if e]}))
        return
    facts = comm.allgather(share.facts)
    try:
        share.check_together(facts)
    except TcdistError as e:
        error = str(e)
    errors = comm.allgather(error)
    if share.rows is not None:
        mine = (share.rows.first_row, share.rows.rowptr.tolist(), share.rows.col.tolist())
    else:
        mine = (np.asarray(share.edges.src).tolist(), np.asarray(share.edges.dst).tolist(), share.edges.warnings)
    every = comm.gather(mine, root=0)
    read_bytes = comm.gather(share.read_bytes, root=0)
    if comm.rank != 0:
        return
    if share.rows is not None:
        one = read(source)
        rowptr = [x for _, rp, _ in every for x in rp[:-1]] + [every[-1][1][-1]]
        same = rowptr == one.rowptr.tolist() and [c for _, _, col in every for c in col] == one.col.tolist()
        warnings_same = True
    else:
        one = generate(source, seed=seed) if is_spec(source) else read(source)
        together = Counter()
        for src, dst, _ in every:
            together.update(pairs(src, dst))
        same = together == pairs(one.src, one.dst) and sum(together.values()) == len(one)
        warnings_same = [w for _, _, warnings in every for w in warnings] == one.warnings
    print(json.dumps({"same": same, "warnings_same": warnings_same, "read_bytes": read_bytes,
                      "errors": errors, "edges": [len(e[0]) if share.rows is None else len(e[2]) for e in every]}))


if __name__ == "__main__":
    if len(sys.argv) > 3:
        text.CHUNK_BYTES = int(sys.argv[3])  # small blocks: a stream's blocks spread over the ranks
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
