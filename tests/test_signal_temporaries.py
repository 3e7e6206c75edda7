"""A signal removes the run's temporary files at once, even while the main thread is inside
compiled code that lets go of the GIL (a launcher may send SIGKILL soon after SIGTERM)."""

import os
import signal
import subprocess
import sys
import time

import pytest

_STUCK = """
import sys, threading, time
import numba, numpy as np
from tcdist import signals

@numba.njit(nogil=True)
def spin(n, inside):
    inside[0] = 1
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x

def announce(inside):  # once the main thread is inside compiled code, not a moment before
    while not inside[0]:
        time.sleep(0.001)
    print("ready", flush=True)

spin(10, np.zeros(1, np.int64))  # compiled before the file exists
signals.install()
path, inside = sys.argv[1], np.zeros(1, np.int64)
threading.Thread(target=announce, args=(inside,), daemon=True).start()
with signals.temporary(path):
    open(path, "w").close()
    spin(1 << 40, inside)  # minutes inside compiled code: the main thread runs no Python meanwhile
"""


def test_a_signal_removes_the_temporaries_while_the_main_thread_is_in_compiled_code(tmp_path):
    path = tmp_path / ".out.tmp-1"
    job = subprocess.Popen([sys.executable, "-c", _STUCK, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline() == "ready\n" and path.exists()
        job.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 1.0  # well before any launcher's SIGKILL
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not path.exists(), "the temporary outlived the signal by a second"
        assert job.poll() is None  # the main thread still spins: nothing but the watcher has run
    finally:
        job.kill()
        job.communicate()
    assert not os.path.exists(path)


_STUCK_PROCESS = _STUCK.replace("with signals.temporary(path):", "with signals.on_signal(signals.end_when_stuck), signals.temporary(path):")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_one_process_stuck_in_compiled_code_ends_soon_after_a_signal(tmp_path, signum):
    """The command line's one process: a main thread that cannot unwind (a compiled kernel runs for
    minutes) is ended from the watching thread, with the signal's status and one line."""
    path = tmp_path / ".out.tmp-1"
    job = subprocess.Popen([sys.executable, "-c", _STUCK_PROCESS, str(path)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline() == "ready\n"
        signalled = time.monotonic()
        job.send_signal(signum)
        _, err = job.communicate(timeout=30)
        assert time.monotonic() - signalled < 2.0
    finally:
        job.kill()
    assert job.returncode == 128 + signum and not path.exists()
    assert err.count("tcdist: stopped by") == 1, err


_NESTED = _STUCK.replace("with signals.temporary(path):", """first = path + "-first"
with signals.on_signal(signals.end_when_stuck), signals.temporary(first):
    open(first, "w").close()
    with signals.temporary(first):  # put in place later (outputs_together holds it again): still one of the run's
        pass
    with signals.temporary(path):""").replace("    open(path, \"w\").close()\n    spin", "        open(path, \"w\").close()\n        spin")


def test_a_temporary_held_twice_stays_one_until_both_let_go(tmp_path):
    """A count's finished output waits, still a temporary, while the next is written: a signal then
    removes both (the inner block's end had made the first no temporary at all)."""
    path = tmp_path / ".out.tmp-1"
    job = subprocess.Popen([sys.executable, "-c", _NESTED, str(path)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline() == "ready\n"
        job.send_signal(signal.SIGINT)
        _, err = job.communicate(timeout=30)
    finally:
        job.kill()
    assert job.returncode == 130 and list(tmp_path.iterdir()) == [], err


_COMPILED_STEPS = """
import sys
import numpy as np
from tcdist import signals
from tcdist.graph import build

rng = np.random.default_rng(1)
src, dst = rng.integers(0, 1 << 16, (2, 1 << 21))  # some self loops: drop_loops returns new arrays
build.drop_loops(src, dst)  # loaded (or compiled) before the signal
signals.install()
with signals.on_signal(signals.end_when_stuck):
    print("ready", flush=True)
    while True:
        build.drop_loops(src, dst)
"""


def test_a_signal_while_compiled_code_returns_arrays_ends_the_process_cleanly():
    """Numba boxes a compiled function's array result by calling Python (to unpickle its type); a
    Stopped raised there by the signal handler ended the process with SIGSEGV (exit -11, seen in
    `tcdist count`'s drop_loops) or a SystemError traceback. Signals at delays across the loop."""
    for delay in [i * 0.037 for i in range(8)]:
        job = subprocess.Popen([sys.executable, "-c", _COMPILED_STEPS], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        try:
            assert job.stdout.readline() == "ready\n"
            time.sleep(delay)
            job.send_signal(signal.SIGINT)
            _, err = job.communicate(timeout=30)
        finally:
            job.kill()
        assert (job.returncode, err) == (130, "tcdist: stopped by SIGINT (temporary files removed)\n"), delay
