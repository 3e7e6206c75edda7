"""Output files are never damaged: inputs, special files, stores of other graphs and races."""

import os
import stat

import pytest
from conftest import DATASETS

import tcdist
from tcdist.io.write import OutputExists, atomic_path
from tcdist.partition import partition_graph
from tcdist.partition.store import Store, write_store


def one_line(result):
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


def test_partition_refuses_to_overwrite_its_input(tmp_path, cli):
    graph = tmp_path / "g.h5"
    assert cli("convert", "rmat:9", graph).code == 0
    before = graph.read_bytes()
    result = cli("partition", graph, "-o", graph, "-P", "2")
    assert result.code == 2 and f"{graph}: is the input {graph}" in one_line(result)
    assert graph.read_bytes() == before


def test_a_store_of_another_graph_is_replaced_only_with_force(tmp_path, cli):
    out = tmp_path / "p.h5"
    assert cli("partition", "rmat:9", "-o", out, "-P", "2").code == 0
    before = out.read_bytes()
    result = cli("partition", "rmat:10", "-o", out, "-P", "2")
    assert result.code == 2 and "is a partition store of another graph (rmat:9); use --force" in one_line(result)
    assert out.read_bytes() == before
    assert cli("partition", "rmat:9", "-o", out, "-P", "3").code == 0  # the same graph: replaced
    assert cli("partition", "rmat:10", "-o", out, "-P", "2", "--force").code == 0
    with Store(out) as s:
        assert s.header["graph_name"] == "rmat:10"


def test_a_file_that_is_not_a_store_is_not_replaced(tmp_path, cli):
    out = tmp_path / "notes.h5"
    out.write_text("my notes")
    result = cli("partition", "rmat:9", "-o", out, "-P", "2")
    assert result.code == 2 and "exists and is not a partition store; use --force" in one_line(result)
    assert out.read_text() == "my notes"


def test_devices_and_fifos_are_refused(tmp_path, cli):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/null", fifo):
        result = cli("partition", "rmat:9", "-o", target, "-P", "2")
        assert result.code == 2 and "is a device, FIFO or socket, not a regular file" in one_line(result)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symbolic_link_is_followed_and_kept(tmp_path, cli):
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_text("old")
    link.symlink_to(real)
    assert cli("convert", "complete:4", link).code == 0
    assert link.is_symlink() and len(real.read_text().splitlines()) == 6


@pytest.mark.parametrize("args", [("convert", "rmat:8", "out.mtx"), ("generate", "rmat:8", "-o", "x.h5.gz"),
                                  ("generate", "rmat:8", "-o", "x.parquet")])
def test_names_tcdist_cannot_write_are_refused(tmp_path, cli, args):
    result = cli(*[tmp_path / a if "." in a and ":" not in a else a for a in args])
    assert result.code == 2 and "tcdist writes tcdist HDF5 (.h5, .hdf5) or text edge lists" in one_line(result)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_directory_is_reported_before_any_work(tmp_path, cli, monkeypatch):
    import tcdist.api

    def no_work(*args, **kwargs):
        raise AssertionError("the graph was read before the output was checked")

    monkeypatch.setattr(tcdist.api, "load_graph", no_work)
    monkeypatch.setattr("tcdist.ranks.prepare.load_graph", no_work)
    for args in (("partition", "rmat:9", "-P", "2", "-o", tmp_path / "no" / "p.h5"),
                 ("count", "rmat:9", "-P", "2", "--store", tmp_path / "no" / "p.h5"),
                 ("count", "rmat:9", "--json-file", tmp_path / "no" / "r.json"),
                 ("convert", DATASETS / "email-Eu-core.txt.gz", tmp_path / "no" / "g.h5")):
        result = cli(*args)
        assert result.code == 2 and f"directory {tmp_path / 'no'} does not exist" in one_line(result), args


def test_unwritable_output_is_one_line(cli):
    result = cli("convert", "complete:4", "/proc/tcdist-test.txt")
    assert result.code == 2 and one_line(result).startswith("tcdist: error: /proc/tcdist-test.txt: ")


def test_a_new_store_never_replaces_one_written_meanwhile(tmp_path):
    """Two runs with one --store: the check came before partitioning and the write after, so the
    second silently replaced the first's store."""
    path = tmp_path / "p.h5"
    with pytest.raises(OutputExists):
        with atomic_path(path, replace=False) as tmp:
            with open(tmp, "w") as f:
                f.write("mine")
            path.write_text("theirs")
    assert path.read_text() == "theirs" and [p.name for p in tmp_path.iterdir()] == ["p.h5"]


@pytest.mark.parametrize("theirs,outcome", [("rmat:10", "made from another graph"), ("rmat:9", None)])
def test_count_with_a_store_written_meanwhile(tmp_path, cli, monkeypatch, theirs, outcome):
    import tcdist.ranks.prepare as run

    path = tmp_path / "p.h5"
    real_write = run.write_store

    def racing(partitioning, target, **options):
        write_store(partition_graph(tcdist.load_graph(theirs), 2, seed=0), target)  # the other run, first
        real_write(partitioning, target, **options)

    monkeypatch.setattr(run, "write_store", racing)
    result = cli("count", "rmat:9", "-P", "2", "--store", path, "--json")
    if outcome:
        assert result.code == 2 and outcome in one_line(result)
    else:
        assert result.json()["triangles"] == cli("count", "rmat:9", "--json").json()["triangles"]
    with Store(path) as s:
        assert s.header["graph_name"] == theirs


@pytest.mark.parametrize("args,problem", [
    (("count", "rmat:8", "-P", "2", "--seed", "-1"), "argument --seed: must be from 0 to 2^64-1, got -1"),
    (("count", "rmat:8", "-P", "2", "--seed", str(2**64)), "must be from 0 to 2^64-1"),
    (("count", "rmat:8", "-P", str(2**61)), "parts must be at most 2,147,483,647"),
    (("count", "complete:3", "-P", "1000000000"), "--parts 1,000,000,000 is more than the 3 vertices"),
])
def test_impossible_numbers_are_one_line(cli, args, problem):
    result = cli(*args)
    assert result.code == 2 and problem in one_line(result)
