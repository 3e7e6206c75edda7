"""In-memory ids count exactly whatever integer type holds them, and come back as they were given."""

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcdist

TOP = 2**64 - 1
HALF = 2**63


def _graph(ids):
    """A random graph (and a K4 at its first ids) whose vertex v is ids[v]."""
    g = nx.gnm_random_graph(60, 400, seed=3)
    g.add_edges_from((u, v) for u in range(4) for v in range(u + 1, 4))
    return nx.relabel_nodes(g, dict(enumerate(ids)))


def _check(source, g):
    """Triangles and per-vertex ids and counts as networkx finds them in g."""
    result = tcdist.count_triangles(source, backend="cpu", per_vertex=True)
    expected = nx.triangles(g)
    assert result.triangles == sum(expected.values()) // 3
    assert dict(zip(result.per_vertex.vertex.tolist(), result.per_vertex.triangles.tolist())) == expected


def _arrays(g, dtype):
    src, dst = zip(*g.edges)
    return np.array(src, dtype), np.array(dst, dtype)


NEAR_TOP = [TOP - 7 * v for v in range(60)]
AROUND_HALF = [HALF - 30 + v for v in range(60)]
FROM_HALF = [HALF + v for v in range(60)]


@pytest.mark.parametrize("ids", [NEAR_TOP, AROUND_HALF, FROM_HALF], ids=["near 2^64-1", "around 2^63", "from 2^63"])
def test_uint64_arrays(ids):
    g = _graph(ids)
    _check(_arrays(g, np.uint64), g)


def test_a_uint64_triangle_at_the_top():
    src, dst = np.array([TOP, TOP - 1, TOP - 2], np.uint64), np.array([TOP - 1, TOP - 2, TOP], np.uint64)
    result = tcdist.count_triangles((src, dst), backend="cpu", per_vertex=True)
    assert result.triangles == 1 and sorted(result.per_vertex.vertex.tolist()) == [TOP - 2, TOP - 1, TOP]


@pytest.mark.parametrize("ids", [NEAR_TOP, AROUND_HALF], ids=["near 2^64-1", "around 2^63"])
def test_pandas_uint64(ids):
    g = _graph(ids)
    src, dst = _arrays(g, np.uint64)
    _check(pd.DataFrame({"source": src, "target": dst}), g)
    _check((pd.Series(src), pd.Series(dst)), g)


@pytest.mark.parametrize("ids", [NEAR_TOP, AROUND_HALF], ids=["near 2^64-1", "around 2^63"])
def test_pyarrow_uint64(ids):
    g = _graph(ids)
    src, dst = _arrays(g, np.uint64)
    _check(pa.table({"src": pa.array(src, pa.uint64()), "dst": pa.array(dst, pa.uint64())}), g)


@pytest.mark.parametrize("ids", [
    NEAR_TOP,
    AROUND_HALF,
    [TOP - v if v % 2 else v for v in range(60)],  # numpy makes float64 of these
    [HALF + v if v % 2 else -v for v in range(60)],  # and of these: no 64-bit integer holds them
    [2**64 + v if v % 2 else v for v in range(60)],  # Python ints past any integer type: labels
], ids=["near 2^64-1", "around 2^63", "big beside small", "big beside negative", "past 2^64"])
def test_python_lists_of_big_ints(ids):
    g = _graph(ids)
    src, dst = zip(*g.edges)
    _check((list(src), list(dst)), g)


def test_uint64_beside_int64_arrays():
    """A uint64 and an int64 array: numpy's common type is float64, which merges HALF + 5 and HALF + 6."""
    big, small = [HALF + 5, HALF + 6, TOP], [-3, 7, 9]
    edges = [(u, v) for u in big for v in small] + [(7, -3), (9, -3), (7, 9)]  # sources fit uint64, targets int64
    src, dst = np.array([u for u, _ in edges], np.uint64), np.array([v for _, v in edges], np.int64)
    _check((src, dst), nx.Graph(edges))


def test_integer_ids_beside_float_ids_stay_apart():
    """2**60 + 1 and 2**60 + 2 are one float64: beside a float array they were merged."""
    src, dst = np.array([2**60 + 1, 2**60 + 2], np.int64), np.array([0.5, 0.5])
    result = tcdist.count_triangles((src, dst), backend="cpu", per_vertex=True)
    assert result.m == 2 and sorted(result.per_vertex.vertex.tolist()) == [0.5, 2**60 + 1, 2**60 + 2]


@pytest.mark.parametrize("ids", [NEAR_TOP, AROUND_HALF, FROM_HALF, [TOP - v if v % 2 else v for v in range(60)]],
                         ids=["near 2^64-1", "around 2^63", "from 2^63", "big beside small"])
def test_networkx_big_int_nodes(ids):
    g = _graph(ids)
    _check(g, g)


def test_networkx_tuple_nodes_of_several_lengths():
    g = _graph([(v,) * (1 + v % 3) for v in range(60)])
    _check(g, g)
    k4 = nx.complete_graph([(1, 2), (1, 2, 3), (4,), ()])
    assert tcdist.count_triangles(k4, backend="cpu").triangles == 4


MIXED = [
    [(1, "1"), ("1", 2), (2, 1)],  # 1 and '1' are two nodes: one triangle (NumPy made both '1': none)
    [(2**64, 1), (1, "x"), ("x", 2**64), ("x", "1"), ("1", 1)],  # no order sorts these: two triangles
    [(1, 2.0), (2, "a"), ("a", True), (1.5, "a"), (1.5, 2)],  # 1 == 1.0 == True and 2 == 2.0, as in networkx
    [((0, 1), "a"), ("a", 3), (3, (0, 1)), ((0, 1), (0,))],
    [(b"a", "a"), ("a", "b"), ("b", b"a"), (b"a", b"b"), (b"b", "b")],  # bytes and text differ: two triangles
]


@pytest.mark.parametrize("pairs", MIXED, ids=["1 and '1'", "big ints and text", "bools and floats", "tuples", "bytes and text"])
def test_ids_of_several_types_are_told_apart_as_networkx_tells_them(pairs):
    g = nx.Graph(pairs)
    src, dst = [u for u, _ in pairs], [v for _, v in pairs]
    _check(pairs, g)
    _check((src, dst), g)
    _check((np.array(src, object), np.array(dst, object)), g)
    _check(pd.DataFrame({"src": pd.Series(src, dtype=object), "dst": pd.Series(dst, dtype=object)}), g)


def test_text_beside_integer_arrays_stays_apart():
    """NumPy's common type of '<U1' and int64 is text: 1 and '1' were one vertex."""
    src, dst = np.array(["1", "1", "2"]), np.array([1, 2, 1])
    _check((src, dst), nx.Graph(zip(src.tolist(), dst.tolist())))


def test_text_ids_that_arrow_cannot_hold_are_numbered_as_objects():
    """A lone surrogate (os.fsdecode of a name that is not UTF-8) is no Arrow string: it was a traceback."""
    pairs = [("a", "\udcff"), ("\udcff", "c"), ("c", "a"), ("c", "d")]
    src, dst = [u for u, _ in pairs], [v for _, v in pairs]
    _check(pairs, nx.Graph(pairs))
    _check((np.array(src), np.array(dst)), nx.Graph(pairs))


def test_ids_that_cannot_be_hashed_are_refused():
    with pytest.raises(tcdist.TcdistError, match=r"^edge arrays: vertex ids must be hashable, as networkx nodes are"):
        tcdist.count_triangles(([[0], [1]], [[1], [2]]), backend="cpu")


NAN = float("nan")
MASKED = np.ma.array([[0, 1], [1, 2], [2, 0], [5, 6]], mask=[[0, 0], [0, 0], [0, 0], [0, 1]])  # a triangle beside
DATES = np.array([["2020-01-01", "2020-01-02"], ["2020-01-02", "2020-01-03"], ["2020-01-03", "2020-01-01"],
                  ["2020-01-04", "NaT"]], "datetime64[D]")


@pytest.mark.parametrize("source,missing", [
    ((np.array([0.0, 1, 2]), np.array([1.0, NAN, 0])), r"edge arrays: row 1's target is missing \(nan\)"),
    ([(0, 1), (1, 2), (NAN, 0)], r"edge pairs: row 2's source is missing \(nan\)"),
    ([("a", "b"), ("b", None), ("c", "a")], r"edge pairs: row 1's target is missing \(None\)"),
    ([(1, "b"), ("b", None)], r"edge pairs: row 1's target is missing \(None\)"),
    ((["a", "b", "c"], ["b", "c", pd.NA]), r"edge arrays: row 2's target is missing \(<NA>\)"),
    (pd.DataFrame({"src": [0, 1, None], "dst": [1, 2, 0]}), r"data frame: row 2's source is missing \(nan\)"),
    (pd.DataFrame({"src": pd.array([0, None, 2], "Int64"), "dst": [1, 2, 0]}),
     r"data frame: row 1's source is missing \(<NA>\)"),
    (pd.DataFrame({"src": ["a", "b", "c"], "dst": ["b", None, "a"]}),
     r"data frame: row 1's target is missing \((nan|None)\)"),  # pandas 3 holds text as str, with nan
    (pa.table({"src": [0, 1, 2], "dst": [1, None, 0]}), r"arrow table: row 1's target is missing \(null\)"),
    (pa.table({"src": ["a", None, "c"], "dst": ["b", "c", "a"]}), r"arrow table: row 1's source is missing \(null\)"),
    (MASKED, r"edge array: row 3's target is missing \(masked\)"),
    ((MASKED[:, 0], MASKED[:, 1]), r"edge arrays: row 3's target is missing \(masked\)"),
    (MASKED.astype(str), r"edge array: row 3's target is missing \(masked\)"),
    ([tuple(row) for row in MASKED], r"edge pairs: row 3's target is missing \(masked\)"),
    (DATES, r"edge array: row 3's target is missing \(NaT\)"),
    ((DATES[::-1, 1], DATES[::-1, 0]), r"edge arrays: row 0's source is missing \(NaT\)"),
    ((np.array([1, "NaT", 3], "m8[s]"), np.array([2, 3, 1], "m8[s]")), r"edge arrays: row 1's source is missing \(NaT\)"),
], ids=["float arrays", "pairs of floats", "names", "numbers and names", "pandas NA in a list", "pandas float",
        "pandas Int64", "pandas text", "arrow integers", "arrow text", "masked array", "masked arrays",
        "masked names", "a masked array's rows", "datetime64 array", "datetime64 arrays", "timedelta64 arrays"])
def test_a_missing_id_is_refused_by_its_row(source, missing):
    """Each was a vertex (NaN, None, <NA> and NaT counted as one more name, a masked cell as the data
    under its mask: the triangle counted), or an error naming no row."""
    with pytest.raises(tcdist.TcdistError, match=f"^{missing}: drop the rows with missing ids, or fill them in$"):
        tcdist.count_triangles(source, backend="cpu")


def test_a_masked_array_with_no_cell_masked_is_its_data():
    assert tcdist.count_triangles(np.ma.array(MASKED.data), backend="cpu").triangles == 1
    assert tcdist.count_triangles(DATES[:3], backend="cpu").triangles == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=40),
       st.lists(st.integers(0, TOP), min_size=12, max_size=12, unique=True),
       st.sampled_from(["uint64 arrays", "python ints", "pandas", "arrow"]))
def test_any_unsigned_64_bit_ids_count_as_the_brute_force_does(pairs, ids, kind):
    """Fuzz: any 64-bit unsigned ids, in any of the containers the API takes."""
    from conftest import brute_force_triangles

    src, dst = [ids[u] for u, _ in pairs], [ids[v] for _, v in pairs]
    given = {"uint64 arrays": lambda: (np.array(src, np.uint64), np.array(dst, np.uint64)),
             "python ints": lambda: (src, dst),
             "pandas": lambda: pd.DataFrame({"src": np.array(src, np.uint64), "dst": np.array(dst, np.uint64)}),
             "arrow": lambda: pa.table({"src": pa.array(src, pa.uint64()), "dst": pa.array(dst, pa.uint64())})}[kind]()
    if not pairs:
        return
    result = tcdist.count_triangles(given, backend="cpu", per_vertex=True)
    assert result.triangles == brute_force_triangles(zip(src, dst))
    assert set(result.per_vertex.vertex.tolist()) == {x for pair in zip(src, dst) if pair[0] != pair[1] for x in pair}


def test_an_m_by_2_array_and_a_list_of_pairs_are_edges():
    """Both were refused ('cannot read a graph from ndarray', or read as two arrays of ids)."""
    g = _graph(range(60))
    edges = list(g.edges())
    _check(np.array(edges, np.int64), g)
    _check(np.array(edges, np.uint32), g)
    _check(edges, g)
    _check(tuple(map(list, edges)), g)
    two = tcdist.load_graph([(0, 1), (2, 2)])  # two 2-tuples are two edges, not (src, dst)
    assert (two.m, two.self_loops, sorted(two.vertex_ids().tolist())) == (1, 1, [0, 1])


def test_pairs_of_labels_become_labels_as_two_arrays_do():
    pairs = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
    by_pairs = tcdist.count_triangles(pairs, backend="cpu", per_vertex=True)
    by_arrays = tcdist.count_triangles(([u for u, _ in pairs], [v for _, v in pairs]), backend="cpu", per_vertex=True)
    by_array = tcdist.count_triangles(np.array(pairs, object), backend="cpu", per_vertex=True)
    for result in (by_pairs, by_arrays, by_array):
        assert result.triangles == 1
        assert dict(zip(result.per_vertex.vertex.tolist(), result.per_vertex.triangles.tolist())) == {
            "a": 1, "b": 1, "c": 1, "d": 0}


@pytest.mark.parametrize("source,message", [
    (np.zeros((4, 3), np.int64), r"an array of edges has shape \(m, 2\), a \(source, target\) row per edge; this one "
                                 r"has shape \(4, 3\)$"),
    (np.arange(6), r"this one has shape \(6,\)$"),
    (np.zeros((2, 2, 2)), r"this one has shape \(2, 2, 2\)$"),
    ([(0, 1), (1, 2, 3), (2, 0)], r"^edge pairs: item 1 is \(1, 2, 3\), not a \(source, target\) pair$"),
    ([(0, 1), "ab", (1, 2)], r"^edge pairs: item 1 is 'ab', not a \(source, target\) pair$"),
    ([(0, 1), 5, (1, 2)], r"^edge pairs: item 1 is 5, not a \(source, target\) pair$"),
])
def test_edges_of_another_shape_are_one_clear_error(source, message):
    with pytest.raises(tcdist.TcdistError, match=message):
        tcdist.count_triangles(source, backend="cpu")


@pytest.mark.gpu
def test_cupy_float_ids_count_as_numpy_ones_and_a_missing_one_is_refused():
    import cupy

    src, dst = np.array([0.5, 1.5, 2.5, 2.5]), np.array([1.5, 2.5, 0.5, 7.0])
    on_gpu = tcdist.count_triangles((cupy.asarray(src), cupy.asarray(dst)), backend="gpu", per_vertex=True)
    on_cpu = tcdist.count_triangles((src, dst), backend="cpu", per_vertex=True)
    assert on_gpu.triangles == on_cpu.triangles == 1
    assert on_gpu.per_vertex.vertex.tolist() == on_cpu.per_vertex.vertex.tolist() == [0.5, 1.5, 2.5, 7.0]
    assert on_gpu.per_vertex.triangles.tolist() == on_cpu.per_vertex.triangles.tolist()
    dst[1] = np.nan
    with pytest.raises(tcdist.TcdistError, match=r"^edge arrays: row 1's target is missing \(nan\): "):
        tcdist.count_triangles((cupy.asarray(src), cupy.asarray(dst)), backend="gpu")
