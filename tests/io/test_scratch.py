"""A graph's columns on disk (io/scratch.py): built there by the redrawn build byte for byte as in
memory, counted a slice at a time, the scratch file checked for room first, held open with no
name in its folder (nothing is left there, however the process ends), and a full disk one line."""

import dataclasses
import errno
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import same_graph, scratch_held

import tcdist
from tcdist import io, plan, source
from tcdist.errors import OptionError, TcdistError
from tcdist.graph import build_graph, redrawn_build
from tcdist.io import generators, scratch


def _scratch_files(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith("tcdist-scratch-")]


def test_columns_written_to_disk_are_the_columns_built_in_memory(tmp_path):
    spec = "rmat:14"
    reference = build_graph(io.generate(spec, seed=3))
    span = generators.pieces(spec)[0]
    with scratch.using(str(tmp_path)):
        graph = redrawn_build.build_redrawn(span, lambda: generators.pieces(spec, seed=3, size=5000)[2], spec, np,
                                            20_000, columns=scratch.DiskColumns)
        assert scratch.on_disk(graph.col) and scratch_held(tmp_path, "self") and not _scratch_files(tmp_path)
        same_graph(dataclasses.replace(graph, col=graph.col[:]), reference)
    assert not scratch_held(tmp_path, "self")  # (closed as the block ends)


def test_a_graph_built_onto_disk_is_counted_a_slice_at_a_time_exactly_and_its_file_removed(tmp_path, monkeypatch):
    """RMAT-16 built with its columns on disk (as where neither the host nor a GPU holds them),
    counted in slices read from the file (with per-vertex counts: its degrees read from it too)."""
    reference = tcdist.count_triangles("rmat:16", backend="cpu", per_vertex=True)
    _columns_on_disk(monkeypatch)
    monkeypatch.setattr(plan, "ranges", lambda *args, **kw: "redraw")
    monkeypatch.setattr(source.model, "GENERATED_BYTES_PER_EDGE", 1 << 40)  # the host's way: not whole
    counted = tcdist.count_triangles("rmat:16", backend="cpu", scratch=tmp_path, per_vertex=True)
    assert (counted.n, counted.m, counted.triangles) == (reference.n, reference.m, reference.triangles)
    assert np.array_equal(counted.per_vertex.triangles, reference.per_vertex.triangles)
    assert counted.average_clustering == reference.average_clustering
    assert not _scratch_files(tmp_path)


def test_a_scratch_folder_without_room_is_refused_before_any_write(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1 << 30, 1 << 30, 1000))
    with scratch.using(str(tmp_path)), pytest.raises(TcdistError, match=r"need about 3\.9 KiB of scratch space but "
                                                                        rf"{tmp_path} has 1000 bytes free"):
        scratch.DiskColumns(1000, np.int32)
    assert not _scratch_files(tmp_path)


def test_a_disk_full_while_the_columns_are_written_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    with scratch.using(str(tmp_path)):
        columns = scratch.DiskColumns(1000, np.int32)

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwritev", full)
    with pytest.raises(TcdistError, match="No space left on device; give scratch a folder with more room"):
        columns.write(0, np.arange(1000))
    assert not _scratch_files(tmp_path)


def test_a_scratch_folder_that_is_not_there_is_refused_before_any_pass(tmp_path, monkeypatch):
    """Where the host holds no more than the graph's pointers, its columns would go to disk."""
    monkeypatch.setattr(source.memory, "available", lambda: (2_000_000, "a test's limit"))
    with scratch.using(str(tmp_path / "missing")), pytest.raises(OptionError, match=r"scratch .*missing: not a "
                                                                                    "folder this process may write in"):
        plan.layout(1 << 16, 1 << 20, "rmat:16", "host", 1 << 30)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signal_while_the_columns_lie_on_disk_leaves_nothing(tmp_path, signum):
    """RMAT-16 as text under 8 MiB: its columns go to the scratch folder, then thousands of slices
    are read from them; a signal meanwhile ends the run with its status, and the folder is as it
    was, even after SIGKILL (the file has no name there: the system frees it with the process)."""
    path = tmp_path / "g.txt"
    edges = io.generate("rmat:16")
    np.savetxt(path, np.stack([edges.src, edges.dst], axis=1), fmt="%d")
    folder = tmp_path / "scratch"
    folder.mkdir()
    job = subprocess.Popen([sys.executable, "-m", "tcdist", "count", str(path), "--backend", "cpu", "--host-memory-limit",
                            "8MiB", "--scratch", str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not scratch_held(folder, job.pid) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert scratch_held(folder, job.pid), job.communicate()
        job.send_signal(signum)
        _, err = job.communicate(timeout=60)
    finally:
        job.kill()
    assert os.listdir(folder) == [], err
    if signum == signal.SIGKILL:
        assert job.returncode == -signum
    else:
        assert job.returncode == 128 + signum and "tcdist: stopped by" in err, err


@pytest.mark.gpu
def test_on_a_gpu_a_graph_with_its_columns_on_disk_is_counted_exactly(tmp_path, monkeypatch):
    """Drawn again on the GPU, its columns on disk (as where neither the host nor the GPU holds
    them), counted in slices read into the host, then copied to the GPU."""
    reference = tcdist.count_triangles("rmat:16", backend="cpu")
    _columns_on_disk(monkeypatch)
    monkeypatch.setattr(plan, "ranges", lambda *args, **kw: "redraw")
    monkeypatch.setattr(source.model, "gpu_generated_bytes", lambda *args: 1 << 50)  # not whole on the GPU
    counted = tcdist.count_triangles("rmat:16", backend="gpu", scratch=tmp_path)
    assert (counted.n, counted.m, counted.triangles) == (reference.n, reference.m, reference.triangles)
    assert not _scratch_files(tmp_path)


def test_a_file_whose_columns_go_to_disk_checks_the_scratch_folder_before_reading_it(tmp_path, monkeypatch):
    """RMAT-16 as text on a host with 3 MB to give (its columns alone take 4 MB)."""
    from tcdist.io.shares import read_share

    path = tmp_path / "g.txt"
    edges = io.generate("rmat:16")
    np.savetxt(path, np.stack([edges.src, edges.dst], axis=1), fmt="%d")
    read = []
    monkeypatch.setattr(source, "read_share", lambda *args, **kw: read.append(args) or read_share(*args, **kw))
    monkeypatch.setattr(source.memory, "available", lambda: (3_000_000, "a test's limit"))
    with scratch.using(str(tmp_path / "missing")), pytest.raises(OptionError, match="missing: not a folder"):
        source.load_graph(str(path))
    assert not read


def test_a_scratch_folder_given_is_checked_at_once_needed_or_not(tmp_path):
    with pytest.raises(OptionError, match="missing: not a folder this process may write in"):
        tcdist.count_triangles("rmat:8", backend="cpu", scratch=tmp_path / "missing")


def _columns_on_disk(monkeypatch):
    """From now on a graph drawn or read again lays its columns out on disk, and none is built from
    pieces (as where neither the host nor a GPU holds them)."""
    placed = plan._placement

    def on_disk(span, m, device, room, host_room, columns_on_disk=False):
        return placed(span, m, device, room, host_room, True)

    monkeypatch.setattr(plan, "_placement", on_disk)
    monkeypatch.setattr(plan, "_pieces", lambda *args: None)


def _columns_to_disk(monkeypatch):
    """From now on a generated graph is drawn again with its columns on disk (as where neither the
    host nor a GPU holds them)."""
    _columns_on_disk(monkeypatch)
    monkeypatch.setattr(source.model, "GENERATED_BYTES_PER_EDGE", 1 << 40)


def test_a_graph_with_its_columns_on_disk_converts_to_the_graph_file_made_in_memory(tmp_path, monkeypatch):
    """(The advice of a reading refused for memory.) Its digest, chained over runs read from disk,
    is the one the file's reader checks; everything else a graph in memory gives refuses in one line."""
    from tcdist.io.h5graph import read_graph

    tcdist.convert("rmat:14", str(tmp_path / "memory.h5"))
    _columns_to_disk(monkeypatch)
    made = []
    monkeypatch.setattr(source, "DiskColumns", lambda *args: made.append(scratch.DiskColumns(*args)) or made[-1])
    with scratch.using(str(tmp_path)):
        tcdist.convert("rmat:14", str(tmp_path / "disk.h5"))
        assert [os.path.dirname(columns.path) for columns in made] == [str(tmp_path)] and not _scratch_files(tmp_path)
        same_graph(read_graph(str(tmp_path / "disk.h5")), read_graph(str(tmp_path / "memory.h5")))
        for refused, what in [(lambda: tcdist.convert("rmat:14", str(tmp_path / "g.txt")), "a text edge list"),
                              (lambda: list(tcdist.list_triangles("rmat:14")), "listing the triangles"),
                              (lambda: tcdist.count_triangles("rmat:14", backend="cpu", parts=2), "only one process")]:
            with pytest.raises(TcdistError, match=what):
                refused()
            assert not _scratch_files(tmp_path)


def test_a_folder_too_small_names_the_option_as_the_caller_does(tmp_path):
    from tcdist.errors import options_named

    with scratch.using(str(tmp_path)), options_named({"scratch": "--scratch"}):
        with pytest.raises(TcdistError) as refused:
            scratch.check_room(1 << 62)
        said = str(refused.value)  # (in the caller's words: said where they are named)
    assert said.endswith(" free; give --scratch a folder with more room") and f"{tmp_path} has " in said, said
