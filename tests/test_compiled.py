"""tcdist.compiled: Numba loaded at the first call of a compiled function, every declared function
then Numba's (calling each other in compiled code, looping over numba.prange), and a thread count
set before the load given to Numba in the thread that set it, whichever thread loaded Numba. Each
case in a fresh interpreter."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tcdist

PROGRAM = """
import sys, threading
import numpy as np
from tcdist import compiled
from tcdist.compiled import jit, prange
{code}
"""


def _run(code: str, threads: int = 4, stderr: bool = False):
    """What a program printed, as words; with stderr, its standard output then its standard error, as text."""
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(code=code)], capture_output=True, text=True,
                          timeout=240, env={**os.environ, "NUMBA_NUM_THREADS": str(threads)})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr if stderr else done.stdout.split()


def test_compiled_functions_call_each_other_and_loop_in_parallel_once_numba_is_loaded():
    out = _run("""
@jit(cache=False)
def square(x):
    return x * x

@jit(parallel=True, cache=False)
def sum_of_squares(a):
    total = 0
    for i in prange(a.size):
        total += square(a[i])
    return total

before = 'numba' in sys.modules
got = sum_of_squares(np.arange(1000, dtype=np.int64))
print(before, 'numba' in sys.modules, got, len(sum_of_squares.signatures))
""")
    assert out == ["False", "True", str(sum(i * i for i in range(1000))), "1"]


def test_a_function_declared_after_the_load_is_numba_s_at_once():
    out = _run("""
@jit(cache=False)
def one():
    return 1
one()

@jit(parallel=True, cache=False)
def count(n):
    total = 0
    for i in prange(n):
        total += one()
    return total

print(count.dispatcher is not None, count(100))
""")
    assert out == ["True", "100"]


def test_a_thread_count_set_before_the_load_is_numba_s_in_that_thread_only():
    """Numba's count is each thread's own: the wish of the thread that set it, at its first call;
    another thread keeps the default."""
    out = _run("""
@jit(cache=False)
def nothing():
    return 0

compiled.set_threads(2)
print(compiled.get_threads(), 'numba' in sys.modules)
seen = []
other = threading.Thread(target=lambda: (nothing(), seen.append(compiled.get_threads())))
other.start(); other.join()
nothing()
import numba
print(seen[0], numba.get_num_threads(), compiled.get_threads(), compiled.most_threads())
""", threads=3)
    assert out == ["2", "False", "3", "2", "2", "3"]


@pytest.mark.parametrize("given", ["", "5"])
def test_the_most_threads_before_the_load_are_numba_s(given):
    env_threads = f"import os; os.environ['NUMBA_NUM_THREADS'] = {given!r}\n" if given else \
        "import os; os.environ.pop('NUMBA_NUM_THREADS', None)\n"
    done = subprocess.run([sys.executable, "-c", env_threads + "from tcdist import compiled; before = "
                           "compiled.most_threads(); import numba; print(before, numba.config.NUMBA_NUM_THREADS)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, numba_s = done.stdout.split()
    assert before == numba_s


def test_numba_s_start_and_compiling_are_compile_not_the_read_or_build_that_first_calls_compiled_code(tmp_path):
    """A text read compiled loads Numba (0.3-0.5 s on 2 cores): counted in the read, it halved the
    read's rate against pyarrow's; Numba's start, once imported with tcdist, was in no step. With an
    empty cache, the read's and the build's compiling (a minute of a first run) is compile too."""
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{i}\t{(i * 7919) % 1_200_000}\n" for i in range(1_200_000)))  # past parse_small's
    # blocks and the build's COMPILED_FROM
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(code=f"""
from tcdist import load_graph
from tcdist.results import Timings
timings = Timings()
load_graph({str(path)!r}, timings=timings)
print(compiled.is_loaded(), compiled.load_seconds > 0, timings.compile == compiled.spent() > compiled.load_seconds)
""")], capture_output=True, text=True, timeout=600, env={**os.environ, "TCDIST_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_text_read_on_the_parse_threads_reports_their_compiling_as_compile(tmp_path):
    """The parser compiles on the threads that parse (3 s of a first run on 16 cores): the read
    that waited for them reports it as compile, not as reading."""
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{i}\t{(i * 7919) % 1_200_000}\n" for i in range(1_200_000)))
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(code=f"""
from tcdist.io.shares import read_share
from tcdist.results import Timings
compiled.loaded()
timings = Timings()
began = Timings.clock()
read_share({str(path)!r}, 0, 1)
timings.add("read", began)
print(timings.read < timings.compile)
""")], capture_output=True, text=True, timeout=600, env={**os.environ, "TCDIST_CACHE_DIR": str(tmp_path / "cache"),
                                                          "TCDIST_BACKGROUND_WARM_UP": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True"]


def test_a_pool_s_compiling_is_taken_on_once_by_the_thread_that_waited_for_it():
    out = _run("""
from concurrent.futures import ThreadPoolExecutor
def work(seconds):
    compiled._add_spent(seconds)  # as the compile listener adds a pool thread's compiling
    return seconds * 2
with ThreadPoolExecutor(3) as pool:
    print(compiled.threads_map(pool, work, [0.5, 0.25, 0.0]), compiled.spent())
""")
    assert out == ["[1.0,", "0.5,", "0.0]", "0.5"]  # the longest, not the sum: they compiled side by side


def test_a_step_s_compiling_on_its_thread_is_compile_and_another_thread_s_is_not():
    out = _run("""
import time
from tcdist.results import Timings
timings = Timings()
began = Timings.clock()
elsewhere = threading.Thread(target=compiled._add_spent, args=(100.0,))
elsewhere.start(); elsewhere.join()
compiled._add_spent(0.25)  # as the compile listener adds this thread's compiling
time.sleep(0.5)
step = timings.add("build", began)
print(timings.compile == 0.25, 0.2 < timings.build == step < 0.5)
""")
    assert out == ["True", "True"]


def _numba_files(folder: Path) -> set:
    return {(str(p), p.stat().st_mtime_ns) for p in folder.rglob("*.nb[ic]")}


@pytest.mark.parametrize("variable, kept_in", [("TCDIST_CACHE_DIR", "numba"), ("XDG_CACHE_HOME", "tcdist/numba")])
def test_compiled_functions_are_kept_in_the_user_s_cache_folder_never_in_the_package(tmp_path, variable, kept_in):
    """Numba's default puts a cache beside its module: in an installed package, `pip uninstall`
    left those folders behind, and they hid a later editable install. Numba imported first, as a
    program using it may have done: tcdist's functions still go to tcdist's folder."""
    package = Path(tcdist.__file__).parent
    before = _numba_files(package)
    env = {key: value for key, value in os.environ.items()
           if key not in ("TCDIST_CACHE_DIR", "XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    env.update({variable: str(tmp_path), "PYTHONPATH": os.pathsep.join(filter(None, [str(package.parent),
                                                                                     env.get("PYTHONPATH")]))})
    program = ("import numba, numpy as np\nfrom tcdist.graph.work import even_rows\n"
               "print(*even_rows(np.array([0, 2, 4, 6]), 3), sum(even_rows.stats.cache_hits.values()))")
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=240)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[-1].stderr[-3000:]
    assert [run.stdout.split() for run in runs] == [["0", "1", "2", "3", "0"], ["0", "1", "2", "3", "1"]]  # then loaded
    assert {Path(p).name.split("-")[0] for p, _ in _numba_files(tmp_path / kept_in)} == {"work.even_rows"}
    assert _numba_files(package) == before


@pytest.mark.parametrize("terminal", [True, False])
def test_a_process_that_compiles_says_so_once_on_a_terminal_only(terminal):
    """The first CPU run compiled for half a minute with no word of why; on a terminal (progress
    enabled: not --json, not a log) it now says so once, here at once (no second to wait)."""
    out = _run(f"""
from tcdist import progress
progress._enabled = {terminal}
compiled.NOTICE_AFTER = 0.0

@jit(cache=False)
def one():
    return 1

@jit(cache=False)
def two():
    return one() + 1

print(two(), one())
""", stderr=True)
    said = [line for line in out.splitlines() if "compiling" in line]
    assert out.split()[0:2] == ["2", "1"] and len(said) == terminal, out
    assert not terminal or "compiling tcdist's CPU functions, once: later runs load them from" in said[0]


@pytest.mark.parametrize("given", ["abc", "0"])
def test_a_number_of_threads_that_is_none_is_one_line(given):
    done = subprocess.run([sys.executable, "-m", "tcdist", "count", "rmat:10", "--backend", "cpu"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "NUMBA_NUM_THREADS": given})
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"tcdist: error: NUMBA_NUM_THREADS={given}: not a number of threads; give a positive integer, or unset it"]
