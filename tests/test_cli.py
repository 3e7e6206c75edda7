"""The command line as a user meets it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATASETS, REPO, run_module

from tcdist.io import read

JSON_KEYS = {"triangles", "n", "m", "backend", "kernel", "parts", "ranks", "timings"}
TIMING_KEYS = {"read", "build", "partition", "count", "total"}


def test_count_with_no_graph_counts_the_embedded_graph(cli):
    result = cli("count")
    assert result.code == 0
    assert "triangles  1,612,010" in result.out and "vertices   4,039" in result.out


def test_count_json(cli):
    result = cli("count", "--json", "--threads", "1")
    record = result.json()
    assert JSON_KEYS <= record.keys() and TIMING_KEYS <= record["timings"].keys()
    assert (record["triangles"], record["n"], record["m"], record["parts"], record["ranks"]) == (1612010, 4039, 88234, 1, 1)
    assert record["backend"] == "cpu" and record["threads"] == 1
    assert all(v >= 0 for v in record["timings"].values())
    assert record["timings"]["total"] >= record["timings"]["count"]


def test_count_reports_dropped_edges(cli):
    result = cli("count", DATASETS / "email-Eu-core.txt.gz")
    assert "(dropped 642 self loops and 0 repeated edges; merged 8,865 edges given in both directions)" in result.out
    assert "triangles  105,461" in result.out


def test_json_keeps_stdout_machine_readable_and_warnings_on_stderr(cli):
    result = cli("count", DATASETS / "p2p-Gnutella04.txt.gz", "--json")
    record = result.json()
    assert record["triangles"] == 934 and len(record["warnings"]) == 1
    assert "warning: " in result.err and "skipped a header line" in result.err


def test_info_graph(cli):
    result = cli("info", "complete:10", "--json")
    record = result.json()
    assert (record["n"], record["m"], record["wedges"], record["max_out_degree"]) == (10, 45, 10 * 36, 9)
    assert record["oriented_wedges"] == sum(k * (k - 1) // 2 for k in range(10))
    text = cli("info", "grid:3:3").out
    assert "vertices          9" in text and "max out-degree" in text


def test_info_environment(cli):
    record = cli("info", "--json").json()
    assert {"tcdist", "numpy", "numba", "gpus", "mpi"} <= record.keys()


def test_generate_is_deterministic_for_a_seed(tmp_path, cli):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt.gz", tmp_path / "c.txt"
    assert cli("generate", "rmat:10", "-o", a, "--seed", "3").code == 0
    assert cli("generate", "rmat:10", "-o", b, "--seed", "3").code == 0
    assert cli("generate", "rmat:10", "-o", c, "--seed", "4").code == 0
    ea, eb, ec = read(a), read(b), read(c)
    assert ea.src.size == 16 * 1024
    assert np.array_equal(ea.src, eb.src) and np.array_equal(ea.dst, eb.dst)
    assert not np.array_equal(ea.src, ec.src)


def test_generate_h5_counts_like_the_spec(tmp_path, cli):
    out = tmp_path / "r.h5"
    assert cli("generate", "rmat:11", "-o", out, "--seed", "5", "--json").json()["output"] == str(out)
    direct = cli("count", "rmat:11", "--seed", "5", "--json").json()
    stored = cli("count", out, "--json").json()
    assert (stored["triangles"], stored["n"], stored["m"]) == (direct["triangles"], direct["n"], direct["m"])


def test_help_explains_graphs_and_exit_status():
    result = run_module("--help")
    assert result.returncode == 0
    assert "rmat:SCALE" in result.stdout and "Exit status" in result.stdout
    assert "embedded" in run_module("count", "--help").stdout


def test_python_m_and_console_script_agree():
    script = Path(sys.executable).parent / "tcdist"
    assert script.exists(), "the tcdist console script is installed beside the interpreter"
    via_script = subprocess.run([script, "count", "--json", "-q"], capture_output=True, text=True, timeout=300)
    via_module = run_module("count", "--json", "-q")
    for result in (via_script, via_module):
        assert result.returncode == 0 and json.loads(result.stdout)["triangles"] == 1612010


def test_json_on_a_terminal_is_only_json():
    """Open MPI gives every rank a pty as stdout. With colorama installed, Numba's coloured errors
    made colorama write a colour reset there at exit, after the JSON record."""
    import os
    import pty

    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "tcdist", "count", "--backend", "cpu", "--json", "-q"]
    result = subprocess.run(command, stdout=follower, stderr=subprocess.PIPE, timeout=300)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is closed once everything is read
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.decode())["triangles"] == 1612010


@pytest.mark.parametrize("spec,message", [
    ("rmat:abc", "generator spec 'rmat:abc': expected rmat:SCALE[:EDGEFACTOR]"),
    ("er:5", "generator spec 'er:5': expected er:N:M"),
    ("rmat", "generator spec 'rmat': expected rmat:SCALE[:EDGEFACTOR]"),
    ("foo:3", "'foo:3' is no file and no generator spec (generators: rmat:SCALE[:EDGEFACTOR], er:N:M"),
    ("er:\u0665:\u0663", "generator spec 'er:\u0665:\u0663': expected er:N:M"),
    (f"er:{'9' * 400}:5", f"generator spec 'er:{'9' * 400}:5': its numbers must be below 2^63\n"),
    (f"complete:{'9' * 5000}", f"generator spec 'complete:{'9' * 5000}': its numbers must be below 2^63\n"),
], ids=["letters", "one number", "no number", "no generator", "arabic-indic digits", "400 digits", "5000 digits"])
def test_a_bad_generator_spec_names_the_valid_forms(cli, spec, message):
    """These were 'no such file'; Arabic-Indic digits were read as numbers (\\d and int() read any
    script's), and 400 digits ended in an OverflowError's traceback."""
    result = cli("count", spec)
    assert result.code == 2 and result.err.startswith(f"tcdist: error: {message}")


def test_the_stages_add_up_to_the_total(cli):
    """Compiling and generating were outside every stage (and compiling outside the total)."""
    timings = cli("count", "rmat:12", "--backend", "cpu", "--json").json()["timings"]
    assert timings["compile"] > 0 and timings["generate"] > 0 and timings["read"] == 0
    stages = {k: v for k, v in timings.items() if k not in ("total", "compile_overlapped", "read_overlapped",
                                                                 "transfer_overlapped")}
    assert sum(stages.values()) == pytest.approx(timings["total"], rel=1e-9)
    assert timings["transfer_overlapped"] == timings["compile_overlapped"] == 0  # on the CPU: nothing copied,
                                                                                 # the warm-up done first


def test_a_bar_moves_every_second_even_without_updates(monkeypatch):
    """A bar was drawn only when its step reported progress: one long build or part showed
    nothing at all (tqdm's delay is checked on updates only)."""
    import io
    import time

    from tcdist import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress.enable(True)
    try:
        with progress.bar(4, "build", "steps"):
            time.sleep(3.5)  # a step that reports nothing for 3.5 s
    finally:
        progress.enable(False)
    frames = [f for f in terminal.getvalue().split("\r") if "build" in f]
    assert len(frames) >= 2 and frames[0] != frames[-1], terminal.getvalue()


def test_a_part_s_record_is_the_same_whether_built_in_the_run_or_read_from_a_store(cli, tmp_path):
    """--json's part records: the partitioning's statistics only (before, parts built in the run
    also carried the degrees --kernel auto reads, and parts read from a store did not)."""
    built = cli("count", "rmat:10", "-P", 2, "--backend", "cpu", "--json").json()
    store = tmp_path / "parts.h5"
    assert cli("partition", "rmat:10", "-P", 2, "-o", store).code == 0
    read = cli("count", store, "--backend", "cpu", "--json").json()
    assert [set(p) for p in built["part_stats"]] == [set(p) for p in read["part_stats"]]
    assert [p["e_res"] for p in built["part_stats"]] == [p["e_res"] for p in read["part_stats"]]
    assert "degrees" not in built["part_stats"][0]


@pytest.mark.parametrize("args,message", [
    (("--gpu-memory-limit", "-1GiB"), "argument --gpu-memory-limit: '-1GiB' is not a size of at least one byte"),
    (("--gpu-memory-limit=-1GiB",), "argument --gpu-memory-limit: '-1GiB' is not a size of at least one byte"),
    (("--gpu-memory-limit", "-0.5k"), "argument --gpu-memory-limit: '-0.5k' is not a size of at least one byte"),
    (("--gpu-memory-limit", "--json"), "argument --gpu-memory-limit: expected one argument"),
    (("--host-memory-limit", "-2GiB"), "argument --host-memory-limit: '-2GiB' is not a size of at least one byte"),
])
def test_a_negative_size_is_refused_as_a_size(cli, args, message):
    """-1GiB was taken for an option: 'expected one argument'."""
    result = cli("count", "complete:5", *args)
    assert result.code == 2 and result.err == f"tcdist count: error: {message} (see tcdist count --help)\n"


@pytest.mark.parametrize("args,message", [
    (("--gpu-memory-limit", "\u0664GiB"), "argument --gpu-memory-limit: '\u0664GiB' is not a size (write it as 4GiB, "
                                          "512MiB or 2G)"),
    (("--parts", "\u0664"), "argument --parts/-P: '\u0664' is not an integer"),
    (("--seed", "1_0"), "argument --seed: '1_0' is not an integer"),
])
def test_numbers_are_ascii_digits(cli, args, message):
    """int() and \\d read any script's digits: an Arabic-Indic 4 was taken as 4 (4 GiB, 4 parts)."""
    result = cli("count", "complete:5", *args)
    assert result.code == 2 and result.err == f"tcdist count: error: {message} (see tcdist count --help)\n"


@pytest.mark.parametrize("flag", ["--gpu-memory-limit", "--host-memory-limit"])
@pytest.mark.parametrize("ranks", [1, pytest.param(2, marks=pytest.mark.mpi)])
def test_a_size_of_400_digits_is_refused_in_a_line(flag, ranks):
    """It ended in an OverflowError's traceback, exit status 1 (a float of 400 digits is infinite)."""
    from mpi_launch import mpiexec

    args = ("count", "complete:5", flag, "9" * 400)
    result = run_module(*args) if ranks == 1 else mpiexec(ranks, *args)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"tcdist: error: {flag} must be at most 2^63-1 bytes (8 EiB)\n")


@pytest.mark.parametrize("args,unrecognized", [
    (("count", "--part", "4"), "--part"),  # GRAPH takes the 4
    (("count", "complete:5", "--thread", "1"), "--thread 1"),
    (("count", "complete:5", "--gpu-memory", "-1GiB"), "--gpu-memory -1GiB"),
    (("info", "complete:5", "--js"), "--js"),
    (("warm-up", "--back", "cpu"), "--back cpu"),
])
def test_an_abbreviated_option_is_refused(cli, args, unrecognized):
    """argparse took --part for --parts: a script's abbreviation would change meaning when an option is added."""
    result = cli(*args)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"tcdist: error: unrecognized arguments: {unrecognized} (see tcdist --help)\n"


def test_quiet_prints_the_count_alone(cli):
    """-q printed the whole summary (it only left out bars and warnings); a warning stays off too."""
    result = cli("count", DATASETS / "p2p-Gnutella04.txt.gz", "-q")
    assert (result.code, result.out, result.err) == (0, "934\n", "")
    record = cli("count", DATASETS / "p2p-Gnutella04.txt.gz", "-q", "--json")
    assert record.err == "" and record.out.count("\n") == 1
    assert record.json()["triangles"] == 934 and len(record.json()["warnings"]) == 1


@pytest.mark.parametrize("how", ["whole", "parts", "store"])
def test_per_vertex_rows_are_sorted_by_vertex_id(tmp_path, cli, how):
    """They came in the internal (degree, id) rank order."""
    import networkx as nx

    edges = [(9, 2), (2, 40), (40, 9), (7, 9), (100, 7), (3, 100), (3, 7), (55, 3), (1, 55)]
    graph, out = tmp_path / "g.txt", tmp_path / "pv.csv"
    graph.write_text("".join(f"{u} {v}\n" for u, v in edges))
    source = graph
    if how == "store":
        source = tmp_path / "s.h5"
        assert cli("partition", graph, "-o", source, "-P", "2").code == 0
    result = cli("count", source, "--backend", "cpu", "--per-vertex", out, *(("-P", "3") if how == "parts" else ()))
    assert result.code == 0, result.err
    rows = [line.split(",") for line in out.read_text().splitlines()]
    triangles = nx.triangles(nx.Graph(edges))
    assert rows == [["vertex", "triangles", "clustering"]] + [
        [str(v), str(triangles[v]), rows[i + 1][2]] for i, v in enumerate(sorted(triangles))]


def test_per_vertex_labels_come_sorted_or_in_node_order():
    import networkx as nx

    import tcdist

    pairs = [("pear", "fig"), ("fig", "apple"), ("apple", "pear"), ("kiwi", "pear")]
    result = tcdist.count_triangles(pairs, backend="cpu", per_vertex=True)
    assert result.per_vertex.vertex.tolist() == ["apple", "fig", "kiwi", "pear"]
    assert result.per_vertex.triangles.tolist() == [1, 1, 0, 1]
    result = tcdist.count_triangles(nx.Graph(pairs), backend="cpu", per_vertex=True)
    assert result.per_vertex.vertex.tolist() == ["pear", "fig", "apple", "kiwi"]
    assert result.per_vertex.triangles.tolist() == [1, 1, 1, 0]


def test_kernels_lists_the_cpu_kernels_and_says_why_no_gpu_ones(cli, monkeypatch):
    from tcdist.device import gpu

    monkeypatch.setattr(gpu, "problem", lambda: "no CUDA device found")
    result = cli("kernels")
    assert (result.code, result.err) == (0, "")
    assert result.out.splitlines() == [
        "auto (the default): each part's kernel by a rule from measurements",
        "lookup (cpu): NumPy, each wedge of N+(u) looked up among the edges; nothing compiled",
        "marker (cpu): Numba, N+(u) marked per thread, N+(v) looked up",
        "merge (cpu): Numba, sorted rows merged per edge",
        "middle (cpu): Numba, each triangle from its middle vertex: in-edges listed, N+(v) marked",
        "GPU kernels are not listed: no CUDA device found",
        "",
        "choose one with --kernel NAME[:OPTION=VALUE,...]"]
    record = cli("kernels", "--json").json()
    assert [(k["name"], k["backend"], k["options"]) for k in record["kernels"]] == [("lookup", "cpu", []),
                                                                                   ("marker", "cpu", []),
                                                                                   ("merge", "cpu", []),
                                                                                   ("middle", "cpu", [])]
    assert record["gpu"] == "no CUDA device found"


def test_kernels_lists_the_gpu_kernels_where_a_gpu_is_usable(cli, monkeypatch):
    from tcdist.count.registry import kernels
    from tcdist.device import gpu

    monkeypatch.setattr(gpu, "problem", lambda: None)
    result = cli("kernels")
    assert result.code == 0 and "not listed" not in result.out
    assert "lstc (gpu): LSTC Algorithm 3, one block per local vertex\n" \
           "    tile=64|128|256|512|1024 [256]: threads per block and tile width\n" in result.out
    assert "    warp_rows=true|false [true]: rows of 2..32 one warp each\n" in result.out
    record = cli("kernels", "--json").json()
    assert [k["name"] for k in record["kernels"]] == sorted(kernels()) and record["gpu"] == "usable"
    lstc = next(k for k in record["kernels"] if k["name"] == "lstc")
    assert lstc["options"] == [{"name": "tile", "choices": [64, 128, 256, 512, 1024], "default": 256,
                                "help": "threads per block and tile width"}]


def test_count_help_points_at_tcdist_kernels_in_one_line():
    """--kernel's help listed every kernel and option in one paragraph of 30 lines."""
    text = run_module("count", "--help").stdout
    entry = text[text.index("  --kernel NAME"):text.index("  --threads")]
    assert " ".join(entry.split()) == "--kernel NAME[:OPTION=VALUE,...] counting kernel and its options; " \
                                      "`tcdist kernels` lists them [auto]"
    assert "lstc-group" not in text


def test_a_signal_ends_a_count_in_its_kernels_at_once(tmp_path):
    """SIGINT while the CPU's threads run a per-edge count (seconds of compiled work each): the
    process ends at once, with status 130, and leaves no output or temporary behind."""
    import signal
    import time

    out = tmp_path / "edges.csv"
    job = subprocess.Popen([sys.executable, "-m", "tcdist", "count", "rmat:20", "--backend", "cpu", "--threads", "2",
                            "--per-edge", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def cpu_seconds():
        with open(f"/proc/{job.pid}/stat") as f:
            return sum(map(int, f.read().rsplit(")", 1)[1].split()[11:13])) / os.sysconf("SC_CLK_TCK")

    while cpu_seconds() < 10 and job.poll() is None:  # well past the start (about 40 s of work in all)
        time.sleep(0.1)
    assert job.poll() is None
    signalled = time.monotonic()
    job.send_signal(signal.SIGINT)
    _, err = job.communicate(timeout=120)
    # within 2 s on an idle machine (0.2-1.7 s measured); the bound leaves room for a loaded CI host, where the
    # watching thread waits for the GIL behind NumPy's calls (before, the process ran on 9 s or more)
    assert time.monotonic() - signalled < 5.0, err
    assert job.returncode == 130 and "stopped by SIGINT" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["count", "list", "info"])
def test_a_graph_piped_in_with_no_graph_named_is_refused_and_dash_reads_it(tmp_path, command):
    """`cat g.txt | tcdist count` counted the embedded graph without a word; now it is refused,
    naming -, and the advice read as written counts the piped graph."""
    triangle = "1 2\n2 3\n3 1\n"
    extra = ["-o", tmp_path / "t.csv"] if command == "list" else ["--backend", "cpu"] if command == "count" else []
    refused = run_module(command, *extra, input=triangle)
    assert refused.returncode == 2 and "no GRAPH was named" in refused.stderr and " - " in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "t.csv").exists()
    read = run_module(command, "-", *extra, "--json", input=triangle)
    assert read.returncode == 0, read.stderr
    record = json.loads(read.stdout)
    assert record.get("triangles", record.get("m")) == (3 if command == "info" else 1)


@pytest.mark.parametrize("args", [["count", "complete:5"], ["info", "complete:5"], ["count", "complete:5", "--json"],
                                  ["--version"], ["--help"], ["count", "--help"]])
def test_a_full_or_closed_standard_output_is_an_error(args):
    """Both ended with status 0: nothing printed where stdout was closed (>&-), and Python's own
    report of a failed flush at exit where it was full (--help and --version: argparse dropped it)."""
    command = [sys.executable, "-m", "tcdist", *args]
    with open("/dev/full", "w") as full:
        result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr == (
        "tcdist: error: cannot write to standard output (No space left on device)\n")
    result = subprocess.run(command, stderr=subprocess.PIPE, text=True, timeout=300, preexec_fn=lambda: os.close(1))
    assert result.returncode == 2 and result.stderr == (
        "tcdist: error: standard output is closed; tcdist prints its result there (redirect it to a file)\n")


@pytest.mark.parametrize("args", [["list", "rmat:14", "-o", "-"], ["count", "rmat:14", "--backend", "cpu", "--per-edge", "-"]])
def test_a_reader_that_leaves_ends_tcdist_quietly_as_it_ends_cat(args):
    """`tcdist list GRAPH -o - | head`: no message, and cat's exit status under SIGPIPE (128 + 13), as docs/outputs.md says."""
    run = subprocess.Popen([sys.executable, "-m", "tcdist", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = run.stdout.readline()
    run.stdout.close()
    _, err = run.communicate(timeout=300)
    assert first.count(b",") == 2 and (run.returncode, err) == (141, b"")
    said = " ".join((REPO / "docs" / "outputs.md").read_text().split())
    assert "ends tcdist quietly, as it ends `cat`: no message, and exit status 141" in said


def test_parts_built_when_due_are_timed_as_partition_not_as_a_store_read():
    """Parts built one at a time as the count goes (under a budget on the host; on a GPU always)
    were reported as store_read, though no store was read."""
    record = json.loads(run_module("count", "rmat:12", "--backend", "cpu", "--parts", "4", "--gpu-memory-limit", "1GiB",
                                   "--json").stdout)
    assert record["timings"]["store_read"] == 0 and record["timings"]["partition"] > 0
    assert all("build_s" in s and "read_s" not in s for s in record["part_stats"])
