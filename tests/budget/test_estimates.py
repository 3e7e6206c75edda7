"""The memory model's per-edge estimates against the GPU allocator's high-water mark: generating
and building a graph on the GPU must not take more than the estimate that admits it there (an
estimate below the real peak let RMAT-26 start a build that ran out of memory)."""

import numpy as np
import pytest

from tcdist import io
from tcdist.budget import model
from tcdist.graph import build_graph
from tcdist.graph.edges import EdgeList

pytestmark = pytest.mark.gpu


def _measured(make, since=None):
    """(what make() returns, the most the GPU pool held in use at once while it ran above since (by
    default, what it held before make() ran))."""
    import cupy

    from tcdist.device.allocator import limited

    with limited(1 << 50) as allocator:
        before = allocator.pool.used_bytes() if since is None else since
        allocator.peak = allocator.pool.used_bytes()
        made = make()
        cupy.cuda.Device().synchronize()
        return made, allocator.peak - before


def _held():
    import cupy

    return cupy.get_default_memory_pool().used_bytes()


@pytest.mark.parametrize("spec", ["rmat:18", "rmat:20", "rmat:16:1", "er:300000:3000000"])
def test_generating_and_building_on_the_gpu_stay_within_their_estimates(spec):
    """The build's estimate counts the raw edges it is given."""
    import cupy

    from tcdist.io import generators

    raw, span = io.spec_edges(spec), generators.pieces(spec)[0]
    start = _held()
    edges, generated = _measured(lambda: io.generate(spec, seed=0, xp=cupy))
    estimate = model.gpu_generated_bytes(raw, generators.permuted(spec), generators.PIECE_EDGES)
    assert generated <= estimate, f"{generated / raw:.1f} B per edge"
    graph, built = _measured(lambda: build_graph(edges), since=start)
    assert graph.m > 0
    assert built <= model.gpu_build_bytes(raw, span), f"building: {built / raw:.1f} bytes per raw edge"


def test_building_sparse_ids_on_the_gpu_stays_within_its_estimate():
    """Ids far apart (searched, not a dense table): the ends are sorted, a second m-sized sort."""
    import cupy

    rng = np.random.default_rng(7)
    raw = 1 << 20
    start = _held()
    src, dst = (cupy.asarray(rng.integers(0, 1 << 40, raw, dtype=np.int64)) for _ in range(2))
    graph, built = _measured(lambda: build_graph(EdgeList(src, dst, "sparse")), since=start)
    assert graph.n > raw  # (nearly every id is drawn once: the vertices' share of the build at its largest)
    assert built <= model.gpu_build_bytes(raw, graph.n), f"building: {built / raw:.1f} bytes per raw edge"


@pytest.mark.parametrize("spec", ["rmat:20", "er:300000:3000000"])
def test_a_graph_built_from_its_pieces_on_the_gpu_stays_within_its_estimate_and_is_the_same(monkeypatch, spec):
    """Pieces of 2^20 raw edges (the piece's share of the estimate scaled with them): the peak
    against pieces_build_bytes, the graph against the host's build of the same spec."""
    import cupy

    from tcdist.graph import pieces_build
    from tcdist.io import generators

    monkeypatch.setattr(generators, "_DRAW_BLOCK", 1 << 20)
    span, raw, pieces = generators.pieces(spec, seed=0, xp=cupy)
    graph, built = _measured(lambda: pieces_build.build_from_pieces(span, raw, pieces, spec, cupy))
    assert built <= model.pieces_build_bytes(raw, span, 1 << 20, pieces_build.STEP), f"{built / raw:.1f} B per raw edge"
    reference = build_graph(io.generate(spec, seed=0))
    assert np.array_equal(graph.rowptr.get(), reference.rowptr) and np.array_equal(graph.col.get(), reference.col)
    assert np.array_equal(graph.original_id.get(), reference.original_id)
    assert (graph.self_loops, graph.duplicates, graph.reciprocal) == (reference.self_loops, reference.duplicates,
                                                                      reference.reciprocal)


def _small_ranges(monkeypatch):
    """Ranges and pieces as small beside these graphs as the thresholds allow beside large ones."""
    from tcdist import plan

    monkeypatch.setattr(plan, "RANGE_KEYS_AT_LEAST", 1 << 16)
    monkeypatch.setattr(plan, "PIECE_EDGES_AT_LEAST", 1 << 16)


@pytest.mark.parametrize("spec, room", [("rmat:20", 64 << 20), ("rmat:20", 40 << 20), ("er:1000000:8000000", 72 << 20)])
def test_a_graph_built_in_ranges_on_the_gpu_stays_within_its_room_and_is_the_same(monkeypatch, spec, room):
    """Room for a sixteenth of the raw edges' keys: pieces drawn and ranges sorted on the GPU,
    the graph on the host, under an allocator limited to that room (in 40 MiB RMAT-20's vertices
    are permuted and ranked on the host)."""
    from tcdist import plan, source
    from tcdist.device.allocator import limited
    from tcdist.io import generators
    from tcdist.results import Timings

    _small_ranges(monkeypatch)
    timings = Timings()
    with limited(room) as allocator:
        left = room - allocator.pool.used_bytes()
        span, m, _ = io.pieces(spec)
        piece, keys, ranked = plan.ranges(left, span, m, spec, generators.permuted(spec))
        graph = source._made(spec, 0, plan.Build("ranges", "gpu", "host", m, span, piece=piece, keys=keys,
                                                 ranked=ranked), timings)
    assert isinstance(graph.rowptr, np.ndarray) and timings.generate > 0 and timings.build > 0
    reference = build_graph(io.generate(spec, seed=0))
    for name in ("rowptr", "col", "original_id"):
        assert np.array_equal(getattr(graph, name), getattr(reference, name)), name
    assert (graph.self_loops, graph.duplicates, graph.reciprocal) == (reference.self_loops, reference.duplicates,
                                                                      reference.reciprocal)


def test_an_edge_list_larger_than_the_gpu_is_built_in_ranges_there_within_its_room(monkeypatch):
    """Raw edges held on the host that the GPU cannot take whole: their keys sorted on the GPU a
    range at a time, under an allocator limited to the room, the same graph as the host's."""
    from tcdist import source
    from tcdist.device.allocator import limited
    from tcdist.graph import ranges_build

    _small_ranges(monkeypatch)
    edges = io.generate("rmat:18", seed=1)
    reference = source.load_graph((edges.src, edges.dst))
    room = 64 << 20
    monkeypatch.setattr(source, "_gpu_room", lambda device: room)
    built = []
    monkeypatch.setattr(ranges_build, "build_in_ranges",
                        lambda *args, build=ranges_build.build_in_ranges: built.append(build(*args)) or built[-1])
    with limited(room):
        graph = source.load_graph((edges.src, edges.dst), device="gpu")
    assert built == [graph] and isinstance(graph.rowptr, np.ndarray)
    for name in ("rowptr", "col", "original_id"):
        assert np.array_equal(getattr(graph, name), getattr(reference, name)), name


def test_a_build_short_of_gpu_memory_goes_on_on_the_host(monkeypatch):
    """An edge list whose vertices the estimate could not know of: the GPU's build runs out of
    memory and the host builds the same graph."""
    from tcdist import source
    from tcdist.device.allocator import limited

    rng = np.random.default_rng(3)
    src, dst = (rng.integers(0, 1 << 40, 1 << 16, dtype=np.int64) for _ in range(2))
    reference = source.load_graph((src, dst))
    monkeypatch.setattr(source, "_gpu_room", lambda device: 1 << 30)  # room for the edges by the estimate
    with limited(model.GPU_BUILD_BYTES_PER_EDGE * src.size):  # not for their 2^17 vertices
        graph = source.load_graph((src, dst), device="gpu")
    assert isinstance(graph.rowptr, np.ndarray)
    assert np.array_equal(graph.rowptr, reference.rowptr) and np.array_equal(graph.col, reference.col)


def test_a_generation_short_of_gpu_memory_goes_on_on_the_host(monkeypatch):
    """A spec the estimate admits to the GPU whose draws run out of memory there: the host
    generates and builds the same graph."""
    from tcdist import source
    from tcdist.device.allocator import limited

    reference = source.load_graph("rmat:14", seed=4)
    monkeypatch.setattr(model, "gpu_generated_bytes", lambda *args: 0)  # the estimate admits it
    monkeypatch.setattr(model, "gpu_build_bytes", lambda *args: 0)
    monkeypatch.setattr(model, "GPU_BUILD_BYTES_PER_EDGE", 1 << 40)  # and then builds it on the host
    with limited(1 << 20):  # the draws do not fit
        graph = source.load_graph("rmat:14", seed=4, device="gpu")
    assert isinstance(graph.rowptr, np.ndarray)
    assert np.array_equal(graph.rowptr, reference.rowptr) and np.array_equal(graph.col, reference.col)
