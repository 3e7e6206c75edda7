"""Generators: sizes, determinism and the counts their structure implies."""

import numpy as np
import pytest
from conftest import brute_force_triangles

import tcdist
from tcdist.io import generate, is_spec


def test_rmat_size_and_determinism():
    a, b, c = generate("rmat:12", seed=7), generate("rmat:12", seed=7), generate("rmat:12", seed=8)
    assert a.src.size == 16 * 4096 and int(max(a.src.max(), a.dst.max())) < 4096
    assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
    assert not np.array_equal(a.src, c.src)
    assert generate("rmat:12:4", seed=7).src.size == 4 * 4096


def test_rmat_is_the_same_whatever_is_made_at_a_time(monkeypatch):
    """RMAT's draws follow blocks of edges, not the pieces a device makes at a time (the host
    4 Mi edges, a GPU 64 Mi): before, the draws followed the pieces, and from rmat:19 on, the
    host and the GPU made different graphs (rmat:20: 423,419,525 and 423,817,377 triangles).
    Here blocks of 2^14 edges, rmat:12 is 4 of them, made in pieces that divide a block, cross
    its end, or are the block; a piece on a GPU is a block."""
    from tcdist.io import generators

    monkeypatch.setattr(generators, "_DRAW_BLOCK", 1 << 14)
    made = []
    for piece in (1 << 14, 1 << 10, 3000, 1 << 20):
        monkeypatch.setattr(generators, "_CHUNK", piece)
        made.append(generate("rmat:12", seed=5))
    for other in made[1:]:
        assert np.array_equal(made[0].src, other.src) and np.array_equal(made[0].dst, other.dst)


def test_rmat_is_skewed_like_graph500():
    g = tcdist.load_graph("rmat:14")
    deg = g.degree()
    assert deg.max() > 50 * np.median(deg)


def test_rmat_count_matches_an_independent_counter():
    e = generate("rmat:9", seed=1)
    expected = brute_force_triangles(zip(e.src.tolist(), e.dst.tolist()))
    assert tcdist.count_triangles("rmat:9", seed=1, backend="cpu").triangles == expected


def test_erdos_renyi():
    e = generate("er:1000:5000", seed=3)
    assert e.src.size == 5000 and int(e.src.max()) < 1000
    expected = brute_force_triangles(zip(e.src.tolist(), e.dst.tolist()))
    assert tcdist.count_triangles("er:1000:5000", seed=3, backend="cpu").triangles == expected


def test_grid_is_road_like():
    g = tcdist.load_graph("grid:50:60")
    assert (g.n, g.m) == (3000, 49 * 60 + 50 * 59 + 49 * 59)
    assert int(g.degree().max()) == 6


@pytest.mark.parametrize("text,expected", [("rmat:18", True), ("grid:3:4", True), ("rmat", False),
                                           ("foo:3", False), ("graph.txt", False), ("rmat:1.5", False)])
def test_spec_recognition(text, expected):
    assert is_spec(text) is expected


def test_generators_do_not_depend_on_a_library_stream():
    """Counter-based draws: fixed values for a seed, whatever NumPy's Generator does in this version."""
    e = generate("er:1000:4", seed=42)
    again = generate("er:1000:4", seed=42)
    assert np.array_equal(e.src, again.src) and np.array_equal(e.dst, again.dst)
    from tcdist.io.generators import _Random

    raw = _Random(np, 7).raw(3)
    z = (np.arange(1, 4, dtype=np.uint64) * _Random._GOLDEN + _Random(np, 7)._key)
    assert np.array_equal(raw, _Random._mix(z)), "value i is splitmix64 of (key + i * golden ratio)"
    assert _Random._mix(np.uint64(0)) == 0 and _Random._mix(np.uint64(1)) == np.uint64(0x5692161D100B05E5)


def test_draws_made_in_pieces_side_by_side_are_the_draws_made_at_once(monkeypatch):
    """On the host, a long run of draws (ER's ids, the permutation's keys) is made in pieces on
    every thread: each value still comes from its position alone."""
    from tcdist.io import generators

    whole = generators._Random(np, 11).at(5, 50_000)
    monkeypatch.setattr(generators, "_CHUNK", 999)
    assert np.array_equal(generators._Random(np, 11).at(5, 50_000), whole)
    assert np.array_equal(generate("er:1000:20000", seed=3).src,
                          generators._Random(np, 3).integers(1000, 20000))
