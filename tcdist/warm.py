"""`tcdist warm-up` on the CPU: every compiled CPU function a command may call, compiled (or loaded)
into the cache by running the commands themselves, each kind of input on a graph small enough to
take the whole-array NumPy paths and on one large enough for the compiled passes, so that every
function meets the argument types a real run gives it. The commands fall into groups of about
equal compiling, each run in a process of its own, side by side on the cores this process may use.

A run that loads Numba while the cache holds no finished warm-up of this tcdist and Numba starts
one in the background (`start_in_background`): detached, at low priority, one per cache folder,
so the compiling a first run does not need yet is done on the idle cores before it is needed, by
this run or the next. TCDIST_BACKGROUND_WARM_UP=0 turns that off.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from tcdist import __version__, caches
from tcdist.count.registry import of_backend
from tcdist.errors import TcdistError

LARGE = "rmat:17"  # 1.8 million edges once built: past every COMPILED_FROM, the host's compiled passes
SMALL = "rmat:12"

# Each group: the command lines of one process, in order (files named here are made by earlier ones).
GROUPS = {
    "text": [
        ["generate", LARGE, "-o", "large.txt"],
        ["generate", LARGE, "-o", "large.csv.gz"],
        ["generate", SMALL, "-o", "small.txt.gz"],
        ["count", "large.txt"],
        ["count", "large.csv.gz", "--json"],
        ["count", "small.txt.gz", "--labels", "--per-vertex", "names.csv"],
        ["convert", "large.txt", "large.tsv"],
        ["convert", "large.txt", "large.h5"],
        ["count", "large.h5"],
        ["info", "large.txt"],
    ],
    "kernels": [
        *(["count", spec, "--kernel", name] for name in of_backend("cpu") for spec in (LARGE, SMALL)),
        ["count", LARGE, "--per-vertex", "large-vertices.csv", "--per-edge", "large-edges.csv"],
        ["count", SMALL, "--per-vertex", "small-vertices.csv", "--per-edge", "small-edges.csv"],
        ["count", SMALL, "--gpu-memory-limit", "256KiB"],
        ["list", LARGE, "-o", "large.parquet"],
        ["list", SMALL, "-o", "small.csv"],
        ["info", LARGE],
    ],
    "parts": [
        *(["count", LARGE, "--parts", "4", "--prune", prune] for prune in ("lstc", "none", "minimal")),
        ["count", LARGE, "--parts", "4", "--per-vertex", "parts-vertices.csv", "--per-edge", "parts-edges.csv"],
        ["count", LARGE, "--parts", "70"],
        ["count", LARGE, "--parts", "auto"],
        ["count", SMALL, "--parts", "auto", "--gpu-memory-limit", "6MiB"],
        ["count", SMALL, "--parts", "4", "--per-vertex", "small-parts.csv", "--per-edge", "small-parts-edges.csv"],
        ["partition", LARGE, "--parts", "4", "-o", "large-parts.h5"],
        ["count", "large-parts.h5"],
        ["partition", SMALL, "--parts", "4", "-o", "small-parts.h5"],
        ["count", "small-parts.h5"],
        ["info", "small-parts.h5"],
    ],
}

BACKGROUND = "TCDIST_BACKGROUND_WARM_UP"


def run_group(name: str, folder: str, main) -> None:
    """Run one group's commands in folder through main (the command line's), on the CPU, quietly;
    a command that fails raises. Numba is loaded first: a small graph's steps take NumPy's paths only
    while it is not, and what they take once it is must be compiled too."""
    from tcdist.compiled import loaded

    loaded()
    os.chdir(folder)
    for argv in GROUPS[name]:
        cpu = ["--backend", "cpu"] if argv[0] == "count" else []
        code = main([argv[0], *argv[1:], *cpu, "--quiet"] if argv[0] != "generate" else argv)
        if code:
            raise TcdistError(f"the CPU warm-up's `tcdist {' '.join(argv)}` failed (exit status {code})")


def warm_up_cpu(processes: int | None = None) -> None:
    """Every group, each in a process of its own, as many at once as processes (else the cores this
    process may use); then the mark that the cache is warm."""
    from tcdist.compiled import most_threads

    processes = max(1, min(processes or most_threads(), len(GROUPS)))
    with tempfile.TemporaryDirectory(prefix="tcdist-warm-up-") as folder:
        def one(name):
            os.makedirs(os.path.join(folder, name))
            program = (f"from tcdist.cli import main; from tcdist.warm import run_group; "
                       f"run_group({name!r}, {os.path.join(folder, name)!r}, main)")
            env = {**os.environ, BACKGROUND: "0", "NUMBA_NUM_THREADS": str(max(1, most_threads() // processes))}
            done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
            if done.returncode:
                last = (done.stderr.strip().splitlines() or ["no message"])[-1]
                raise TcdistError(f"the CPU warm-up's group {name} failed: {last}")

        with ThreadPoolExecutor(processes) as pool:
            for finished in [pool.submit(one, name) for name in GROUPS]:
                finished.result()
    _mark_warm()


def _mark() -> str:
    return os.path.join(caches.numba_folder(), "warm-up-done")


def _stamp() -> str:
    import numba

    return f"tcdist {__version__}, numba {numba.__version__}, python {sys.version.split()[0]}\n"


def _mark_warm() -> None:
    os.makedirs(caches.numba_folder(), exist_ok=True)
    with open(_mark(), "w") as f:
        f.write(_stamp())


def is_warm() -> bool:
    """Whether a warm-up of this tcdist, Numba and Python has filled the cache."""
    try:
        with open(_mark()) as f:
            return f.read() == _stamp()
    except OSError:
        return False


def start_in_background() -> bool:
    """Where the cache is not warm and no warm-up is under way for it, start one, detached and at
    low priority, that outlives this process; whether one was started."""
    if os.environ.get(BACKGROUND, "1") == "0" or is_warm():
        return False
    try:
        os.makedirs(caches.numba_folder(), exist_ok=True)
        lock = open(os.path.join(caches.numba_folder(), "warm-up.lock"), "a")
    except OSError:  # a read-only cache: nothing can be kept there anyway
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a test only: the warm-up takes it for itself
    except OSError:
        lock.close()
        return False
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    program = "from tcdist.warm import background; background()"
    try:
        subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, env={**os.environ, BACKGROUND: "0"})
    except OSError:  # (no process to be had: a limit on a node of many ranks) a help, never the run's failure
        return False
    return True


def background() -> None:
    """The background warm-up: the cache's lock held throughout, one group at a time, leaving a
    core to the runs it serves."""
    os.nice(10)
    with open(os.path.join(caches.numba_folder(), "warm-up.lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another started meanwhile
            return
        if not is_warm():
            from tcdist.compiled import most_threads

            warm_up_cpu(max(1, most_threads() - 1))
