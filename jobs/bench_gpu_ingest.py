"""GPU ranks that build their rows on their GPUs against one process on one GPU, end to end:
`tcdist count SOURCE --backend gpu` in one process, then under the launcher on RANKS ranks (one
GPU each, NCCL between them where it loads), for a generator spec and a text edge list of a
generator's edges written first. Records NCCL's version, each run's wall seconds (the process's
whole life: the launcher's too), its triangles and build and share seconds (rank 0's), and
whether every run counted the same. Both first count rmat:16, untimed, so that the kernels CuPy
compiles are in its cache before the runs timed.

    python jobs/bench_gpu_ingest.py --mpirun "$TCDIST_MPIEXEC" --ranks 2 --spec rmat:25 \\
        --text rmat:24 --work /tmp/ingest --out $OUT/gpu-ingest.json
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from meta import metadata


def nccl_version():
    """NCCL's version where cupy.cuda.nccl loads, else why not."""
    try:
        from cupy.cuda import nccl

        return {"available": bool(nccl.available), "version": nccl.get_version()}
    except Exception as error:  # recorded, not raised: the runs fall back to MPI without it
        return {"available": False, "error": f"{type(error).__name__}: {error}"}


def timed(command):
    """The run's wall seconds and its JSON record (or its error's last lines)."""
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        return {"command": " ".join(command), "wall_s": seconds, "rc": done.returncode,
                "error": done.stderr[-3000:]}
    record = json.loads(done.stdout)
    timings = record.get("timings", {})
    return {"command": " ".join(command), "wall_s": seconds, "rc": 0, "triangles": record["triangles"],
            "mode": record.get("mode"), "mode_reason": record.get("mode_reason"),
            "total_s": timings.get("total"), "build_s": timings.get("build"), "read_s": timings.get("read"),
            "generate_s": timings.get("generate"), "share_s": timings.get("share"),
            "graph_via": [r.get("graph_via") for r in record.get("rank_stats", [])],
            "warnings": record.get("warnings", [])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mpirun", required=True, help="the launcher, with its options")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--spec", default="rmat:25", help="a generator each rank draws its share of")
    parser.add_argument("--text", default="rmat:24", help="a generator whose edges are written as text first")
    parser.add_argument("--work", default="/tmp/gpu-ingest", help="a folder for the text file")
    parser.add_argument("--backend", default="gpu", help="cpu: the same runs on host cores, to try the job")
    parser.add_argument("--device", default="nvidia-h200-x2", help="the machine kind, for the record")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    text = os.path.join(args.work, args.text.replace(":", "-") + ".txt")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tcdist", "generate", args.text, "-o", text, "--quiet"], check=True)
    written = time.perf_counter() - t0
    count = [sys.executable, "-m", "tcdist", "count"]
    launch = [*shlex.split(args.mpirun), "-n", str(args.ranks)]
    warm = [timed([*count, "rmat:16", "--backend", args.backend, "--json"]),  # CuPy's kernels compiled and cached
            timed([*launch, *count, "rmat:16", "--backend", args.backend, "--json"])]
    runs = []
    for source in (args.spec, text):
        one = timed([*count, source, "--backend", args.backend, "--json"])
        ranked = timed([*launch, *count, source, "--backend", args.backend, "--json"])
        runs.append({"source": source, "one_process": one, "ranks": ranked,
                     "same_count": one.get("triangles") is not None and one.get("triangles") == ranked.get("triangles")})
        print(json.dumps(runs[-1], indent=1), flush=True)
    result = {"meta": metadata(args.device), "backend": args.backend, "nccl": nccl_version(), "ranks": args.ranks, "text": text,
              "text_bytes": os.path.getsize(text), "text_written_s": written, "warm_up": warm, "runs": runs}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    os.remove(text)


if __name__ == "__main__":
    main()
