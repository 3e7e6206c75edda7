"""Damaged inputs, at random and bounded in time: every outcome is the exact count or exit 2
with one line on stderr; never a wrong count, a traceback, a signal or a hang."""

import json
import os
import re
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPO = HERE.parents[1]
TEXT = b"# a small graph\n1 2\n2 3\n3 1\n3 4\n4 5\n5 3\n4 1\n6 7\n"


def reference_count(data: bytes):
    """The count of the graph tcdist's grammar reads from data, or None where it must refuse it
    (an independent reading: a UTF-8 byte-order mark skipped, UTF-16/32 ones refused; universal line
    ends, '#'/'%' comments, blank/tab/comma separators, two decimal non-negative ids per data line;
    the lines before the first edge, or the first two numbers that are not ids, skipped as a
    header; with neither, a lone line is a header too)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return None
    data = data.removeprefix(b"\xef\xbb\xbf")
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
    number = rb"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
    edges = [edge(t) for t in rows]
    data_like = [e is not None or (len(t) >= 2 and all(re.fullmatch(number, x) for x in t[:2]))
                 for t, e in zip(rows, edges)]
    if True in data_like:
        edges = edges[data_like.index(True):]  # a header before the first edge
    elif len(rows) == 1:
        edges = []  # a header alone
    adj = {}
    for e in edges:
        if e is None:
            return None
        u, v = e
        if u != v:
            adj.setdefault(u, set()).add(v)
            adj.setdefault(v, set()).add(u)
    return sum(1 for u in adj for v, w in combinations(sorted(adj[u]), 2) if u < v and w in adj[v])


def edge(tokens):
    """(u, v) of a line's fields, or None where they are not an edge."""
    if len(tokens) < 2 or not all(re.fullmatch(rb"-?[0-9]+", t) for t in tokens[:2]):
        return None
    u, v = (int(t) for t in tokens[:2])
    return (u, v) if min(u, v) >= 0 and max(u, v) <= 2**63 - 1 else None


BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]  # the GPU moves a graph file there and checks it there,
# and parses text there


def run_cases(kind, original, seed, cases, tmp_path, backend="cpu"):
    command = [sys.executable, str(HERE / "fuzz_child.py"), kind, str(original), str(seed), str(cases), str(tmp_path),
               backend]
    # a script's sys.path starts at tests/: the checkout goes first, else an installed tcdist is fuzzed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(results) == cases, (
        f"the fuzzing process ended with {done.returncode} after {len(results)} of {cases} cases:\n{done.stderr[-3000:]}")
    return results


def judge(result, expected):
    where = f"case {result['case']} ({result['action']})"
    if result["action"].startswith("bom"):  # a UTF-8 mark is skipped, the others refused by name
        encoding = result["action"].split()[1]
        if encoding == "utf-8":
            assert result["code"] == 0, f"{where}: exit {result['code']}: {result['stderr']}"
        else:
            assert f"the file is {encoding[:6].upper()} (" in result["stderr"], f"{where}: {result['stderr']}"
    if result["code"] == 0:
        assert result["triangles"] == expected, f"{where}: counted {result['triangles']}, expected {expected}"
    else:
        lines = result["stderr"].strip().splitlines()
        assert result["code"] == 2, f"{where}: exit {result['code']}: {result['stderr']}"
        assert len(lines) == 1 and lines[0].startswith("tcdist: error: "), f"{where}: {result['stderr']}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["store", "graph"])
def test_damaged_hdf5_files(tmp_path, cli, kind, backend):
    original = tmp_path / "original.h5"
    command = ("partition", "rmat:8", "-o", original, "-P", "3") if kind == "store" else ("convert", "rmat:8", original)
    assert cli(*command).code == 0
    expected = cli("count", "rmat:8", "--json").json()["triangles"]
    work = tmp_path / "work"
    work.mkdir()
    for result in run_cases(kind, original, 11, 250, work, backend):
        judge(result, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_damaged_text(tmp_path, backend):
    original = tmp_path / "original.txt"
    original.write_bytes(TEXT)
    assert reference_count(TEXT) == 3  # 1-2-3, 3-4-5 and 1-3-4
    work = tmp_path / "work"
    work.mkdir()
    results = run_cases("text", original, 5, 400, work, backend)
    for result in results:
        judge(result, reference_count(bytes.fromhex(result["input"])))
    marks = {r["action"].split()[1] for r in results if r["action"].startswith("bom")}
    assert marks == {"utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"}, marks


def mtx_reference_count(data: bytes):
    """The count of a Matrix Market file whose banner and size line (n, entries) are intact, or
    None where it must be refused: its entries read as an edge list is (reference_count, no header
    skipped), exactly the declared number, every id in 1..n."""
    banner, size, body = data.split(b"\n", 2)
    n, _, entries = (int(w) for w in size.split())
    rows = []
    for line in re.split(rb"\r\n|\r|\n", body):
        tokens = [t for t in re.split(rb"[ \t\v\f,]+", re.split(rb"[#%]", line, maxsplit=1)[0]) if t]
        if tokens:
            rows.append(tokens)
    if b"\x00" in body or any(len(t) < 2 or not all(re.fullmatch(rb"-?[0-9]+", x) for x in t[:2]) for t in rows):
        return None
    pairs = [(int(t[0]), int(t[1])) for t in rows]
    if len(pairs) != entries or any(not 1 <= x <= n for pair in pairs for x in pair):
        return None
    return reference_count(b"".join(b"%d %d\n" % (u - 1, v - 1) for u, v in pairs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_damaged_matrix_market(tmp_path, backend):
    """Its entries damaged (the range check and the entry count read on top of the text grammar)."""
    entries = [line for line in TEXT.splitlines() if not line.startswith(b"#")]
    original = tmp_path / "original.mtx"
    original.write_bytes(b"%%MatrixMarket matrix coordinate pattern general\n" + b"7 7 %d\n" % len(entries)
                         + b"".join(b"%s\n" % line for line in entries))
    assert mtx_reference_count(original.read_bytes()) == 3
    work = tmp_path / "work"
    work.mkdir()
    results = run_cases("mtx", original, 7, 300, work, backend)
    for result in results:
        judge(result, mtx_reference_count(bytes.fromhex(result["input"])))
    assert sum(r["code"] == 0 for r in results) > 10 and sum(r["code"] == 2 for r in results) > 100  # both outcomes
    assert sum("out of range" in r["stderr"] for r in results) > 10  # the range check among the refusals


@pytest.mark.parametrize("members", [1, 2])
def test_damaged_gzip(tmp_path, members):
    """The compressed bytes damaged, read on every core (rapidgzip, whose output tcdist checks at
    its end) and on one (ISA-L), of a file of one gzip member and of two (where the end check
    cannot tell and ISA-L reads it through): tcdist counts exactly what Python's gzip reads, and
    refuses what it refuses."""
    import gzip
    import zlib

    text = b"".join(b"%d %d\n" % (u, v) for u in range(60) for v in range(u + 1, 60) if (u * v) % 7 < 3)
    half = len(text) // 2
    original = tmp_path / "original.txt.gz"
    original.write_bytes(gzip.compress(text) if members == 1 else gzip.compress(text[:half]) + gzip.compress(text[half:]))
    work = tmp_path / "work"
    work.mkdir()
    results = run_cases("gzip", original, 3, 400, work)
    for result in results:
        try:  # Python's gzip (zlib) as the second reader; a file cut to nothing is an empty graph
            ref = reference_count(gzip.decompress(bytes.fromhex(result["input"])))
        except (EOFError, OSError, zlib.error):
            ref = None
        assert (result["code"] == 0) == (ref is not None), f"case {result['case']} ({result['action']}): " \
                                                          f"exit {result['code']}: {result['stderr']}"
        judge(result, ref)
    assert {r["action"].split()[-1] for r in results} == {"core", "stream"}
    assert sum(r["code"] == 2 for r in results) > 300  # nearly every damage is found, not counted
