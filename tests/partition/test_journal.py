"""The journal of finished parts, and the lock that keeps one run at a time journalling in a store."""

import os

import pytest
from conftest import run_module

from tcdist.errors import TcdistError
from tcdist.partition import journal
from tcdist.results import PartResult


def in_use(store):
    return (f"tcdist: error: {store}: another tcdist run is using this store (it holds {os.path.realpath(store)}.lock); "
            "wait until it ends, or use another store\n")


def test_a_second_run_on_a_store_in_use_is_refused_and_leaves_its_journal(tmp_path, cli, monkeypatch):
    """A run without --resume emptied the journal another run was writing in: FileNotFoundError
    (partNNN.json.tmpPID), a traceback and exit 1 for the first run; `partition --force` wrote
    the store over while it was being counted."""
    store = tmp_path / "s.h5"
    assert cli("count", "complete:6", "-P", "2", "--store", store).code == 0
    real_record, others = journal.Journal.record, []

    def record(self, result):  # while this run counts, others start on the same store
        if not others:
            others.extend(run_module("count", *args, "-q") for args in (
                ("complete:6", "-P", "2", "--store", store), (store,), (store, "--resume")))
            others.append(run_module("partition", "complete:6", "-o", store, "-P", "3", "--force", "-q"))
        real_record(self, result)

    monkeypatch.setattr(journal.Journal, "record", record)
    result = cli("count", "complete:6", "-P", "2", "--store", store, "--json")
    assert result.code == 0 and result.json()["triangles"] == 20, result.err
    for other in others:
        assert other.returncode == 2 and other.stderr == in_use(store) and other.stdout == ""
    assert sorted(p.name for p in (tmp_path / "s.h5.journal").iterdir()) == ["part00000000.json", "part00000001.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5", "s.h5.journal"]  # the lock went with the run


def test_the_lock_goes_with_a_failed_run(tmp_path, cli):
    store = tmp_path / "s.h5"
    assert cli("count", "rmat:9", "-P", "2", "--store", store).code == 0
    failed = cli("count", "rmat:10", "-P", "2", "--store", store)
    assert failed.code == 2 and "made from another graph" in failed.err
    assert not (tmp_path / "s.h5.lock").exists()
    again = cli("count", store, "--resume", "--json")
    assert again.code == 0 and again.json()["resumed_parts"] == 2


def test_a_lock_left_by_a_killed_run_does_not_hold(tmp_path, cli):
    """flock ends with its process; the file it leaves is taken and removed by the next run."""
    store = tmp_path / "s.h5"
    (tmp_path / "s.h5.lock").write_text("")
    assert cli("count", "complete:6", "-P", "2", "--store", store).code == 0
    assert not (tmp_path / "s.h5.lock").exists()


def test_a_journal_that_cannot_be_written_is_one_line(tmp_path):
    """An entry written into a vanished journal folder was a FileNotFoundError traceback."""
    book = journal.Journal(tmp_path / "s.h5", "id", 2)
    with pytest.raises(TcdistError, match=r"s\.h5\.journal: cannot record part 1 in the journal of finished parts "
                                          r"\(No such file or directory\)$"):
        book.record(PartResult(1, 0, 5, count=0.1, stats={}))


def test_counting_a_store_leaves_no_journal_when_it_succeeds(tmp_path, cli):
    """`tcdist count STORE` left STORE.journal/ behind after every run."""
    store = tmp_path / "s.h5"
    assert cli("partition", "complete:8", "-o", store, "-P", "3").code == 0
    result = cli("count", store, "--json")
    assert result.code == 0 and result.json()["triangles"] == 56
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]


def test_a_failed_count_of_a_store_keeps_its_journal_for_resume(tmp_path, cli, monkeypatch):
    store = tmp_path / "s.h5"
    assert cli("partition", "complete:8", "-o", store, "-P", "3").code == 0
    real_record = journal.Journal.record

    def record(self, result):  # the first part counted is journalled, then the run fails
        real_record(self, result)
        raise TcdistError("disk gone")

    monkeypatch.setattr(journal.Journal, "record", record)
    failed = cli("count", store)
    assert (failed.code, failed.err) == (2, "tcdist: error: disk gone\n")
    assert len(list((tmp_path / "s.h5.journal").glob("part*.json"))) == 1
    monkeypatch.setattr(journal.Journal, "record", real_record)
    resumed = cli("count", store, "--resume", "--json")
    assert resumed.code == 0 and (resumed.json()["triangles"], resumed.json()["resumed_parts"]) == (56, 1)
    assert len(list((tmp_path / "s.h5.journal").iterdir())) == 3  # asked for: kept
    assert cli("count", store).code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]
