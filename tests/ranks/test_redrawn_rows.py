"""Ranks whose shares of the build do not fit their share of --host-memory-limit (ranks/redrawn_rows.py):
each builds its rows with nothing of its share held, a generator's drawn again and a text file's
read back from scratch for every range of keys. The rows together are graph/build.py's graph
(redrawn_rows_check.py under mpiexec); the plan says so and the count is one process's."""

import json
import os
from pathlib import Path

import pytest
from mpi_launch import checked, makes_cliques, mpiexec, mpiexec_json

import tcdist
from tcdist import plan
from tcdist.budget import model
from tcdist.io.engines import PAIR_BYTES

CHECK = Path(__file__).with_name("redrawn_rows_check.py")
CLIQUES = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"}  # one host taken for two, of two ranks each (-n 4)


@pytest.mark.mpi
def test_every_rank_s_rows_built_again_are_the_graph_build_py_makes(tmp_path):
    checked(3, CHECK, tmp_path, cases=5)


def test_a_share_is_built_again_where_its_build_in_memory_does_not_fit_and_this_does():
    raw, span = 1 << 20, 1 << 16
    in_memory = raw * (PAIR_BYTES + model.BUILD_BYTES_PER_EDGE)
    assert plan.rows_again(raw, span, in_memory) is None
    least = model.RANKS_AGAIN_BYTES_PER_ID * span + model.RANKS_AGAIN_BYTES_PER_EDGE * raw
    assert plan.rows_again(raw, span, least) is None  # (no room left for a range's keys)
    room = least - (-8 * model.RANKS_AGAIN_BYTES_PER_KEY * (1 << 16) // 7)
    keys, piece = plan.rows_again(raw, span, room)
    assert keys == 1 << 16 and piece * model.PIECE_BYTES_PER_EDGE <= room - least - keys * model.RANKS_AGAIN_BYTES_PER_KEY


@pytest.mark.mpi
@pytest.mark.parametrize("form", ["generator", "text"])
def test_two_hosts_whose_ranks_cannot_build_their_shares_in_memory_count_exactly(tmp_path, form):
    """RMAT-13 on two hosts of two ranks under 3 MiB a host: a rank's share would take 2.6 MB to build
    in memory, 1.5 MiB is its share of the limit; built again, the count is one process's."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    source = "rmat:13"
    if form == "text":
        source = tmp_path / "g.txt"
        tcdist.convert("rmat:13", str(source))
    args = ("count", source, "--backend", "cpu", "--host-memory-limit", "3MiB", "--scratch", tmp_path)
    planned = mpiexec(4, *args, "--plan", "--json", env=CLIQUES)
    assert planned.returncode == 0, planned.stderr
    how = "drawn again" if form == "generator" else "read again"
    assert json.loads(planned.stdout)["build"]["way"] == f"rows {how}"
    record = mpiexec_json(4, *args, env=CLIQUES)
    alone = tcdist.count_triangles("rmat:13", backend="cpu")
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    if form == "text":
        read = [r["read_bytes"] for r in record["rank_stats"]]  # (each piece reads on to a line end)
        assert all(read) and os.path.getsize(source) <= sum(read) <= 1.25 * os.path.getsize(source)


@pytest.mark.mpi
def test_a_bad_line_past_the_first_bytes_of_a_share_read_again_is_one_line_on_every_rank(tmp_path):
    """RMAT-15 as text (over the 4 MiB the plan samples) with a bad line near its end, under 12 MiB a
    host: the rank whose share holds it fails as it reads; every rank ends with its line (they
    waited for it in the ranks' next exchange)."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    path = tmp_path / "g.txt"
    tcdist.convert("rmat:15", str(path))
    lines = path.read_text().splitlines(keepends=True)
    at = 7 * len(lines) // 8
    path.write_text("".join(lines[:at] + ["12 abc\n"] + lines[at:]))
    done = mpiexec(4, "count", path, "--backend", "cpu", "--host-memory-limit", "12MiB", "--scratch", tmp_path,
                   env=CLIQUES, timeout=120)
    errors = [line for line in done.stderr.splitlines() if line.startswith("tcdist")]
    assert done.returncode == 2 and len(errors) == 1 and f"g.txt:{at + 1}: 'abc' is not an integer" in errors[0], \
        done.stderr[-2000:]


@pytest.mark.mpi
def test_a_share_its_first_bytes_overestimate_is_read_again_and_counted(tmp_path):
    """RMAT-13 as text followed by as many comment lines as edges: the first bytes' lines estimate
    twice the edges, so every rank reads its share again; the shares then fit, and are counted."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    path = tmp_path / "g.txt"
    tcdist.convert("rmat:13", str(path))
    edges = path.read_text().count("\n")
    with open(path, "a") as f:
        f.write("# a comment\n" * edges)
    args = ("count", path, "--backend", "cpu", "--host-memory-limit", "4MiB", "--scratch", tmp_path)
    planned = mpiexec(4, *args, "--plan", "--json", env=CLIQUES)
    assert planned.returncode == 0 and json.loads(planned.stdout)["build"]["way"] == "rows read again", planned.stderr
    assert mpiexec_json(4, *args, env=CLIQUES)["triangles"] == tcdist.count_triangles("rmat:13", backend="cpu").triangles
