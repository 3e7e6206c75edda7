"""Edge lists tcdist writes (generate, convert) and reads: a .csv is CSV that pandas reads, every
suffix written is read back, and the one list of suffixes is what the help, the errors and the docs say."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import brute_force_triangles

import tcdist
from tcdist.config import CSV_EDGE_COLUMNS, EDGE_LIST_SUFFIXES, HDF5_SUFFIXES, MTX_SUFFIXES
from tcdist.io import generate
from tcdist.io.shares import read_share

DOCS = Path(__file__).parents[2] / "docs"


def _frame(path):
    frame = pd.read_csv(path)
    assert list(frame.columns) == list(CSV_EDGE_COLUMNS) == ["source", "target"]
    assert list(frame.dtypes) == [np.int64, np.int64]
    return frame


@pytest.mark.parametrize("name", ["g.csv", "g.csv.gz", "G.CSV"])
def test_generate_writes_csv_that_pandas_reads_as_the_edges(tmp_path, cli, name):
    assert cli("generate", "rmat:8", "-o", tmp_path / name).code == 0
    edges = generate("rmat:8")
    frame = _frame(tmp_path / name)
    assert np.array_equal(frame["source"], edges.src) and np.array_equal(frame["target"], edges.dst)


@pytest.mark.parametrize("name", ["c.csv", "c.csv.gz"])
def test_convert_writes_csv_that_pandas_reads_as_the_clean_edges(tmp_path, cli, name):
    raw = tmp_path / "g.txt"
    raw.write_text("5 7\n7 5\n7 7\n7 9\n9 5\n9 5\n12 5\n")
    assert cli("convert", raw, tmp_path / name).code == 0
    frame = _frame(tmp_path / name)
    written = {frozenset(pair) for pair in zip(frame["source"].tolist(), frame["target"].tolist())}
    assert len(frame) == len(written) == 4 and written == {frozenset(p) for p in [(5, 7), (7, 9), (9, 5), (12, 5)]}


def test_count_of_the_csv_is_count_of_the_txt(tmp_path, cli):
    for name in ("g.txt", "g.csv"):
        assert cli("generate", "rmat:8", "-o", tmp_path / name).code == 0
    pairs = zip(generate("rmat:8").src.tolist(), generate("rmat:8").dst.tolist())
    records = [cli("count", tmp_path / name, "--backend", "cpu", "--json").json() for name in ("g.txt", "g.csv")]
    assert records[0]["triangles"] == records[1]["triangles"] == brute_force_triangles(pairs) > 0
    assert records[1]["m"] == records[0]["m"] and records[1]["warnings"] == []  # its header row is no news


def test_the_ranks_read_a_csv_whole_and_its_header_row_once(tmp_path):
    path = tmp_path / "g.csv"
    tcdist.write_generated("rmat:7", path)
    shares = [read_share(path, rank, 3) for rank in range(3)]
    edges = generate("rmat:7")
    assert np.array_equal(np.concatenate([s.edges.src for s in shares]), edges.src)
    assert np.array_equal(np.concatenate([s.edges.dst for s in shares]), edges.dst)
    assert all(s.edges.warnings == [] for s in shares)


def test_a_csv_header_after_its_first_line_is_still_said(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("# written by hand\nsource,target\n1,2\n")
    assert tcdist.load_graph(path).warnings == [f"{path}:2: skipped a header line before the first edge "
                                               "('source target')"]


@pytest.mark.parametrize("suffix", [s + gz for s in EDGE_LIST_SUFFIXES for gz in ("", ".gz")])
def test_every_edge_list_suffix_is_written_and_read_back(tmp_path, suffix):
    path = tmp_path / f"g{suffix}"
    tcdist.write_generated("rmat:7", path)
    edges = generate("rmat:7")
    csv = suffix.startswith(".csv")
    text = pd.read_csv(path, sep="," if csv else "\t", header=0 if csv else None)
    assert np.array_equal(text.to_numpy(), np.stack([edges.src, edges.dst], 1))
    assert tcdist.load_graph(path).warnings == []
    pairs = zip(edges.src.tolist(), edges.dst.tolist())
    assert tcdist.count_triangles(path, backend="cpu").triangles == brute_force_triangles(pairs)


def _listed(text):
    """The suffixes written in a text, in order ('.txt .tsv', '.txt, .tsv', '`.txt .tsv`')."""
    return tuple(re.findall(r"\.[a-z0-9]+", text))


def test_help_errors_and_docs_list_the_suffixes_of_the_code(tmp_path, cli):
    top = " ".join(cli("--help").out.split())
    assert _listed(re.search(r"edge lists \(([^;]*);", top).group(1)) == EDGE_LIST_SUFFIXES
    assert _listed(re.search(r"Matrix Market coordinate files \(([^)]*)\)", top).group(1)) == MTX_SUFFIXES
    assert _listed(re.search(r"tcdist HDF5 graphs \(([^)]*)\)", top).group(1)) == HDF5_SUFFIXES
    for command in ("convert", "generate"):
        text = " ".join(cli(command, "--help").out.split())
        assert _listed(re.search(r"a text edge list \(([^;]*);", text).group(1)) == EDGE_LIST_SUFFIXES
        assert f"header row {','.join(CSV_EDGE_COLUMNS)}," in text

    error = cli("generate", "rmat:6", "-o", tmp_path / "g.dat").err
    assert _listed(re.search(r"HDF5 \(([^)]*)\)", error).group(1)) == HDF5_SUFFIXES
    assert _listed(re.search(r"text edge lists \(([^)]*), each", error).group(1)) == EDGE_LIST_SUFFIXES

    rows = {row.split("|")[1].strip(): row.split("|")[2] for row in (DOCS / "inputs.md").read_text().splitlines()
            if row.startswith("| ") and row.count("|") >= 4}
    assert _listed(rows["edge list (SNAP, KONECT, Graph Challenge)"]) == EDGE_LIST_SUFFIXES
    assert _listed(rows["Matrix Market coordinate"]) == MTX_SUFFIXES
    assert _listed(rows["tcdist HDF5 graph"]) == HDF5_SUFFIXES
    assert f"`{','.join(CSV_EDGE_COLUMNS)}`" in (DOCS / "outputs.md").read_text()


@pytest.mark.parametrize("args,columns,rows", [(("list", "-o"), ["u", "v", "w"], 10),
                                               (("count", "-q", "--per-vertex"), ["vertex", "triangles"], 5),
                                               (("count", "-q", "--per-edge"), ["u", "v", "triangles"], 10)])
def test_the_other_csv_tables_are_csv(tmp_path, cli, args, columns, rows):
    """Of K_5: 10 triangles, 5 vertices in 6 each, 10 edges in 3 each."""
    assert cli(args[0], "complete:5", *args[1:], tmp_path / "t.csv").code == 0
    frame = pd.read_csv(tmp_path / "t.csv")
    assert list(frame.columns[:len(columns)]) == columns and len(frame) == rows
    assert all(frame[c].dtype == np.int64 for c in columns)
    if "triangles" in columns:
        assert set(frame["triangles"]) == {6 if columns[0] == "vertex" else 3}
