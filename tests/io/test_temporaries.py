"""Temporary files name the host and process that write them; a later run removes those whose
process is gone on this host, and no other's."""

import os
import subprocess
import sys

from tcdist.io.write import atomic_path, remove_stale, stale_beside, this_process


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_write_s_temporary_names_its_host_and_process(tmp_path):
    with atomic_path(tmp_path / "out.json") as tmp:
        assert os.path.basename(tmp) == f".out.json.tmp-{this_process()}"
        with open(tmp, "w") as f:
            f.write("{}")
    assert (tmp_path / "out.json").read_text() == "{}" and not os.path.exists(tmp)


def test_only_temporaries_of_gone_processes_of_this_host_are_removed(tmp_path):
    host = this_process().rsplit("-", 1)[0]
    gone = tmp_path / f".s.h5.tmp-{host}-{_gone_pid()}"
    alive = tmp_path / f".s.h5.tmp-{this_process()}"
    elsewhere = tmp_path / f".s.h5.tmp-another-host-{_gone_pid()}"
    other_file = tmp_path / f".t.h5.tmp-{host}-{_gone_pid()}"
    for path in (gone, alive, elsewhere, other_file):
        path.write_text("partial")
    assert stale_beside(tmp_path / "s.h5") == [str(gone)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, elsewhere, other_file))
    assert remove_stale(str(tmp_path), r"\.t\.h5\.tmp-(.+-\d+)") == [str(other_file)]


def test_every_output_sweeps_what_dead_writers_of_it_left(tmp_path, cli):
    """A killed run's partial per-vertex, per-edge, JSON or converted file is removed by the next
    run that writes the same file; a live process's is kept."""
    host = this_process().rsplit("-", 1)[0]
    outputs = {"v.csv": ("--per-vertex",), "e.csv": ("--per-edge",), "r.json": ("--json-file",)}
    gone = [tmp_path / f".{name}.tmp-{host}-{_gone_pid()}" for name in [*outputs, "g.h5"]]
    alive = tmp_path / f".v.csv.tmp-{host}-{os.getppid()}"
    for path in (*gone, alive):
        path.write_text("partial")
    flags = [a for name, (flag,) in outputs.items() for a in (flag, tmp_path / name)]
    assert cli("count", "rmat:8", "--backend", "cpu", *flags).code == 0
    assert cli("convert", "rmat:8", tmp_path / "g.h5").code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["v.csv", "e.csv", "r.json", "g.h5", alive.name])


def test_a_temporary_of_the_longest_name_fits_and_is_swept(tmp_path):
    """.NAME.tmp-HOST-PID passed the longest name the file system allows (a 250-byte NAME)."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("o" * (longest - len(".json")) + ".json")
    with atomic_path(out) as tmp:
        name = os.path.basename(tmp)
        assert len(name) <= longest and name.startswith(".ooo") and name.endswith(f".tmp-{this_process()}")
        with open(tmp, "w") as f:
            f.write("{}")
    assert out.read_text() == "{}"
    host = this_process().rsplit("-", 1)[0]
    left = tmp_path / name.replace(this_process(), f"{host}-{_gone_pid()}")
    left.write_text("partial")
    assert stale_beside(out) == [str(left)] and list(tmp_path.iterdir()) == [out]
