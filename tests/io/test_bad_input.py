"""Bad input and impossible options: exit status 2, one line on stderr naming the file and line."""

import gzip
import json
import re
import subprocess

import h5py
import numpy as np
import pytest
from conftest import bgzf, count_read_once, edited_h5, run_module

from tcdist.errors import TcdistError

EDGE_LIST_ERRORS = {
    "non-numeric": ("1 2\n2 three\n", 2, "'three' is not an integer vertex id"),
    "one column": ("1 2\n2 3\n4\n", 3, "expected two vertex ids, found one field '4'"),
    "negative": ("1 2\n2 -3\n", 2, "negative vertex id -3"),
    "fractional": ("1 2\n2 3.5\n", 2, "'3.5' is not an integer vertex id"),
    "out of range": ("1 2\n2 9223372036854775808\n", 2, "out of range"),
    "lone fields everywhere": ("5\n6\n", 1, "expected two vertex ids, found one field '5'"),
    "a blank CSV cell": ("1,2\n2,,3\n", 2, "a vertex id is missing (an empty field between commas)"),
    "a blank first CSV cell": ("1,2\n,2,3\n", 2, "a vertex id is missing"),
    "a blank cell in the first row": ("1, ,2\n2,3\n", 1, "a vertex id is missing"),
    "a row of blank cells": ("1,2\n2,3\n ,\n3,1\n", 3, "a vertex id is missing"),
}


def one_line(result):
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    return lines[0]


@pytest.mark.parametrize("name", EDGE_LIST_ERRORS)
def test_malformed_edge_lists(tmp_path, cli, name):
    content, line, problem = EDGE_LIST_ERRORS[name]
    path = tmp_path / "bad.txt"
    path.write_text(content)
    result = cli("count", path)
    assert result.code == 2
    assert one_line(result).startswith(f"tcdist: error: {path}:{line}: ")
    assert problem in result.err


def test_binary_garbage(tmp_path, cli):
    path = tmp_path / "garbage.txt"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    result = cli("count", path)
    assert result.code == 2 and f"{path}: binary data" in one_line(result)


PATH_GRAPH = b"".join(b"%d %d\n" % (i, i + 1) for i in range(20000))  # 20,000 edges, no triangle
GZIP_DAMAGE = {"cut in half": lambda data: data[: len(data) // 2],
               "cut before the end": lambda data: data[:-100],
               "trailer cut": lambda data: data[:-3],
               "bytes changed": lambda data: data[: len(data) // 2] + bytes(64) + data[len(data) // 2 + 64 :]}


@pytest.fixture(params=["one stream", "every core"])
def inflater(request, monkeypatch):
    """gzip read by ISA-L on one core, or by rapidgzip on every core (which returns a file cut short
    without an error: tcdist checks its end)."""
    import importlib.util

    from tcdist.io import gzipped

    assert importlib.util.find_spec("rapidgzip"), "rapidgzip, a dependency of tcdist, is not installed"
    monkeypatch.setattr(gzipped, "PARALLEL_FROM", 1 if request.param == "every core" else 1 << 20)
    return request.param


@pytest.mark.parametrize("damage", GZIP_DAMAGE)
def test_damaged_gzip(tmp_path, cli, damage, inflater):
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(GZIP_DAMAGE[damage](gzip.compress(PATH_GRAPH)))
    result = cli("count", path)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {path}: truncated or corrupt gzip data"


def test_a_gzip_file_shorter_than_its_end_check_is_read(tmp_path, cli, inflater):
    path = tmp_path / "one.txt.gz"
    path.write_bytes(gzip.compress(b"1 2\n"))  # under the 28 bytes the end check looks at
    assert path.stat().st_size < 28
    result = cli("count", path, "--json")
    assert result.code == 0 and json.loads(result.out)["m"] == 1


@pytest.mark.parametrize("kind", ["gzip members", "BGZF"])
def test_gzip_of_several_members_is_read_whole_and_refused_cut(tmp_path, cli, inflater, kind):
    """Its last trailer counts only the last member's bytes: not a file cut short (BGZF's last
    member is empty); cut, it is refused."""
    path = tmp_path / "members.txt.gz"
    third = len(PATH_GRAPH) // 3
    data = bgzf(PATH_GRAPH) if kind == "BGZF" else \
        b"".join(gzip.compress(PATH_GRAPH[a:b]) for a, b in ((0, third), (third, None)))
    assert gzip.decompress(data) == PATH_GRAPH
    path.write_bytes(data)
    result = cli("count", path, "--json")
    assert result.code == 0 and json.loads(result.out)["m"] == 20000
    path.write_bytes(data[: len(data) * 2 // 3])
    result = cli("count", path)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {path}: truncated or corrupt gzip data"


MTX_ERRORS = {
    "bad banner": ("%%MatrixMarkt matrix coordinate pattern general\n2 2 1\n1 2\n", 1, "bad Matrix Market banner"),
    "short banner": ("%%MatrixMarket matrix coordinate\n2 2 1\n1 2\n", 1, "bad Matrix Market banner"),
    "array format": ("%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n", 1, "'array' (dense) format"),
    "bad size line": ("%%MatrixMarket matrix coordinate pattern general\n% c\n2 2\n1 2\n", 3, "bad Matrix Market size line"),
    "not square": ("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n", 2, "must be square"),
    "entry out of range": ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n", 4, "entry (4, 1) is out of range 1..3"),
    "zero index": ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n0 1\n", 4, "out of range"),
    "the first of two out of range": ("%%MatrixMarket matrix coordinate pattern general\n9 9 30000\n"
                                      + "1 2\n" * 20000 + "0 1\n" + "1 2\n" * 9000 + "10 1\n" + "1 2\n" * 998,
                                      20003, "entry (0, 1) is out of range 1..9"),
}


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])  # (parsed where it counts)
@pytest.mark.parametrize("name", MTX_ERRORS)
def test_malformed_matrix_market(tmp_path, cli, name, backend):
    content, line, problem = MTX_ERRORS[name]
    path = tmp_path / "bad.mtx"
    path.write_text(content)
    result = cli("count", path, "--backend", backend)
    assert result.code == 2
    assert one_line(result).startswith(f"tcdist: error: {path}:{line}: ") and problem in result.err


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_matrix_market_of_more_rows_than_an_id_holds_is_counted(tmp_path, cli, backend):
    """A size line of 19 digits (past int64, as the format allows): every id is in range."""
    path = tmp_path / "wide.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n9999999999999999999 9999999999999999999 3\n"
                    "1 2\n2 3\n3 1\n")
    result = cli("count", path, "--backend", backend, "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["triangles"] == 1


def test_matrix_market_with_fewer_entries_than_declared(tmp_path, cli):
    path = tmp_path / "short.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n5 5 4\n2 1\n3 1\n")
    result = cli("count", path)
    assert result.code == 2
    assert one_line(result) == f"tcdist: error: {path}: the size line declares 4 entries but the file holds 2"


def test_missing_file_and_directory(tmp_path, cli):
    missing = tmp_path / "nope.txt"
    assert one_line(cli("count", missing)) == f"tcdist: error: {missing}: no such file"
    result = cli("count", tmp_path)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {tmp_path}: is a directory, not a graph file"


def test_foreign_hdf5(tmp_path, cli):
    path = tmp_path / "foreign.h5"
    with h5py.File(path, "w") as f:
        f["data"] = np.arange(10)
    result = cli("count", path)
    assert result.code == 2
    assert one_line(result) == (f"tcdist: error: {path}: not a tcdist HDF5 file (no tcdist seal: written by another "
                                "program or an older tcdist); give its edges as a text edge list or Matrix Market "
                                "file (tcdist convert makes a graph file of one)")


def test_future_version_hdf5(tmp_path, cli):
    path = tmp_path / "g.h5"
    assert cli("convert", "complete:5", path).code == 0
    with edited_h5(path) as f:
        f.attrs["version"] = 99
    result = cli("count", path)
    assert result.code == 2 and "version 99 is not supported" in one_line(result)


def test_truncated_hdf5(tmp_path, cli):
    path = tmp_path / "g.h5"
    assert cli("convert", "rmat:12", path).code == 0
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    result = cli("count", path)
    assert result.code == 2 and one_line(result).startswith(f"tcdist: error: {path}: ")


def test_corrupt_hdf5_dataset_is_caught_by_its_checksum(tmp_path, cli):
    path = tmp_path / "g.h5"
    assert cli("convert", "rmat:12", path).code == 0
    with h5py.File(path, "r") as f:
        offset = f["col"].id.get_offset() if f["col"].chunks is None else f["col"].id.get_chunk_info(0).byte_offset
    data = bytearray(path.read_bytes())
    data[offset + 100] ^= 0xFF
    path.write_bytes(bytes(data))
    result = cli("count", path)
    assert result.code == 2 and one_line(result) == (
        f"tcdist: error: {path}: the graph's arrays or attributes do not match its digest (corrupt or altered)")


@pytest.mark.parametrize("args,problem", [
    (["count", "--parts", "0"], "argument --parts/-P: must be at least 1, got 0"),
    (["count", "--parts", "x"], "argument --parts/-P: 'x' is not an integer"),
    (["count", "--threads", "0"], "argument --threads: must be at least 1"),
    (["count", "--threads", "100000"], "--threads must be between 1 and"),
    (["count", "--backend", "tpu"], "unknown backend 'tpu'"),
    (["count", "--kernel", "fastest"], "unknown cpu kernel 'fastest'"),
    (["count", "--bogus"], "unrecognized arguments: --bogus"),
    (["count", "rmat:99"], "rmat: scale must be 1..40"),
    (["count", "grid:3"], "expected grid:ROWS:COLS"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["generate", "rmat:5"], "the following arguments are required: -o/--output"),
])
def test_impossible_options(cli, args, problem):
    result = cli(*args)
    assert result.code == 2
    assert problem in one_line(result)


def test_gpu_backend_says_why_it_cannot_run(cli):
    result = cli("count", "complete:4", "--backend", "gpu")
    assert result.code == 2 and one_line(result).startswith("tcdist: error: --backend gpu: ")


def test_failed_conversion_leaves_the_existing_output_intact(tmp_path, cli):
    out = tmp_path / "g.h5"
    assert cli("convert", "complete:6", out).code == 0
    before = out.read_bytes()
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n2 x\n")
    assert cli("convert", bad, out).code == 2
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "g.h5"], "no temporary file is left behind"


def test_real_process_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n2 x\n")
    result = run_module("count", bad)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"tcdist: error: {bad}:2: 'x' is not an integer vertex id (decimal digits only; "
                                     "to read ids as names, use --labels)")
    debug = run_module("count", bad, "--debug")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def wiki_vote_bytes():
    from conftest import DATASETS

    return gzip.decompress((DATASETS / "Wiki-Vote.txt.gz").read_bytes())


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"])
def test_every_line_ending_gives_the_published_count(tmp_path, cli, ending):
    """Lone CR ends once read Wiki-Vote as almost no edges (0 triangles, exit 0)."""
    path = tmp_path / "wiki.txt"
    path.write_bytes(wiki_vote_bytes().replace(b"\r\n", b"\n").replace(b"\n", ending))
    assert cli("count", path, "--json").json()["triangles"] == 608389


def test_a_stray_cr_ends_a_line_wherever_the_chunks_fall(tmp_path, monkeypatch):
    from tcdist.io import read, text

    lines = [b"%d %d" % (i, i + 1) for i in range(200)]
    data = (b"# comment\n" + b"\r\n".join(lines[:100]) + b"\r" + b"\n".join(lines[100:150]) + b"\n# in the middle\n"
            + b"\n".join(lines[150:]) + b"\n")
    path = tmp_path / "mixed.txt"
    path.write_bytes(data)
    for size in (3, 7, 64, 1 << 20):  # CRs and CRLFs cut at every place by the chunking
        monkeypatch.setattr(text, "CHUNK_BYTES", size)
        edges = read(path)
        assert edges.src.tolist() == list(range(200)) and edges.dst.tolist() == list(range(1, 201)), size
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\r\n".join(lines[:50]) + b"\r\n1 x\r\n")
    for size in (3, 7, 1 << 20):
        monkeypatch.setattr(text, "CHUNK_BYTES", size)
        with pytest.raises(text.InputError, match=r"bad.txt:51: 'x' is not an integer"):
            read(bad)


INPUT_ERRORS = {
    "hexadecimal id": (b"1 2\n2 3\n0x3 1\n", "bad.txt:3: '0x3' is not an integer vertex id"),
    "plus sign": (b"1 2\n2 +3\n3 1\n", "bad.txt:2: '+3' is not an integer vertex id"),
    "control byte shown escaped": (b"1 2\n2 3\x01\n", "bad.txt:2: '3\\x01' is not an integer vertex id"),
    "NUL past the binary check shown escaped": (b"1 2\n" * 3000 + b"2 \x003\n",
                                                "bad.txt:3001: '\\x003' is not an integer vertex id"),
    "a run of 5,000 digits": (b"1 2\n3 " + b"1" * 5000 + b"\n", "bad.txt:2: vertex id 111111111111111111111... is out of range"),
    "a long negative id shown short": (b"1 2\n-" + b"2" * 60 + b" 1\n", "bad.txt:2: negative vertex id -22222222222222222222..."),
    "UTF-16": ("1 2\n2 3\n".encode("utf-16"), "bad.txt: the file is UTF-16 (little-endian) text; convert it to UTF-8"),
    "UTF-16 without a byte-order mark": ("1 2\n2 3\n".encode("utf-16-le"),
                                         "bad.txt: the file is UTF-16 (little-endian) text; convert it to UTF-8"),
}


@pytest.mark.parametrize("name", INPUT_ERRORS)
def test_input_refused_with_its_line(tmp_path, cli, name):
    content, message = INPUT_ERRORS[name]
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    result = cli("count", path)
    assert result.code == 2 and "\x00" not in result.err
    assert message in one_line(result)


def test_latin1_comments_are_text(tmp_path, cli):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"# Gr\xf6\xdfe: caf\xe9\n1 2\n2 3\n3 1\n")
    assert cli("count", path, "--json").json()["triangles"] == 1


def test_a_one_field_header_is_skipped_without_a_final_newline(tmp_path, cli):
    path = tmp_path / "head.txt"
    path.write_bytes(b"3\n1 2")
    result = cli("count", path, "--json")
    assert result.json()["m"] == 1 and "head.txt:1: skipped a header line" in result.err


def test_dev_zero_is_refused_at_once():
    """/dev/zero was read forever."""
    result = run_module("count", "/dev/zero", timeout=30)
    assert result.returncode == 2 and "/dev/zero: binary data (NUL byte at offset 0)" in result.stderr


def test_a_line_too_long_mid_file_is_named_by_its_offset(tmp_path, monkeypatch):
    from tcdist.io import read, text

    monkeypatch.setattr(text, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(text, "CHUNK_BYTES", 32)
    path = tmp_path / "long.txt"
    path.write_bytes(b"1 2\n" * 50 + b"3 4 " + b"5" * 300 + b"\n")
    with pytest.raises(text.InputError, match=r"long.txt: no line end in \d+ bytes from byte 200: not a text edge list"):
        read(path)


def test_a_gzip_file_is_not_estimated_by_its_compressed_size(tmp_path, monkeypatch):
    """The estimate of the whole input took the compressed size over the bytes inflated (a
    fraction of the edges): gzip input now grows its arrays by halves, each growth checked, and
    a refusal says how many edges it had read, not a wrong estimate of the whole."""
    from tcdist.budget import host as memory
    from tcdist.io import engines, read, text

    asked, memory_require = [], memory.require
    monkeypatch.setattr(text, "CHUNK_BYTES", 1 << 16)
    monkeypatch.setattr(memory, "require", lambda nbytes, *args: asked.append(nbytes))
    rng = np.random.default_rng(3)
    path = tmp_path / "random.txt.gz"
    path.write_bytes(gzip.compress(b"".join(b"%d %d\n" % tuple(p) for p in rng.integers(0, 10**6, (100_000, 2)))))
    assert len(read(path)) == 100_000
    capacities = [nbytes // engines.PAIR_BYTES for nbytes in asked]  # each growth asked for, geometric
    assert all(b >= 1.5 * a - 1 for a, b in zip(capacities, capacities[1:])) and capacities[-1] >= 100_000, capacities
    monkeypatch.setattr(memory, "require", memory_require)
    monkeypatch.setattr(memory, "available", lambda: (1000, "a test limit"))
    with pytest.raises(TcdistError, match=r"random.txt.gz \([\d,]+ edges so far\) needs about"):
        read(path)


def test_text_without_line_ends_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    from tcdist.io import read, text

    monkeypatch.setattr(text, "MAX_LINE_BYTES", 1 << 16)
    monkeypatch.setattr(text, "CHUNK_BYTES", 1 << 14)
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"1 2 " * (1 << 16))
    with pytest.raises(text.InputError, match="one-line.txt:1: no line end in the first .* bytes: not a text edge list"):
        read(path)


@pytest.mark.parametrize("name", ["email-Enron.txt.gz", "ca-GrQc.mtx.gz"])
@pytest.mark.parametrize("how", ["-", "/dev/stdin", "fifo"])
def test_input_that_can_be_read_only_once(tmp_path, name, how):
    """Pipes, FIFOs and <(...) ended in a traceback: the reader seeked."""

    from conftest import DATASETS, manifest

    expected = next(e["published_triangles"] for e in manifest() if e["file"] == name)
    raw = (DATASETS / name).read_bytes()
    data = raw if name.endswith(".txt.gz") else gzip.decompress(raw)  # gzip and plain text both travel
    result = count_read_once(how, data, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["triangles"] == expected


def test_an_hdf5_file_through_a_pipe_is_refused(tmp_path, cli):
    path = tmp_path / "g.h5"
    assert cli("convert", "complete:5", path).code == 0
    result = run_module("count", "-", input=path.read_bytes().decode("latin-1"), encoding="latin-1")
    assert result.returncode == 2 and "an HDF5 file cannot be read from a pipe" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("encoding,name,iconv", [("utf-16-le", "UTF-16 (little-endian)", "UTF-16LE"),
                                                 ("utf-16-be", "UTF-16 (big-endian)", "UTF-16BE"),
                                                 ("utf-32-le", "UTF-32 (little-endian)", "UTF-32LE"),
                                                 ("utf-32-be", "UTF-32 (big-endian)", "UTF-32BE")])
@pytest.mark.parametrize("file", ["bad.txt", "bad.txt.gz", "bad.mtx", "bad"])
def test_utf16_and_utf32_are_refused_by_their_byte_order_mark(tmp_path, cli, encoding, name, iconv, file):
    """UTF-32 LE was called UTF-16, UTF-32 BE binary data."""
    data = "\ufeff1 2\n2 3\n3 1\n".encode(encoding)
    path = tmp_path / file
    path.write_bytes(gzip.compress(data) if file.endswith(".gz") else data)
    result = cli("count", path)
    assert result.code == 2
    assert one_line(result) == (f"tcdist: error: {path}: the file is {name} text; convert it to UTF-8 or ASCII "
                                f"(iconv -f {iconv} -t UTF-8)")


@pytest.mark.parametrize("mark", ["\ufeff", ""], ids=["byte-order mark", "no mark"])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_advice_converts_the_file(tmp_path, cli, encoding, mark):
    """The advice said 'iconv -f UTF-16', which takes text without a mark as the machine's byte order."""
    path = tmp_path / "g.txt"
    path.write_bytes(f"{mark}1 2\n2 3\n3 1\n3 4\n".encode(encoding))
    refused = cli("count", path)
    assert refused.code == 2
    command = re.search(r"\((iconv [^)]*)\)$", one_line(refused)).group(1).split()
    converted = tmp_path / "utf8.txt"
    converted.write_bytes(subprocess.run([*command, str(path)], capture_output=True, check=True).stdout)
    record = cli("count", converted, "--json").json()
    assert (record["triangles"], record["m"]) == (1, 4)


def test_utf16_through_a_pipe_is_refused_by_its_byte_order_mark():
    result = run_module("count", "-", input="\ufeff1 2\n2 3\n3 1\n".encode("utf-16-be").decode("latin-1"),
                        encoding="latin-1")
    assert result.returncode == 2 and result.stderr.strip() == (
        "tcdist: error: -: the file is UTF-16 (big-endian) text; convert it to UTF-8 or ASCII (iconv -f UTF-16BE -t UTF-8)")


@pytest.mark.parametrize("line", ["1.0 2.0", "1 2.5", "1e3 7", "-1 5", "+3 4"])
@pytest.mark.parametrize("before", ["", "# a comment\n", "source target\n"], ids=["first", "after a comment", "after a header"])
def test_two_numbers_that_are_not_ids_are_not_a_header(tmp_path, cli, line, before):
    """'1.0 2.0' as the first line was skipped as a header, and the same line later was an error."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(f"1 2\n{line}\n2 3\n3 1\n")
    expected = one_line(cli("count", elsewhere)).split(f"{elsewhere}:2: ")[1]
    path = tmp_path / "first.txt"
    path.write_text(f"{before}{line}\n1 2\n2 3\n3 1\n")
    result = cli("count", path)
    number = before.count("\n") + 1
    assert result.code == 2 and one_line(result) == f"tcdist: error: {path}:{number}: {expected}"


@pytest.mark.parametrize("line", ["1 x", "x 1", "source target 5", "-1 (<FromNodeId> is a customer of <ToNodeId>)"])
def test_a_line_with_words_before_the_first_edge_is_a_header_and_after_it_an_error(tmp_path, cli, line):
    """SNAP's as-caida files continue their header on a line without '#' that starts with '-1': it
    was refused as a negative vertex id."""
    path = tmp_path / "first.txt"
    path.write_text(f"# a comment\n{line}\n1 2\n2 3\n3 1\n")
    record = cli("count", path, "--json").json()
    assert (record["triangles"], record["m"]) == (1, 3)
    shown = line if len(line) <= 24 else line[:21] + "..."
    assert record["warnings"] == [f"{path}:2: skipped a header line before the first edge ('{shown}')"]
    later = tmp_path / "later.txt"
    later.write_text(f"1 2\n2 3\n{line}\n3 1\n")
    result = cli("count", later)
    assert result.code == 2 and one_line(result).startswith(f"tcdist: error: {later}:3: ")


@pytest.mark.parametrize("content,line,shown", [("source,target\n", 1, "source target"), ("source,target", 1, "source target"),
                                                ("# a comment\nsource target\n\n", 2, "source target"),
                                                ("pandas", 1, "source target"), ("5\n", 1, "5")])
@pytest.mark.parametrize("name", ["empty.csv", "empty.txt"])
def test_a_header_alone_is_an_empty_graph(tmp_path, cli, content, line, shown, name):
    """It was an error at line 1 advising --labels. A .csv's first line is its header row: no warning."""
    import pandas as pd

    path = tmp_path / name
    if content == "pandas":
        pd.DataFrame(columns=["source", "target"]).to_csv(path, index=False)
    else:
        path.write_text(content)
    result = cli("count", path, "--json")
    assert result.code == 0, result.err
    record = result.json()
    assert (record["triangles"], record["n"], record["m"]) == (0, 0, 0)
    said = [] if name.endswith(".csv") and line == 1 else [f"{path}:{line}: skipped a header line ('{shown}')"]
    assert record["warnings"] == [*said, f"{path}: no edges"]


def test_lines_of_names_with_no_edge_are_refused_at_the_first(tmp_path, cli):
    """Names as ids, not a header: the advice to read them as names."""
    path = tmp_path / "names.txt"
    path.write_text("source target\nalice bob\n")
    result = cli("count", path)
    assert result.code == 2 and one_line(result) == (
        f"tcdist: error: {path}:1: 'source' is not an integer vertex id (decimal digits only; to read ids as names, "
        "use --labels)")


def test_matrix_market_size_line_without_a_newline_and_no_entries(tmp_path, cli):
    """It was 'no Matrix Market size line'."""
    path = tmp_path / "short.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3")
    result = cli("count", path)
    assert result.code == 2
    assert one_line(result) == f"tcdist: error: {path}: the size line declares 3 entries but the file holds 0"
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3")
    assert one_line(cli("count", path)) == (f"tcdist: error: {path}:2: bad Matrix Market size line '3 3': "
                                            "expected 'ROWS COLUMNS ENTRIES'")


@pytest.mark.parametrize("compress,name,what,cat", [("bzip2 -k", "g.txt.bz2", "bzip2-compressed data", "bzcat"),
                                                   ("xz -k", "g.txt.xz", "xz-compressed data", "xzcat"),
                                                   ("zstd -q", "g.txt.zst", "zstd-compressed data", "zstdcat"),
                                                   ("zip -q g.txt.zip", "g.txt.zip", "a zip archive", "unzip -p")])
def test_other_compressors_are_named_and_their_advice_makes_gzip(tmp_path, cli, compress, name, what, cat):
    """A .bz2 file was 'binary data'."""
    plain = tmp_path / "g.txt"
    plain.write_text("".join(f"{u} {v}\n" for u in range(12) for v in range(u + 1, 12) if (u * v) % 5 < 3))
    expected = cli("count", plain, "--json").json()["triangles"]
    subprocess.run(f"{compress} g.txt", shell=True, cwd=tmp_path, check=True)
    plain.unlink()
    path = tmp_path / name
    refused = cli("count", path)
    assert refused.code == 2
    assert one_line(refused) == (f"tcdist: error: {path}: {what}, which tcdist does not read; it reads gzip: "
                                 f"{cat} {path} | gzip > {tmp_path / 'g.txt.gz'}")
    subprocess.run(f"{cat} {path} | gzip > {tmp_path / 'g.txt.gz'}", shell=True, check=True)
    assert cli("count", tmp_path / "g.txt.gz", "--json").json()["triangles"] == expected > 0
    piped = count_read_once("-", path.read_bytes(), tmp_path)
    assert piped.returncode == 2 and piped.stderr.strip() == (
        f"tcdist: error: -: {what}, which tcdist does not read; decompress it on the way in ({cat} FILE | tcdist ...)")
