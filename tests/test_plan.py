"""tcdist.plan: a graph's build and layout decided by one function before anything is drawn or
read, the one the count carries out; `tcdist count GRAPH --plan` shows it without counting."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tcdist
from tcdist import io, plan, source
from tcdist.budget import host

COUNTED = """\
import sys
import tcdist
from tcdist.graph import redrawn_build
built, made = [], redrawn_build.build_redrawn
redrawn_build.build_redrawn = lambda *args: built.append("disk" if args[6] is not None else "host") or made(*args)
counted = tcdist.count_triangles(sys.argv[1], backend="cpu", host_memory_limit=sys.argv[2], scratch=sys.argv[3])
print(*built, counted.triangles, counted.slices)
"""


def _tcdist(*args):
    return subprocess.run([sys.executable, "-m", "tcdist", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("room, way", [(1 << 40, "whole"), (20_000_000, "drawn again")])
def test_the_build_a_count_carries_out_is_the_one_planned(monkeypatch, room, way):
    """RMAT-16 on a host with room bytes: whole, or drawn again; the count builds as plan.generated
    decided, and counts exactly."""
    reference = tcdist.count_triangles("rmat:16", backend="cpu").triangles
    monkeypatch.setattr(host, "available", lambda: (room, "a test's limit"))
    planned = plan.generated("rmat:16", None)
    carried = []
    monkeypatch.setattr(source, "_made", lambda spec, seed, build, timings, made=source._made:
                        carried.append(build) or made(spec, seed, build, timings))
    assert planned.way == way and tcdist.count_triangles("rmat:16", backend="cpu").triangles == reference
    assert carried == [planned]


def test_plan_shows_the_build_and_the_count_without_counting():
    done = _tcdist("count", "rmat:12", "--backend", "cpu", "--plan", "--json")
    assert done.returncode == 0, done.stderr
    planned = json.loads(done.stdout)
    assert "triangles" not in planned
    assert (planned["build"]["way"], planned["build"]["device"], planned["build"]["csr"]) == ("whole", "host", "host")
    assert planned["build"]["raw_edges"] == io.spec_edges("rmat:12") and planned["count"]["mode"] == "whole"
    parts = _tcdist("count", "rmat:12", "--backend", "cpu", "--plan", "--parts", "4")
    assert parts.returncode == 0 and "count   parts: 4 LSTC parts" in parts.stdout, parts.stderr


@pytest.mark.parametrize("limit", ["16MiB", "8MiB"])
def test_a_file_the_limit_cannot_hold_is_read_again_where_planned(tmp_path, limit):
    """RMAT-16 as text (its CSR 5.8 MB) under 16 MiB: read again, its CSR in host memory; under 8
    MiB, its columns on disk; the count lays it out and counts it (whole, or in slices) as the plan
    said, exactly."""
    edges = io.generate("rmat:16")
    path = tmp_path / "g.txt"
    np.savetxt(path, np.stack([edges.src, edges.dst], axis=1), fmt="%d")
    done = _tcdist("count", str(path), "--backend", "cpu", "--plan", "--json", "--host-memory-limit", limit,
                   "--scratch", str(tmp_path))
    assert done.returncode == 0, done.stderr
    planned = json.loads(done.stdout)
    assert (planned["build"]["way"], planned["build"]["csr"]) == ("read again", "host" if limit == "16MiB" else "disk")
    assert 60_000 < planned["build"]["span"] <= 1 << 16  # (from the largest id of its first bytes)
    counting = subprocess.run([sys.executable, "-c", COUNTED, str(path), limit, str(tmp_path)], capture_output=True,
                              text=True, timeout=300)  # (a process of its own: the limit binds what it grows by)
    assert counting.returncode == 0, counting.stderr[-2000:]
    built, triangles, slices = counting.stdout.split()
    assert built == planned["build"]["csr"] and planned["count"]["mode"] == ("slices" if int(slices) > 1 else "whole")
    assert int(triangles) == tcdist.count_triangles("rmat:16", backend="cpu").triangles


def test_a_plan_that_cannot_fit_is_the_count_s_own_refusal():
    """The same one line and exit status 2 as the count, before anything is drawn."""
    args = ("count", "rmat:20", "--backend", "cpu", "--host-memory-limit", "20MiB")
    planned, counted = _tcdist(*args, "--plan"), _tcdist(*args)
    assert planned.returncode == counted.returncode == 2
    assert planned.stderr == counted.stderr and "needs about" in planned.stderr and planned.stderr.count("\n") == 1
    assert planned.stderr.endswith("; count it on a host with more memory, or give a larger --host-memory-limit\n")


def test_a_plan_says_what_it_cannot_know_before_reading_and_refuses_a_path_as_the_count_does(tmp_path):
    """A gzip file's edges are known once read: its count's mode too; a path that is not there is
    the count's own one line."""
    assert _tcdist("generate", "rmat:8", "-o", str(tmp_path / "g.txt.gz")).returncode == 0
    done = _tcdist("count", str(tmp_path / "g.txt.gz"), "--backend", "cpu", "--plan", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"]["mode"] == "decided once read"
    missing = ("count", str(tmp_path / "none.txt"), "--backend", "cpu")
    planned, counted = _tcdist(*missing, "--plan"), _tcdist(*missing)
    assert planned.returncode == counted.returncode == 2 and planned.stderr == counted.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("limit, mode", [(None, "replicated"), ("4MiB", "parts across ranks")])
def test_under_ranks_the_plan_says_who_reads_and_the_mode_the_count_takes(limit, mode):
    """Four CPU ranks on two hosts (MPICH's cliques): every rank reads its share; the graph fits
    every rank, replicated as the count then does; under 4 MiB a host, parts across ranks, as the
    count then does (its first ranks' parts spilled to scratch), exact."""
    from mpi_launch import makes_cliques, mpiexec

    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    args = ("count", "rmat:16", "--backend", "cpu", "--json", *(("--host-memory-limit", limit) if limit else ()))
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"}
    done = mpiexec(4, *args, "--plan", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    planned = json.loads(done.stdout)
    assert (planned["ranks"]["ranks"], planned["ranks"]["hosts"], planned["ranks"]["shares"]) == (4, 2, True)
    assert planned["build"]["way"] == "rows" and planned["count"]["mode"] == mode and "triangles" not in planned
    counted = mpiexec(4, *args, env=env)
    assert counted.returncode == 0, counted.stderr[-2000:]
    record = json.loads(counted.stdout)
    assert record["mode"] == mode and record["triangles"] == tcdist.count_triangles("rmat:16", backend="cpu").triangles
    assert any(r["scratch_bytes"] for r in record["rank_stats"]) == (limit is not None)


def test_the_memory_a_refusal_quotes_is_enough(tmp_path):
    """A graph drawn again whose CSR would take under half the limit but leave too little for its
    ranges beside it has its columns on disk instead: the least a refusal quotes (with its columns
    on disk) counts, where it was refused as needing more in memory."""
    args = ("count", "rmat:15", "--backend", "cpu", "--json", "--scratch", str(tmp_path), "--host-memory-limit")
    refused = _tcdist(*args, "5MiB")
    quoted = re.search(r"with its columns on disk needs about ([\d.]+) MiB", refused.stderr)
    assert refused.returncode == 2 and quoted, refused.stderr
    done = _tcdist(*args, f"{float(quoted.group(1)) + 1.5}MiB")  # (its memory in place of about 9.6 MiB)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["triangles"] == tcdist.count_triangles("rmat:15", backend="cpu").triangles
