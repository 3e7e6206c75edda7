"""LSTC partitioning: exact sums for every scheme, prune mode and P; Algorithm 2 reproduced exactly."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATASETS, chains_to_a_hub, dataset_params
from hypothesis import given, settings
from hypothesis import strategies as st

import tcdist
from tcdist.count.cpu import count_marker
from tcdist.partition import PRUNE_MODES, SCHEMES, assign, build_parts, partition_graph

PART_COUNTS = (1, 2, 3, 4, 7, 16)
LARGE_GRAPH_PART_COUNTS = (3, 16)  # a graph of over LARGE_GRAPH_EDGES: fewer, so the suite stays short
LARGE_GRAPH_EDGES = 150_000
count = count_marker


def global_edges(part):
    """The part's edges as (global id, global id) pairs."""
    return set(zip(*(k.tolist() for k in global_edge_ends(part))))


def global_edge_ends(part):
    rows = np.repeat(np.arange(part.n), np.diff(part.rowptr))
    return part.global_id[rows], part.global_id[part.col]


def subset(a, b):
    return bool(np.isin(a, b).all())


def check_structure(graph, assignment, part):
    """Locals first and exactly the part's vertices; rows sorted; every local out-edge present."""
    gid = part.global_id
    local = np.flatnonzero(assignment == part.index)
    assert np.array_equal(gid[: part.n_local], local), "locals first, in rank order"
    assert not np.any(assignment[gid[part.n_local:]] == part.index), "proxies are not local"
    assert np.all(np.diff(gid[part.n_local:]) > 0), "proxies in rank order"
    rows = np.repeat(np.arange(part.n), np.diff(part.rowptr))
    same = rows[1:] == rows[:-1]
    assert np.all(part.col[1:][same] > part.col[:-1][same]), "rows sorted by new id"
    out_local = np.diff(part.rowptr)[: part.n_local]
    assert np.array_equal(out_local, np.diff(graph.rowptr)[local]), "every out-edge of a local vertex is kept"


@pytest.mark.parametrize("scheme", list(SCHEMES))
@pytest.mark.parametrize("entry", dataset_params())
def test_sum_over_parts_is_exact(entry, scheme):
    graph = tcdist.load_graph(DATASETS / entry["file"])
    expected = entry["published_triangles"]
    for parts in PART_COUNTS if graph.m <= LARGE_GRAPH_EDGES else LARGE_GRAPH_PART_COUNTS:
        sizes = {}
        for prune in PRUNE_MODES:
            p = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=parts)
            assert sum(count(q.rowptr, q.col, q.n_local) for q in p.parts) == expected, (parts, prune)
            assert sum(q.n_local for q in p.parts) == graph.n
            sizes[prune] = p
        for i in range(parts):
            v = {mode: sizes[mode].parts[i].global_id for mode in PRUNE_MODES}
            e = {}
            for mode in PRUNE_MODES:
                a, b = global_edge_ends(sizes[mode].parts[i])
                e[mode] = a * graph.n + b
            assert subset(v["minimal"], v["lstc"]) and subset(v["lstc"], v["none"]), (parts, i)
            assert subset(e["minimal"], e["lstc"]) and subset(e["lstc"], e["none"]), (parts, i)
            assert sizes["none"].parts[i].stats["v_ind"] == np.unique(v["none"]).size == v["none"].size
            assert sizes["none"].parts[i].stats["e_ind"] == np.unique(e["none"]).size == e["none"].size
            check_structure(graph, np.asarray(sizes["lstc"].assignment), sizes["lstc"].parts[i])


def literal_lstc(graph, assignment, i):
    """Algorithms 1 and 2 as the paper writes them, on Python sets: (vertices, edges) of part i."""
    edges = set(zip(np.repeat(np.arange(graph.n), np.diff(graph.rowptr)).tolist(), graph.col.tolist()))
    local = {v for v in range(graph.n) if assignment[v] == i}
    proxies = {b for a, b in edges if a in local} | {a for a, b in edges if b in local}
    vertices = local | proxies
    induced = {(a, b) for a, b in edges if a in vertices and b in vertices}
    while True:
        has_in = {b for _, b in induced}
        sources = {h for h in vertices - local if h not in has_in}
        if not sources:
            return vertices, induced
        vertices -= sources
        induced = {(a, b) for a, b in induced if a not in sources}


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 25)), max_size=150), st.integers(1, 6), st.data())
def test_any_vertex_partition_works_and_matches_algorithm_2(edges, parts, data):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    graph = tcdist.load_graph((src, dst))
    assignment = np.array(data.draw(st.lists(st.integers(0, parts - 1), min_size=graph.n, max_size=graph.n)), np.int64)
    expected = count(graph.rowptr, graph.col, graph.n)
    for prune in PRUNE_MODES:
        result = build_parts(graph, assignment, parts, prune)
        assert sum(count(q.rowptr, q.col, q.n_local) for q in result) == expected
    for part in build_parts(graph, assignment, parts, "lstc"):
        vertices, induced = literal_lstc(graph, assignment, part.index)
        assert set(part.global_id.tolist()) == vertices
        assert global_edges(part) == induced
        check_structure(graph, assignment, part)


def test_schemes():
    graph = tcdist.load_graph("rmat:12")
    a = partition_graph(graph, 4, scheme="random", seed=5).assignment
    assert np.array_equal(a, partition_graph(graph, 4, scheme="random", seed=5).assignment), "seeded"
    assert not np.array_equal(a, partition_graph(graph, 4, scheme="random", seed=6).assignment)
    c = np.asarray(partition_graph(graph, 4, scheme="contiguous").assignment)
    assert np.all(np.diff(c) >= 0) and np.bincount(c).max() - np.bincount(c).min() <= 1, "equal chunks of rank order"
    m = np.asarray(partition_graph(graph, 4, scheme="metis").assignment)
    rows = np.repeat(np.arange(graph.n), np.diff(graph.rowptr))
    cut = lambda parts: int(np.sum(parts[rows] != parts[graph.col]))  # noqa: E731
    assert set(m.tolist()) == {0, 1, 2, 3} and cut(m) < cut(np.asarray(a)), "METIS cuts fewer edges than random"


def test_pruning_shrinks_rmat_parts():
    graph = tcdist.load_graph("rmat:13")
    sizes = {prune: partition_graph(graph, 8, prune=prune).totals() for prune in PRUNE_MODES}
    assert sizes["minimal"]["e_res"] < sizes["lstc"]["e_res"] < sizes["none"]["e_res"]
    assert sizes["none"]["e_res"] == sizes["none"]["e_ind"] == sizes["lstc"]["e_ind"]


def test_empty_parts_and_more_parts_than_vertices():
    graph = tcdist.load_graph("complete:5")
    p = partition_graph(graph, 16, scheme="contiguous")
    assert sum(count(q.rowptr, q.col, q.n_local) for q in p.parts) == 10
    assert sum(q.n == 0 for q in p.parts) >= 11


@pytest.mark.parametrize("team", [1, 2, None], ids=["part-a-thread", "teams-of-2", "auto"])
@pytest.mark.parametrize("scheme", ["random", "contiguous", "metis"])
@pytest.mark.parametrize("prune", ["lstc", "none", "minimal"])
def test_the_host_builder_makes_the_same_parts_as_the_whole_array_builder(scheme, prune, team):
    """The compiled host builder (a part a thread, or teams of 2 threads a part) against the
    whole-array one run on NumPy: every array and statistic of every part, bit for bit."""
    from tcdist.partition.build import build_parts
    from tcdist.partition.host import iter_parts_host
    from tcdist.partition.schemes import assign

    for source, parts in ((DATASETS / "email-Eu-core.txt.gz", 5), ("rmat:11", 3), ("complete:25", 4),
                          ("complete:6", 9), ("grid:30:30", 300), ("complete:80", 70)):
        # complete:6: more parts than vertices; over 64 parts the transpose gives the in-neighbours:
        # a grid's parts are small (members gathered), K_80's touch every vertex (scanned)
        graph = tcdist.load_graph(source)
        assignment = assign(graph, scheme, parts, 7)
        for a, b in zip(build_parts(graph, assignment, parts, prune), list(iter_parts_host(graph, assignment, parts, prune, team)),
                        strict=True):
            assert (a.index, a.n_local, a.stats) == (b.index, b.n_local, b.stats)
            for name in ("rowptr", "col", "global_id"):
                x, y = getattr(a, name), getattr(b, name)
                assert x.dtype == y.dtype and np.array_equal(x, y), (source, a.index, name)


@pytest.mark.parametrize("scheme", ["random", "contiguous", "metis"])
@pytest.mark.parametrize("prune", ["lstc", "none", "minimal"])
def test_parts_eight_at_a_time_are_the_whole_array_builder_s(scheme, prune):
    """lanes.py (a byte of flags a part in a vertex's word, eight parts from each pass) against the
    whole-array builder on NumPy, bit for bit: one word (3 parts), several (9, 17: the last one
    part; 64: eight full), more parts than vertices."""
    from tcdist.partition.build import build_parts
    from tcdist.partition.lanes import iter_parts_lanes
    from tcdist.partition.schemes import assign

    for source, parts in ((DATASETS / "email-Eu-core.txt.gz", 9), ("rmat:11", 3), ("rmat:12", 17), ("complete:6", 9),
                          ("complete:80", 64), ("grid:30:30", 8)):
        graph = tcdist.load_graph(source)
        assignment = assign(graph, scheme, parts, 7)
        for a, b in zip(build_parts(graph, assignment, parts, prune), iter_parts_lanes(graph, assignment, parts, prune),
                        strict=True):
            assert (a.index, a.n_local, a.stats) == (b.index, b.n_local, b.stats), (source, a.index)
            for name in ("rowptr", "col", "global_id"):
                x, y = getattr(a, name), getattr(b, name)
                assert x.dtype == y.dtype and np.array_equal(x, y), (source, a.index, name)


@pytest.mark.parametrize("chains", [1, 100])
def test_parts_eight_at_a_time_reach_along_chains_of_proxies(chains):
    """Algorithm 2 taking a round a link (conftest.chains_to_a_hub). 100 chains: parallel rounds
    (many rows marked each), then the pass in rank order; 1 chain: that pass alone."""
    from tcdist.partition.build import build_parts
    from tcdist.partition.lanes import iter_parts_lanes

    graph, assignment = chains_to_a_hub(chains)
    for prune in PRUNE_MODES:
        for a, b in zip(build_parts(graph, assignment, 2, prune), iter_parts_lanes(graph, assignment, 2, prune), strict=True):
            assert a.stats == b.stats and all(np.array_equal(getattr(a, k), getattr(b, k))
                                              for k in ("rowptr", "col", "global_id")), (prune, a.index)
    kept = build_parts(graph, assignment, 2, "lstc")[0]  # each chain's last vertex, of degree 2, ranks below the one
    assert kept.stats["v_res"] == graph.n - chains, "the rest are reached"  # before it: their edge points back


def test_parts_eight_at_a_time_on_racing_threads_are_the_whole_array_builder_s():
    """Four threads pushing OUT and ALIVE into the same words' bytes at once (NUMBA_NUM_THREADS=4),
    every prune mode, against the whole-array builder, bit for bit."""
    program = """
import numpy as np, tcdist
from tcdist.partition.build import build_parts
from tcdist.partition.lanes import iter_parts_lanes
from tcdist.partition.schemes import assign
graph = tcdist.load_graph("rmat:14")
assignment = assign(graph, "random", 8, 3)
for prune in ("lstc", "none", "minimal"):
    for a, b in zip(build_parts(graph, assignment, 8, prune), iter_parts_lanes(graph, assignment, 8, prune), strict=True):
        assert a.stats == b.stats and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("rowptr", "col", "global_id"))
print("ok")
"""
    env = {**os.environ, "NUMBA_NUM_THREADS": "4"}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("shift,groups", [(0, 1), (0, 7), (3, 4), (3, 1000), (12, 16), (16, 3)])
@pytest.mark.parametrize("chunks", [1, 3, 8])
def test_the_transpose_is_every_edge_reversed_with_sorted_rows(shift, groups, chunks):
    """The host transpose (chunks of rows moving their edges into ranges of targets of about
    equal edges, made of blocks of 2^shift ids, each range then sorted) against a stable NumPy
    sort of the edges by target: rows sorted, nothing lost, for graphs with empty rows, a hub,
    one range or more ranges than blocks."""
    from tcdist.partition.incoming import _transpose

    for source in ("rmat:12", "complete:30", "grid:7:9", "er:300:100", DATASETS / "email-Eu-core.txt.gz", "er:5:0"):
        graph = tcdist.load_graph(source)
        rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col)
        in_ptr, in_col = _transpose(rowptr, col, chunks, shift, groups)
        sources = np.repeat(np.arange(graph.n), np.diff(rowptr))
        order = np.argsort(col, kind="stable")
        assert np.array_equal(in_ptr, np.concatenate([[0], np.cumsum(np.bincount(col, minlength=graph.n))]))
        assert in_col.dtype == col.dtype and np.array_equal(in_col, sources[order]), (source, chunks, shift, groups)


@pytest.mark.parametrize("pieces", [1, 3, 8, 1000])
@pytest.mark.parametrize("parts", [1, 5, 64])
def test_each_vertex_s_in_parts_are_the_parts_of_its_out_neighbours(parts, pieces):
    """The host builder's in-neighbours for up to 64 parts: bit p of a vertex's set is on exactly
    when one of its out-neighbours is in part p (NumPy's unbuffered OR over the edges), for empty
    rows, a hub, part 63 and more runs than rows."""
    from tcdist.partition.incoming import parts_reached
    from tcdist.partition.schemes import assign

    for source in ("rmat:12", "complete:70", "grid:7:9", "er:300:100", "er:5:0"):
        graph = tcdist.load_graph(source)
        rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col)
        part = np.asarray(assign(graph, "random", parts, 1)).astype(np.uint8)
        expected = np.zeros(graph.n, np.uint64)
        np.bitwise_or.at(expected, np.repeat(np.arange(graph.n), np.diff(rowptr)),
                         np.left_shift(np.uint64(1), part[col].astype(np.uint64)))
        assert np.array_equal(parts_reached(rowptr, col, part, pieces), expected), (source, parts, pieces)


@pytest.mark.parametrize("parts", [1, 5, 64, 65, 300])
def test_each_part_s_work_estimate_is_the_probes_of_its_rows(parts):
    """What ranks that build their own parts are given: each part's work estimate is the probes
    of its rows in the whole graph (each row's probes summed by part with NumPy's add.at), at
    least what its built part counts (a part prunes edges, never adds one), and up to 64 parts
    the in-parts equal parts_reached's (beyond, none: the builder takes the transpose), for empty
    rows, a hub, empty parts and more runs than rows."""
    from tcdist.graph.work import probes_before
    from tcdist.partition import partition_graph
    from tcdist.partition.incoming import parts_reached, reached_and_work
    from tcdist.partition.schemes import assign

    for source in ("rmat:12", "complete:70", "grid:7:9", "er:5:0"):
        graph = tcdist.load_graph(source)
        rowptr, col, count = np.asarray(graph.rowptr), np.asarray(graph.col), min(parts, graph.n)
        part = np.asarray(assign(graph, "random", count, 1)).astype(np.int32)
        expected = np.zeros(count, np.int64)
        np.add.at(expected, part, np.diff(probes_before(graph)))
        built = {p.index: p.stats["work"] for p in partition_graph(graph, count, seed=1).parts}
        assert all(expected[p] >= built[p] for p in range(count)), source
        for pieces in (1, 7, 1000):
            reached, work = reached_and_work(rowptr, col, part, count, pieces)
            assert np.array_equal(work, expected), (source, parts, pieces)
            if count <= 64:
                assert np.array_equal(reached, parts_reached(rowptr, col, part.astype(np.uint8), pieces))
            else:
                assert reached is None


@pytest.mark.parametrize("chunks", [1, 3, 64])
@pytest.mark.parametrize("vertices,parts", [(0, 3), (1, 1), (5, 9), (1000, 7), (50_000, 200)])
def test_each_part_s_vertices_in_rank_order_are_those_of_a_stable_argsort(vertices, parts, chunks):
    """The host builder's counting sort of the vertices by part equals NumPy's stable argsort, and
    each part begins where its first vertex lies in it (empty parts, more chunks than vertices)."""
    from tcdist.partition.host import _by_part

    assignment = np.random.default_rng(vertices).integers(0, parts, vertices)
    order, offsets = _by_part(assignment, parts, chunks)
    expected = np.argsort(assignment, kind="stable")
    assert np.array_equal(order, expected)
    assert np.array_equal(offsets, np.searchsorted(assignment[expected], np.arange(parts + 1)))


@pytest.mark.parametrize("parts", [63, 64, 65])
def test_the_host_builder_at_the_last_bit_of_a_vertex_s_in_parts_and_past_it(parts):
    """64 parts are the most whose in-neighbours come from a vertex's 64-bit set of in-parts (part
    63 is its last bit), 65 take the transpose: both against the whole-array builder, with a skewed
    assignment (most vertices in the last part, a few parts empty), a part a thread and teams of 2;
    and the builder's scratch (a flag byte and an id per vertex) is left as it was given."""
    from tcdist.partition import host, incoming
    from tcdist.partition.build import build_parts

    graph = tcdist.load_graph("rmat:11")
    rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col)
    rng = np.random.default_rng(parts)
    assignment = np.where(rng.random(graph.n) < 0.6, parts - 1, rng.integers(0, parts // 2, graph.n)).astype(np.int64)
    for team in (1, 2):
        for a, b in zip(build_parts(graph, assignment, parts, "lstc"),
                        host.iter_parts_host(graph, assignment, parts, "lstc", team), strict=True):
            assert a.stats == b.stats and all(np.array_equal(getattr(a, k), getattr(b, k))
                                              for k in ("rowptr", "col", "global_id")), (parts, team, a.index)
    in_parts = incoming.parts_reached(rowptr, col, assignment.astype(np.uint8), 4) if parts <= 64 else np.zeros(0, np.uint64)
    in_ptr, in_col = incoming.transpose(graph) if parts > 64 else (np.zeros(1, np.int64), np.zeros(0, col.dtype))
    flags, new_id = np.zeros(graph.n, np.uint8), np.full(graph.n, -1, col.dtype)
    for p in (parts - 1, 0, parts // 2 + 1):  # the big part, a small one, an empty one
        bit = np.uint64(1 << p if in_parts.size else 0)
        host._build_part(rowptr, col, in_ptr, in_col, in_parts, bit, np.flatnonzero(assignment == p), 0, flags, new_id, 1)
        assert not flags.any() and (new_id == -1).all(), (parts, p)


def test_lazy_parts_are_built_a_few_at_a_time(monkeypatch):
    """Writing a store walks the parts once: at most one part per thread is built ahead."""
    import numba

    from tcdist.partition import host

    made = []
    original = host.Part.make
    monkeypatch.setattr(host.Part, "make", classmethod(lambda cls, **kw: made.append(kw["index"]) or original(**kw)))
    graph = tcdist.load_graph("rmat:10")
    parts = partition_graph(graph, 12, lazy=True).parts
    first = next(parts)
    window = min(12, numba.get_num_threads())
    assert first.index == 0 and len(made) <= window
    rest = list(parts)
    assert [p.index for p in rest] == list(range(1, 12)) and sorted(made) == list(range(12))


def test_the_serial_and_parallel_host_helpers_do_not_load_each_other_from_numba_s_cache(tmp_path):
    """Numba's cache on disk keys a function by its name, line and bytecode, not by `parallel`:
    a parallel variant of a function compiled serially too loaded the serial code (the team
    builder ran on one thread). A fresh process must compile the parallel variant itself."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    program = ("import numpy as np; from tcdist.partition import host; f = host.{}; "
               "f(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64), np.array([0, 1]), "
               "np.zeros(1, np.uint8)); "
               "print(sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values()))")
    seen = [subprocess.run([sys.executable, "-c", program.format(name)], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for name in ("_reach", "_reach_parallel", "_reach_parallel")]
    assert seen == [["0", "1"], ["0", "1"], ["1", "0"]]  # each variant compiled once, then loaded


def test_parts_built_a_thread_each_compile_no_parallel_helper(tmp_path):
    """The serial builder chose its helpers by team at run time, so Numba compiled the parallel
    ones too (seconds each, on every first run); the serial builder now calls serial ones only."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    program = ("import tcdist; from tcdist.partition import host; from tcdist.partition.schemes import assign\n"
               "g = tcdist.load_graph('rmat:10')\n"
               "parts = list(host.iter_parts_host(g, assign(g, 'random', 4), 4, 'lstc', team=1))\n"
               "print(len(parts), *(len(f.signatures) for f in (host._build_part, host._mark, host._members, host._reach,"
               " host._build_part_parallel, host._mark_parallel, host._members_parallel, host._reach_parallel)))")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    built, *serial, build_parallel, mark, members, reach = map(int, done.stdout.split())
    assert built == 4 and all(serial) and [build_parallel, mark, members, reach] == [0, 0, 0, 0]


RACING_FLAGS = """
import numba, numpy as np
from tcdist.partition import host, incoming
m = 1 << 20  # local 0 -> each of m middle vertices -> local n-1: each middle vertex gets OUT and IN at once
n = m + 2
rowptr = np.concatenate([[0, m], m + np.arange(1, m + 1), [2 * m]]).astype(np.int64)
col = np.concatenate([np.arange(1, m + 1), np.full(m, n - 1)]).astype(np.int32)
in_ptr, in_col = incoming.transpose(type("G", (), {"rowptr": rowptr, "col": col})())
flags, new_id = np.zeros(n, np.uint8), np.full(n, -1, np.int32)
for _ in range(8):  # the transpose gives the in-neighbours (over 64 parts): one pass sets IN as another sets OUT
    part_rowptr, part_col, *_ = host._build_part_parallel(rowptr, col, in_ptr, in_col, np.zeros(0, np.uint64),
                                                           np.uint64(0), np.array([0, n - 1]),
                                                           host.PRUNE_CODES["minimal"], flags, new_id, 4)
    assert part_rowptr.size == n + 1 and part_col.size == m and (np.diff(part_col[:m]) > 0).all(), "a flag was lost"
print("ok")
"""


def test_threads_of_a_team_lose_no_flag_bit_where_a_vertex_gets_two_at_once():
    """Each flag pass sets one bit: when one pass set OUT and IN, a thread's OUT could be written
    over by another's IN, and the 'minimal' prune then dropped a member that a local row kept
    (wrong parts; seen 35 times in 40 under load). Four threads on whatever cores there are."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "4"}
    done = subprocess.run([sys.executable, "-c", RACING_FLAGS], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_teams_side_by_side_make_the_same_parts_as_the_whole_array_builder():
    """Two teams of two threads building parts at once (NUMBA_NUM_THREADS=4, team 2), every prune
    mode, against the whole-array builder, bit for bit."""
    program = """
import numpy as np, tcdist
from tcdist.partition.build import build_parts
from tcdist.partition.host import iter_parts_host
from tcdist.partition.schemes import assign
graph = tcdist.load_graph("rmat:13")
assignment = assign(graph, "random", 4, 3)
for prune in ("lstc", "none", "minimal"):
    for a, b in zip(build_parts(graph, assignment, 4, prune), iter_parts_host(graph, assignment, 4, prune, 2), strict=True):
        assert a.stats == b.stats and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("rowptr", "col", "global_id"))
print("ok")
"""
    env = {**os.environ, "NUMBA_NUM_THREADS": "4"}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_metis_says_on_a_terminal_that_it_runs_and_what_it_costs(monkeypatch):
    """pymetis reports nothing until it is done (it holds the GIL: no bar moves meanwhile)."""
    import io

    from tcdist import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    graph = tcdist.load_graph("rmat:10")
    progress.enable(True)
    try:
        assign(graph, "metis", 3)
    finally:
        progress.enable(False)
    assert f"METIS: {graph.n:,} vertices and {graph.m:,} edges into 3 parts, on one core" in terminal.getvalue()
