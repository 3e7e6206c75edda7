"""`tcdist warm-up` on the CPU: every compiled CPU function, for every signature a command may give
it (data/signatures.txt), compiled (or loaded) into the cache by processes side by side, each
taking the list's next entry as it comes free. The list is recorded by `python
jobs/record_signatures.py` running the commands of GROUPS (each kind of input on a graph small
enough to take the whole-array NumPy paths and on one large enough for the compiled passes), and
begins with what a count of a text file needs, in the order it needs it.

A run that loads Numba while the cache holds no finished warm-up of this tcdist and Numba starts
one in the background (`start_in_background`): detached, one per cache folder, on every core but
one. Its workers compile the functions the run is about to call while the run compiles the one it
calls now; the run waits for one under way and loads it (compiled.beside_others), so that a first
run's compiling is spread over the cores. TCDIST_BACKGROUND_WARM_UP=0 turns that off.
"""

from __future__ import annotations

import fcntl
import importlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from tcdist import __version__, caches, compiled
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
SIGNATURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "signatures.txt")
TEXT_COUNT_ENDS = "# what a count of a text file needs ends here"


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


def signatures() -> list[tuple[str, str, str]]:
    """The list: each compiled function's module, name and a signature (a Numba types expression)."""
    with open(SIGNATURES) as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f if not line.startswith("#")]


def text_count_entries() -> int:
    """How many of the list's first entries a count of a text file needs (those before TEXT_COUNT_ENDS)."""
    with open(SIGNATURES) as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("# module")]
    return lines.index(TEXT_COUNT_ENDS) if TEXT_COUNT_ENDS in lines else len(lines)


def _read(signature: str) -> tuple:
    """A signature's Numba types from their repr (the list is tcdist's own file)."""
    from numba.core import types

    return eval(signature, {**vars(types), "dtype": types.DType, "omitted": lambda default: types.Omitted(default)})


def compile_claimed(queue: str) -> None:
    """Compile (or load) the list's entries in order, each claimed from the queue (a file holding the
    next entry's index) as this process comes free: a slow compile holds up no entry behind it. Past
    what a count of a text file needs, at the lowest priority: a first run that needs none of it is
    not slowed by it."""
    entries, needed, lowered = signatures(), text_count_entries(), False
    with open(queue, "r+") as claims:
        while True:
            fcntl.flock(claims, fcntl.LOCK_EX)
            claims.seek(0)
            entry = int(claims.read())
            claims.seek(0)
            claims.write(str(entry + 1))
            claims.truncate()
            claims.flush()
            fcntl.flock(claims, fcntl.LOCK_UN)
            if entry >= len(entries):
                return
            if entry >= needed and not lowered:  # what a first run may not need: its cores are the run's first
                os.nice(19)
                lowered = True
            module, name, signature = entries[entry]
            getattr(importlib.import_module(module), name).compile_alone(_read(signature))


def warm_up_cpu(processes: int | None = None) -> None:
    """The list compiled by processes side by side, as many as processes (else the cores this
    process may use), each taking the next entry as it comes free; then the mark that the cache is
    warm."""
    from tcdist.compiled import most_threads

    caches.writable_numba_folder()  # (before minutes of compiling that could not be kept)
    processes = max(1, min(processes or most_threads(), len(signatures())))
    with tempfile.NamedTemporaryFile("w", prefix="tcdist-warm-up-", suffix=".next") as queue:
        queue.write("0")
        queue.flush()

        def worker():
            program = f"from tcdist.warm import compile_claimed; compile_claimed({queue.name!r})"
            done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                  env={**os.environ, BACKGROUND: "0"})
            if done.returncode:
                last = (done.stderr.strip().splitlines() or ["no message"])[-1]
                raise TcdistError(f"the CPU warm-up failed: {last}")

        with ThreadPoolExecutor(processes) as pool:
            for finished in [pool.submit(worker) for _ in range(processes)]:
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
    """Where the cache is not warm: compile beside other processes (compiled.beside_others), and
    where no warm-up is under way for it, start one, detached, that outlives this process; whether
    one was started."""
    if is_warm():
        return False
    compiled.beside_others = True
    if os.environ.get(BACKGROUND, "1") == "0":
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
    """The background warm-up: the cache's lock held throughout, leaving a core to the runs it serves."""
    with open(os.path.join(caches.numba_folder(), "warm-up.lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another started meanwhile
            return
        if not is_warm():
            from tcdist.compiled import most_threads

            warm_up_cpu(max(1, most_threads() - 1))


def record(main, path: str = SIGNATURES) -> None:
    """Write the list: every signature compiled, in the order first compiled (a callee before its
    caller), by a count of a text file (then TEXT_COUNT_ENDS) and then every group's commands,
    through main (the command line's), in this process on an empty cache (and the passes compiled
    for both column types, which only huge graphs call with both)."""
    from numba.core import event

    from tcdist.budget import estimate
    from tcdist.graph import check

    found = {}

    class Listener(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            function = ev.data["dispatcher"].py_func
            if not function.__module__.startswith("tcdist.") or "<" in function.__qualname__:
                return  # Numba's own, compiled inside tcdist's
            signature = repr(tuple(ev.data["args"]))
            try:
                read = _read(signature) == tuple(ev.data["args"])
            except Exception:  # (a repr that is no expression: a type object, a literal)
                read = False
            if not read:  # a constant or a type a compiled caller gives: compiled inside that caller only
                print(f"not listed: {function.__qualname__}{signature}", file=sys.stderr)
                return
            found.setdefault((function, signature))

    with tempfile.TemporaryDirectory(prefix="tcdist-record-") as folder:
        os.environ.update({"TCDIST_CACHE_DIR": folder, BACKGROUND: "0"})
        os.environ.pop("NUMBA_CACHE_DIR", None)
        subprocess.run([sys.executable, "-m", "tcdist", "generate", LARGE, "-o", os.path.join(folder, "first.txt")],
                       check=True, capture_output=True,  # (compiling into a cache of its own: all is listed here)
                       env={**os.environ, "TCDIST_CACHE_DIR": os.path.join(folder, "generate")})
        compiled.loaded()
        event.register("numba:compile", Listener())
        if main(["count", os.path.join(folder, "first.txt"), "--backend", "cpu", "--quiet"]):
            raise TcdistError("the first count failed")
        text_count = len(found)
        for name in GROUPS:
            os.makedirs(os.path.join(folder, name))
            run_group(name, os.path.join(folder, name), main)
        check.prebuild()
        estimate.prebuild()
    named = {id(value.py_func): (module.__name__, name) for module in list(sys.modules.values())
             if getattr(module, "__name__", "").startswith("tcdist.")
             for name, value in vars(module).items() if isinstance(value, compiled.Compiled)}
    with open(path, "w") as f:
        f.write("# module, function, signature: written by `python jobs/record_signatures.py` (tcdist/warm.py)\n")
        lines = ["\t".join((*named[id(function)], signature)) + "\n" for function, signature in found]
        f.writelines([*lines[:text_count], TEXT_COUNT_ENDS + "\n", *lines[text_count:]])
