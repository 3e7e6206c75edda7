"""Rank scaling: the same partition stores counted by 1, 2, ... GPUs, static and dynamic.

    python jobs/bench_ranks.py --graphs rmat:24 rmat:25 --ranks 1 2 --device nvidia-h200-x2 \\
        --mpirun "mpirun --allow-run-as-root --bind-to none" --work /tmp/bench \\
        --out results/ranks-h200x2.json --plot results/ranks-h200x2.png

For every graph and every P in {R, 2R, 4R} (R in --ranks), one single-rank run partitions
the graph on the GPU and writes the store (root: read, build, partition, store write; it
also counts the parts from memory). Then every R counts every store it has a P for, with
both schedules, each as its own `mpirun -n R python -m tcdist count STORE` job: per rank,
store read, transfer and kernel seconds; the job's phases are the maxima over ranks.
Speedups compare R ranks with one rank on the same store where P is 1, 2 or 4, else with one
rank on the one-part store (the whole graph on one GPU), and the kernel also with the same
parts counted from memory on one GPU (the root run).

With --end-to-end, what a user waits for instead: `tcdist count G` as one process (no
launcher) against `mpirun -n R ... count G` for each R, the graph given as its spec and, with
--forms, as .h5 and text files written once (`tcdist convert`, `tcdist generate`; kept in --work and reused); the job's wall
clock (best of --repeat), every rank's phases, the bytes each rank read and received, and the
seconds from the job's start to each rank's first kernel launch; beside them the launcher's floor
(Python started and ended alone, and R ranks started by the launcher with MPI, nothing else), and with --cold
the same runs with empty compile caches (one compiling rank, the others loading its code). The
jobs of R > 1 ranks run once per --schedules; the summary (and --plot) gives each job's speedup over
the one process: wall clock, kernel phase and upload + kernel (the slowest rank's):

    python jobs/bench_ranks.py --end-to-end --graphs rmat:24 --ranks 2 3 4 --forms spec h5 txt \\
        --schedules static dynamic --device nvidia-h100-x4 \\
        --mpirun "mpirun --allow-run-as-root --oversubscribe --bind-to none" \\
        --out results/ranks-e2e-h100x4.json --plot results/ranks-e2e-h100x4.png
"""

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from meta import compile_bytecode, metadata


def phases(record):
    """The job's phases as the slowest rank saw them, and the kernel seconds of every rank."""
    ranks = record["rank_stats"]
    return {
        "store_read_s": max(r["timings"]["store_read"] for r in ranks),
        "transfer_s": max(r["timings"]["transfer"] for r in ranks),
        "kernel_s": max(r["timings"]["count"] for r in ranks),
        "compile_s": max(r["timings"]["compile"] for r in ranks),
        "other_s": max(r["timings"]["other"] for r in ranks),
        "kernel_per_rank_s": [r["timings"]["count"] for r in ranks],
        "count_wall_s": record["timings"]["total"],
        "job_wall_s": record["job_wall_s"],
        "parts_per_rank": [r["parts"] for r in ranks],
        "gpus": [r["gpu_bus_id"] for r in ranks],
    }


def bench_graph(spec, ranks_list, launcher, work, backend, log, save, only=None):
    sizes = sorted({f * r for r in ranks_list for f in (1, 2, 4)} | {1})
    sizes = [p for p in sizes if not only or p in only]
    rows, root = [], {}
    for parts in sizes:
        store = os.path.join(work, f"{spec.replace(':', '-')}-p{parts}.h5")
        made = _timed(launcher, 1, ("count", spec, "--backend", backend, "-P", parts, "--store", store))
        t = made["timings"]
        root[parts] = {"read_s": t["read"], "build_s": t["build"], "partition_s": t["partition"],
                       "store_write_s": t["store_write"], "in_memory_kernel_s": t["count"],
                       "store_bytes": os.path.getsize(store), "edge_replication": sum(
                           s["e_res"] for s in made["part_stats"]) / made["m"], "triangles": made["triangles"]}
        log(f"{spec} P={parts}: root partition {t['partition']:.2f} s, store write {t['store_write']:.2f} s "
            f"({root[parts]['store_bytes'] / 2**30:.2f} GiB), in-memory kernel {t['count'] * 1e3:.1f} ms")
        for ranks in ranks_list:
            if parts not in (ranks, 2 * ranks, 4 * ranks):
                continue
            for schedule in ("static", "dynamic"):
                r = _timed(launcher, ranks, ("count", store, "--backend", backend, "--schedule", schedule))
                if r["triangles"] != made["triangles"]:
                    raise SystemExit(f"{spec} P={parts} R={ranks} {schedule}: {r['triangles']} != {made['triangles']}")
                row = {"graph": spec, "n": r["n"], "m": r["m"], "triangles": r["triangles"], "parts": parts,
                       "ranks": ranks, "schedule": schedule, **phases(r)}
                rows.append(row)
                save(rows, root)
                log(f"  R={ranks} {schedule:7s} kernel {row['kernel_s'] * 1e3:8.1f} ms  read {row['store_read_s']:.2f} s"
                    f"  transfer {row['transfer_s']:.2f} s  count wall {row['count_wall_s']:.2f} s")
        os.remove(store)
    return rows, root


RANK_PHASES = ("compile", "generate", "read", "build", "partition", "store_write", "share", "store_read", "transfer",
               "prepare", "count", "other")
CACHE_VARS = ("CUPY_CACHE_DIR", "NUMBA_CACHE_DIR", "CUDA_CACHE_PATH")  # emptied for a cold run


def end_to_end(spec, ranks_list, launcher, work, backend, forms, repeat, log, save, count_args=(), rank_args=(),
               cold=False, schedules=("static",), store=False, launched_one=False):
    """One process against R ranks on the same graph, as a user runs them (see the module's text),
    the jobs of R > 1 ranks once per schedule; save(rows) after every row; store: every run writes
    a new partition store (--store, in work: removed before and after each run); launched_one: also
    one rank started by the launcher (what the launcher alone adds to one GPU's job)."""
    files = {"spec": spec}
    name = os.path.join(work, spec.replace(":", "-"))
    if "h5" in forms:
        files["h5"] = name + ".h5"
        if not os.path.exists(files["h5"]):  # (written by an earlier call: the same spec and seed)
            subprocess.run([sys.executable, "-m", "tcdist", "convert", spec, files["h5"], "-q"], check=True)
    if "txt" in forms:
        files["txt"] = name + ".txt"
        if not os.path.exists(files["txt"]):
            subprocess.run([sys.executable, "-m", "tcdist", "generate", spec, "-o", files["txt"], "-q"], check=True)
    rows = []
    for form in forms:
        for caches in ("cold", "warm") if cold else ("warm",):
            jobs = ([(1, None)] + [(1, "launched")] * launched_one
                    + [(r, s) for r in sorted(set(ranks_list) - {1}) for s in schedules])
            for ranks, schedule in jobs:
                launched = ranks > 1 or schedule == "launched"
                args = ("count", files[form], "--backend", backend, *count_args,
                        *((*rank_args, "--schedule", schedule) if ranks > 1 else ()))
                try:
                    runs = [_timed(launcher if launched else None, ranks, args, work if caches == "cold" else None,
                                   os.path.join(work, "e2e-store.h5") if store else None)
                            for _ in range(1 if caches == "cold" else repeat)]
                except TimedOut as e:  # said in the JSON, and the next rows go on
                    rows.append({"graph": spec, "form": form, "caches": caches, "ranks": ranks, "schedule": schedule,
                                 "launched": launched, "count_args": list(count_args), "args": list(args),
                                 "timed_out_s": JOB_TIMEOUT})
                    save(rows)
                    log(f"{spec} {form:4s} {caches} R={ranks} {schedule or 'alone'}: no answer, {e}")
                    continue
                best = min(runs, key=lambda r: r["job_wall_s"])
                row = {"graph": spec, "form": form, "caches": caches, "ranks": ranks, "schedule": schedule,
                       "launched": launched,
                       "count_args": list(count_args), "args": list(args), "store_written": store,
                       "triangles": best["triangles"], "mode": best["mode"], "mode_reason": best["mode_reason"],
                       "kernels": best["kernels"],  # --kernel auto's choice of each part or share
                       "job_wall_s": best["job_wall_s"], "job_wall_all_s": [r["job_wall_s"] for r in runs],
                       "rank_phases": [{k: r["timings"][k] for k in RANK_PHASES} | {
                           "read_bytes": r["read_bytes"], "received_bytes": r["received_bytes"],
                           "first_kernel_s": r["first_kernel_s"]} for r in best["rank_stats"]]}
                rows.append(row)
                save(rows)
                one = next((r for r in rows if (r["form"], r["caches"], r["ranks"], r["launched"]) == (form, caches, 1, False)
                            and "job_wall_s" in r), row)
                if row["triangles"] != one["triangles"]:
                    raise SystemExit(f"{spec} {form} R={ranks}: {row['triangles']} != {one['triangles']}")
                slowest = max(row["rank_phases"], key=lambda p: sum(p[k] for k in RANK_PHASES))
                first = max(p["first_kernel_s"] or 0.0 for p in row["rank_phases"])
                log(f"{spec} {form:4s} {caches} R={ranks} {schedule or 'alone'}: {row['job_wall_s']:.2f} s wall "
                    f"({row['job_wall_s'] / one['job_wall_s']:.2f}x one process), mode {row['mode']}; first kernel "
                    f"by {first:.2f} s; slowest rank "
                    + ", ".join(f"{k} {v:.2f}" for k, v in slowest.items() if k in RANK_PHASES and v >= 0.005))
    for path in files.values():
        if path != spec:
            os.remove(path)
    return rows


DEVICE_PHASES = ("share", "transfer", "prepare", "count")  # upload and kernel; the reduce is the wait in other


def _ratio(a, b):
    return a / b if b else None


def _times(x) -> str:
    return "-" if x is None else f"{x:.2f}x"


def e2e_speedups(rows):
    """Each job of R > 1 ranks against one process on the same graph, input, caches and options:
    the wall clock, the kernel phase (the slowest rank's count) and the device phase (the slowest
    rank's upload, prepare and count); the wall clock also against one rank under the launcher
    where that ran (its own row, schedule 'launched')."""
    def slowest(row, keys):
        return max(sum(p[k] for k in keys) for p in row["rank_phases"])

    def key(r):
        return r["graph"], r["form"], r["caches"], tuple(r["count_args"])

    rows = [r for r in rows if "job_wall_s" in r]  # (not those over --job-timeout)
    one = {key(r): r for r in rows if r["ranks"] == 1 and not r.get("launched")}
    launched_one = {key(r): r for r in rows if r["ranks"] == 1 and r.get("launched")}
    out = []
    for r in rows:
        base = one.get(key(r))
        if r["ranks"] == 1 or base is None:
            continue
        under = launched_one.get(key(r))
        out.append({"graph": r["graph"], "form": r["form"], "caches": r["caches"], "count_args": r["count_args"],
                    "ranks": r["ranks"], "schedule": r["schedule"], "mode": r["mode"],
                    "wall_speedup": base["job_wall_s"] / r["job_wall_s"],
                    "wall_speedup_launched": under and under["job_wall_s"] / r["job_wall_s"],
                    "kernel_speedup": _ratio(slowest(base, ("count",)), slowest(r, ("count",))),
                    "device_speedup": _ratio(slowest(base, DEVICE_PHASES), slowest(r, DEVICE_PHASES))})
    return out


def e2e_plot(rows, path):
    """Speedup of R ranks over one process against R, one panel per graph: wall clock solid,
    kernel phase dashed, upload + kernel dotted; a colour per input, mode and schedule."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ups = [s for s in e2e_speedups(rows) if s["caches"] == "warm"]
    graphs = sorted({s["graph"] for s in ups})
    fig, axes = plt.subplots(1, max(len(graphs), 1), figsize=(7 * max(len(graphs), 1), 6), squeeze=False)
    for ax, graph in zip(axes[0], graphs):
        ranks = sorted({1} | {s["ranks"] for s in ups if s["graph"] == graph})
        ax.plot(ranks, ranks, ":", color="gray", label="ideal")
        keys = sorted({(s["form"], s["mode"], s["schedule"], " ".join(s["count_args"])) for s in ups if s["graph"] == graph})
        for colour, key in enumerate(keys):
            mine = sorted(((s["ranks"], s) for s in ups if s["graph"] == graph and
                           (s["form"], s["mode"], s["schedule"], " ".join(s["count_args"])) == key), key=lambda x: x[0])
            for what, style in (("wall", "-o"), ("kernel", "--s"), ("device", ":^")):
                points = [(r, s[f"{what}_speedup"]) for r, s in mine if s[f"{what}_speedup"] is not None]
                ax.plot([1] + [r for r, _ in points], [1] + [v for _, v in points], style,
                        color=plt.cm.tab20(colour % 20), label=f"{' '.join(filter(None, key))}: {what}")
        ax.set(title=f"{graph}: R ranks (one GPU each) over one process", xlabel="ranks", ylabel="speedup",
               xticks=ranks)
        ax.legend(fontsize=5, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def launcher_floor(ranks_list, launcher, repeat):
    """What a job of R ranks pays before and after any of tcdist's work: the wall clock of Python
    started and ended alone ("python"), and of R ranks started by the launcher that start MPI,
    meet once and end (by R), best of repeat."""
    def best(command):
        walls = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run(command, check=True)
            walls.append(time.perf_counter() - t0)
        return min(walls)

    floor = {"python": best([sys.executable, "-c", "pass"])}
    for ranks in ranks_list:
        floor[ranks] = best([*launcher, "-n", str(ranks), sys.executable, "-c",
                             "from mpi4py import MPI; MPI.COMM_WORLD.Barrier()"])
    return floor


class TimedOut(Exception):
    """A job over --job-timeout, ended with all its processes."""


JOB_TIMEOUT = None  # seconds a job may run (--job-timeout), else no limit


def _timed(launcher, ranks, args, cold_in=None, store=None):
    """One run of tcdist (under the launcher with R ranks, or alone: what a user of one GPU types),
    its JSON with the job's wall clock and each rank's seconds from the job's start to its first
    kernel launch; cold_in: a folder under which the run gets empty compile caches; store: a
    partition store the run writes, removed before and after it. A job over JOB_TIMEOUT is ended,
    every process of it (a rank left running would hold a GPU and cores through the next rows),
    and raises TimedOut."""
    command = [*([*launcher, "-n", str(ranks)] if launcher else []), sys.executable, "-m", "tcdist", *map(str, args),
               *(("--store", store) if store else ()), "--json", "-q"]
    _remove_store(store)
    env = None
    if cold_in is not None:
        caches = tempfile.mkdtemp(dir=cold_in)
        env = dict(os.environ, **{var: os.path.join(caches, var) for var in CACHE_VARS})
    started, t0 = time.time(), time.perf_counter()
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        _end(job)
        raise TimedOut(f"over {JOB_TIMEOUT} s: {' '.join(command)}") from None
    done = subprocess.CompletedProcess(command, job.returncode, stdout, stderr)
    wall = time.perf_counter() - t0
    if cold_in is not None:
        shutil.rmtree(caches)
    _remove_store(store)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    record = json.loads(done.stdout)
    for r in record["rank_stats"]:
        r["first_kernel_s"] = r["first_kernel_at"] and r["first_kernel_at"] - started
    return {**record, "job_wall_s": wall}


def _end(job) -> None:
    """A job's whole process group ended: told to stop (tcdist's ranks then stop together), killed
    after 15 s."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(job.pid, sig)
        except ProcessLookupError:
            return
        try:
            job.communicate(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _remove_store(path) -> None:
    """A store written by a timed run, with its journal."""
    if path is not None:
        shutil.rmtree(path + ".journal", ignore_errors=True)
        if os.path.exists(path):
            os.remove(path)


def speedups(rows, root=None):
    """R ranks against one rank with the same schedule and code (a row's 'commit', where rows of
    several runs are merged): on the same store where that job ran, else on the one-part store
    (one GPU counting the whole graph: the replication of parts is then part of the cost). With
    root, also the kernel against the same parts counted from memory on one GPU (the root run);
    a row with neither baseline has no entry, one with only the latter has None elsewhere."""
    one = {(r.get("commit"), r["graph"], r["parts"], r["schedule"]): r for r in rows if r["ranks"] == 1}
    out = []
    for r in rows:
        if r["ranks"] == 1:
            continue
        key = (r.get("commit"), r["graph"])
        base = one.get((*key, r["parts"], r["schedule"])) or one.get((*key, 1, r["schedule"]))
        same = (root or {}).get(r["graph"], {})
        same = same.get(r["parts"]) or same.get(str(r["parts"]))
        if not (base or same):
            continue
        entry = {"graph": r["graph"], "parts": r["parts"], "ranks": r["ranks"], "schedule": r["schedule"],
                 "baseline_parts": base and base["parts"], "kernel_speedup": base and base["kernel_s"] / r["kernel_s"],
                 "count_wall_speedup": base and base["count_wall_s"] / r["count_wall_s"]}
        if same:
            entry["kernel_speedup_same_parts"] = same["in_memory_kernel_s"] / r["kernel_s"]
        out.append(entry)
    return out


def plot(rows, path, root=None):
    """Speedup against one rank on the same store (the analogue of LSTC Fig. 8): kernel phase
    solid, count wall time dashed, one colour per P and schedule, ideal scaling dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ups = speedups(rows, root)
    graphs = sorted({r["graph"] for r in rows})
    fig, axes = plt.subplots(1, len(graphs), figsize=(7 * len(graphs), 6), squeeze=False)
    for ax, graph in zip(axes[0], graphs):
        ranks = sorted({r["ranks"] for r in rows if r["graph"] == graph})
        ax.plot(ranks, ranks, ":", color="gray", label="ideal")
        keys = sorted({(s["parts"], s["schedule"]) for s in ups if s["graph"] == graph})
        for colour, (parts, schedule) in enumerate(keys):
            mine = sorted((s["ranks"], s) for s in ups if (s["graph"], s["parts"], s["schedule"]) == (graph, parts, schedule))
            for key, style, what in (("kernel_speedup", "-o", "kernel"), ("count_wall_speedup", "--s", "count wall"),
                                     ("kernel_speedup_same_parts", ":^", "kernel vs same parts from memory")):
                points = [(r, s[key]) for r, s in mine if s.get(key) is not None]
                if key == "kernel_speedup_same_parts" and any(s["kernel_speedup"] is not None for _, s in mine):
                    points = []  # drawn only where one rank did not count this store
                if points:
                    ax.plot([1] + [r for r, _ in points], [1] + [v for _, v in points], style, color=plt.cm.tab20(colour % 20),
                            label=f"P={parts} {schedule}, {what}")
        ax.set(title=f"{graph}: speedup over one GPU on the same store", xlabel="GPUs (ranks)", ylabel="speedup",
               xticks=ranks)
        ax.legend(fontsize=5, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", default=["rmat:24", "rmat:25"])
    p.add_argument("--ranks", nargs="+", type=int, default=[1, 2])
    p.add_argument("--mpirun", default="mpirun", help="launcher and its options")
    p.add_argument("--device", required=True, help="the machine kind, e.g. nvidia-h200-x2")
    p.add_argument("--parts", nargs="+", type=int, help="only these P (default: R, 2R, 4R of every R, and 1)")
    p.add_argument("--backend", default="gpu", help="gpu, or cpu to try the job without one")
    p.add_argument("--work", default="/tmp/tcdist-bench", help="folder for the stores")
    p.add_argument("--out", required=True)
    p.add_argument("--plot")
    p.add_argument("--end-to-end", action="store_true", help="one process against R ranks, as a user runs them")
    p.add_argument("--forms", nargs="+", choices=("spec", "h5", "txt"), default=["spec"],
                   help="with --end-to-end: the graph as its spec, .h5 or text")
    p.add_argument("--repeat", type=int, default=2, help="with --end-to-end: runs of each row (the best is kept)")
    p.add_argument("--count-args", default="", help="with --end-to-end: options for every count, e.g. "
                   "'--gpu-memory-limit 3GiB' (parts forced)")
    p.add_argument("--rank-args", default="", help="with --end-to-end: options for the jobs of R > 1 ranks only, "
                   "e.g. '--threads 4'")
    p.add_argument("--schedules", nargs="+", choices=("static", "dynamic"), default=["static"],
                   help="with --end-to-end: the schedules of the jobs of R > 1 ranks")
    p.add_argument("--cold", action="store_true", help="with --end-to-end: also a run of each with empty compile "
                   "caches (one for all of a job's ranks)")
    p.add_argument("--launched-one", action="store_true", help="with --end-to-end: also one rank under the "
                   "launcher (what it adds to one GPU's job), the base of a second wall-clock speedup")
    p.add_argument("--job-timeout", type=float, help="with --end-to-end: seconds a job may run; one over it is "
                   "ended with all its processes, and its row says so")
    p.add_argument("--store", action="store_true", help="with --end-to-end: every run also writes a partition "
                   "store (--store; with --count-args '--parts P', parts the ranks build and rank 0 writes)")
    args = p.parse_args()
    global JOB_TIMEOUT
    JOB_TIMEOUT = args.job_timeout
    os.makedirs(args.work, exist_ok=True)
    launcher = shlex.split(args.mpirun)
    result = {**metadata(args.device), "rows": [], "root": {}, "speedups": [], "bytecode": compile_bytecode()}

    def log(line):
        print(line, flush=True)

    if args.end_to_end:
        result["launcher_floor_s"] = launcher_floor(args.ranks, launcher, args.repeat)
        log("launcher floor (started and ended, nothing else): " + ", ".join(
            f"{r if r == 'python' else f'R={r} with MPI'}: {s:.2f} s" for r, s in result["launcher_floor_s"].items()))
        for spec in args.graphs:
            done = list(result["rows"])

            def save_rows(rows):  # after every run, so a cut-off benchmark keeps what it measured
                result["rows"] = done + rows
                result["speedups"] = e2e_speedups(result["rows"])
                with open(args.out, "w") as f:
                    json.dump(result, f, indent=1)

            end_to_end(spec, args.ranks, launcher, args.work, args.backend, args.forms, args.repeat, log, save_rows,
                       shlex.split(args.count_args), shlex.split(args.rank_args), args.cold, args.schedules,
                       args.store, args.launched_one)
        for s in result["speedups"]:
            log(f"{s['graph']} {s['form']} {s['caches']} R={s['ranks']} {s['schedule']} ({s['mode']}): wall "
                f"{_times(s['wall_speedup'])} (against one launched rank {_times(s['wall_speedup_launched'])}), kernel {_times(s['kernel_speedup'])}, upload+kernel "
                f"{_times(s['device_speedup'])}")
        if args.plot:
            e2e_plot(result["rows"], args.plot)
        return

    for spec in args.graphs:
        done = list(result["rows"])

        def save(rows, root):  # after every run, so a cut-off benchmark keeps what it measured
            result["rows"], result["root"][spec] = done + rows, root
            result["speedups"] = speedups(result["rows"], result["root"])
            with open(args.out, "w") as f:
                json.dump(result, f, indent=1)

        bench_graph(spec, args.ranks, launcher, args.work, args.backend, log, save, args.parts)
    for s in result["speedups"]:
        against = (f"kernel {s['kernel_speedup']:.2f}x, count wall {s['count_wall_speedup']:.2f}x"
                   if s["kernel_speedup"] is not None else
                   f"kernel {s['kernel_speedup_same_parts']:.2f}x the same parts from memory on one GPU")
        log(f"{s['graph']} P={s['parts']} R={s['ranks']} {s['schedule']:7s}: {against}")
    if args.plot:
        plot(result["rows"], args.plot, result["root"])


if __name__ == "__main__":
    main()
