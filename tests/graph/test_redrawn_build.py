"""A generated graph built with its pieces drawn again for every range of keys (nothing of its raw
edges kept) is the graph build_graph makes of all its raw edges at once: every array and count,
with ranges of any size (one vertex a range, or all); and a host that cannot hold the ranges
build's runs builds it so, exactly, where it refused before."""

import numpy as np
import pytest
from conftest import same_graph

import tcdist
from tcdist import io, source
from tcdist.budget import host
from tcdist.errors import TcdistError
from tcdist.graph import build_graph, redrawn_build
from tcdist.io import generators


@pytest.mark.parametrize("spec, keys", [(spec, keys) for spec in ("rmat:12", "rmat:10:40", "er:3000:50000")
                                         for keys in (3000, 1 << 30)] + [("er:50:4000", 1), ("er:7:5", 1)])
def test_a_graph_drawn_again_for_every_range_is_the_graph_build_graph_builds(spec, keys):
    """With ranges of all the keys, of a few thousand (a hub's raw edges over a range: a range of
    its own) and of one key (a range a vertex)."""
    reference = build_graph(io.generate(spec, seed=5))
    span = generators.pieces(spec)[0]
    same_graph(redrawn_build.build_redrawn(span, lambda: generators.pieces(spec, seed=5, size=3000)[2], spec, np, keys),
               reference)


def _small_host(monkeypatch) -> list:
    """From now on a host with 100 MB to give; the redrawn builds it makes."""
    monkeypatch.setattr(host, "available", lambda: (100_000_000, "a test's limit"))
    built = []
    monkeypatch.setattr(redrawn_build, "build_redrawn",
                        lambda *args, build=redrawn_build.build_redrawn: built.append(build(*args)) or built[-1])
    return built


def test_a_host_too_small_for_the_build_draws_the_graph_again_and_counts_it_exactly(monkeypatch):
    """RMAT-18 (4.2 M raw edges: 470 MB to generate and build on the host, 75 MB of keys from its
    pieces) in 100 MB: refused before; now drawn again for each range, the count made in memory."""
    reference = tcdist.count_triangles("rmat:18", backend="cpu")
    built = _small_host(monkeypatch)
    counted = tcdist.count_triangles("rmat:18", backend="cpu")
    assert len(built) == 1 and (counted.n, counted.m, counted.triangles) == (reference.n, reference.m,
                                                                              reference.triangles)


def test_a_host_too_small_for_the_graph_itself_is_refused_with_what_it_needs(monkeypatch):
    monkeypatch.setattr(host, "available", lambda: (20_000_000, "a test's limit"))
    with pytest.raises(TcdistError, match=r"building the graph of rmat:18 \(4,194,304 raw edges\) needs about 22"):
        source.load_graph("rmat:18")


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["rmat:18", "er:200000:3000000"])
def test_drawn_again_on_the_gpu_is_the_same_graph(spec):
    import cupy

    reference = build_graph(io.generate(spec, seed=2))
    span = generators.pieces(spec)[0]
    pieces = lambda: generators.pieces(spec, seed=2, xp=cupy, size=1 << 18)[2]  # noqa: E731
    same_graph(redrawn_build.build_redrawn(span, pieces, spec, cupy, 1 << 20), reference)
