"""tcdist.warm: a first run begins the CPU warm-up in the background (once per cache, never where
one is under way or done), and a small graph's parts need no compiler."""

import fcntl
import os
import subprocess
import sys

import pytest

from tcdist import warm


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TCDIST_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv(warm.BACKGROUND, "1")
    started = []
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *args, **kwargs: started.append(args[0]))
    return tmp_path, started


def test_a_cold_cache_begins_one_background_warm_up(cache):
    folder, started = cache
    assert warm.start_in_background() and len(started) == 1 and "background()" in started[0][-1]


def test_none_begins_where_the_cache_is_warm_or_one_is_under_way_or_it_is_turned_off(cache, monkeypatch):
    folder, started = cache
    with open(folder / "numba" / "warm-up.lock" if (folder / "numba").mkdir() is None else None, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert not warm.start_in_background()
    warm._mark_warm()
    assert warm.is_warm() and not warm.start_in_background()
    (folder / "numba" / "warm-up-done").write_text("tcdist 0.0.1, numba 0.1, python 3.0\n")  # another version's
    monkeypatch.setenv(warm.BACKGROUND, "0")
    assert not warm.is_warm() and not warm.start_in_background()
    assert started == []


def test_loading_numba_begins_it():
    """compiled's first call (Numba loaded) is what begins the background warm-up, through the API."""
    program = ("from tcdist import api, compiled, warm\n"
               "calls = []\nwarm.start_in_background = lambda: calls.append(1)\n"
               "compiled.when_loaded[:] = [lambda: warm.start_in_background()]\n"
               "from tcdist.graph import check\ncheck.prebuild(); check.prebuild()\nprint(len(calls))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1"]


def test_a_small_graph_s_parts_load_no_compiler():
    """Its parts in whole-array NumPy (0.11 s for RMAT-14's four on 2 cores, against 2.2 s of
    loading lanes.py's passes, or a minute of compiling them), the same parts as the compiled
    builder's (tests/partition)."""
    program = ("import numpy as np\nfrom tcdist import compiled, load_graph\nfrom tcdist.partition import "
               "partition_graph\nedges = np.random.default_rng(1).integers(0, 3000, (40_000, 2))\ng = load_graph(edges)\nparts = partition_graph(g, 4).parts\n"
               "print(compiled.is_loaded(), len(parts), sum(p.n_local for p in parts) == g.n)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TCDIST_CACHE_DIR": "/nonexistent"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "4", "True"]


def test_a_function_another_process_compiles_is_waited_for_and_loaded_from_the_cache(tmp_path):
    """While the cache is cold, a run calling a function whose lock another process holds (a warm-up
    worker compiling it) waits, then loads that process's work: its compiling is never done twice."""
    env = {**os.environ, "TCDIST_CACHE_DIR": str(tmp_path), warm.BACKGROUND: "0"}
    env.pop("NUMBA_CACHE_DIR", None)
    (module, name, signature), = [e for e in warm.signatures() if e[:2] == ("tcdist.graph.passes", "loops")]
    (tmp_path / "numba" / "compiling").mkdir(parents=True)
    with open(tmp_path / "numba" / "compiling" / f"{module}.{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        caller = subprocess.Popen(
            [sys.executable, "-c", "import numpy as np\nfrom tcdist import api, compiled\nfrom tcdist.graph import passes\n"
             "compiled.loaded()\nprint(passes.loops(np.arange(5), np.array([0, 1, 0, 3, 0])), "
             "sum(passes.loops.stats.cache_hits.values()), sum(passes.loops.stats.cache_misses.values()))"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        with pytest.raises(subprocess.TimeoutExpired):
            caller.wait(timeout=5)  # it waits for the lock
        compiler = f"from tcdist.warm import _read\nfrom tcdist.graph import passes\npasses.loops.compile(_read({signature!r}))"
        done = subprocess.run([sys.executable, "-c", compiler], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    out, err = caller.communicate(timeout=300)
    assert caller.returncode == 0, err[-2000:]
    assert out.split() == ["3", "1", "0"]  # 3 loops; loaded from the cache once, never compiled


def test_warm_up_workers_take_the_next_entry_as_they_come_free(tmp_path, monkeypatch):
    """A slow first entry holds up none behind it: the other worker takes every next one (a fixed
    share each would have left entries 2 and 4 waiting behind entry 0); past what a count of a text
    file needs (here 2 entries), a worker goes on at the lowest priority."""
    import threading
    import time
    import types

    taken = {}

    def compiling(signature):
        taken[signature] = threading.current_thread().name
        time.sleep(1.0 if signature == 0 else 0.05)

    monkeypatch.setattr(warm, "signatures", lambda: [("m", "f", str(i)) for i in range(5)])
    monkeypatch.setattr(warm, "_read", int)
    monkeypatch.setattr(warm.importlib, "import_module", lambda name: types.SimpleNamespace(
        f=types.SimpleNamespace(compile_alone=compiling)))
    monkeypatch.setattr(warm, "text_count_entries", lambda: 2)
    lowered = []
    monkeypatch.setattr(warm.os, "nice", lambda step: lowered.append((threading.current_thread().name, step)))
    queue = tmp_path / "next"
    queue.write_text("0")
    workers = [threading.Thread(target=warm.compile_claimed, args=(str(queue),), name=name) for name in "ab"]
    workers[0].start()
    time.sleep(0.2)
    workers[1].start()
    for worker in workers:
        worker.join()
    assert taken == {0: "a", 1: "b", 2: "b", 3: "b", 4: "b"} and lowered == [("b", 19)]


def test_the_list_marks_where_a_text_count_s_entries_end():
    entries = warm.signatures()
    assert 0 < warm.text_count_entries() < len(entries)
    assert entries[0][:2] == ("tcdist.io.grammar", "first_line_start")  # the parser's, first
    assert ("tcdist.count.cpu", "_middle") in [e[:2] for e in entries[: warm.text_count_entries()]]


def test_a_cache_folder_that_cannot_be_written_is_one_line_before_any_compiling(tmp_path):
    from conftest import run_module

    (tmp_path / "a file").touch()
    done = run_module("warm-up", "--backend", "cpu",
                      env={**os.environ, "TCDIST_CACHE_DIR": str(tmp_path / "a file" / "cache")}, timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"tcdist: error: the cache folder {tmp_path / 'a file' / 'cache' / 'numba'}: Not a directory; give "
        "TCDIST_CACHE_DIR a folder this user may write in"], done.stderr[-2000:]
