"""Every rank reads its share (io/shares.py): for R = 1..5 ranks, the shares together hold exactly
the one-process reader's edges (the same multiset), its warnings and its errors, and every rank
reads about 1/R of the input."""

import gzip
import os
from collections import Counter

import numpy as np
import pytest
from conftest import bgzf, gzip_of

import tcdist
from tcdist.errors import InputError, TcdistError
from tcdist.io import generate, grammar, read, text
from tcdist.io.h5graph import read_graph, write_graph
from tcdist.io.shares import read_share
from tcdist.xp import to_numpy

RANKS = range(1, 6)
DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def edge_multiset(edges):
    return Counter(zip(to_numpy(edges.src).tolist(), to_numpy(edges.dst).tolist()))


def shares_of(source, ranks, **options):
    """Every rank's share, the ranks' joint checks made as a run makes them."""
    shares = [read_share(source, k, ranks, **options) for k in range(ranks)]
    facts = [share.facts for share in shares]
    for share in shares:
        share.check_together(facts)
    return shares


def assert_same_as_one_process(path, ranks, **options):
    one = read(path)
    shares = shares_of(path, ranks, **options)
    together = Counter()
    for share in shares:
        together.update(edge_multiset(share.edges))
        assert share.edges.src.dtype == share.edges.dst.dtype == np.int64
    assert together == edge_multiset(one)
    assert [w for share in shares for w in share.edges.warnings] == one.warnings
    return shares


def write(path, data):
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def random_lines(rng, count, top=1000):
    return [f"{u}\t{v}" for u, v in rng.integers(0, top, (count, 2)).tolist()]


BODY = "\n".join(random_lines(np.random.default_rng(3), 3000))
FILES = {
    "tabs, blanks, commas": "1\t2\n2 3\n3,1\n3  4\n",
    "weights, extra columns": "1 2 0.5\n2 3 1.5 9\n3 1 7\n3 4\n",
    "konect header": "% sym unweighted\n% 4 4 4\n1 2\n2 3\n3 1\n3 4\n",
    "comments inside": "1 2\n# a comment in the middle\n2 3\n3 1 % trailing comment\n\n3 4\n",
    "many lines": BODY + "\n",
    "snap header": "# Directed graph: x.txt\n# Nodes: 1000 Edges: 3000\n# FromNodeId\tToNodeId\n" + BODY,
    "header without #": "Directed graph\nFromNodeId\tToNodeId\n" + BODY + "\n",
    "crlf": BODY.replace("\n", "\r\n") + "\r\n",
    "lone cr": BODY.replace("\n", "\r"),
    "blank and comment lines": BODY.replace("\n", "\n\n# a comment\n  \t\n"),
    "no final newline": BODY,
    "byte-order mark": "\ufeff" + BODY,
    "one edge": "1 2",
    "empty": "",
    "a header alone": "# nothing but a header\n",
    "one-field header": "10900\n" + BODY,
}


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", FILES)
def test_edge_list_shares_are_the_one_process_edges(tmp_path, name, ranks):
    assert_same_as_one_process(write(tmp_path / "g.txt", FILES[name]), ranks)


def mtx_file(body_lines, header="%%MatrixMarket matrix coordinate pattern symmetric\n% a comment\n%\n", n=1000):
    return header + f"{n} {n} {len(body_lines)}\n" + "\n".join(body_lines) + "\n"


MTX_LINES = [f"{u + 1} {v + 1}" for u, v in np.random.default_rng(4).integers(0, 1000, (3000, 2)).tolist()]


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("ends", ["\n", "\r\n"])
def test_matrix_market_shares_are_the_one_process_edges(tmp_path, ranks, ends):
    path = write(tmp_path / "g.mtx", mtx_file(MTX_LINES).replace("\n", ends))
    shares = assert_same_as_one_process(path, ranks)
    assert min(int(share.edges.src.min()) for share in shares if len(share.edges)) == 0  # made 0-based


@pytest.mark.parametrize("ranks", [2, 5])
def test_many_blocks_per_range_and_the_compiled_parse(tmp_path, monkeypatch, ranks):
    monkeypatch.setattr(text, "CHUNK_BYTES", 997)
    monkeypatch.setattr(grammar, "SMALL_BLOCK_BYTES", -1)
    assert_same_as_one_process(write(tmp_path / "g.txt", FILES["snap header"]), ranks)
    assert_same_as_one_process(write(tmp_path / "g.mtx", mtx_file(MTX_LINES)), ranks)


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("bad_at", [1, 2, 1499, 2999])
def test_a_bad_line_is_named_by_its_number_in_the_file(tmp_path, ranks, bad_at):
    lines = random_lines(np.random.default_rng(5), 3000)
    lines[bad_at] = "12 x"
    path = write(tmp_path / "g.txt", "# a header\n" + "\r\n".join(lines) + "\n")
    with pytest.raises(InputError) as one:
        read(path)
    assert one.value.line == bad_at + 2
    failed = []
    for k in range(ranks):
        try:
            read_share(path, k, ranks)
        except InputError as e:
            failed.append(str(e))
    assert failed == [str(one.value)]  # the one rank whose range holds it


@pytest.mark.parametrize("ranks", [3, 5])
def test_matrix_market_errors_are_the_one_process_errors(tmp_path, ranks):
    lines = list(MTX_LINES)
    lines[2500] = "7 1001"
    path = write(tmp_path / "g.mtx", mtx_file(lines))
    with pytest.raises(InputError, match=r"g.mtx:2505: entry \(7, 1001\) is out of range 1..1000$") as one:
        read(path)
    failed = [str(e) for e in _errors(path, ranks)]
    assert failed == [str(one.value)]

    path = write(tmp_path / "g.mtx", mtx_file(MTX_LINES).replace(" 3000\n", " 2999\n", 1))
    with pytest.raises(InputError, match="declares 2999 entries but the file holds 3000") as one:
        read(path)
    shares = [read_share(path, k, ranks) for k in range(ranks)]
    for share in shares:  # each rank alone cannot tell
        with pytest.raises(InputError) as together:
            share.check_together([s.facts for s in shares])
        assert str(together.value) == str(one.value)

    path = write(tmp_path / "g.mtx", mtx_file(MTX_LINES, header="%%MatrixMarket matrix array real general\n"))
    with pytest.raises(InputError) as one:
        read(path)
    assert [str(e) for e in _errors(path, ranks)] == [str(one.value)] * ranks  # the head: every rank reads it


def _errors(path, ranks):
    found = []
    for k in range(ranks):
        try:
            read_share(path, k, ranks)
        except InputError as e:
            found.append(e)
    return found


def test_binary_data_is_refused_by_rank_0_as_by_one_process(tmp_path):
    path = write(tmp_path / "g.txt", b"1 2\n\x00\x01\x02" + b"3 4\n" * 4000)
    with pytest.raises(InputError) as one:
        read(path)
    with pytest.raises(InputError) as first:
        read_share(path, 0, 3)
    assert str(first.value) == str(one.value) and "binary data" in str(one.value)


def balanced(shares, total):
    return [abs(share.read_bytes / (total / len(shares)) - 1) for share in shares]


@pytest.mark.parametrize("ranks", RANKS)
def test_every_rank_reads_about_its_share_of_a_text_file(tmp_path, ranks):
    rng = np.random.default_rng(6)
    path = write(tmp_path / "g.txt", "# a header\n" + "\n".join(random_lines(rng, 100_000, 10**6)) + "\n")
    shares = assert_same_as_one_process(path, ranks)
    assert max(balanced(shares, os.path.getsize(path))) < 0.10
    lines = [f"{u} {v}" for u, v in rng.integers(1, 10**6, (100_000, 2)).tolist()]
    path = write(tmp_path / "g.mtx", mtx_file(lines, n=10**6))
    shares = assert_same_as_one_process(path, ranks)
    assert max(balanced(shares, os.path.getsize(path))) < 0.10


@pytest.mark.parametrize("spec", ["rmat:9", "rmat:8:4", "er:300:5000", "grid:6:7", "complete:9", "tripartite:2:3:4"])
@pytest.mark.parametrize("ranks", RANKS)
def test_each_rank_draws_its_own_pieces_of_a_generator(spec, ranks):
    whole = generate(spec, seed=5)
    shares = shares_of(spec, ranks, seed=5)
    assert np.array_equal(np.concatenate([s.edges.src for s in shares]), whole.src)
    assert np.array_equal(np.concatenate([s.edges.dst for s in shares]), whole.dst)
    assert max(len(s.edges) for s in shares) - min(len(s.edges) for s in shares) <= 1
    assert all(s.read_bytes == 0 for s in shares)


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("kinds", [("bgzf", "gzip"), ("bgzf", "gzip", "bgzf"), ("gzip", "bgzf")])
def test_bgzf_with_plain_gzip_members_is_read_as_one_process_reads_it(tmp_path, kinds, ranks):
    """Before: refused as truncated or corrupt gzip data by a rank that met the plain member."""
    path = write(tmp_path / "g.txt.gz", gzip_of(("# a header\n" + BODY + "\n").encode(), kinds, block=2000))
    assert_same_as_one_process(path, ranks)


def test_a_bad_spec_is_the_generator_error():
    with pytest.raises(TcdistError, match="rmat: scale must be 1..40"):
        read_share("rmat:41", 1, 2)
    with pytest.raises(TcdistError, match="expected er:N:M"):
        read_share("er:5", 0, 2)


def graph_file(tmp_path, spec="rmat:11"):
    path = tmp_path / "g.h5"
    write_graph(tcdist.load_graph(spec), path)
    return path


@pytest.mark.parametrize("ranks", RANKS)
def test_graph_file_rows_together_are_the_graph(tmp_path, ranks):
    path = graph_file(tmp_path)
    graph = read_graph(path)
    shares = shares_of(path, ranks)
    rows = [share.rows for share in shares]
    assert rows[0].first_row == 0 and rows[-1].end_row == graph.n
    assert all(a.end_row == b.first_row for a, b in zip(rows, rows[1:]))
    for r in rows:  # not rebased: each row's first column is at rowptr's entry in the whole col
        assert np.array_equal(r.rowptr, graph.rowptr[r.first_row : r.end_row + 1])
        assert np.array_equal(r.col, graph.col[r.rowptr[0] : r.rowptr[-1]])
        assert np.array_equal(r.original_id, graph.original_id[r.first_row : r.end_row])
        assert r.header["fingerprint"] == graph.fingerprint() and (r.header["n"], r.header["m"]) == (graph.n, graph.m)
    # the rows' bytes: rowptr and original_id per row, the columns
    arrays = 16 * graph.n + graph.col.itemsize * graph.m
    assert max(balanced(shares, arrays)) < 0.10


def test_a_graph_file_damaged_in_one_rank_s_rows_fails_its_digest_on_every_rank(tmp_path):
    import h5py

    path = graph_file(tmp_path)
    with h5py.File(path) as f:
        at = f["col"].id.get_offset() + f["col"].nbytes - 8  # in the last rank's rows
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(data)
    with pytest.raises(InputError) as one:
        read_graph(path)
    shares = [read_share(path, k, 3) for k in range(3)]
    for share in shares:
        with pytest.raises(InputError) as together:
            share.check_together([s.facts for s in shares])
        assert str(together.value) == str(one.value) and "do not match its digest" in str(one.value)


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("change", ["backward", "unsorted", "outside"])
def test_a_consistently_signed_bad_csr_is_named_as_one_process_names_it(tmp_path, monkeypatch, change, compiled):
    from tcdist.graph import check

    monkeypatch.setattr(check, "COMPILED_FROM", 0 if compiled else 1 << 40)
    graph = tcdist.load_graph("rmat:9")
    graph.col = graph.col.copy()
    rows = np.flatnonzero(np.diff(graph.rowptr) > 1)
    u = int(rows[-1])  # in the last rank's rows
    if change == "backward":
        graph.col[graph.rowptr[u]] = 0
    elif change == "outside":
        graph.col[graph.rowptr[u + 1] - 1] = graph.n
    else:
        graph.col[graph.rowptr[u] : graph.rowptr[u] + 2] = graph.col[graph.rowptr[u] : graph.rowptr[u] + 2][::-1]
    write_graph(graph, tmp_path / "g.h5")
    with pytest.raises(InputError) as one:
        read_graph(tmp_path / "g.h5")
    shares = [read_share(tmp_path / "g.h5", k, 4) for k in range(4)]
    with pytest.raises(InputError) as together:
        shares[0].check_together([s.facts for s in shares])
    assert str(together.value) == str(one.value) and "inconsistent CSR arrays" in str(one.value)


def test_names_as_ids_are_read_whole_by_rank_0_with_a_notice(tmp_path):
    path = write(tmp_path / "g.txt", "alice bob\nbob carol\ncarol alice\n")
    shares = [read_share(path, k, 3, labels=True) for k in range(3)]
    assert list(shares[0].edges.labels) == ["alice", "bob", "carol"] and len(shares[0].edges) == 3
    assert shares[0].edges.warnings == [f"{path}: read whole by rank 0 (names numbered together cannot be shared "
                                        "out among ranks)"]
    assert all(len(share.edges) == 0 and share.read_bytes == 0 for share in shares[1:])


def test_an_object_stays_with_rank_0():
    import networkx as nx

    from tcdist.io.objects import edges_of

    graph = nx.complete_graph(5)
    shares = [read_share(graph, k, 2) for k in range(2)]
    assert edge_multiset(shares[0].edges) == edge_multiset(edges_of(graph)) and len(shares[0].edges) == 10
    assert len(shares[1].edges) == 0


def test_a_missing_file_is_named_on_every_rank(tmp_path):
    for k in range(3):
        with pytest.raises(InputError, match="no such file"):
            read_share(tmp_path / "nope.txt", k, 3)


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [1, 3])
def test_shares_parsed_on_the_gpu_are_the_one_process_edges(tmp_path, ranks):
    import cupy

    for path in (write(tmp_path / "g.txt", FILES["snap header"]), write(tmp_path / "g.mtx", mtx_file(MTX_LINES)),
                 write(tmp_path / "g.txt.gz", bgzf(FILES["crlf"].encode(), 2000)),
                 write(tmp_path / "s.txt.gz", gzip.compress(FILES["crlf"].encode()))):
        shares = assert_same_as_one_process(path, ranks, gpu_room=8 << 30)
        assert all(isinstance(share.edges.src, cupy.ndarray) for share in shares)
    shares = shares_of("rmat:10", ranks, xp=cupy)
    assert np.array_equal(cupy.concatenate([s.edges.src for s in shares]).get(), generate("rmat:10").src)


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", sorted(n for n in os.listdir(DATA) if n.endswith(".gz")))
def test_gzip_streams_of_the_test_data_are_shared_as_one_process_reads_them(name, ranks):
    shares = assert_same_as_one_process(os.path.join(DATA, name), ranks)
    assert all(share.read_bytes == os.path.getsize(os.path.join(DATA, name)) for share in shares)  # each inflates it


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name", ["snap header", "crlf", "lone cr", "blank and comment lines", "byte-order mark",
                                  "one edge", "a header alone", "one-field header"])
@pytest.mark.parametrize("member", [65280, 333])
def test_bgzf_members_are_cut_and_give_the_one_process_edges(tmp_path, name, ranks, member):
    assert_same_as_one_process(write(tmp_path / "g.txt.gz", bgzf(FILES[name].encode(), member)), ranks)


@pytest.mark.parametrize("ranks", [2, 5])
def test_a_bgzf_matrix_market_file_is_cut_at_members(tmp_path, ranks):
    assert_same_as_one_process(write(tmp_path / "g.mtx.gz", bgzf(mtx_file(MTX_LINES).encode(), 1000)), ranks)


@pytest.mark.parametrize("ranks", RANKS)
def test_every_rank_reads_about_its_share_of_a_bgzf_file(tmp_path, ranks):
    lines = random_lines(np.random.default_rng(8), 400_000, 10**6)
    path = write(tmp_path / "g.txt.gz", bgzf(("# a header\n" + "\n".join(lines) + "\n").encode()))
    shares = assert_same_as_one_process(path, ranks)
    assert max(balanced(shares, os.path.getsize(path))) < 0.10


@pytest.mark.parametrize("compress", ["bgzf", "gzip"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_a_bad_line_in_gzip_data_is_named_by_its_number(tmp_path, monkeypatch, compress, ranks):
    monkeypatch.setattr(text, "CHUNK_BYTES", 50_000)  # a single stream: many blocks, each rank its own
    lines = random_lines(np.random.default_rng(9), 30_000)
    lines[20_000] = "1 y"
    data = ("# a header\n" + "\n".join(lines) + "\n").encode()
    path = write(tmp_path / "g.txt.gz", bgzf(data, 3000) if compress == "bgzf" else gzip.compress(data))
    with pytest.raises(InputError) as one:
        read(path)
    assert one.value.line == 20_002
    assert [str(e) for e in _errors(path, ranks)] == [str(one.value)]


def test_damaged_bgzf_data_is_corrupt_gzip_data(tmp_path):
    data = bytearray(bgzf(FILES["many lines"].encode(), 2000))
    data[len(data) // 2] ^= 0xFF
    path = write(tmp_path / "g.txt.gz", bytes(data))
    with pytest.raises(InputError, match="truncated or corrupt gzip data"):
        read(path)
    assert any("truncated or corrupt gzip data" in str(e) for e in _errors(path, 3))


@pytest.mark.parametrize("ranks", [1, 3])
def test_a_header_longer_than_the_heads_tried_is_found_as_one_process_finds_it(tmp_path, ranks):
    comments = "# a long comment to make a long header\n" * 1200  # 47 KB: past every head tried but the first block
    assert_same_as_one_process(write(tmp_path / "g.txt", comments + "source target\n" + BODY), ranks)
    path = write(tmp_path / "g.mtx", mtx_file(MTX_LINES, header="%%MatrixMarket matrix coordinate pattern general\n"
                                                                 + comments.replace("#", "%") * 16))  # 750 KB
    assert_same_as_one_process(path, ranks)
