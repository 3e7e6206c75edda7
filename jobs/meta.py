"""What every result file records: when, where, which commit, which command."""

import datetime
import os
import platform
import subprocess
import sys
import time


def commit():
    """The commit measured: TCDIST_COMMIT when the tree was copied to the GPU host (its .git there
    is not this checkout's), else git's HEAD, marked +dirty when code differs from it."""
    if os.environ.get("TCDIST_COMMIT"):
        return os.environ["TCDIST_COMMIT"]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        # results and prose do not change what is measured; code does
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(top,exclude)results",
                                ":(top,exclude)*.md"],
                               capture_output=True, text=True).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("TCDIST_COMMIT", "unknown")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def metadata(device):
    """Provenance of one benchmark run; ``device`` names the machine kind (e.g. 'cpu-2core', 'nvidia-h100-x1')."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": device,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "commit": commit(),
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "python": platform.python_version(),
    }


def compile_bytecode():
    """An installed tcdist imports bytecode that pip compiled; where this environment keeps Python
    from writing any (PYTHONDONTWRITEBYTECODE, as the lent GPU hosts set it), tcdist's is compiled
    here once, so that no timed run pays for compiling tcdist's source (0.35 s a process on a GPU
    host). Returns a note for the JSON, or None where nothing was needed."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return None
    import compileall

    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tcdist")
    compileall.compile_dir(package, quiet=1, workers=0)
    return f"PYTHONDONTWRITEBYTECODE is set: tcdist's bytecode compiled once ({os.path.abspath(package)}), as pip does"


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def networkit_triangles(rowptr, col, threads, repeat):
    """networkit's TriangleEdgeScore on the same oriented CSR: (triangles, seconds of each run).

    The graph is built once; only the scoring is timed, as the counting step of tcdist is.
    """
    import time

    import networkit as nk
    import numpy as np

    nk.setNumberOfThreads(threads)
    n = rowptr.size - 1
    rows = np.repeat(np.arange(n, dtype=np.uint64), np.diff(rowptr))
    graph = nk.GraphFromCoo((rows, col.astype(np.uint64)), n=n, directed=False)
    graph.indexEdges()
    value, seconds = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        score = nk.sparsification.TriangleEdgeScore(graph)
        score.run()
        seconds.append(time.perf_counter() - t0)
        value = int(round(sum(score.scores()))) // 3
    return value, seconds


def timed(fn, repeat):
    """(the last value, seconds of each of repeat calls) of fn, after one call to warm up
    (JIT compilation, caches)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, times
