"""Damaged inputs, at random and bounded in time: every outcome is the exact count or exit 2
with one line on stderr; never a wrong count, a traceback, a signal or a hang."""

import json
import re
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TEXT = b"# a small graph\n1 2\n2 3\n3 1\n3 4\n4 5\n5 3\n4 1\n6 7\n"


def reference_count(data: bytes):
    """The count of the graph tcdist's grammar reads from data, or None where it must refuse it
    (an independent reading: universal line ends, '#'/'%' comments, blank/tab/comma separators,
    two decimal non-negative ids per data line, lines before the first edge skipped as a header)."""
    head = data[:8192]
    if b"\x00" in head:
        return None
    lines = re.split(rb"\r\n|\r|\n", data)
    rows = []
    for line in lines:
        line = re.split(rb"[#%]", line, maxsplit=1)[0]
        tokens = [t for t in re.split(rb"[ \t\v\f,]+", line) if t]
        if tokens:
            rows.append(tokens)
    edge_like = [len(t) >= 2 and all(re.fullmatch(rb"[+-]?[0-9]+", x) for x in t[:2]) for t in rows]
    rows = rows[edge_like.index(True):] if True in edge_like else rows  # a header before the first edge
    adj = {}
    for tokens in rows:
        if len(tokens) < 2 or not all(re.fullmatch(rb"-?[0-9]+", t) for t in tokens[:2]):
            return None
        u, v = (int(t) for t in tokens[:2])
        if min(u, v) < 0 or max(u, v) > 2**63 - 1:
            return None
        if u != v:
            adj.setdefault(u, set()).add(v)
            adj.setdefault(v, set()).add(u)
    return sum(1 for u in adj for v, w in combinations(sorted(adj[u]), 2) if u < v and w in adj[v])


def run_cases(kind, original, seed, cases, tmp_path):
    command = [sys.executable, str(HERE / "fuzz_child.py"), kind, str(original), str(seed), str(cases), str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(results) == cases, (
        f"the fuzzing process ended with {done.returncode} after {len(results)} of {cases} cases:\n{done.stderr[-3000:]}")
    return results


def judge(result, expected):
    where = f"case {result['case']} ({result['action']})"
    if result["code"] == 0:
        assert result["triangles"] == expected, f"{where}: counted {result['triangles']}, expected {expected}"
    else:
        lines = result["stderr"].strip().splitlines()
        assert result["code"] == 2, f"{where}: exit {result['code']}: {result['stderr']}"
        assert len(lines) == 1 and lines[0].startswith("tcdist: error: "), f"{where}: {result['stderr']}"


@pytest.mark.parametrize("kind", ["store", "graph"])
def test_damaged_hdf5_files(tmp_path, cli, kind):
    original = tmp_path / "original.h5"
    command = ("partition", "rmat:8", "-o", original, "-P", "3") if kind == "store" else ("convert", "rmat:8", original)
    assert cli(*command).code == 0
    expected = cli("count", "rmat:8", "--json").json()["triangles"]
    work = tmp_path / "work"
    work.mkdir()
    for result in run_cases(kind, original, 11, 250, work):
        judge(result, expected)


def test_damaged_text(tmp_path):
    original = tmp_path / "original.txt"
    original.write_bytes(TEXT)
    assert reference_count(TEXT) == 3  # 1-2-3, 3-4-5 and 1-3-4
    work = tmp_path / "work"
    work.mkdir()
    for result in run_cases("text", original, 5, 400, work):
        judge(result, reference_count(bytes.fromhex(result["input"])))
