"""Read rate per rank: R ranks each reading their share of one input (tcdist.io.shares.read_share),
for each R in --ranks, each its own job under the launcher; per rank the seconds, the bytes it read
and their rate, the edges it holds; the job's time is its slowest rank's. The file is read once
before the runs (the page cache holds it, as for a second count of the same file).

    python jobs/bench_read_shares.py g.txt g.txt.gz g.bgzf.txt.gz g.h5 --ranks 1 2 4 --backend gpu \\
        --mpirun "mpirun --allow-run-as-root --oversubscribe --bind-to none" --device-kind nvidia-h200-x4 \\
        --out results/

Inputs: `tcdist generate rmat:24 -o g.txt`, `gzip -k g.txt`, `bgzip -c g.txt > g.bgzf.txt.gz`,
`tcdist convert g.txt g.h5`. With --backend gpu each rank parses text on the GPU of its node-local
rank (modulo the visible GPUs), with that GPU's free memory as its room.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from meta import metadata

PIECE = 64 << 20


def child(path: str, backend: str, repeat: int) -> None:
    """One rank of a job: its share read repeat times; rank 0 prints every rank's best as JSON."""
    from mpi4py import MPI

    from tcdist.io.shares import read_share

    comm = MPI.COMM_WORLD
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    gpu_room, sync = None, (lambda: None)
    if backend == "gpu":
        import cupy

        cupy.cuda.Device(local.rank % cupy.cuda.runtime.getDeviceCount()).use()
        gpu_room = cupy.cuda.Device().mem_info[0] * 4 // 5
        sync = cupy.cuda.Device().synchronize
    best = None
    for _ in range(repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        share = read_share(path, comm.rank, comm.size, gpu_room=gpu_room, comm=comm)
        sync()
        seconds = time.perf_counter() - t0
        comm.Barrier()
        share.check_together(comm.allgather(share.facts))
        held = len(share.edges) if share.edges is not None else int(share.rows.col.size)
        if best is None or seconds < best["seconds"]:
            best = {"rank": comm.rank, "host": MPI.Get_processor_name(), "seconds": seconds,
                    "read_bytes": share.read_bytes, "held": held, "MB_per_s": share.read_bytes / seconds / 1e6}
        del share
    every = comm.gather(best, root=0)
    if comm.rank == 0:
        print(json.dumps(every))


def warm(path: str) -> None:
    with open(path, "rb") as f:
        while f.read(PIECE):
            pass


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--backend", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--mpirun", default=os.path.join(os.path.dirname(sys.executable), "mpiexec"))
    p.add_argument("--device-kind", required=True)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results"))
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.files[0], args.backend, args.repeat)
        return
    runs = []
    for path in args.files:
        warm(path)
        for ranks in args.ranks:
            command = [*shlex.split(args.mpirun), "-n", str(ranks), sys.executable, os.path.abspath(__file__),
                       path, "--child", "--backend", args.backend, "--repeat", str(args.repeat),
                       "--device-kind", args.device_kind]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            every = json.loads(done.stdout.strip().splitlines()[-1])
            job = max(rank["seconds"] for rank in every)
            size = os.path.getsize(path)
            runs.append({"file": os.path.basename(path), "bytes": size, "ranks": ranks, "job_s": job,
                         "job_MB_per_s": size / job / 1e6, "per_rank": every})
            print(f"{os.path.basename(path):24} R={ranks}  {job:7.3f} s  {size / job / 1e6:8.1f} MB/s  "
                  f"per rank {min(r['MB_per_s'] for r in every):.1f}..{max(r['MB_per_s'] for r in every):.1f} MB/s, "
                  f"read {min(r['read_bytes'] for r in every):,}..{max(r['read_bytes'] for r in every):,} B")
    result = {**metadata(args.device_kind), "backend": args.backend, "repeat": args.repeat, "runs": runs}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"read-shares-{args.backend}-{args.device_kind}.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
