"""Every rank of a job counts rank 0's input with rank 0's options: an MPMD launch gives each rank
a command line of its own (here, rank 1 another file or other options, or in a mount namespace of
its own another file at rank 0's path). Where they differ, the job is one line naming the rank,
its host and what differs, and every rank exits 2; where rank 1's file is a copy of rank 0's, the
count is the published one."""

import gzip
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATASETS, gzip_of, manifest, run_module
from mpi_launch import launcher

pytestmark = pytest.mark.mpi

HOST = socket.gethostname()
ENRON = DATASETS / "email-Enron.txt.gz"  # 3.7 MB of text: its copies are told apart by sampled blocks
GNUTELLA = DATASETS / "p2p-Gnutella08.txt.gz"


def published(file_name):
    return next(e["published_triangles"] for e in manifest() if e["file"] == file_name)


def tcdist(status, *args):
    """A rank's command: `python -m tcdist ARGS`, its exit status written to the file status."""
    return ["sh", "-c", '"$@"; s=$?; echo $s > "$0"; exit $s', str(status), sys.executable, "-m", "tcdist",
            *map(str, args)]


def two_ranks(tmp_path, zero, one):
    """Rank 0 runs `tcdist ZERO`, rank 1 `tcdist ONE` (a list: a command before tcdist's, such as
    unshare, then tcdist's arguments); (the job, each rank's exit status)."""
    statuses = [tmp_path / "status0", tmp_path / "status1"]
    before, one = (one[0], one[1:]) if isinstance(one[0], list) else ([], one)
    command = [*launcher(), "-n", "1", *tcdist(statuses[0], *zero), ":", "-n", "1", *before,
               *tcdist(statuses[1], *one)]
    job = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return job, [int(s.read_text()) for s in statuses]


def refused(job, statuses):
    """The job's one line (rank 0's); every rank exited 2."""
    lines = job.stderr.strip().splitlines()
    assert statuses == [2, 2] and job.returncode == 2 and len(lines) == 1 and "Traceback" not in job.stderr, \
        job.stderr
    return lines[0]


@pytest.fixture(scope="module")
def enron(tmp_path_factory):
    path = tmp_path_factory.mktemp("enron") / "enron.txt"
    path.write_bytes(gzip.decompress(ENRON.read_bytes()))
    return path


def other_copies(enron, folder):
    """Files rank 1 may be given for rank 0's: each with its name."""
    data = enron.read_bytes()
    lines = data.splitlines(keepends=True)
    head = sum(1 for line in lines if line.startswith(b"#"))
    order = np.random.default_rng(5).permutation(len(lines) - head)
    made = {"shuffled": b"".join(lines[:head] + [lines[head + i] for i in order]),
            "gzipped": gzip.compress(data), "smaller": data[: len(data) // 2], "larger": data + b"1\t3\n" * 1000,
            "empty": b""}
    paths = {}
    for name, content in made.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_bytes(content)
    return paths


@pytest.mark.parametrize("kind", ["shuffled", "gzipped", "smaller", "larger", "empty"])
def test_a_rank_given_another_file_is_one_line_and_every_rank_exits_2(tmp_path, enron, kind):
    """Before: the shuffled copy counted other triangles, the gzip hung, the others ended 0."""
    other = other_copies(enron, tmp_path)[kind]
    options = ("--backend", "cpu", "--read", "ranks")
    job, statuses = two_ranks(tmp_path, ["count", enron, *options], ["count", other, *options])
    size, its = enron.stat().st_size, other.stat().st_size
    what = "the same size, other bytes" if kind == "shuffled" else f"{its:,} bytes, not {size:,}"
    assert size == its if kind == "shuffled" else size != its
    assert refused(job, statuses) == f"tcdist: error: rank 1 ({HOST}): {other}: not the file rank 0 reads as " \
                                      f"{enron} ({what}); give every rank the same input"


def test_a_copy_of_rank_0_s_file_elsewhere_gives_the_published_count(tmp_path, enron):
    copy = tmp_path / "copy.txt"
    copy.write_bytes(enron.read_bytes())
    options = ("--backend", "cpu", "--read", "ranks", "--quiet")
    job, statuses = two_ranks(tmp_path, ["count", enron, *options], ["count", copy, *options])
    assert statuses == [0, 0] and job.stdout.split() == [str(published("email-Enron.txt.gz"))] == ["727044"]


@pytest.mark.parametrize("zero,one,what", [
    (["rmat:8"], ["rmat:8", "--parts", "2"], "--parts 2, where rank 0 has none"),
    (["rmat:8", "--read", "ranks"], ["rmat:8", "--read", "root"], "--read root, where rank 0 has ranks"),
    (["rmat:8"], ["rmat:9"], "its graph is rmat:9, rank 0's rmat:8"),
])
def test_a_rank_given_other_options_is_one_line_and_every_rank_exits_2(tmp_path, zero, one, what):
    job, statuses = two_ranks(tmp_path, ["count", *zero, "--backend", "cpu"], ["count", *one, "--backend", "cpu"])
    assert refused(job, statuses) == f"tcdist: error: rank 1 ({HOST}): {what}; give every rank the same options"


@pytest.mark.parametrize("how", ["store as the graph", "--store"])
def test_another_store_at_rank_0_s_path_is_one_line_and_every_rank_exits_2(tmp_path, how):
    """Rank 1 sees another store at the store's path (a bind mount in a mount namespace of its own:
    a node-local file system that holds another). Before: it counted that store's parts, exit 0."""
    store, other = tmp_path / "s.h5", tmp_path / "other.h5"
    graph = tmp_path / "g.txt"
    graph.write_bytes(gzip.decompress(GNUTELLA.read_bytes()))
    assert run_module("partition", graph, "-P", 4, "-o", store).returncode == 0
    assert run_module("partition", "rmat:9", "-P", 4, "-o", other).returncode == 0
    probe = subprocess.run(["unshare", "-m", "mount", "--bind", other, store], capture_output=True)
    if probe.returncode:
        if os.environ.get("CI"):
            pytest.fail("cannot bind-mount in a mount namespace (CI runs as root)")
        pytest.skip("a mount namespace needs root")
    args = ["count", store] if how == "store as the graph" else ["count", graph, "--store", store, "-P", 4]
    args += ["--backend", "cpu"]
    hidden = ["unshare", "-m", "sh", "-c", 'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", other, store]
    job, statuses = two_ranks(tmp_path, args, [hidden, *args])
    assert refused(job, statuses) == f"tcdist: error: rank 1 ({HOST}): {store}: not the store rank 0 reads there " \
                                      "(its digest is another); give every rank the same store, on a file system " \
                                      "every host shares"
    job, statuses = two_ranks(tmp_path, [*args, "--quiet"], [*args, "--quiet"])  # the same store: its count
    assert statuses == [0, 0] and job.stdout.split() == [str(published("p2p-Gnutella08.txt.gz"))] == ["2383"]


@pytest.mark.parametrize("ranks", [2, 3])
def test_bgzf_with_a_gzip_member_appended_is_counted_by_ranks_as_by_one_process(tmp_path, ranks):
    """Before: refused under --read ranks as truncated or corrupt gzip data."""
    path = tmp_path / "g.txt.gz"
    path.write_bytes(gzip_of(gzip.decompress(GNUTELLA.read_bytes()), ("bgzf", "gzip")))
    assert run_module("count", path, "--backend", "cpu", "--quiet").stdout.split() == ["2383"]
    command = [*launcher(), "-n", str(ranks), sys.executable, "-m", "tcdist", "count", path, "--backend", "cpu",
               "--read", "ranks", "--quiet"]
    job = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert job.returncode == 0 and job.stdout.split() == [str(published("p2p-Gnutella08.txt.gz"))], job.stderr
