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


def _measured(make):
    """(what make() returns, the most the GPU pool held in use at once while it ran, bytes held before)."""
    import cupy

    from tcdist.device.allocator import limited

    with limited(1 << 50) as allocator:
        before = allocator.pool.used_bytes()
        allocator.peak = before
        made = make()
        cupy.cuda.Device().synchronize()
        return made, allocator.peak, before


@pytest.mark.parametrize("spec", ["rmat:18", "rmat:20", "er:300000:3000000"])
def test_generating_and_building_on_the_gpu_stay_within_their_estimates(spec):
    import cupy

    raw = io.spec_edges(spec)
    edges, generated, _ = _measured(lambda: io.generate(spec, seed=0, xp=cupy))
    assert generated <= model.GENERATED_BYTES_PER_EDGE * raw, f"generating: {generated / raw:.1f} bytes per raw edge"
    graph, built, _ = _measured(lambda: build_graph(edges))
    assert graph.m > 0
    assert built <= model.BUILD_BYTES_PER_EDGE * raw, f"building: {built / raw:.1f} bytes per raw edge"


def test_building_sparse_ids_on_the_gpu_stays_within_its_estimate():
    """Ids far apart (searched, not a dense table): the ends are sorted, a second m-sized sort."""
    import cupy

    rng = np.random.default_rng(7)
    raw = 1 << 20
    src, dst = (cupy.asarray(rng.integers(0, 1 << 40, raw, dtype=np.int64)) for _ in range(2))
    graph, built, _ = _measured(lambda: build_graph(EdgeList(src, dst, "sparse")))
    assert graph.m > 0
    assert built <= model.BUILD_BYTES_PER_EDGE * raw, f"building: {built / raw:.1f} bytes per raw edge"


@pytest.mark.parametrize("spec", ["rmat:20", "er:300000:3000000"])
def test_a_graph_built_from_its_pieces_on_the_gpu_stays_within_its_estimate_and_is_the_same(monkeypatch, spec):
    """Pieces of 2^20 raw edges (the piece's share of the estimate scaled with them): the peak
    against pieces_build_bytes, the graph against the host's build of the same spec."""
    import cupy

    from tcdist.graph import pieces_build
    from tcdist.io import generators

    monkeypatch.setattr(generators, "_DRAW_BLOCK", 1 << 20)
    span, raw, pieces = generators.pieces(spec, seed=0, xp=cupy)
    graph, built, before = _measured(lambda: pieces_build.build_from_pieces(span, raw, pieces, spec, cupy))
    assert built - before <= model.pieces_build_bytes(raw, span, 1 << 20), f"{(built - before) / raw:.1f} B per raw edge"
    reference = build_graph(io.generate(spec, seed=0))
    assert np.array_equal(graph.rowptr.get(), reference.rowptr) and np.array_equal(graph.col.get(), reference.col)
    assert np.array_equal(graph.original_id.get(), reference.original_id)
    assert (graph.self_loops, graph.duplicates, graph.reciprocal) == (reference.self_loops, reference.duplicates,
                                                                      reference.reciprocal)
