"""Output files are never damaged: inputs, special files, stores of other graphs and races."""

import json
import os
import stat
import subprocess
import sys

import pytest
from conftest import DATASETS, run_module
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _no_work(monkeypatch):
    import tcdist.api

    def no_work(*args, **kwargs):
        raise AssertionError("the graph was read before the outputs were checked")

    monkeypatch.setattr(tcdist.api, "load_graph", no_work)
    monkeypatch.setattr("tcdist.ranks.prepare.load_graph", no_work)


def test_two_outputs_of_one_count_naming_one_file_are_refused_before_any_work(tmp_path, cli, monkeypatch):
    """--store s.h5 --json-file s.h5 replaced the store with the JSON record (exit 0);
    --per-vertex pv.csv --json-file pv.csv lost the CSV."""
    store, pv = tmp_path / "s.h5", tmp_path / "pv.csv"
    assert cli("count", "complete:6", "-P", "2", "--store", store).code == 0
    pv.write_text("mine")
    before = store.read_bytes()
    _no_work(monkeypatch)
    result = cli("count", "complete:6", "-P", "2", "--store", store, "--json-file", store)
    assert result.code == 2
    assert one_line(result) == f"tcdist: error: --store and --json-file both name {store}; give each output its " \
                               "own file"
    result = cli("count", "complete:6", "--per-vertex", pv, "--json-file", pv)
    assert result.code == 2
    assert one_line(result) == f"tcdist: error: --json-file and --per-vertex both name {pv}; give each output its " \
                               "own file"
    assert store.read_bytes() == before and pv.read_text() == "mine"


@pytest.mark.parametrize("shown", [(), ("--json",)])
def test_a_json_file_on_standard_output_is_its_one_document(shown):
    """--json-file - with --json printed the record twice on standard output; the summary goes to
    standard error, as with a table there."""
    done = run_module("count", "complete:4", "--backend", "cpu", "--json-file", "-", *shown)
    assert done.returncode == 0 and json.loads(done.stdout)["triangles"] == 4, done.stderr
    assert (json.loads(done.stderr)["triangles"] if shown else done.stderr.split()[0]) == (4 if shown else "complete:4")


def test_options_a_count_would_ignore_are_refused(tmp_path, cli):
    """A store counted with another --store, and --plan with a table to write, each ran (exit 0)
    without writing what was asked for."""
    store = tmp_path / "p.h5"
    assert cli("partition", "rmat:8", "-P", "3", "-o", store).code == 0
    result = cli("count", store, "--backend", "cpu", "--store", tmp_path / "other.h5")
    assert (result.code, one_line(result)) == (2, f"tcdist: error: {store}: is a partition store, counted as it is, "
                                                  f"and --store {tmp_path / 'other.h5'} would be another; leave "
                                                  "--store out")
    assert cli("count", store, "--backend", "cpu", "--store", store).code == 0  # (its own: its journal)
    result = cli("count", "rmat:8", "--backend", "cpu", "--plan", "--per-vertex", tmp_path / "pv.csv")
    assert (result.code, one_line(result)) == (2, "tcdist: error: --plan counts nothing, and --per-vertex would write "
                                                  "nothing: leave it out, or count without --plan")
    assert not {"other.h5", "pv.csv"} & {p.name for p in tmp_path.iterdir()}


def test_a_store_that_cannot_be_reused_is_said_in_the_store_s_words(tmp_path, cli):
    """A --store naming a file that is no store got an input file's advice (give its edges as
    text); one of another P under --parts auto said P was "asked for"."""
    import re

    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = cli("count", "rmat:10", "--backend", "cpu", "--parts", "4", "--store", notes)
    assert (result.code, one_line(result)) == (2, f"tcdist: error: {notes}: exists and cannot be reused (not a tcdist "
                                                  "HDF5 file (no tcdist seal: written by another program or an older "
                                                  "tcdist)); give --store another name")
    assert notes.read_text() == "hello"
    store, args = tmp_path / "au.h5", ("count", "rmat:14", "--backend", "cpu", "--parts", "auto", "--store")
    assert cli(*args, store, "--gpu-memory-limit", "1MiB").code == 0
    result = cli(*args, store, "--gpu-memory-limit", "2MiB")
    assert result.code == 2 and re.fullmatch(rf"tcdist: error: {re.escape(str(store))}: it holds parts \d+ \(--parts "
                                             r"auto chose \d+\); remove it or choose another store", one_line(result))


def test_outputs_are_compared_as_files_not_as_names(tmp_path, cli, monkeypatch):
    """Through a symbolic link, a hard link, ./.. in the name, a linked directory, and for names not written yet."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").symlink_to(tmp_path / "d1")
    (tmp_path / "link.json").symlink_to(tmp_path / "new.csv")  # new.csv does not exist yet
    (tmp_path / "pv.csv").write_text("mine")
    os.link(tmp_path / "pv.csv", tmp_path / "hard.csv")
    _no_work(monkeypatch)
    for per_vertex, json_file in (("new.csv", "link.json"), ("pv.csv", "hard.csv"), ("pv.csv", "d1/../pv.csv"),
                                  ("d1/x.csv", "d2/x.csv")):
        result = cli("count", "complete:6", "--per-vertex", tmp_path / per_vertex, "--json-file", tmp_path / json_file)
        assert result.code == 2, (per_vertex, json_file)
        assert one_line(result) == f"tcdist: error: --json-file {tmp_path / json_file} and --per-vertex " \
                                   f"{tmp_path / per_vertex} are the same file; give each output its own file"
    assert (tmp_path / "pv.csv").read_text() == "mine" and not (tmp_path / "new.csv").exists()
    result = cli("count", "complete:6", "-P", "2", "--store", tmp_path / "d1" / "s.h5",
                 "--per-vertex", tmp_path / "d2" / "s.h5")
    assert result.code == 2 and f"--store {tmp_path / 'd1' / 's.h5'} and --per-vertex" in one_line(result)


def test_an_input_given_through_a_hard_link_is_not_overwritten(tmp_path, cli):
    graph, other = tmp_path / "g.txt", tmp_path / "h.txt"
    assert cli("generate", "complete:5", "-o", graph).code == 0
    os.link(graph, other)
    before = graph.read_bytes()
    result = cli("convert", graph, other)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {other}: is the input {graph}; write to another name"
    assert graph.read_bytes() == before


def test_json_file_dash_is_standard_output(tmp_path, cli, monkeypatch):
    """--json-file - wrote a file named '-'."""
    monkeypatch.chdir(tmp_path)
    result = cli("count", "complete:5", "--json-file", "-", "-q")
    assert result.code == 0
    assert json.loads(result.out)["triangles"] == 10 and result.err.split() == ["10"]  # -q: the count alone, beside
    assert list(tmp_path.iterdir()) == []


def test_json_file_dev_stderr_appends_to_the_log_stderr_goes_to(tmp_path):
    """With 2>>run.log, --json-file /dev/stderr replaced run.log by the record (the link was followed)."""
    log = tmp_path / "run.log"
    log.write_text("earlier\n")
    inode = log.stat().st_ino
    with open(log, "a") as err:
        done = subprocess.run([sys.executable, "-m", "tcdist", "count", "complete:5", "-q", "--json-file", "/dev/stderr"],
                              stdout=subprocess.PIPE, stderr=err, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout == "10\n"  # -q: the count alone
    first, record = log.read_text().splitlines()
    assert first == "earlier" and json.loads(record)["triangles"] == 10 and log.stat().st_ino == inode


@pytest.mark.parametrize("stream", ["/dev/stdout", "/dev/stderr"])
def test_json_file_to_a_pipe(stream):
    """A pipe failed with 'No such file or directory' (the link's target, pipe:[N], is no file)."""
    done = run_module("count", "complete:5", "-q", "--json-file", stream)
    assert done.returncode == 0, done.stderr
    written = done.stdout if stream == "/dev/stdout" else done.stderr
    assert json.loads(written.splitlines()[0])["triangles"] == 10


def test_json_file_dev_fd_writes_to_the_descriptor(tmp_path):
    """/dev/fd/N replaced the file open on N (a new file under its name, what was there lost)."""
    out = tmp_path / "out.log"
    out.write_text("earlier\n")
    fd = os.open(out, os.O_WRONLY | os.O_APPEND)
    try:
        done = run_module("count", "complete:5", "-q", "--json-file", f"/dev/fd/{fd}", pass_fds=(fd,))
    finally:
        os.close(fd)
    assert done.returncode == 0, done.stderr
    first, record = out.read_text().splitlines()
    assert first == "earlier" and json.loads(record)["triangles"] == 10
    result = run_module("count", "complete:5", "-q", "--json-file", "/dev/fd/97")
    assert result.returncode == 2 and result.stderr == "tcdist: error: /dev/fd/97: file descriptor 97 is not open\n"


def test_per_vertex_dash_is_csv_on_stdout_and_the_summary_on_stderr(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("count", "complete:5", "--per-vertex", "-", "--json")
    assert result.code == 0
    assert result.out == "vertex,triangles,clustering\n" + "".join(f"{v},6,1\n" for v in range(5))
    assert json.loads(result.err)["triangles"] == 10 and list(tmp_path.iterdir()) == []
    result = cli("count", "complete:5", "--per-vertex", "-", "--json-file", "/dev/stdout")
    assert result.code == 2
    assert one_line(result) == "tcdist: error: --json-file /dev/stdout and --per-vertex - are the same file; give " \
                               "each output its own file"


@pytest.mark.parametrize("option", ["--json-file", "--per-vertex"])
def test_a_read_only_output_is_not_replaced(tmp_path, cli, option):
    """It was replaced, and came back writable."""
    out = tmp_path / "out.csv"
    out.write_text("mine")
    out.chmod(0o444)
    result = cli("count", "complete:5", option, out)
    assert result.code == 2
    assert one_line(result) == f"tcdist: error: {out}: is read-only; tcdist does not replace it (make it writable " \
                               "or write to another name)"
    assert out.read_text() == "mine" and stat.S_IMODE(out.stat().st_mode) == 0o444


def test_a_read_only_store_is_still_reused(tmp_path, cli):
    store = tmp_path / "s.h5"
    assert cli("count", "complete:6", "-P", "2", "--store", store).code == 0
    store.chmod(0o444)
    result = cli("count", "complete:6", "-P", "2", "--store", store, "--json")
    assert result.code == 0 and result.json()["triangles"] == 20 and result.json()["store"] == str(store)


@pytest.mark.parametrize("args,message", [
    (("partition", "complete:6", "-P", "2", "-o", "{tmp}/newdir/"),
     "{tmp}/newdir/: names a directory (it ends in /); give a file name"),
    (("partition", "complete:6", "-P", "2", "-o", "{tmp}/"), "{tmp}/: is a directory"),
    (("partition", "complete:6", "-P", "2", "-o", ""), "--output: the file name is empty; give a file name"),
    (("count", "complete:6", "--json-file", ""), "--json-file: the file name is empty; give a file name"),
    (("partition", "complete:6", "-P", "2", "-o", "-"),
     "-: is standard output, not a file; this output is written only to a file"),
    (("count", "complete:6", "-P", "2", "--store", "/dev/stderr"),
     "/dev/stderr: is standard error, not a file; this output is written only to a file"),
])
def test_names_that_are_no_file_name(tmp_path, cli, monkeypatch, args, message):
    """newdir/ wrote a file named newdir, '' said ': is a directory', '-' wrote a file named '-'."""
    monkeypatch.chdir(tmp_path)
    result = cli(*[a.format(tmp=tmp_path) for a in args])
    assert result.code == 2 and one_line(result) == f"tcdist: error: {message.format(tmp=tmp_path)}"
    assert list(tmp_path.iterdir()) == []


POOL = {"x.h5": "x", "y.h5": "y", "z.h5": "z", "l.h5": "x", "d/../y.h5": "y"}  # name -> the file it names


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(sorted(POOL)), min_size=3, max_size=3))
def test_fuzz_outputs_that_name_one_file_are_refused_and_others_written(tmp_path_factory, names):
    """Fuzz: --store, --json-file and --per-vertex drawn among names of three files (a symbolic
    link not yet resolvable, '..'): exit 2 with nothing written iff two name one file."""
    import contextlib
    import io

    from tcdist.cli import main

    folder = tmp_path_factory.mktemp("outputs")
    (folder / "d").mkdir()
    os.symlink(folder / "x.h5", folder / "l.h5")
    before = sorted(p.name for p in folder.iterdir())
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["count", "complete:5", "--backend", "cpu", "-P", "2", "--store", str(folder / names[0]),
                     "--json-file", str(folder / names[1]), "--per-vertex", str(folder / names[2]), "-q"])
    if len({POOL[n] for n in names}) < 3:
        assert code == 2 and err.getvalue().count("\n") == 1, err.getvalue()
        assert sorted(p.name for p in folder.iterdir()) == before
    else:
        assert code == 0, err.getvalue()
        assert all((folder / POOL[n]).with_suffix(".h5").exists() for n in names)


def test_the_outputs_of_one_count_are_put_in_place_together(tmp_path, cli, monkeypatch):
    """The per-vertex file was replaced, then the per-edge one failed on a full disk: a run that
    failed left one new output beside the old others."""
    import errno

    import pyarrow.parquet as pq

    vertices, edges, record = tmp_path / "v.csv", tmp_path / "e.parquet", tmp_path / "r.json"
    for path in (vertices, edges, record):
        path.write_text("the previous run's")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pq, "write_table", full)
    result = cli("count", "complete:5", "--per-vertex", vertices, "--per-edge", edges, "--json-file", record)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {edges}: cannot write (No space left on device)"
    assert sorted(tmp_path.iterdir()) == [edges, record, vertices]
    assert all(path.read_text() == "the previous run's" for path in (vertices, edges, record))
    monkeypatch.undo()
    assert cli("count", "complete:5", "--per-vertex", vertices, "--per-edge", edges, "--json-file", record).code == 0
    assert vertices.read_text().splitlines()[1] == "0,6,1" and json.loads(record.read_text())["triangles"] == 10


def test_a_signal_after_an_output_is_in_place_does_not_say_it_was_removed(tmp_path, cli, monkeypatch):
    """SIGHUP just after `list -o` put its file in place said 'stopped ... (temporary files
    removed)' of a run whose file was new."""
    import signal

    from tcdist import signals

    out, replace = tmp_path / "t.csv", os.replace

    def then_a_signal(source, target):
        replace(source, target)
        if target == str(out):
            monkeypatch.setattr(signals, "_received", signal.SIGHUP)

    monkeypatch.setattr(os, "replace", then_a_signal)
    result = cli("list", "complete:4", "-o", out)
    assert result.code == 128 + signal.SIGHUP and one_line(result) == (
        f"tcdist: stopped by SIGHUP (temporary files removed; already written: {out})")
    assert out.read_text().splitlines() == ["u,v,w", "0,1,2", "0,1,3", "0,2,3", "1,2,3"]


_SIGNAL_AFTER_PLACING = """
import os, signal, sys
from tcdist.cli import main

replace = os.replace

def then_a_signal(source, target):  # a real signal, the moment the file is in place
    replace(source, target)
    os.kill(os.getpid(), signal.SIGINT)

os.replace = then_a_signal
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_just_after_an_output_is_in_place_names_it(tmp_path):
    """Raised by the handler between the rename and its record, the stop said nothing of the file
    in place (6 of 20 SIGINTs near the end of `count --per-edge c.h5`)."""
    out = tmp_path / "c.h5"
    done = subprocess.run([sys.executable, "-c", _SIGNAL_AFTER_PLACING, "count", "complete:5", "--backend", "cpu",
                           "--per-edge", str(out)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, f"tcdist: stopped by SIGINT (temporary files removed; already "
                                                   f"written: {out})\n")
    assert list(tmp_path.iterdir()) == [out]


_SIGNAL_IN_PYTHONS_EXIT = """
import os, signal, sys
from tcdist.cli import main

class Late:
    def __del__(self):  # run as Python's exit clears this module, after it gave the signals their default action back
        os.kill(os.getpid(), signal.SIGINT)

late = Late()
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_once_the_result_is_printed_is_ignored(tmp_path):
    """A signal in Python's exit killed the process (status -2, no line) after it had printed its
    result and put its outputs in place."""
    out = tmp_path / "c.csv"
    done = subprocess.run([sys.executable, "-c", _SIGNAL_IN_PYTHONS_EXIT, "count", "complete:5", "--backend", "cpu",
                           "-q", "--per-edge", str(out)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "10\n", "")
    assert out.read_text().splitlines()[:2] == ["u,v,triangles", "0,1,3"]


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_an_error_after_the_outputs_are_in_place_names_them(tmp_path, stdout):
    """A full or closed standard output failed the run after its --json-file and --per-vertex were
    put in place, and the error did not say they had been."""
    record, vertices = tmp_path / "r.json", tmp_path / "v.csv"
    record.write_text("the previous run's")
    command = [sys.executable, "-m", "tcdist", "count", "complete:5", "--backend", "cpu", "--json-file", str(record),
               "--per-vertex", str(vertices)]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            done = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        problem = "cannot write to standard output (No space left on device)"
    else:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                              preexec_fn=lambda: os.close(1))
        problem = "standard output is closed; tcdist prints its result there (redirect it to a file)"
    assert (done.returncode, done.stderr) == (2, f"tcdist: error: {problem}; already written: {vertices}, {record}\n")
    assert json.loads(record.read_text())["triangles"] == 10 and vertices.read_text().splitlines()[1] == "0,6,1"


def test_a_name_as_long_as_the_file_system_allows_is_written(tmp_path, cli):
    """A 250-byte name failed after the count: its temporary's name was longer than 255 bytes."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("v" * (longest - len(".csv")) + ".csv")
    assert cli("count", "complete:5", "--per-vertex", out).code == 0
    assert out.read_text().splitlines()[1] == "0,6,1" and list(tmp_path.iterdir()) == [out]
    too_long = tmp_path / ("v" * (longest + 1 - len(".csv")) + ".csv")
    result = cli("count", "complete:5", "--per-vertex", too_long)
    assert result.code == 2 and one_line(result) == (
        f"tcdist: error: {too_long}: the name is longer than the file system allows ({longest} bytes); choose a "
        "shorter one")


def test_a_store_whose_journal_name_would_be_too_long_is_refused_before_any_work(tmp_path, cli, monkeypatch):
    import tcdist.ranks.prepare as prepare

    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    store = tmp_path / ("s" * (longest - len(".h5")) + ".h5")
    monkeypatch.setattr(prepare, "load_graph", lambda *args, **kwargs: pytest.fail("the graph was read"))
    result = cli("count", "complete:5", "-P", "2", "--store", store)
    assert result.code == 2 and one_line(result) == (
        f"tcdist: error: {store}: the name leaves no room for its journal beside it ({longest} bytes at most "
        "for FILE.journal); choose a shorter name")
    assert list(tmp_path.iterdir()) == []
