"""Readers on every quirk of the real files: headers, CRLF, separators, extra columns, gzip, Matrix Market."""

import gzip

import numpy as np
import pytest

import tcdist
from tcdist.errors import InputError
from tcdist.io import detect_format, read, text

TRIANGLE_PLUS = [(1, 2), (2, 3), (3, 1), (3, 4)]  # one triangle and a pendant edge


def write(path, content, compress=False):
    data = content.encode() if isinstance(content, str) else content
    if compress:
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def pairs(path):
    edges = read(path)
    return sorted(zip(edges.src.tolist(), edges.dst.tolist()))


QUIRKS = {
    "tabs": "1\t2\n2\t3\n3\t1\n3\t4\n",
    "blanks": "1 2\n2 3\n3 1\n3 4\n",
    "commas": "1,2\n2,3\n3,1\n3,4\n",
    "crlf": "1\t2\r\n2\t3\r\n3\t1\r\n3\t4\r\n",
    "snap header": "# Directed graph: x.txt\n# Nodes: 4 Edges: 4\n# FromNodeId\tToNodeId\n1\t2\n2\t3\n3\t1\n3\t4\n",
    "konect header": "% sym unweighted\n% 4 4 4\n1 2\n2 3\n3 1\n3 4\n",
    "weights": "1 2 0.5\n2 3 1.5\n3 1 7\n3 4 2\n",
    "timestamps": "1\t2\t1\t1217567877\n2\t3\t1\t1217567878\n3\t1\t1\t1217567879\n3\t4\t1\t1\n",
    "ragged extras": "1 2\n2 3 9\n3 1 9 9\n3 4\n",
    "runs of blanks": "  1   2\n2\t \t3  \n 3 1\n3     4\n",
    "comments inside": "1 2\n# a comment in the middle\n2 3\n3 1 % trailing comment\n\n3 4\n",
    "no final newline": "1 2\n2 3\n3 1\n3 4",
}


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", QUIRKS)
def test_edge_list_quirks(tmp_path, name, compress):
    path = write(tmp_path / ("g.txt.gz" if compress else "g.txt"), QUIRKS[name], compress)
    assert pairs(path) == sorted(TRIANGLE_PLUS)
    assert tcdist.count_triangles(path, backend="cpu").triangles == 1


def test_one_field_header_line_is_skipped_with_a_warning(tmp_path):
    path = write(tmp_path / "g.txt", "10900\n1 2\n2 3\n3 1\n3 4\n")
    edges = read(path)
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == sorted(TRIANGLE_PLUS)
    assert len(edges.warnings) == 1 and "g.txt:1" in edges.warnings[0] and "10900" in edges.warnings[0]


def test_a_header_without_a_comment_marker_is_skipped_with_one_warning(tmp_path):
    """Some published SNAP files have header lines without '#': they were an error at line 1."""
    path = write(tmp_path / "g.txt", "Directed graph (each unordered pair once)\nFromNodeId\tToNodeId\n1\t2\n2\t3\n"
                                     "3\t1\n3\t4\n")
    edges = read(path)
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == sorted(TRIANGLE_PLUS)
    assert edges.warnings == [f"{path}:1-2: skipped 2 header lines before the first edge ('Directed graph (each "
                              "...', 'FromNodeId ToNodeId')"]


CAIDA_HEADER = ("# Directed graph: as-caida20071105.txt\n# Autonomous Systems (from CAIDA)\n# Nodes: 60  Edges: 400\n"
                "# FromNodeId\tToNodeId\tRelationship (-1 customer, 0 peer, 1 provider, 2 sibling;\n"
                "           -1 (<FromNodeId> is a customer of <ToNodeId>)\n")


@pytest.mark.parametrize("engine", ["numpy", "compiled", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_snap_as_caida_file_counts_as_networkx_does(tmp_path, monkeypatch, engine):
    """Its header goes on in a line without '#' that starts with a number, and a third column is
    the relationship (-1 to 2): the file was refused at that line as a negative vertex id."""
    import networkx as nx

    from tcdist import compiled
    from tcdist.io import grammar

    rng = np.random.default_rng(7)
    edges, relationships = rng.integers(0, 60, (400, 2)), rng.integers(-1, 3, 400)
    path = write(tmp_path / "as-caida20071105.txt", CAIDA_HEADER + "".join(
        f"{u}\t{v}\t{r}\n" for (u, v), r in zip(edges.tolist(), relationships.tolist())))
    expected = sum(nx.triangles(nx.Graph([(u, v) for u, v in edges.tolist() if u != v])).values()) // 3
    assert expected > 50
    monkeypatch.setattr(compiled, "is_loaded", lambda: False)  # a small block in NumPy where it may be
    monkeypatch.setattr(grammar, "SMALL_BLOCK_BYTES", 1 << 30 if engine == "numpy" else -1)
    result = tcdist.count_triangles(path, backend="gpu" if engine == "gpu" else "cpu")
    assert result.triangles == expected
    assert result.warnings == [f"{path}:5: skipped a header line before the first edge ('-1 (<FromNodeId> is a...')"]
    path.write_text(CAIDA_HEADER + "1\t2\t-1\n2\t3\t0\n           -1 (<FromNodeId> is a customer of <ToNodeId>)\n")
    with pytest.raises(InputError, match=r"as-caida20071105.txt:8: negative vertex id -1$"):
        tcdist.count_triangles(path, backend="gpu" if engine == "gpu" else "cpu")


def test_after_the_first_edge_a_bad_line_is_still_an_error(tmp_path):
    path = write(tmp_path / "g.txt", "FromNodeId ToNodeId\n1 2\n2 3\nfoo bar\n3 1\n")
    with pytest.raises(InputError, match=r"g.txt:4: 'foo' is not an integer vertex id"):
        read(path)


def test_directed_and_reciprocal_edges_become_one_undirected_edge(tmp_path):
    path = write(tmp_path / "g.txt", "1 2\n2 1\n2 3\n3 2\n1 3\n1 3\n4 4\n")
    result = tcdist.count_triangles(path, backend="cpu")
    assert (result.triangles, result.m, result.duplicates, result.reciprocal, result.self_loops) == (1, 3, 1, 2, 1)


def test_large_ids_are_compacted(tmp_path):
    big = 2**63 - 1
    path = write(tmp_path / "g.txt", f"{big} 5\n5 0\n0 {big}\n")
    result = tcdist.count_triangles(path, backend="cpu")
    assert (result.triangles, result.n) == (1, 3)
    assert sorted(tcdist.load_graph(path).original_id.tolist()) == [0, 5, big]


def test_many_chunks_give_the_same_edges_and_line_numbers(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 500, 20000), rng.integers(0, 500, 20000)
    lines = [f"{u}\t{v}" for u, v in zip(src, dst)]
    lines[12345] = "# a comment in the middle: that chunk takes the slow path"
    path = write(tmp_path / "g.txt", "# header\n" + "\n".join(lines) + "\n")
    whole = read(path)
    monkeypatch.setattr(text, "CHUNK_BYTES", 997)
    chunked = read(path)
    assert np.array_equal(whole.src, chunked.src) and np.array_equal(whole.dst, chunked.dst)
    assert whole.src.size == 19999
    lines[15000] = "12 x"
    write(path, "# header\n" + "\n".join(lines) + "\n")
    with pytest.raises(tcdist.TcdistError, match=r"g.txt:15002: 'x' is not an integer vertex id"):
        read(path)


MTX_TRIANGLE_PLUS = "1 2\n2 3\n3 1\n3 4\n"


@pytest.mark.parametrize("field,values", [("pattern", ""), ("integer", " 7"), ("real", " 0.25"),
                                          ("complex", " 1.0 -2.0")])
@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_matrix_market(tmp_path, field, values, symmetry):
    body = "".join(f"{line}{values}\n" for line in MTX_TRIANGLE_PLUS.split("\n") if line)
    path = write(tmp_path / "g.mtx", f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% comment\n%\n4 4 4\n{body}")
    assert pairs(path) == sorted((u - 1, v - 1) for u, v in TRIANGLE_PLUS)
    assert tcdist.count_triangles(path, backend="cpu").triangles == 1


def test_matrix_market_lower_triangle_with_self_loops(tmp_path):
    """As ca-GrQc.mtx from SuiteSparse: symmetric, lower triangle stored, diagonal entries present."""
    path = write(tmp_path / "g.mtx.gz", "%%MatrixMarket matrix coordinate pattern symmetric\n%-----\n"
                                        "4 4 6\n1 1\n2 1\n3 1\n3 2\n4 3\n4 4\n", compress=True)
    result = tcdist.count_triangles(path, backend="cpu")
    assert (result.triangles, result.m, result.self_loops) == (1, 4, 2)


@pytest.mark.parametrize("name,content,expected", [
    ("graph", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "mtx"),
    ("graph.dat", "1 2\n", "edgelist"),
    ("graph.txt", "1 2\n", "edgelist"),
    ("graph.mtx.gz", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "mtx"),
])
def test_format_detection(tmp_path, name, content, expected):
    path = write(tmp_path / name, content, compress=name.endswith(".gz"))
    assert detect_format(path) == expected


def test_gzip_detected_by_content_not_name(tmp_path):
    path = write(tmp_path / "g.txt", "1 2\n2 3\n3 1\n", compress=True)
    assert tcdist.count_triangles(path, backend="cpu").triangles == 1


def test_hdf5_round_trip(tmp_path, cli):
    out = tmp_path / "fb.h5"
    assert cli("convert", "complete:30", out).code == 0
    g = tcdist.load_graph(out)
    direct = tcdist.load_graph("complete:30")
    assert g.fingerprint() == direct.fingerprint()
    assert np.array_equal(g.rowptr, direct.rowptr) and np.array_equal(g.col, direct.col)
    assert tcdist.count_triangles(out, backend="cpu").triangles == 4060


def test_a_fingerprint_is_taken_once_and_not_carried_to_another_csr():
    """It is kept on the graph (each --parts auto probe hashed the whole CSR again); a graph made
    from it with other arrays (dataclasses.replace, as on_host does) hashes its own."""
    from dataclasses import replace

    g = tcdist.load_graph("rmat:10")
    first = g.fingerprint()
    assert g.fingerprint() is first and replace(g).fingerprint() == first
    other = replace(g, col=g.col[::-1].copy())
    assert other.fingerprint() != first


def test_clean_edge_list_output_round_trips(tmp_path, cli):
    out = tmp_path / "clean.txt.gz"
    assert cli("convert", "rmat:10", out).code == 0
    assert tcdist.load_graph(out).fingerprint() == tcdist.load_graph("rmat:10").fingerprint()


UTF8_BOM = b"\xef\xbb\xbf"
MTX_TRIANGLE = b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 2\n3 1\n"


@pytest.mark.parametrize("name", ["g.txt", "g.txt.gz", "g.mtx", "g.mtx.gz", "g"])
def test_a_utf8_byte_order_mark_is_skipped(tmp_path, cli, name):
    """It stuck to the first field: '\\ufeff1 2' was taken as a header (0 triangles, exit 0), and an
    .mtx was refused for its banner."""
    mtx = ".mtx" in name or name == "g"  # 'g': the format sniffed from the content behind the mark
    path = write(tmp_path / name, UTF8_BOM + (MTX_TRIANGLE if mtx else b"1 2\n2 3\n3 1\n"), compress=name.endswith(".gz"))
    assert pairs(path) == ([(1, 0), (2, 0), (2, 1)] if mtx else [(1, 2), (2, 3), (3, 1)])
    record = cli("count", path, "--json").json()
    assert (record["triangles"], record["m"]) == (1, 3)


@pytest.mark.parametrize("how", ["-", "/dev/stdin", "fifo"])
@pytest.mark.parametrize("content", [b"1 2\n2 3\n3 1\n", MTX_TRIANGLE], ids=["edgelist", "mtx"])
def test_a_utf8_byte_order_mark_is_skipped_in_input_read_once(tmp_path, how, content):
    import json

    from conftest import count_read_once

    result = count_read_once(how, UTF8_BOM + content, tmp_path)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    # read as an edge list (the banner a comment), the size line '3 3 3' would be a self loop
    assert (record["triangles"], record["m"], record["self_loops"]) == (1, 3, 0)


@pytest.mark.parametrize("content", ["source target\n1 2\n2 3\n3 1\n3 4\n", "from,to\n1,2\n2,3\n3,1\n3,4\n",
                                     "FromNodeId\tToNodeId\tweight\n1\t2\t0.5\n2\t3\t1\n3\t1\t2\n3\t4\t1\n"])
def test_a_header_of_words_is_skipped(tmp_path, content):
    path = write(tmp_path / "g.txt", content)
    edges = read(path)
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == sorted(TRIANGLE_PLUS)
    assert len(edges.warnings) == 1 and f"{path}:1: skipped a header line" in edges.warnings[0]


@pytest.mark.parametrize("size_line", ["3 3 0", "3 3 0\n", "3 3 0 \n% a comment", "3 3 0\n\n"])
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_matrix_market_without_entries(tmp_path, cli, size_line, compress):
    """A size line that ended the file without a newline was 'no Matrix Market size line'."""
    path = write(tmp_path / "empty.mtx", f"%%MatrixMarket matrix coordinate pattern symmetric\n% c\n{size_line}", compress)
    assert read(path).src.size == 0
    record = cli("count", path, "--json").json()
    assert (record["triangles"], record["m"]) == (0, 0)


def test_matrix_market_whose_last_entry_has_no_newline(tmp_path):
    path = write(tmp_path / "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n4 4 4\n1 2\n2 3\n3 1\n3 4")
    assert pairs(path) == sorted((u - 1, v - 1) for u, v in TRIANGLE_PLUS)


def test_a_matrix_market_size_line_across_the_first_mib_is_refused_by_its_rule(tmp_path):
    """The header saw the first MiB of the block, and a size line cut there read as '4 4 4' cut
    short: now the header's rule (banner, comments and size line within the first MiB) says so."""
    banner = b"%%MatrixMarket matrix coordinate pattern general\n"
    comments = b"%" + b"c" * 98 + b"\n"
    head = banner + comments * ((1 << 20) // len(comments))
    head += b"%" * ((1 << 20) - 4 - len(head)) + b"\n"  # the size line starts 3 bytes before 1 MiB
    path = tmp_path / "g.mtx"
    path.write_bytes(head + b"4 4 4\n1 2\n2 3\n3 1\n3 4\n")
    with pytest.raises(InputError, match="no Matrix Market size line within the first 1 MiB"):
        read(path)


@pytest.mark.gpu
def test_a_matrix_market_file_compiles_on_the_gpu_nothing_that_its_text_does_not(tmp_path):
    """Its ids' range check is a pass of tcdist's own program, which a text read compiles too (it was
    seven CuPy array operations, each compiled on a fresh host: seconds of a first read)."""
    import json

    from conftest import FreshCudaCache, run_module

    n = 2000
    ends = [(a, b) for a in range(n) for b in (a + 1, a + 2) if b < n]  # a triangle at every a < n - 2
    m = len(ends)
    as_text = write(tmp_path / "g.txt", "".join(f"{a}\t{b}\n" for a, b in ends))
    as_mtx = write(tmp_path / "g.mtx", f"%%MatrixMarket matrix coordinate pattern general\n{n} {n} {m}\n"
                   + "".join(f"{a + 1} {b + 1}\n" for a, b in ends))
    cache = FreshCudaCache(tmp_path)

    def count(path):
        """(the triangles, the programs in the cache after counting path on the GPU)."""
        done = run_module("count", path, "--backend", "gpu", "--json", env=cache.env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["triangles"], cache.programs()

    triangles, programs = count(as_text)
    assert triangles == n - 2 and count(as_mtx) == (triangles, programs)


@pytest.mark.parametrize("small", [False, True], ids=["compiled", "numpy"])
def test_a_read_leaves_no_cycle_holding_its_buffers(tmp_path, monkeypatch, small):
    """The CPU engine's pending write held the engine: its scratch and read-ahead buffers outlived
    the read until Python's cycle collector ran, so the build and the next read paid for fresh
    memory (reads in a loop ran at half pyarrow's rate on 2 cores, the build held 125 MB more)."""
    import gc
    import weakref

    from tcdist import compiled
    from tcdist.io import engines, grammar

    path = write(tmp_path / "g.txt", "".join(f"{i}\t{i * 7 % 1000}\n" for i in range(100_000)))
    monkeypatch.setattr(compiled, "is_loaded", lambda: False)
    monkeypatch.setattr(grammar, "SMALL_BLOCK_BYTES", 1 << 30 if small else -1)
    monkeypatch.setattr(text, "CHUNK_BYTES", 1 << 16)  # several blocks
    made, make = [], engines.CpuEngine.__init__
    monkeypatch.setattr(engines.CpuEngine, "__init__", lambda engine, *args: (made.append(weakref.ref(engine)),
                                                                              make(engine, *args))[1])
    gc.collect()
    gc.disable()
    try:
        assert read(path).src.size == 100_000
        assert len(made) == 1 and made[0]() is None
    finally:
        gc.enable()
