"""Generators: sizes, determinism and the counts their structure implies."""

import hashlib
import types

import numpy as np
import pytest
from conftest import brute_force_triangles

import tcdist
from tcdist.io import generate, generators, is_spec


def test_rmat_size_and_determinism():
    a, b, c = generate("rmat:12", seed=7), generate("rmat:12", seed=7), generate("rmat:12", seed=8)
    assert a.src.size == 16 * 4096 and int(max(a.src.max(), a.dst.max())) < 4096
    assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
    assert not np.array_equal(a.src, c.src)
    assert generate("rmat:12:4", seed=7).src.size == 4 * 4096


def _whole_arrays():
    """NumPy under another name: the generators take their whole-array path (CuPy's) with it."""
    return types.SimpleNamespace(**{name: getattr(np, name) for name in dir(np) if not name.startswith("__")})


@pytest.mark.parametrize("block,piece", [(1 << 14, 3000), (1 << 26, 1 << 10)])
def test_rmat_on_the_host_draws_by_blocks_not_by_its_pieces(monkeypatch, block, piece):
    """RMAT's draws follow blocks of edges (2^14 here: rmat:12 is 4 of them), not the pieces the
    host makes at a time (which divide a block or cross its end); the GPU's CUDA pass follows the
    same blocks (tests/device/test_gpu.py)."""
    from tcdist.io import generators

    monkeypatch.setattr(generators, "_DRAW_BLOCK", block)
    for seed in (5, 2**64 - 1):
        whole = generators.rmat(12, seed=seed)
        monkeypatch.setattr(generators, "_PIECE", piece)
        pieces = generators.rmat(12, seed=seed)
        monkeypatch.setattr(generators, "_PIECE", 1 << 24)
        assert np.array_equal(whole[0], pieces[0]) and np.array_equal(whole[1], pieces[1])


# sha256 of src then dst (each its dtype name, then its bytes), as the NumPy generators of commit b7a957c made them
FIXED = {
    ("rmat:17", 0): "fd74c50480b34547a135386674a585df884f06a7bc302946e80d3621d2b19a12",
    ("rmat:17", 5): "a4a48f49b665d94d0e3fdcb2151877cf16aacd887cde8d0f86d9e11685f39457",
    ("rmat:12:4", 0): "9fc4d45fe647102dacb0df9e9f16db3ff4cf934440a90a682b72764e7432803a",
    ("rmat:12:4", 7): "d42cccea738f30b5f24139e6f417a1a4ccb602694ae37a4f7a00e9241f48c33c",
    ("rmat:3:1", 2): "56f5ebe6c30ebc112420decdbc01c3d80d761b58011ded8e766fda7272de860c",
    ("rmat:15", 2**64 - 1): "a9e04d2b094490c36fc7b0b9424bd6d6d878fb7a2f12b8c48f71c504ee3c01d9",
    ("er:1000:5000", 3): "f040086a0394e01147edde840e7a75a16447ccf5a1480bd5515ec83ae8159266",
    ("er:100000:3000000", 9): "db137b251e380088c7b325cce600b4ee560d89cef8fc10404f0ee0687cf719a8",
    ("grid:50:60", 0): "3e450e73ddc7edd647c992692f6ad79806f302b7a790d1f7ae50ca7d483b2733",
    ("tripartite:3:4:5", 0): "14e0b4be8ff883c5c20cd2c82b3ab2da3b7c028844ad311b14f2d12e60fcdf3f",
}


@pytest.mark.parametrize("spec,seed", sorted(FIXED))
def test_generators_make_the_edges_they_always_made(spec, seed):
    e = generate(spec, seed=seed)
    digest = hashlib.sha256()
    for a in (e.src, e.dst):
        digest.update(str(a.dtype).encode())
        digest.update(a.tobytes())
    assert digest.hexdigest() == FIXED[spec, seed]


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


def test_compiled_draws_are_the_whole_array_draws():
    """On the host, a run of draws (ER's ids, the permutation's keys) is compiled: each value
    still comes from its position alone."""
    from tcdist.io import generators

    host, whole = generators._Random(np, 11), generators._Random(_whole_arrays(), 11)
    assert np.array_equal(host.at(5, 50_000), whole.at(5, 50_000))
    assert np.array_equal(host.integers(1000, 20000), whole.integers(1000, 20000))
    assert np.array_equal(generate("er:1000:20000", seed=3).src, generators._Random(np, 3).integers(1000, 20000))


@pytest.mark.parametrize("block", [1 << 26, 4096])
def test_the_devices_er_draws_run_on_numpy_give_the_hosts_edges_whole_and_in_pieces(monkeypatch, block):
    """The array code a GPU runs for ER (any array module but NumPy itself; RMAT's draws are a
    CUDA pass, tested on a GPU), run here with NumPy standing in for CuPy: the host's edges,
    drawn whole and piece by piece."""
    monkeypatch.setattr(generators, "_DRAW_BLOCK", block)
    device = types.SimpleNamespace(**{name: getattr(np, name) for name in dir(np) if not name.startswith("__")})
    src, dst = generators.erdos_renyi(3000, 40000, seed=9)
    assert all(np.array_equal(a, b) for a, b in zip(generators.erdos_renyi(3000, 40000, seed=9, xp=device), (src, dst)))
    for size in (block, 1000):  # a draw block, or pieces that cross blocks (a device with less room)
        _, m, pieces = generators.pieces("er:3000:40000", seed=9, xp=device, size=size)
        drawn = list(pieces)
        assert m == src.size and len(drawn) == -(-m // size)
        assert np.array_equal(np.concatenate([p[0] for p in drawn]), src)
        assert np.array_equal(np.concatenate([p[1] for p in drawn]), dst)


@pytest.mark.parametrize("values", ["random", "few high bits", "repeated"])
def test_the_permutations_parallel_order_is_numpys_stable_argsort(monkeypatch, values):
    """Keys packed with their index below their high bits, sorted on every thread, then runs of
    equal high bits settled by whole key: np.argsort's stable order, ties and all."""
    from tcdist.io import draws

    monkeypatch.setattr(draws, "SMALL", 1 << 8)
    rng = np.random.default_rng(5)
    n = 50_000
    keys = {"random": rng.integers(0, 2**64, n, dtype=np.uint64),
            "few high bits": rng.integers(0, 1 << 20, n, dtype=np.uint64),  # every key's high bits equal
            "repeated": rng.integers(0, 40, n, dtype=np.uint64) << np.uint64(40)}[values]
    assert np.array_equal(draws.stable_order(keys), np.argsort(keys, kind="stable"))


def test_the_hosts_rmat_pieces_cross_draw_blocks_as_generate_draws_them(monkeypatch):
    monkeypatch.setattr(generators, "_DRAW_BLOCK", 4096)
    src, dst = generators.rmat(12, 5, seed=9)
    drawn = list(generators.pieces("rmat:12:5", seed=9, size=1000)[2])
    assert np.array_equal(np.concatenate([p[0] for p in drawn]), src)
    assert np.array_equal(np.concatenate([p[1] for p in drawn]), dst)
    with pytest.raises(ValueError, match="pieces of 0 edges"):
        generators.pieces("rmat:5", size=0)


def test_only_rmat_draws_a_permutation_of_its_vertices():
    assert [generators.permuted(s) for s in ("rmat:12", "rmat:5:3", "er:100:50", "grid:3:4", "rmat:0", "nothing")] \
        == [1 << 12, 1 << 5, 0, 0, 0, 0]


@pytest.mark.parametrize("block", [1 << 26, 1000])
def test_a_small_graph_s_host_draws_in_whole_arrays_are_the_compiled_draws(monkeypatch, block):
    """While Numba is not loaded, a small graph's host draws are whole-array NumPy (RMAT-16 in 0.5 s
    on 2 cores, against 5 s of a first run's compiling): the same edges, draw blocks crossed or not."""
    from tcdist import compiled

    monkeypatch.setattr(generators, "_DRAW_BLOCK", block)
    drawn = {}
    for loaded in (True, False):
        monkeypatch.setattr(compiled, "is_loaded", lambda: loaded)
        assert generators._Random(np, 0, 1000).compiled == loaded
        drawn[loaded] = [generate(spec, seed=4) for spec in ("rmat:12", "rmat:9:5", "er:3000:40000")]
    for a, b in zip(drawn[True], drawn[False]):
        assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
