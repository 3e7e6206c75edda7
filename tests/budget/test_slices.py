"""Slices of a part too large for the device (partition/slices.py): their counts and per-vertex
credits add up to the part's, each fits its room, the whole graph's slices without wedges are
left out, and a count under a memory limit slices where a part does not fit (CPU; the GPU's
are in test_gpu_slices at the end)."""

import numpy as np
import pytest
from conftest import DATASETS

import tcdist
from tcdist.budget import slices as plans
from tcdist.budget.model import need as part_need
from tcdist.count.cpu import count_marker, per_vertex
from tcdist.errors import TcdistError
from tcdist.graph.check import csr_problem
from tcdist.partition import Part, partition_graph, slices

GRAPH = DATASETS / "email-Enron.txt.gz"  # 727,044 triangles


def _need(part):
    return part_need(part.rowptr.size - 1, part.col.size, part.n_local, part.col.itemsize)


def _parts(parts):
    graph = tcdist.load_graph(GRAPH)
    if parts == 1:
        return [Part(0, graph.rowptr, graph.col, None, graph.n, {})]
    return partition_graph(graph, parts, seed=4).parts


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("shrink", [2, 5, 13])
def test_slices_add_up_to_their_part_and_each_fits_its_room(parts, shrink):
    total = 0
    for part in _parts(parts):
        floor = part_need(part.rowptr.size, 0, 1, part.col.itemsize)
        room = floor + (_need(part) - floor) // shrink
        bounds = plans.plan(part, room, part_need)
        cut = list(slices.cut(part, bounds))
        pieces = [piece.made() for piece in cut]
        assert [piece.sizes() for piece in cut] == [piece.sizes() for piece in pieces]  # planned as made
        assert len(pieces) > 1 and all(_need(p) <= room for p in pieces)
        assert all(csr_problem(p.rowptr, p.col, p.n_local) is None for p in pieces)
        counts = [count_marker(p.rowptr, p.col, p.n_local) for p in pieces]
        assert sum(counts) == count_marker(part.rowptr, part.col, part.n_local)
        credits = sum(slices.fold(per_vertex(p.rowptr, p.col, p.n_local), p) for p in pieces)
        assert np.array_equal(credits, per_vertex(part.rowptr, part.col, part.n_local))
        total += sum(counts)
    assert total == 727_044


def test_the_whole_graph_leaves_out_the_slices_below_their_sources():
    """Its ids are ranks: a source range's columns lie above it, so the target ranges below it
    hold no wedge and are not counted (the counts adding up without them is tested above); the
    slices of the whole graph are still oriented (u -> v with u < v)."""
    part = _parts(1)[0]
    floor = part_need(part.rowptr.size, 0, 1, part.col.itemsize)
    bounds = plans.plan(part, floor + (_need(part) - floor) // 8, part_need)
    sources, targets = {(a, b) for a, b, _, _ in bounds}, {(c, d) for _, _, c, d in bounds}
    below = sum(d <= a for a, _ in sources for _, d in targets)
    assert len(sources) > 4 and len(targets) > 4 and below > 0
    assert len(bounds) <= len(sources) * len(targets) - below and all(d > a for a, b, c, d in bounds)
    made = [piece.made() for piece in slices.cut(part, bounds)]
    assert all(csr_problem(p.rowptr, p.col, p.n_local, ascending=True) is None for p in made)


def test_a_part_that_fits_is_not_sliced_and_one_that_cannot_be_is_refused_in_one_line():
    part = _parts(1)[0]
    assert plans.plan(part, _need(part), part_need) is None
    with pytest.raises(TcdistError, match=r"^part 0 cannot be sliced to fit 256.0 KiB on the device: its longest row "
                                          r"\(\d+ out-neighbours\) beside the pointers of its 36,691 rows needs"):
        plans.plan(part, 256 << 10, part_need)


def test_a_count_under_a_limit_slices_what_does_not_fit(cli, tmp_path):
    """The whole graph, and parts (from a store too), under a limit each fits in slices only:
    the count and every vertex's triangles are exact, and the summary says how many slices."""
    plain = tcdist.count_triangles(GRAPH, backend="cpu", per_vertex=True)
    store = tmp_path / "three.h5"
    for source, options in ((GRAPH, ()), (GRAPH, ("-P", 3)), (store, ())):
        if source == store:
            assert cli("partition", GRAPH, "-P", 3, "-o", store).code == 0
        out = tmp_path / "pv.csv"
        record = cli("count", source, "--backend", "cpu", "--gpu-memory-limit", "1MiB", *options,
                     "--per-vertex", out, "--json").json()
        assert record["triangles"] == 727_044 and record["slices"] > 2 * record["parts"]
        assert all(p["slices"] > 1 for p in record["part_stats"])
        vertex, triangles = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1), dtype=np.int64).T
        expected = plain.per_vertex
        assert np.array_equal(np.sort(vertex), np.sort(expected.vertex))
        assert np.array_equal(triangles[np.argsort(vertex)], expected.triangles[np.argsort(expected.vertex)])
    summary = cli("count", GRAPH, "--backend", "cpu", "--gpu-memory-limit", "1MiB").out
    assert "slices (the graph too large for the device, counted in pieces that fit)" in summary


def test_slices_of_the_graph_load_graph_checked_are_not_checked_again_and_a_store_s_parts_are(monkeypatch, tmp_path):
    """Every slice of the whole graph went through the CSR check that loading the graph had made
    (RMAT-22 under 64 MiB on two cores: 50 s of 114); a part read from a store is still checked,
    slice by slice, since nothing else checked it."""
    from tcdist.device import core

    checked = []
    def check(rowptr, *rest):  # (the warm-up's own checks of its small test graph left out)
        checked.extend([rowptr.size] if rowptr.size > 100 else [])
        return csr_problem(rowptr, *rest)

    monkeypatch.setattr(core, "csr_problem", check)
    whole = tcdist.count_triangles(GRAPH, backend="cpu", gpu_memory_limit="1MiB")
    assert whole.triangles == 727_044 and whole.slices > 2 and checked == []
    store = tmp_path / "three.h5"
    tcdist.api.partition(GRAPH, parts=3, output=store)
    parts = tcdist.count_triangles(store, backend="cpu", gpu_memory_limit="1MiB")
    assert parts.triangles == 727_044 and len(checked) == parts.slices > 3


def test_a_plan_of_too_many_slices_is_refused_in_one_line(monkeypatch):
    """The bitmap kernel's own memory grows by a bitmap of every row per source row: under 1 MiB
    its slices shrank to single rows, and the plan to 414,755 slices (found on nvidia-h200)."""
    from tcdist.count.kernels import bitmap

    monkeypatch.setattr(bitmap, "multiprocessors", lambda: 132)  # an H200's

    def need(v_res, e_res, n_local, col_bytes):
        return part_need(v_res, e_res, n_local, col_bytes) + bitmap.extra_bytes(
            v_res, e_res, n_local, col_bytes, blocks_per_sm=32, threads=128, bits=0, shared=0)

    part = _parts(1)[0]
    with pytest.raises(TcdistError, match=r"^part 0 would need more than 10,000 slices to fit 1.0 MiB on the "
                                          r"device \(a slice of one row needs .*\); give the device more memory$"):
        plans.plan(part, 3 << 18, need, 1 << 20)
    bounds = plans.plan(part, 16 << 20, need)
    assert 1 < len(bounds) <= plans.MAX_SLICES


def test_a_part_without_local_edges_is_one_empty_slice():
    part = Part(0, np.array([0, 0, 0, 3, 5], np.int64), np.array([0, 1, 3, 0, 1], np.int32), None, 2, {})
    bounds = plans.plan(part, part_need(4, 5, 2, 4) - 1, part_need)  # one byte short of the whole part
    assert bounds == [(0, 1, 0, 0)]
    piece = next(slices.cut(part, bounds)).made()
    assert count_marker(piece.rowptr, piece.col, piece.n_local) == 0


def test_slices_plan_the_working_memory_of_one_slice_at_a_time():
    """Two slices share the device, but only the one being checked or counted holds its working
    memory (the check's, the kernel's): the plan counts half of each slice's, so email-Enron under
    half its need makes fewer, larger slices than with all of both (the plan before), and both count
    the part's triangles."""
    from tcdist.device import resolve

    part = _parts(1)[0]
    limit = part_need(*part.sizes()) // 2
    device = resolve("cpu", memory_limit=limit)
    try:
        now, before = plans.slice_plan(device, part), plans.plan(part, limit // 2, device.need)
    finally:
        device.close()
    assert 1 < len(now) < len(before)
    for bounds in (now, before):
        found = sum(count_marker(p.rowptr, p.col, p.n_local) for p in (s.made() for s in slices.cut(part, bounds)))
        assert found == count_marker(part.rowptr, part.col, part.n_local)


@pytest.mark.parametrize("kernel", ["auto", "marker"])
def test_a_plan_of_too_many_slices_advises_what_works(monkeypatch, cli, kernel):
    """More memory, and nothing else where auto chooses or the kernel named has no memory of its own
    (auto's choice, which the refusal advised before, would be refused alike); followed, the advice
    counts the graph. (A kernel with memory of its own, told to let auto choose: test_budget's
    slices by every GPU kernel.)"""
    monkeypatch.setattr(plans, "MAX_SLICES", 4)
    part = _parts(1)[0]
    limit = part_need(*part.sizes()) // 2
    refused = cli("count", GRAPH, "--backend", "cpu", "--kernel", kernel, "--gpu-memory-limit", limit, "--parts", 1)
    assert refused.code == 2 and refused.err.rstrip().endswith("with the kernel's own memory); give the device more "
                                                               "memory"), refused.err
    more = cli("count", GRAPH, "--backend", "cpu", "--kernel", kernel, "--gpu-memory-limit", 2 * limit, "--parts", 1,
               "--json")
    assert more.code == 0 and more.json()["triangles"] == 727_044
