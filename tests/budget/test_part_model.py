"""--parts auto from the degrees (budget/estimate.py, budget/search.py): the model of a random part
against real partitions, the choice it makes, and what the summary and --json say of it."""

import numpy as np
import pytest
from conftest import DATASETS

import tcdist
from tcdist.budget import estimate, search
from tcdist.budget.model import need
from tcdist.partition import partition_graph

GRAPHS = [DATASETS / "email-Enron.txt.gz", DATASETS / "ca-GrQc.mtx.gz", DATASETS / "p2p-Gnutella08.txt.gz",
          "rmat:14", "er:5000:40000"]
SEEDS = (0, 1, 2)


def _mean_sizes(graph, parts: int, prune: str) -> np.ndarray:
    """(rows, columns) of the real parts of several random partitionings, on average."""
    return np.array([[p.stats["v_res"], p.stats["e_res"]] for seed in SEEDS
                     for p in partition_graph(graph, parts, prune=prune, seed=seed).parts], float).mean(axis=0)


@pytest.mark.parametrize("source", GRAPHS)
def test_the_model_bounds_the_parts_that_are_built(source):
    """A vertex's chance to be in a part is exact: the rows of both models are the real parts'
    average. The edges of each model are lower bounds of their parts' (Harris: the ends' events
    go up together, as in the triangles of ca-GrQc), and LSTC's part lies above the minimal one
    and, on these graphs, below the induced model."""
    graph = tcdist.load_graph(source)
    model = estimate.part_model(graph, seed=1)
    for parts in (2, 8, 32):
        least, induced = np.array(model.minimal(parts)[:2]), np.array(model.induced(parts)[:2])
        minimal, lstc, none = (_mean_sizes(graph, parts, prune) for prune in ("minimal", "lstc", "none"))
        assert minimal[0] == pytest.approx(least[0], rel=0.02) and none[0] == pytest.approx(induced[0], rel=0.02)
        assert minimal[1] >= 0.98 * least[1] and none[1] >= 0.98 * induced[1]
        assert np.all(lstc >= 0.98 * least) and np.all(lstc <= induced)
        assert model.minimal(parts)[2] == graph.n / parts


def test_a_sample_stands_for_the_whole_graph():
    """2^14 vertices and edges of rmat:16's 46,696 and 909,786 give its averages within 5 %."""
    graph = tcdist.load_graph("rmat:16")
    every, sample = estimate.part_model(graph, sample=1 << 30), estimate.part_model(graph, sample=1 << 14)
    assert every.vertex_in.size == graph.n and sample.vertex_in.size == 1 << 14
    for parts in (2, 16, 64):
        assert sample.minimal(parts) == pytest.approx(every.minimal(parts), rel=0.05)
        assert sample.induced(parts) == pytest.approx(every.induced(parts), rel=0.05)


@pytest.mark.parametrize("counted_from", [0, 1 << 40])
def test_the_sample_s_in_degrees_are_the_columns_counted(monkeypatch, counted_from):
    """On every core (each thread counting the sampled vertices alone) or by one bincount: the
    same in-degrees as the transpose's row lengths."""
    from tcdist.partition.incoming import transpose

    monkeypatch.setattr(estimate, "COUNTED_FROM", counted_from)
    graph = tcdist.load_graph("rmat:12")
    in_ptr, _ = transpose(graph)
    vertices = np.unique(np.random.default_rng(3).integers(0, graph.n, 500))
    assert np.array_equal(estimate.in_degrees(graph.col, graph.n, vertices), np.diff(in_ptr)[vertices])


def _by_the_degrees(monkeypatch):
    """Every graph as large as those whose parts are not built to choose P: none may be built."""
    monkeypatch.setattr(search, "MEASURED_EDGES", 0)

    def refuse(*args, **kwargs):
        raise AssertionError("a part was built")

    monkeypatch.setattr(search, "partition_graph", refuse)


@pytest.mark.parametrize("source,fraction", [(DATASETS / "email-Enron.txt.gz", 0.6), ("rmat:16", 0.7),
                                             ("er:40000:400000", 0.5)])
def test_a_p_chosen_by_the_degrees_is_few_and_its_parts_about_the_budget(monkeypatch, source, fraction):
    """Without building a part, P's parts fit the budget or come within a tenth of it (ER's parts,
    nearer their induced parts than RMAT's, by 9 %: a part over the budget is counted in slices),
    and half as many parts do not fit."""
    _by_the_degrees(monkeypatch)
    graph = tcdist.load_graph(source)
    budget = int(fraction * need(graph.n, graph.m, graph.n, 4))
    choice = search.auto_parts(graph, "random", "lstc", 0, budget, 1, need)
    assert choice.built == 0 and "by the degrees" in choice.why

    def largest(parts):
        return max(need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], 4)
                   for p in partition_graph(graph, parts, seed=0).parts)

    assert 1 < choice.parts and largest(choice.parts) <= 1.1 * budget
    assert choice.parts == 2 or largest(choice.parts // 2) > budget


def test_a_dense_core_in_every_part_is_said_at_once(monkeypatch):
    """rmat:18 under 0.4 of its need: the estimate stops shrinking (four times the parts, less than
    a fifth less), and no part is built to find it out."""
    _by_the_degrees(monkeypatch)
    graph = tcdist.load_graph("rmat:18")
    budget = 2 * need(graph.n, graph.m, graph.n, 4) // 5
    with pytest.raises(search.NoParts, match=r"^parts stop shrinking: with [0-9,]+ random parts one needs about "
                                             r".* by the degrees, over the budget of") as refused:
        search.auto_parts(graph, "random", "lstc", 0, budget, 1, need)
    assert refused.value.built == 0


def test_parts_too_small_to_stand_for_the_largest_are_not_chosen(monkeypatch):
    """email-Enron under 512 KiB fits 33 parts of about 1,100 vertices by the degrees, but the part
    a hub falls in needs 539 KiB: so few vertices a part, the degrees do not decide."""
    _by_the_degrees(monkeypatch)
    graph = tcdist.load_graph(DATASETS / "email-Enron.txt.gz")
    with pytest.raises(search.NoParts, match="but each would hold only about [0-9,]+ vertices"):
        search.auto_parts(graph, "random", "lstc", 0, 512 << 10, 1, need)


def test_a_gpu_plans_two_parts_at_once_where_some_p_allows(monkeypatch):
    _by_the_degrees(monkeypatch)
    """er:40000:400000 under 0.9 of its need: 2 parts fit the budget one at a time, more fit half
    of it, two at a time; rmat:16 under 0.8 fits no P in half (its dense core), so 2 parts, one
    at a time."""
    graph = tcdist.load_graph("er:40000:400000")
    budget = int(0.9 * need(graph.n, graph.m, graph.n, 4))
    two = search.auto_parts(graph, "random", "lstc", 0, budget, 2, need)
    assert two.parts > 2 and "half the budget" in two.why
    assert search.auto_parts(graph, "random", "lstc", 0, budget, 1, need).parts == 2
    skewed = tcdist.load_graph("rmat:16")
    alone = search.auto_parts(skewed, "random", "lstc", 0, int(0.8 * need(skewed.n, skewed.m, skewed.n, 4)), 2, need)
    assert alone.parts == 2 and "half" not in alone.why


def test_the_summary_and_json_say_what_auto_chose_and_why(cli, monkeypatch):
    graph = DATASETS / "email-Enron.txt.gz"
    args = ("count", graph, "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2MiB")
    record = cli(*args, "--json").json()
    chose = record["parts_auto"]
    assert record["triangles"] == 727_044 and chose["parts"] == record["parts"] > 1 and chose["built"] > 0
    assert chose["why"].startswith(f"{record['parts']} random parts, built: the largest needs ")
    assert chose["why"].endswith("within the budget of 2.0 MiB") and chose["seconds"] > 0
    line = next(line for line in cli(*args).out.splitlines() if line.startswith("  parts auto "))
    assert line.startswith(f"  parts auto {chose['why']} (chosen in ") and "partitionings built)" in line


def test_a_part_over_the_budget_by_the_degrees_is_counted_in_slices(cli, monkeypatch):
    """er:40000:400000 under half its need: 6 parts by the degrees, the largest over the budget;
    it is counted in slices, and the count is exact (in process: the choice made as for a large
    graph)."""
    monkeypatch.setattr(search, "MEASURED_EDGES", 0)
    graph = tcdist.load_graph("er:40000:400000")
    budget = need(graph.n, graph.m, graph.n, 4) // 2
    found = tcdist.count_triangles(graph, backend="cpu", parts="auto", gpu_memory_limit=budget)
    assert found.triangles == tcdist.count_triangles(graph, backend="cpu").triangles
    assert found.parts == found.parts_auto["parts"] > 1 and found.parts_auto["built"] == 0
    over = [p for p in found.part_stats if need(p["v_res"], p["e_res"], p["n_local"], 4) > budget]
    assert over and all(p["slices"] > 1 for p in over)


def test_slices_chosen_at_once_are_said_in_the_json(cli):
    """rmat:16 (909,786 edges: its parts are built to choose P) under 2 MiB: parts stop shrinking,
    the whole graph is counted in slices, and --json says so with the count of the whole."""
    whole = tcdist.count_triangles("rmat:16", backend="cpu").triangles
    record = cli("count", "rmat:16", "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2MiB",
                 "--json").json()
    assert (record["triangles"], record["parts"], record["parts_auto"]["parts"]) == (whole, 1, 1)
    assert record["slices"] > 1 and record["parts_auto"]["why"].startswith("parts stop shrinking")
    assert record["parts_auto"]["why"].endswith("counting 1 part in slices that fit instead")
    assert record["warnings"] == [record["parts_auto"]["why"]]


@pytest.mark.gpu
def test_the_model_of_a_graph_on_the_gpu_is_the_host_s():
    """The same sample, its in-degrees by a bincount on the GPU: the same model, value for value."""
    import dataclasses

    import cupy

    host = tcdist.load_graph("rmat:17")
    on_gpu = dataclasses.replace(host, rowptr=cupy.asarray(host.rowptr), col=cupy.asarray(host.col))
    a, b = estimate.part_model(host, seed=4), estimate.part_model(on_gpu, seed=4)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.source_in, b.source_in)
    assert all(a.minimal(p) == b.minimal(p) and a.induced(p) == b.induced(p) for p in (2, 16, 256))
