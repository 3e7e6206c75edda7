"""tcdist as a networkx backend: registered by its entry points, light to discover, the same
answers as networkx (values, types, order, errors) on awkward graphs, dispatch that really reaches
tcdist, and networkx's own test suite passing with the backend."""

import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from unittest import mock

import networkx as nx
import pytest

from tcdist import api
from tcdist.nxbackend.graph import from_networkx, to_networkx
from tcdist.nxbackend.info import FUNCTIONS
from tcdist.nxbackend.interface import BackendInterface

# networkx notes each reuse of a converted graph in a UserWarning; the suite turns warnings into errors
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs:UserWarning")


def test_entry_points_name_the_backend_and_its_info():
    [backend] = entry_points(group="networkx.backends", name="tcdist")
    [info] = entry_points(group="networkx.backend_info", name="tcdist")
    assert backend.load() is BackendInterface
    assert set(info.load()()["functions"]) == set(FUNCTIONS)
    assert nx.utils.backends.backend_info["tcdist"]["backend_name"] == "tcdist"


def test_the_info_networkx_reads_at_import_loads_no_heavy_library():
    code = ("import sys\nfrom tcdist.nxbackend.info import get_info\nget_info()\n"
            "print(sorted(m for m in ('numpy', 'numba', 'cupy', 'scipy', 'networkx') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_info_lists_exactly_what_the_backend_implements():
    assert all(getattr(BackendInterface, name, None) for name in FUNCTIONS)
    assert all(hasattr(nx, name) for name in FUNCTIONS)


def _awkward_graphs():
    karate = nx.karate_club_graph()
    named = nx.relabel_nodes(nx.les_miserables_graph(), {"Valjean": ("tuple", 1)})
    loops = nx.complete_graph(5)
    loops.add_edges_from([(0, 0), (3, 3), ("lone loop", "lone loop")])
    loops.add_nodes_from(["isolated", -7, 2.5])
    mixed = nx.Graph([(0, "a"), ("a", (1, 2)), ((1, 2), 0), (0, 10**20), (10**20, "a")])
    return {"karate": karate, "string labels": named, "self loops and isolated nodes": loops, "mixed labels": mixed,
            "only isolated nodes": nx.empty_graph(4), "empty": nx.Graph()}


GRAPHS = _awkward_graphs()


def _outcome(call):
    """What a call returns (a dict with its key order and value types), or the error it raises."""
    try:
        result = call()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e), str(e)
    if isinstance(result, dict):
        return list(result.items()), [type(v) for v in result.values()]
    return result, type(result)


def _calls(G):
    first = next(iter(G), None)
    some = [first, "not a node", first, *list(G)[-2:]]
    return {
        "triangles": lambda **b: nx.triangles(G, **b),
        "triangles of one node": lambda **b: nx.triangles(G, first, **b),
        "triangles of some nodes": lambda **b: nx.triangles(G, some, **b),
        "triangles of a missing node": lambda **b: nx.triangles(G, 12345, **b),
        "clustering": lambda **b: nx.clustering(G, **b),
        "clustering of one node": lambda **b: nx.clustering(G, first, **b),
        "clustering of some nodes": lambda **b: nx.clustering(G, some, **b),
        "average clustering": lambda **b: nx.average_clustering(G, **b),
        "average clustering without zeros": lambda **b: nx.average_clustering(G, count_zeros=False, **b),
        "average clustering of some nodes": lambda **b: nx.average_clustering(G, some, **b),
        "transitivity": lambda **b: nx.transitivity(G, **b),
        "all triangles": lambda **b: {frozenset(t) for t in nx.all_triangles(G, **b)},
        "all triangles of some nodes": lambda **b: {frozenset(t) for t in nx.all_triangles(G, some[:2], **b)},
    }


@pytest.mark.parametrize("graph", GRAPHS)
def test_every_function_answers_as_networkx_does(graph):
    G = GRAPHS[graph]
    for name, call in _calls(G).items():
        assert _outcome(lambda: call(backend="tcdist")) == _outcome(call), name


def test_all_triangles_yields_each_triangle_once_as_a_tuple_of_nodes():
    G = GRAPHS["string labels"]
    found = list(nx.all_triangles(G, backend="tcdist"))
    assert all(type(t) is tuple and len(t) == 3 and set(t) <= set(G) for t in found)
    assert len({frozenset(t) for t in found}) == len(found) == sum(nx.triangles(G).values()) // 3


def test_the_count_is_tcdist_s():
    with mock.patch.object(api, "count_triangles", wraps=api.count_triangles) as count:
        assert nx.triangles(nx.complete_graph(4), backend="tcdist") == dict.fromkeys(range(4), 3)
    count.assert_called_once()
    assert count.call_args.kwargs == {"backend": "cpu", "per_vertex": True}


@pytest.mark.parametrize("call", [
    lambda: nx.clustering(nx.complete_graph(4, nx.DiGraph), backend="tcdist"),
    lambda: nx.clustering(nx.complete_graph(4), weight="weight", backend="tcdist"),
    lambda: nx.average_clustering(nx.complete_graph(4), weight="weight", backend="tcdist"),
], ids=["directed", "weighted", "weighted average"])
def test_what_tcdist_declines_is_networkx_s_to_run(call):
    with pytest.raises(NotImplementedError, match="not implemented by 'tcdist' backend for the given arguments"):
        call()


@pytest.mark.parametrize("call", [
    lambda G, **backend: nx.transitivity(G, **backend),
    lambda G, **backend: nx.triangles(G, 0, **backend),
    lambda G, **backend: nx.triangles(G, [0, 1], **backend),
    lambda G, **backend: nx.clustering(G, **backend),
    lambda G, **backend: nx.average_clustering(G, **backend),
    lambda G, **backend: nx.clustering(G.to_directed(), **backend),
    lambda G, **backend: nx.clustering(G, weight="weight", **backend),
], ids=["transitivity", "triangles of a node", "triangles of nodes", "clustering", "average clustering",
        "directed clustering", "weighted clustering"])
def test_what_networkx_refuses_of_a_multigraph_tcdist_refuses_with_networkx_s_exception(call):
    """A multigraph's call that networkx refuses raised the backend's NotImplementedError, not
    networkx's own NetworkXNotImplemented, as docs/networkx.md says."""
    G = nx.complete_graph(4, nx.MultiGraph)
    with pytest.raises(nx.NetworkXNotImplemented) as own:
        call(G)
    with pytest.raises(nx.NetworkXNotImplemented) as tcdist:
        call(G, backend="tcdist")
    assert str(tcdist.value) == str(own.value) == "not implemented for multigraph type"


def test_what_tcdist_declines_raises_even_with_fallback_to_networkx(monkeypatch):
    """As docs/networkx.md says: fallback_to_nx does not reach a call that named its backend."""
    monkeypatch.setattr(nx.config, "fallback_to_nx", True)
    with pytest.raises(NotImplementedError, match="No other backends will be attempted"):
        nx.clustering(nx.complete_graph(4, nx.DiGraph), backend="tcdist")


@pytest.mark.parametrize("call", [
    lambda G: nx.clustering(G.to_directed()),
    lambda G: nx.average_clustering(G, weight="weight"),
    lambda G: nx.transitivity(nx.MultiGraph(G)),
], ids=["directed", "weighted", "multigraph"])
def test_with_tcdist_first_in_priority_what_it_declines_runs_in_networkx(monkeypatch, call):
    G = nx.gnm_random_graph(1_000, 12_000, seed=4)  # large enough for tcdist to take what it can
    expected = _outcome(lambda: call(G))
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["tcdist"])
    monkeypatch.setattr(nx.config, "cache_converted_graphs", False)
    with mock.patch.object(api, "count_triangles", wraps=api.count_triangles) as count:
        assert _outcome(lambda: call(G)) == expected
        count.assert_not_called()
        assert nx.triangles(G) == nx.triangles(G, backend="networkx")
        count.assert_called_once()


def test_a_multigraph_counts_each_triangle_of_nodes_once():
    G = nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (2, 2)])
    assert nx.triangles(G, backend="tcdist") == nx.triangles(G) == {0: 1, 1: 1, 2: 1}
    assert [sorted(t) for t in nx.all_triangles(G, backend="tcdist")] == [[0, 1, 2]]


def test_small_graphs_and_single_nodes_are_left_to_networkx_when_it_may_choose():
    small, large = nx.complete_graph(5), nx.complete_graph(150)
    assert isinstance(BackendInterface.should_run("triangles", (small,), {}), str)
    assert isinstance(BackendInterface.should_run("triangles", (large, 0), {}), str)
    assert BackendInterface.should_run("triangles", (large,), {}) is True


def test_with_tcdist_first_in_priority_a_large_graph_is_counted_by_tcdist(monkeypatch):
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["tcdist"])
    with mock.patch.object(api, "count_triangles", wraps=api.count_triangles) as count:
        assert nx.transitivity(nx.complete_graph(5)) == 1.0
        count.assert_not_called()
        assert nx.transitivity(nx.complete_graph(150)) == 1.0
    count.assert_called_once()


def test_a_view_converts_and_converts_back():
    G = GRAPHS["self loops and isolated nodes"]
    view = nx.subgraph_view(G, filter_node=lambda n: n != 4)
    back = to_networkx(from_networkx(view))
    assert list(back) == list(view)
    assert {frozenset(e) for e in back.edges} == {frozenset(e) for e in view.edges}
    assert nx.triangles(view, backend="tcdist") == nx.triangles(view)


@pytest.mark.parametrize("fallback", [True, False], ids=["falling back", "tcdist only"])
def test_networkx_s_own_cluster_tests_pass_with_the_backend(fallback, tmp_path):
    """With fallback, what tcdist declines runs in networkx; without, networkx marks it xfail, and
    what passes ran through tcdist alone."""
    env = {**os.environ, "NETWORKX_TEST_BACKEND": "tcdist"}
    env.pop("NETWORKX_FALLBACK_TO_NX", None)
    if fallback:
        env["NETWORKX_FALLBACK_TO_NX"] = "True"
    done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "networkx.algorithms.tests.test_cluster",
                           "-q", "-p", "no:cacheprovider"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    summary = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= (50 if fallback else 20) and not re.search(r"\d+ (failed|error)", summary), summary
