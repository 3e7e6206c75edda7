"""A generated graph built with its pieces drawn again for every range of keys (nothing of its raw
edges kept) is the graph build_graph makes of all its raw edges at once: every array and count,
with ranges of any size (one vertex a range, or all); and a host that cannot hold the ranges
build's runs builds it so, exactly, where it refused before."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import same_graph

import tcdist
from tcdist import io, source
from tcdist.budget import host
from tcdist.errors import TcdistError
from tcdist.graph import build_graph, redrawn_build
from tcdist.io import generators
from tcdist.io.shares import read_share


@pytest.mark.parametrize("spec, keys", [(spec, keys) for spec in ("rmat:12", "rmat:10:40", "er:3000:50000")
                                         for keys in (3000, 1 << 30)] + [("er:50:4000", 1), ("er:7:5", 1)])
def test_a_graph_drawn_again_for_every_range_is_the_graph_build_graph_builds(spec, keys):
    """With ranges of all the keys, of a few thousand (a hub's raw edges over a range: a range of
    its own) and of one key (a range a vertex)."""
    reference = build_graph(io.generate(spec, seed=5))
    span = generators.pieces(spec)[0]
    same_graph(redrawn_build.build_redrawn(span, lambda: generators.pieces(spec, seed=5, size=3000)[2], spec, np, keys),
               reference)


def _small_host(monkeypatch, room: int = 100_000_000) -> list:
    """From now on a host with room bytes to give; the redrawn builds it makes."""
    monkeypatch.setattr(host, "available", lambda: (room, "a test's limit"))
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


def test_a_host_too_small_for_the_graph_s_pointers_is_refused_with_what_it_needs(monkeypatch):
    """(Its columns would go to disk.)"""
    monkeypatch.setattr(host, "available", lambda: (5_000_000, "a test's limit"))
    with pytest.raises(TcdistError, match=r"building the graph of rmat:18 \(4,194,304 raw edges\) with its columns on "
                                          r"disk needs about 6\.0 MiB of memory but a test's limit leaves 4\.8 MiB"):
        source.load_graph("rmat:18")


@pytest.mark.gpu
@pytest.mark.parametrize("spec, on_gpu", [("rmat:18", False), ("er:200000:3000000", False), ("rmat:18", True)])
def test_drawn_again_on_the_gpu_is_the_same_graph(spec, on_gpu):
    """Laid out on the host, or on the GPU (where it holds the graph its host cannot)."""
    import cupy

    reference = build_graph(io.generate(spec, seed=2))
    span = generators.pieces(spec)[0]
    pieces = lambda: generators.pieces(spec, seed=2, xp=cupy, size=1 << 18)[2]  # noqa: E731
    graph = redrawn_build.build_redrawn(span, pieces, spec, cupy, 1 << 20, csr_on_device=on_gpu)
    same_graph(graph, reference)
    assert all(isinstance(a, cupy.ndarray) == on_gpu for a in (graph.rowptr, graph.col, graph.original_id))


def _small_gpu(monkeypatch, room: int = 60_000_000) -> None:
    monkeypatch.setattr(source, "_gpu_room", lambda device: room)


@pytest.mark.gpu
def test_a_graph_its_host_cannot_hold_is_drawn_again_onto_the_gpu_and_counted_exactly(monkeypatch):
    """RMAT-18 (its CSR 19 MB) on a host with 10 MB to give and a GPU with 400 MB, where its build
    from pieces does not fit: drawn again for every range, laid out on the GPU and counted there."""
    import cupy

    reference = tcdist.count_triangles("rmat:18", backend="cpu")
    built = _small_host(monkeypatch, 10_000_000)
    _small_gpu(monkeypatch, 400_000_000)
    monkeypatch.setattr(source.plan, "_pieces", lambda *args: None)
    monkeypatch.setattr(source.model, "gpu_generated_bytes", lambda *args: 1 << 50)  # not whole on the GPU
    counted = tcdist.count_triangles("rmat:18", backend="gpu")
    assert len(built) == 1 and isinstance(built[0].col, cupy.ndarray)
    assert (counted.n, counted.m, counted.triangles) == (reference.n, reference.m, reference.triangles)


def _rmat_16(path):
    """RMAT-16's raw edges written to path: an edge list, or Matrix Market (1-based, its header)."""
    edges = io.generate("rmat:16")
    pairs = np.stack([edges.src, edges.dst], axis=1) + (path.suffix == ".mtx")
    header = f"%%MatrixMarket matrix coordinate pattern general\n{1 << 16} {1 << 16} {len(edges)}"
    np.savetxt(path, pairs, fmt="%d", header=header if path.suffix == ".mtx" else "", comments="")
    return path


@pytest.mark.parametrize("suffix, spilled", [(".txt", True), (".mtx", True), (".txt", False)])
def test_a_file_too_large_for_the_host_is_read_again_for_every_range_and_counted_exactly(tmp_path, monkeypatch, suffix,
                                                                                         spilled):
    """RMAT-16 as text (1 M lines: 80 MB to read and build on the host) in 40 MB: refused before;
    now read again in pieces of its lines for every range (or its parsed pairs, spilled to scratch
    as it is first read, read back), the graph the one read whole makes, with its header's warnings
    (Matrix Market's entries checked by the pieces together)."""
    path = _rmat_16(tmp_path / f"g{suffix}")
    reference = source.load_graph(str(path))
    if not spilled:  # (a scratch folder with no room for them)
        monkeypatch.setattr(source, "_spilled_pairs", lambda *args: None)
    read = []
    monkeypatch.setattr(source, "read_share", lambda *args, **kw: read.append(args) or read_share(*args, **kw))
    built = _small_host(monkeypatch, 40_000_000)
    graph = source.load_graph(str(path))
    assert len(built) == 1 and built[0] is graph
    same_graph(graph, reference)
    assert graph.warnings == reference.warnings
    pieces = max(k for _, k, _ in read) + 1
    assert len(read) == pieces if spilled else len(read) > 2 * pieces  # (read once, or on every pass)


def test_a_matrix_market_file_short_of_its_entries_is_refused_when_read_again(tmp_path, monkeypatch):
    path = _rmat_16(tmp_path / "g.mtx")
    with open(path, "rb+") as f:  # its last line gone
        data = f.read()
        f.seek(0)
        f.truncate()
        f.write(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
    _small_host(monkeypatch, 40_000_000)
    with pytest.raises(TcdistError, match="entries"):
        source.load_graph(str(path))


@pytest.mark.gpu
@pytest.mark.parametrize("host_room, on_gpu, held", [(40_000_000, False, True), (4_000_000, True, True),
                                                     (4_000_000, True, False)])
def test_a_file_too_large_for_the_host_is_read_again_on_the_gpu(tmp_path, monkeypatch, host_room, on_gpu, held):
    """Laid out on the host, or on the GPU where the host cannot hold the graph (its CSR 4.3 MB);
    its parsed pairs held on the GPU (8 MB in 30 MB: the file parsed once), or, where they do not
    fit there, the file parsed again on every pass."""
    import cupy

    path = _rmat_16(tmp_path / "g.txt")
    reference = source.load_graph(str(path))
    built = _small_host(monkeypatch, host_room)
    _small_gpu(monkeypatch)
    if not held:
        monkeypatch.setattr(source.plan, "REREAD_HELD_SHARE", 1 << 40)
    read = []
    monkeypatch.setattr(source, "read_share", lambda *args, **kw: read.append(args) or read_share(*args, **kw))
    graph = source.load_graph(str(path), device="gpu")
    assert len(built) == 1 and isinstance(graph.col, cupy.ndarray) == on_gpu
    same_graph(graph, reference)
    pieces = max(k for _, k, _ in read) + 1
    assert len(read) == pieces if held else len(read) > 2 * pieces


@pytest.mark.parametrize("damage", [b"12 x7", b"1 99999999999999999999", b"-3 4", b"5"])
def test_a_damaged_file_read_again_is_refused_as_the_whole_reading_refuses_it(tmp_path, monkeypatch, damage):
    """The same one line (the problem and its line number) whichever piece meets the bad line."""
    path = _rmat_16(tmp_path / "g.txt")
    lines = path.read_bytes().split(b"\n")
    lines[len(lines) * 2 // 3] = damage
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(TcdistError) as whole:
        source.load_graph(str(path))
    built = _small_host(monkeypatch, 40_000_000)
    with pytest.raises(TcdistError) as again:
        source.load_graph(str(path))
    assert str(again.value) == str(whole.value) and not built


def test_a_file_read_again_under_the_command_lines_limit_is_counted_exactly(tmp_path):
    """RMAT-16 as text under --host-memory-limit 32MiB: its pieces' parse counted in the limit
    (refused before: whole-array NumPy's temporaries and the functions loaded from Numba's cache
    took the room the pieces were planned in)."""
    path = _rmat_16(tmp_path / "g.txt")
    done = subprocess.run([sys.executable, "-m", "tcdist", "count", str(path), "--backend", "cpu", "--quiet",
                           "--host-memory-limit", "32MiB"], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, str(tcdist.count_triangles("rmat:16", backend="cpu").triangles))


def test_a_file_of_sparse_ids_read_again_is_refused_before_its_lower_ends_outgrow_the_host(tmp_path, monkeypatch):
    """300,000 edges among ids below 2^25 in 16 MB: the first reading's counts by lower end (8 bytes
    an id) were grown unchecked to 800 MB; now refused in one line."""
    path = tmp_path / "g.txt"
    np.savetxt(path, np.random.default_rng(1).integers(0, 1 << 25, (300_000, 2)), fmt="%d")
    _small_host(monkeypatch, 16_000_000)
    with pytest.raises(TcdistError, match=rf"counting the raw edges of {path} by their lower end needs about"):
        source.load_graph(str(path))
