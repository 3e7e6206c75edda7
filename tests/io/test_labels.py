"""Text edge lists whose ids are names (--labels), against networkx on the same pairs."""

import gzip

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcdist
from tcdist.errors import InputError, OptionError

NAMES = ["alice", "bob", "carol", "dave", "3", "03", "Zoë", "北京", "x-1", "a.b", "_", "eve", "mallory", "trent"]
SEPARATORS = [" ", "\t", ",", " , ", "  \t"]
LINE_ENDS = ["\n", "\r\n", "\r"]


def written(pairs, draw_layout) -> bytes:
    """The pairs as text: separators and line ends drawn per line, comments and blank lines among them."""
    lines = ["# a comment first"]
    for a, b in pairs:
        sep, extra, comment = draw_layout()
        lines.append(f"{a}{sep}{b}" + (f"{sep}7" if extra else "") + (" # note" if comment else ""))
        if comment:
            lines.append("")
    return "".join(line + LINE_ENDS[len(line) % 3] for line in lines).encode()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)), max_size=60), st.data(), st.booleans())
def test_names_count_as_networkx_counts_them(tmp_path_factory, pairs, data, zipped):
    """Per-vertex triangles by name equal networkx's on a graph made from the same pairs (self
    loops and repeats dropped); 3 and 03 are two vertices."""
    layout = lambda: (data.draw(st.sampled_from(SEPARATORS)), data.draw(st.booleans()), data.draw(st.booleans()))  # noqa: E731
    path = tmp_path_factory.mktemp("labels") / ("g.txt.gz" if zipped else "g.txt")
    text = written(pairs, layout)
    path.write_bytes(gzip.compress(text) if zipped else text)
    g = nx.Graph((a, b) for a, b in pairs if a != b)
    r = tcdist.count_triangles(path, labels=True, per_vertex=True, backend="cpu")
    assert r.triangles == sum(nx.triangles(g).values()) // 3
    assert dict(zip(r.per_vertex.vertex, r.per_vertex.triangles.tolist())) == nx.triangles(g)
    assert list(r.per_vertex.vertex) == sorted(g.nodes, key=lambda name: name.encode())


def test_the_cli_shows_names_in_every_output(tmp_path, cli):
    path = tmp_path / "people.tsv"
    path.write_text("alice\tbob\nbob\tcarol\ncarol\talice\ncarol\tdave\n")
    out = cli("count", path, "--labels", "--per-vertex", "-", "-q")
    assert out.code == 0 and out.out.splitlines() == ['vertex,triangles,clustering', '"alice",1,1', '"bob",1,1',
                                                      '"carol",1,0.3333333333333333', '"dave",0,0']
    listed = cli("list", path, "--labels", "-o", "-")
    assert listed.code == 0 and listed.out.splitlines() == ["u,v,w", '"alice","bob","carol"']
    info = cli("info", path, "--labels", "--json")
    assert info.code == 0 and info.json()["n"] == 4


def test_names_without_labels_are_refused_with_the_way_to_read_them(tmp_path, cli):
    path = tmp_path / "people.txt"
    path.write_text("alice bob\nbob carol\n")  # (a line alone would be a header: an empty graph)
    out = cli("count", path)
    assert out.code == 2
    assert out.err.strip() == (f"tcdist: error: {path}:1: 'alice' is not an integer vertex id (decimal digits only; "
                               "to read ids as names, use --labels)")
    assert cli("count", path, "--labels", "-q").out.strip() == "0"
    path.write_text("1.5 2\n")  # a number that is not an integer: no names to read
    assert cli("count", path).err.strip().endswith("'1.5' is not an integer vertex id (decimal digits only)")


BLANK_CELL = "expected two vertex names, found an empty one (a blank CSV cell)"


@pytest.mark.parametrize("text,line,problem", [
    (b"a b\nc\n", 2, "expected two vertex names, found one"),
    (b"a b\r\n# c d\r\n\r\n  e  \r\n", 4, "expected two vertex names, found one"),
    (b"a b\rc d\re", 3, "expected two vertex names, found one"),
    (b"a b\n" * 5000 + b"c\x00d e\n", 5001, "binary data (a NUL byte), not a text graph"),
    (b"a b\n" * 5000 + b"\x00", 5001, "binary data (a NUL byte), not a text graph"),
    (b"a,b\nb,,c\n", 2, BLANK_CELL),  # read as b - c
    (b"a,b\r\n,c\r\n", 2, BLANK_CELL),
    (b"a,b\nc,\n", 2, BLANK_CELL),
    (b"a,b\nc , # d\n", 2, BLANK_CELL),
    (b"a b\n ,  ,\n", 2, BLANK_CELL),
])
def test_a_bad_line_is_named(tmp_path, text, line, problem):
    path = tmp_path / "bad.txt"
    path.write_bytes(text)
    with pytest.raises(InputError) as e:
        tcdist.count_triangles(path, labels=True)
    assert (e.value.line, e.value.problem) == (line, problem)


def test_blank_cells_after_the_two_names_are_ignored(tmp_path):
    path = tmp_path / "g.csv"
    path.write_bytes(b"a,b,,\nb , c,\nc,a,,7\n")
    r = tcdist.count_triangles(path, labels=True, per_vertex=True)
    assert r.triangles == 1 and list(r.per_vertex.vertex) == ["a", "b", "c"]


_PEAK = """
import resource, sys
import networkx as nx
import pandas as pd
import pyarrow as pa
import tcdist
from tcdist.io.per_edge import write_per_edge
from tcdist.io.per_vertex import write_per_vertex

kind, length, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = [f"v{i}" for i in range(1000)]
names[7] += "x" * length
pairs = [(names[i], names[(i + step) % 1000]) for step in (1, 2) for i in range(1000)]
labels = kind == "file"
if labels:
    source = f"{folder}/g.txt"
    with open(source, "w") as f:
        f.writelines(f"{a} {b}\\n" for a, b in pairs)
else:
    columns = {"src": [a for a, _ in pairs], "dst": [b for _, b in pairs]}
    source = {"lists": (columns["src"], columns["dst"]), "networkx": nx.Graph(pairs), "pandas": pd.DataFrame(columns),
              "arrow": pa.table(columns)}[kind]
r = tcdist.count_triangles(source, backend="cpu", labels=labels, per_vertex=True, per_edge=True)
for table in ("csv", "parquet", "h5"):
    write_per_vertex(r.per_vertex, f"{folder}/v.{table}")
    write_per_edge(r.per_edge, f"{folder}/e.{table}")
listed = tcdist.list_triangles(source, f"{folder}/t.csv", labels=labels)["triangles"]
print(r.triangles, sum(r.per_vertex.triangles.tolist()) // 3, listed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("kind", ["file", "lists", "networkx", "pandas", "arrow"])
def test_a_long_name_takes_its_bytes_not_the_edges_times_its_length(tmp_path, kind):
    """2,000 edges, one name of 256 KiB: counted, written and listed within 300 MiB of the same graph
    with short names (names as wide as the longest took 2 GB for per-vertex files alone, and more for
    --labels)."""
    import subprocess
    import sys

    triangles = sum(nx.triangles(nx.Graph((i, (i + step) % 1000) for step in (1, 2) for i in range(1000))).values()) // 3
    peaks = []
    for length in (0, 256 << 10):
        done = subprocess.run([sys.executable, "-c", _PEAK, kind, str(length), str(tmp_path)], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        *counts, peak = map(int, done.stdout.split())
        assert counts == [triangles] * 3
        peaks.append(peak)  # KiB
    assert peaks[1] - peaks[0] < 300 << 10, peaks


def test_labels_are_refused_where_ids_are_numbers(tmp_path):
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n")
    with pytest.raises(OptionError, match="reads text edge lists, and this is a Matrix Market file"):
        tcdist.count_triangles(mtx, labels=True)
    with pytest.raises(OptionError, match="give the path of one"):
        tcdist.count_triangles("rmat:6", labels=True)
    with pytest.raises(OptionError, match="give the path of one"):
        tcdist.count_triangles(np.array([[0, 1]]), labels=True)


def test_a_name_that_is_not_utf8_differs_from_the_text_of_its_escape(tmp_path, cli):
    """The byte \\xe9 was decoded as the text \\xe9: two vertices came out as two rows of one name."""
    import h5py
    import pyarrow.parquet as pq

    path = tmp_path / "latin1.txt"
    path.write_bytes(b"a b\nb \\xe9\n\\xe9 a\na \xe9\n\xe9 b\n")  # a triangle on each of the two
    r = tcdist.count_triangles(path, labels=True, per_vertex=True, backend="cpu")
    assert r.triangles == 2 and list(r.per_vertex.vertex) == ["\\xe9", "a", "b", b"\xe9"]
    names = [b"\\xe9", b"a", b"b", b"\xe9"]
    for name in ("pv.csv", "pv.parquet", "pv.h5", "t.csv", "t.parquet"):
        args = ("list", path, "-o", tmp_path / name) if name[0] == "t" else ("count", path, "--per-vertex",
                                                                              tmp_path / name)
        assert cli(*args, "--labels").code == 0
    # in a CSV every name as Python writes its bytes: the text b'\xe9' apart from the byte \xe9's b'\xe9'
    assert (tmp_path / "pv.csv").read_text().splitlines()[1:] == [
        '"b\'\\\\xe9\'",1,1', '"b\'a\'",2,0.6666666666666666', '"b\'b\'",2,0.6666666666666666', '"b\'\\xe9\'",1,1']
    assert (tmp_path / "t.csv").read_text().splitlines() == [
        "u,v,w", '"b\'\\\\xe9\'","b\'a\'","b\'b\'"', '"b\'a\'","b\'b\'","b\'\\xe9\'"']
    written = tmp_path / "written.txt"
    written.write_bytes(b"\xe9 b\nb c\nc \xe9\nb'\\xe9' x\n")  # a name that is the text of the byte's escape
    assert cli("count", written, "--labels", "--per-vertex", tmp_path / "w.csv").code == 0
    rows = (tmp_path / "w.csv").read_text().splitlines()[1:]
    assert len({row.rsplit(",", 2)[0] for row in rows}) == len(rows) == 5, rows
    assert pq.read_table(tmp_path / "pv.parquet").column("vertex").to_pylist() == names
    assert pq.read_table(tmp_path / "t.parquet").to_pydict() == {"u": names[:2], "v": names[1:3], "w": names[2:]}
    with h5py.File(tmp_path / "pv.h5") as f:
        assert list(f["vertex"][:]) == names


def test_a_byte_order_mark_is_not_part_of_the_first_name(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfalice bob\nbob carol\ncarol alice\n")
    r = tcdist.count_triangles(path, labels=True, per_vertex=True)
    assert r.triangles == 1 and list(r.per_vertex.vertex) == ["alice", "bob", "carol"]


@pytest.mark.parametrize("command,output,parts", [(("partition", "-o", "parts.h5", "-P", "2"), "parts.h5", ("-P", "2")),
                                                 (("convert", "graph.h5"), "graph.h5", ())])
def test_partition_and_convert_advise_a_count_that_reads_names_and_it_counts_them(tmp_path, cli, monkeypatch, command,
                                                                                  output, parts):
    """They advised --labels, which neither takes (a store or a graph file keeps integer ids)."""
    monkeypatch.chdir(tmp_path)
    pairs = [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("carol", "dave"), ("dave", "alice")]
    path = tmp_path / "people.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in pairs))
    refused = cli(command[0], path, *command[1:])
    assert refused.code == 2 and not (tmp_path / output).exists()
    advice = "use tcdist count --labels; a partition store or a converted graph keeps integer ids)"
    assert refused.err.strip().endswith(advice), refused.err
    followed = cli("count", path, "--labels", *parts, "--json")
    assert followed.code == 0, followed.err
    assert followed.json()["triangles"] == sum(nx.triangles(nx.Graph(pairs)).values()) // 3 == 2
    call = {"partition": lambda: tcdist.api.partition(path, parts=2), "convert": lambda: tcdist.api.convert(path, "g.h5")}
    with pytest.raises(InputError, match=r"use count_triangles\(labels=True\); a partition store"):
        call[command[0]]()
    assert tcdist.count_triangles(path, labels=True).triangles == 2


def test_tcdist_s_own_csv_reads_back_with_labels(tmp_path, cli):
    """A .csv tcdist writes starts with its header row: read with --labels, it was an edge between
    two vertices named source and target."""
    path = tmp_path / "g.csv"
    assert cli("generate", "rmat:8", "-o", path).code == 0
    by_ids, by_names = cli("count", path, "--json").json(), cli("count", path, "--labels", "--json").json()
    assert (by_names["n"], by_names["m"], by_names["triangles"]) == (by_ids["n"], by_ids["m"], by_ids["triangles"])
    path.write_text("source,target\nsource,x\nx,target\n")  # a file whose edges merely name those vertices
    assert cli("count", path, "--labels", "--json").json()["m"] == 2
