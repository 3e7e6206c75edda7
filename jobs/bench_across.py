"""Parts across ranks against rank 0 holding the graph: what each costs and what each rank holds.

    python jobs/bench_across.py --graphs grid:1500:1500 rmat:19 --ranks 2 4 --device cpu-2core \\
        --out results/across-cpu2.json

For every graph, one process (`tcdist count G`), then for each R: R ranks as tcdist chooses
without a limit (rank 0 receives the graph where its host holds it), and R ranks under
`--host-memory-limit` of --limit times the graph's CSR (below two copies: parts across ranks),
each rank on a "host" of its own (MPICH's MPIR_CVAR_NUM_CLIQUES, --hosts per job; a rank's limit
is the host's shared among its ranks, and the first rank of a skewed graph needs about all of
it). Per job: the wall clock (best of --repeat), the mode, every rank's phases, graph_peak_bytes
and received_bytes, and the largest resident set of any of its processes (wait4's rusage).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from meta import metadata


def job(command, env=None):
    """(the --json record, wall seconds, the largest resident set in bytes of any of its processes)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # (its rusage: the most any process of the job held)
        wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed: {err.read().decode().strip()}")
        return json.loads(out.read()), wall, usage.ru_maxrss * 1024


def measured(command, repeat, env=None):
    best = None
    for _ in range(repeat):
        record, wall, rss = job(command, env)
        if best is None or wall < best["wall_s"]:
            best = {"wall_s": round(wall, 3), "max_rss_bytes": rss, "mode": record["mode"],
                    "triangles": record["triangles"], "n": record["n"], "m": record["m"], "timings": record["timings"],
                    "ranks": [{k: r.get(k) for k in ("rank", "timings", "graph_peak_bytes", "received_bytes",
                                                     "read_bytes", "graph_via")} for r in record["rank_stats"]]}
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", required=True)
    p.add_argument("--ranks", nargs="+", type=int, default=[2, 4])
    p.add_argument("--hosts", type=int, default=None, help="MPICH cliques per job [as many as ranks]")
    p.add_argument("--limit", type=float, default=1.9, help="the host limit, times the graph's CSR [1.9]")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--mpiexec", default=os.path.join(os.path.dirname(sys.executable), "mpiexec"))
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()

    import numpy as np

    from tcdist.budget.model import csr_bytes
    from tcdist.graph.graph import col_dtype

    count = [sys.executable, "-m", "tcdist", "count"]
    rows = []
    for graph in args.graphs:  # (this process holds no graph: a child's peak resident set starts from its parent's)
        alone = measured([*count, graph, "--backend", args.backend, "--json"], args.repeat)
        whole = csr_bytes(alone["n"], alone["m"], alone["n"], np.dtype(col_dtype(alone["n"])).itemsize)
        row = {"graph": graph, "csr_bytes": whole, "one_process": alone}
        for ranks in args.ranks:
            launch = [*shlex.split(args.mpiexec), "-n", str(ranks), *count, graph, "--backend", args.backend, "--json"]
            cliques = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": str(args.hosts or ranks)}
            row[f"{ranks}_ranks"] = measured(launch, args.repeat)
            row[f"{ranks}_ranks_across"] = measured([*launch, "--host-memory-limit", str(int(args.limit * whole))],
                                                    args.repeat, cliques)
            print(graph, ranks, {k: (v["wall_s"], v["mode"], [r["graph_peak_bytes"] for r in v["ranks"]])
                                 for k, v in row.items() if k.startswith(f"{ranks}_")}, flush=True)
        rows.append(row)
    with open(args.out, "w") as f:
        json.dump({"meta": metadata(args.device), "limit_times_csr": args.limit, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
