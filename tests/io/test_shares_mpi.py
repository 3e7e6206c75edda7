"""Under `mpiexec -n R`, R ranks each reading their share (io/shares.py) hold together the
one-process reader's edges (the same multiset) and warnings; a gzip stream is inflated once per
host (MPICH cliques make one host two)."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import gzip_of
from mpi_launch import launcher, makes_cliques

import tcdist
from tcdist.io.h5graph import write_graph

pytestmark = pytest.mark.mpi
CHILD = Path(__file__).with_name("share_child.py")
DATA = Path(__file__).resolve().parents[1] / "data"


def shares_run(ranks, source, seed=0, block_bytes=None, cliques=None):
    env = {**os.environ, "PYTHONPATH": str(Path(tcdist.__file__).parents[1])}
    if cliques:
        env["MPIR_CVAR_NUM_CLIQUES"] = str(cliques)
    extra = [str(seed), str(block_bytes)] if block_bytes else [str(seed)]
    done = subprocess.run([*launcher(), "-n", str(ranks), sys.executable, str(CHILD), str(source), *extra],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def text_file(tmp_path, lines=200_000):
    rng = np.random.default_rng(11)
    body = "\r\n".join(f"{u}\t{v}" for u, v in rng.integers(0, 10**6, (lines, 2)).tolist())
    path = tmp_path / "g.txt"
    path.write_text("# Directed graph\r\n# FromNodeId\tToNodeId\r\n" + body)  # no final line end
    return path


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_ranks_reading_their_byte_ranges_hold_the_one_process_edges(tmp_path, ranks):
    path = text_file(tmp_path)
    found = shares_run(ranks, path)
    assert found["same"] and found["warnings_same"] and found["errors"] == [None] * ranks
    share = path.stat().st_size / ranks
    assert all(abs(b / share - 1) < 0.10 for b in found["read_bytes"])


@pytest.mark.parametrize("source", ["ca-GrQc.mtx.gz", "email-Eu-core.txt.gz", "rmat:12", "er:1000:20000", "graph file"])
def test_every_kind_of_source_on_three_ranks(tmp_path, source):
    if source == "graph file":
        path = tmp_path / "g.h5"
        write_graph(tcdist.load_graph("rmat:11"), path)
    else:
        path = DATA / source if source.endswith(".gz") else source
    found = shares_run(3, path, seed=4)
    assert found["same"] and found["warnings_same"] and found["errors"] == [None] * 3


@pytest.mark.parametrize("cliques", [None, 2])
def test_a_gzip_stream_is_inflated_once_per_host_and_its_blocks_shared_out(tmp_path, cliques):
    if cliques and not makes_cliques():
        pytest.skip("MPIR_CVAR_NUM_CLIQUES needs MPICH's launcher")
    data = text_file(tmp_path, 60_000).read_bytes()
    path = tmp_path / "g.txt.gz"
    path.write_bytes(gzip.compress(data))
    found = shares_run(4, path, block_bytes=64 << 10, cliques=cliques)
    assert found["same"] and found["warnings_same"] and found["errors"] == [None] * 4
    hosts = cliques or 1
    assert sorted(found["read_bytes"]) == [0] * (4 - hosts) + [path.stat().st_size] * hosts  # one reader a host
    assert min(found["edges"]) > 0  # every rank parsed blocks of its own


@pytest.mark.parametrize("ranks", [2, 3, 4])
@pytest.mark.parametrize("kinds", [("bgzf", "gzip"), ("bgzf", "gzip", "bgzf")])
def test_bgzf_with_plain_gzip_members_is_read_as_one_process_reads_it(tmp_path, kinds, ranks):
    """The ranks that cut it at its members learn together that one met a plain gzip member, and
    all read it as one stream (before: refused as truncated or corrupt gzip data)."""
    path = tmp_path / "g.txt.gz"
    path.write_bytes(gzip_of(text_file(tmp_path, 20_000).read_bytes(), kinds, block=4000))
    found = shares_run(ranks, path)
    assert found["same"] and found["warnings_same"] and found["errors"] == [None] * ranks


@pytest.mark.parametrize("cliques", [None, 2])
def test_a_bad_line_in_a_gzip_stream_is_named_as_one_process_names_it(tmp_path, cliques):
    if cliques and not makes_cliques():
        pytest.skip("MPIR_CVAR_NUM_CLIQUES needs MPICH's launcher")
    lines = text_file(tmp_path, 60_000).read_text().split("\n")
    lines[45_000] = "7 seven"
    path = tmp_path / "g.txt.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(tcdist.TcdistError) as one:
        tcdist.io.read(path)
    found = shares_run(4, path, block_bytes=64 << 10, cliques=cliques)
    assert found["error"] == str(one.value)  # (a host's other ranks stop with its inflating rank's error)
