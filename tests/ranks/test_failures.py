"""Ending badly, cleanly: signals, a full disk, too little memory, a closed stdout, noisy libraries."""

import errno
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import brute_force_triangles, run_module


def one_line(text):
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def tcdist_process(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "tcdist", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_a_store_write_leaves_no_file(tmp_path, signum):
    """SIGTERM and SIGHUP left full-size hidden temporaries; Ctrl-C was swallowed (exit 0)."""
    out = tmp_path / "p.h5"
    job = tcdist_process("partition", "complete:2000", "-P", "8", "-o", out)
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".p.h5.tmp") for p in tmp_path.iterdir()):
        assert job.poll() is None and time.monotonic() < deadline, "the store write never began"
        time.sleep(0.001)
    job.send_signal(signum)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signum, err
    assert f"stopped by {signal.Signals(signum).name}" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_signal_that_surfaces_as_another_error_still_ends_as_stopped(cli, monkeypatch):
    """Raised inside threading's lock code (a store write's checksum pool), Stopped came out as a
    RuntimeError and a traceback (seen in CI for SIGINT during a store write)."""
    import tcdist.api
    from tcdist import signals

    def interrupted(*args, **kwargs):
        monkeypatch.setattr(signals, "_received", signal.SIGTERM)
        raise RuntimeError("release unlocked lock")

    monkeypatch.setattr(tcdist.api, "count_triangles", interrupted)
    result = cli("count", "rmat:5")
    assert result.code == 128 + signal.SIGTERM and one_line(result.err) == (
        "tcdist: stopped by SIGTERM (temporary files removed)")


def test_ctrl_c_stops_a_long_cpu_kernel_at_once():
    job = tcdist_process("count", "complete:4000", "--backend", "cpu", "--threads", "1", "--kernel", "merge")
    time.sleep(5)  # the graph is built in about 2 s; counting it takes over 15 s on one thread
    assert job.poll() is None
    sent = time.monotonic()
    job.send_signal(signal.SIGINT)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 130 and time.monotonic() - sent < 2, err


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a 256 KiB tmpfs: a store of rmat:14 does not fit it."""
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small], capture_output=True).returncode:
        if os.environ.get("CI"):
            pytest.fail("cannot mount a small tmpfs to fill (CI runs as root)")
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield small
    finally:
        subprocess.run(["umount", small], check=True)


def test_a_full_disk_is_one_line_and_leaves_nothing(full_disk):
    for output in ("g.h5", "g.txt"):
        result = run_module("convert", "rmat:14", full_disk / output)
        assert result.returncode == 2 and "No space left on device" in one_line(result.stderr)
        assert list(full_disk.iterdir()) == []


def test_a_store_written_on_a_full_disk_leaves_the_previous_one_as_it_was(full_disk):
    """libhdf5 crashed closing a store whose cached writes had failed (exit 139, a full-size
    temporary left); a count's store that failed to open was put in place as a 0-byte file."""
    store = full_disk / "s.h5"
    assert run_module("partition", "complete:20", "-P", 2, "-o", store).returncode == 0
    before = store.read_bytes()
    result = run_module("partition", "rmat:14", "-P", 4, "-o", store, "--force")
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: {store}: cannot write (No space left on device)")
    assert store.read_bytes() == before and list(full_disk.iterdir()) == [store]
    filler = full_disk / "filler"  # the disk full before the new store's first byte
    filler.write_bytes(b"\0" * (256 * 1024 - len(before) - 4096))
    result = run_module("count", "rmat:14", "-P", 4, "--store", full_disk / "t.h5", "--backend", "cpu")
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: {full_disk / 't.h5'}: cannot write (No space left on device)")
    assert sorted(full_disk.iterdir()) == [filler, store]


@pytest.mark.mpi
def test_a_store_gathered_from_ranks_on_a_full_disk_is_one_line_on_every_rank(full_disk):
    """Rank 0's write failed in its gathering thread and came out as a traceback (exit 1)."""
    from mpi_launch import mpiexec

    result = mpiexec(2, "count", "rmat:14", "-P", 4, "--store", full_disk / "t.h5", "--backend", "cpu")
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: {full_disk / 't.h5'}: cannot write (No space left on device)")
    assert list(full_disk.iterdir()) == []


def test_too_little_memory_is_refused_with_an_estimate():
    """rmat:26 under a 4 GiB limit (the kind Slurm sets) was a silent OOM kill; drawn again for every
    range of keys with its columns on disk, its vertices' arrays and a range take more than 4 GiB."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    result = run_module("count", "rmat:26", "--backend", "cpu", preexec_fn=limit)
    assert result.returncode == 2
    assert re.search(r"building the graph of rmat:26 \(1,073,741,824 raw edges\) with its columns on disk needs about "
                     r"5\.\d GiB of memory but the address-space limit", one_line(result.stderr))
    result = run_module("count", "er:100000000000:3000000000", "--backend", "cpu")  # (ids too many to draw again)
    assert result.returncode == 2 and "needs about 134.1 GiB of memory" in one_line(result.stderr)


def test_a_text_file_too_large_for_memory_is_refused_while_reading(tmp_path, cli, monkeypatch):
    """Reading held every chunk's pairs and then a concatenated copy, unchecked: a file larger
    than memory ended in an OOM kill. Now what it needs is estimated from the first chunk (a gzip
    stream, which cannot be read again in pieces); a plain file is read again for every range of
    keys, refused where even its first reading's counts (8 bytes an id) do not fit."""
    import gzip

    from tcdist.budget import host as memory

    path = tmp_path / "g.txt"
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(20000)))
    (tmp_path / "g.txt.gz").write_bytes(gzip.compress(path.read_bytes()))
    monkeypatch.setattr(memory, "available", lambda: (100_000, "the cgroup's memory limit"))
    result = cli("count", tmp_path / "g.txt.gz", "--backend", "cpu")
    assert result.code == 2 and one_line(result.err).startswith(f"tcdist: error: reading {tmp_path / 'g.txt.gz'} (")
    assert one_line(result.err).endswith(
        "of memory but the cgroup's memory limit leaves 97.7 KiB; convert it once on a machine with more memory "
        "(tcdist convert GRAPH OUT.h5), or give the job more memory")
    result = cli("count", path, "--backend", "cpu")
    assert result.code == 2 and re.fullmatch(
        rf"tcdist: error: counting the raw edges of {re.escape(str(path))} by their lower end needs about [0-9.]+ KiB of "
        r"memory but the cgroup's memory limit leaves 97\.7 KiB; count it on a host with more memory", one_line(result.err))


def test_a_closed_stdout_is_not_a_traceback():
    first = subprocess.Popen([sys.executable, "-m", "tcdist", "info", "rmat:10"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    first.stdout.close()  # like `| head -0`
    _, err = first.communicate(timeout=120)
    assert first.returncode == 141 and b"Traceback" not in err


def test_metis_diagnostics_do_not_reach_the_json_record(monkeypatch, capfd):
    import pymetis

    from tcdist.cli import main

    real = pymetis.part_graph

    def chatty(*args, **kwargs):
        os.write(1, b"*** METIS says something on stdout\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(pymetis, "part_graph", chatty)
    assert main(["count", "rmat:10", "-P", "2", "--scheme", "metis", "--json", "--backend", "cpu"]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out)["parts"] == 2 and "METIS says something" in err


def test_an_empty_er_spec_is_one_line():
    result = run_module("count", "er:0:5")
    assert result.returncode == 2 and one_line(result.stderr) == "tcdist: error: er: N must be at least 1, got 0"


def test_a_signal_inside_a_callback_is_not_a_traceback():
    """A signal that lands in a weakref callback was printed as 'Exception ignored ... Traceback'."""
    code = ("import sys, weakref\n"
            "from tcdist import signals\n"
            "signals.install()\n"
            "class Thing: pass\n"
            "def callback(_):\n"
            "    signals._handler(2, None)\n"
            "thing = Thing()\n"
            "keep = weakref.ref(thing, callback)\n"
            "del thing\n"
            "try:\n"
            "    signals.check()\n"
            "except signals.Stopped as e:\n"
            "    sys.exit(128 + e.signum)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 130 and result.stderr == ""


def test_a_device_resolved_here_is_closed_when_another_rank_s_resolve_failed(monkeypatch):
    """Rank 0 resolves its device (on a GPU: its allocator installed) while rank 1 fails to; every
    rank raises, and rank 0 closed its device (before, it was never closed: a count called from
    Python left its allocator on the process). A two-rank world is stood in for by a communicator
    whose allgather reports rank 1's failure."""
    from tcdist.config import CountConfig
    from tcdist.device.cpu import CpuDevice
    from tcdist.ranks import run
    from tcdist.ranks.guard import RemoteError

    class OtherRankFailed:
        rank, size = 0, 2

        def allgather(self, own):
            return [own, (True, "--kernel nope is unknown", "node2", 1)]

    closed = []
    monkeypatch.setattr(run, "node_local", lambda comm: (0, 1))
    monkeypatch.setattr(CpuDevice, "close", lambda self: closed.append(self.kind))
    with pytest.raises(RemoteError, match="rank 1 \\(node2\\): --kernel nope is unknown"):
        run._count(OtherRankFailed(), "complete:5", CountConfig(backend="cpu"), 0.0, 0, 0, False)
    assert closed == ["cpu"]


@pytest.mark.mpi
def test_a_store_one_rank_cannot_read_is_one_line_on_every_rank(tmp_path):
    """Rank 1 sees the store's folder empty (a tmpfs mounted over it in a mount namespace of its own:
    a file system rank 0's host alone has); it failed with a traceback, and rank 0 said 'failed:
    FileNotFoundError' (exit 1)."""
    from mpi_launch import launcher

    store = tmp_path / "s.h5"
    assert run_module("partition", "rmat:8", "-P", 4, "-o", store).returncode == 0
    count = [sys.executable, "-m", "tcdist", "count", store, "--backend", "cpu"]
    hidden = ["unshare", "-m", "sh", "-c", f'mount -t tmpfs tmpfs "{tmp_path}" && exec "$@"', "sh", *count]
    result = subprocess.run([*launcher(), "-n", "1", *count, ":", "-n", "1", *hidden], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: rank 1 ({socket.gethostname()}): {store}: this rank cannot read it (No such file or "
        "directory); every rank reads the store: put it on a file system that every host of the job shares")


@pytest.fixture
def read_only(tmp_path):
    """A folder, and a read-only bind mount of it: what is put in the folder is seen read-only
    through the mount, by root too (chmod does not stop root)."""
    folder, mounted = tmp_path / "folder", tmp_path / "read-only"
    folder.mkdir()
    mounted.mkdir()
    if subprocess.run(["mount", "--bind", "-o", "ro", folder, mounted], capture_output=True).returncode:
        if os.environ.get("CI"):
            pytest.fail("cannot bind-mount a folder read-only (CI runs as root)")
        pytest.skip("a read-only bind mount needs root")
    try:
        yield folder, mounted
    finally:
        subprocess.run(["umount", mounted], check=True)


def edge_list(path):
    """A text edge list of rmat:8 at path, and its triangles counted independently of tcdist."""
    assert run_module("generate", "rmat:8", "-o", path).returncode == 0
    return brute_force_triangles(tuple(line.split()) for line in path.read_text().splitlines())


def unjournalled(store, why):
    return (f"{store}.journal: cannot write the journal of finished parts ({why}); no journal is kept, so this run "
            "cannot be resumed if it fails")


def counted_without_journal(result, store, why):
    """The record of a count that succeeded and said once, on stderr, that it kept no journal."""
    record = json.loads(result.stdout)
    assert result.returncode == 0 and record["warnings"] == [unjournalled(store, why)], result.stderr
    assert result.stderr.splitlines() == [f"tcdist: warning: {unjournalled(store, why)}"]
    return record


@pytest.mark.mpi
def test_a_store_on_a_read_only_file_system_is_counted_under_ranks_as_in_one_process(tmp_path, read_only):
    """No lock, no journal, the same count and the same one warning, nothing written, with one
    process and with ranks; counted as its own --store too, which was refused as 'the input'."""
    from mpi_launch import mpiexec

    folder, mounted = read_only
    triangles = edge_list(tmp_path / "g.txt")
    assert run_module("partition", tmp_path / "g.txt", "-P", 4, "-o", folder / "s.h5").returncode == 0
    store = mounted / "s.h5"
    for ranks in (1, 2, 3):
        for asked in ((), ("--store", store)):
            args = ("count", store, *asked, "--backend", "cpu", "--json")
            result = run_module(*args) if ranks == 1 else mpiexec(ranks, *args)
            record = counted_without_journal(result, store, "Read-only file system")
            assert (record["ranks"], record["triangles"]) == (ranks, triangles)
    assert list(folder.iterdir()) == [folder / "s.h5"]


def test_a_matching_store_in_a_read_only_folder_is_counted_and_a_new_one_refused(tmp_path, read_only):
    """`count GRAPH --store STORE` with STORE in a read-only folder was refused ('directory not
    writable') though STORE held the partitioning asked for; a STORE not there yet is still refused
    before any work."""
    folder, mounted = read_only
    graph = tmp_path / "g.txt"
    triangles = edge_list(graph)
    assert run_module("partition", graph, "-P", 4, "-o", folder / "p.h5").returncode == 0
    store = mounted / "p.h5"
    result = run_module("count", graph, "-P", 4, "--store", store, "--backend", "cpu", "--json")
    assert counted_without_journal(result, store, "Read-only file system")["triangles"] == triangles
    result = run_module("count", graph, "-P", 4, "--store", mounted / "new.h5", "--backend", "cpu", "--json")
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: {mounted / 'new.h5'}: directory {mounted} is not writable") and result.stdout == ""
    assert list(folder.iterdir()) == [folder / "p.h5"]


def test_a_store_on_a_full_disk_is_counted_without_a_journal(tmp_path, full_disk):
    """Counting a store on a full disk failed at its first finished part ('cannot record part N in
    the journal': No space left on device), leaving a temporary in the journal folder."""
    triangles = edge_list(tmp_path / "g.txt")
    store = full_disk / "s.h5"
    assert run_module("partition", tmp_path / "g.txt", "-P", 4, "-o", store).returncode == 0
    filler = full_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    for asked in ((), ("--store", store)):
        result = run_module("count", store, *asked, "--backend", "cpu", "--json")
        assert counted_without_journal(result, store, "No space left on device")["triangles"] == triangles
        assert sorted(full_disk.iterdir()) == [filler, store]


def test_a_store_counted_as_its_own_store_keeps_its_journal(tmp_path):
    """`count STORE --store STORE` was refused: 'is the input STORE; write to another name'. It is
    the store asked for, and a run with --store keeps its journal."""
    store = tmp_path / "s.h5"
    triangles = edge_list(tmp_path / "g.txt")
    assert run_module("partition", tmp_path / "g.txt", "-P", 4, "-o", store).returncode == 0
    result = run_module("count", store, "--store", store, "--backend", "cpu", "--json")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert json.loads(result.stdout)["triangles"] == triangles
    assert len(list((tmp_path / "s.h5.journal").glob("part*.json"))) == 4
    result = run_module("count", tmp_path / "g.txt", "--store", tmp_path / "g.txt", "--backend", "cpu")
    assert result.returncode == 2 and one_line(result.stderr) == (
        f"tcdist: error: {tmp_path / 'g.txt'}: is the input {tmp_path / 'g.txt'}; write to another name")


@pytest.mark.mpi
def test_rank_0_failing_after_the_count_ends_the_job(tmp_path):
    """Rank 0 writes the outputs after every rank has counted: when that failed (a full disk), the
    other ranks waited at the end for it forever."""
    from mpi_launch import launcher

    script = tmp_path / "fail.py"
    script.write_text("import sys\nfrom mpi4py import MPI\nfrom tcdist import cli\nfrom tcdist.errors import TcdistError\n"
                      "import tcdist.io.per_vertex as per_vertex\n"
                      "def full(*args):\n    raise TcdistError('disk full (as a test)')\n"
                      "if MPI.COMM_WORLD.rank == 0:\n    per_vertex.write_per_vertex = full\n"
                      "sys.exit(cli.main(sys.argv[1:]))\n")
    done = subprocess.run([*launcher(), "-n", "2", sys.executable, str(script), "count", "rmat:8", "--backend", "cpu",
                           "--per-vertex", str(tmp_path / "v.csv"), "-q"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (2, "tcdist: error: disk full (as a test)\n")
