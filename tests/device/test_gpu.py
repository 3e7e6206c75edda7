"""GPU kernels and the GPU pipeline, against the CPU kernel and the published counts.

Run on a GPU host: ``pytest -m gpu``.
"""

import itertools

import numpy as np
import pytest
from conftest import DATASETS, chains_to_a_hub, dataset_params

import tcdist
from tcdist.budget.model import need as part_need
from tcdist.count.cpu import count_marker as cpu_count
from tcdist.count.registry import of_backend
from tcdist.partition import PRUNE_MODES, SCHEMES, partition_graph

pytestmark = pytest.mark.gpu


def bound(kernel, **options):
    """count(rowptr, col, n_local) of a registry kernel with these options (the others default)."""
    chosen = kernel.configure({k: str(v) for k, v in options.items()})
    return lambda rowptr, col, n_local: kernel.run(rowptr, col, n_local, chosen)


def every_tile():
    """(label, count) of every GPU kernel at every tile width it has (its defaults otherwise)."""
    for kernel in of_backend("gpu").values():
        tiles = next((o.choices for o in kernel.options if o.name == "tile"), None)
        for tile in tiles or (None,):
            yield f"{kernel.name}:tile={tile}", bound(kernel, **({} if tile is None else {"tile": tile}))


def every_kernel():
    return {name: bound(kernel) for name, kernel in of_backend("gpu").items()}


@pytest.fixture(scope="module")
def gpu():
    import cupy

    from tcdist.cuda import launch as module

    assert cupy.cuda.runtime.getDeviceCount() > 0, "no CUDA device"
    for kernel in of_backend("gpu").values():
        module.compile_every_instance(kernel)
    return module


def on_device(graph):
    import cupy

    return cupy.asarray(graph.rowptr), cupy.asarray(graph.col)


@pytest.mark.parametrize("entry", dataset_params())
def test_published_counts_with_every_kernel_and_tile(gpu, entry):
    graph = tcdist.load_graph(DATASETS / entry["file"])
    rowptr, col = on_device(graph)
    for label, kernel in every_tile():
        assert kernel(rowptr, col, graph.n) == entry["published_triangles"], label


@pytest.mark.parametrize("spec", ["er:2000:30000", "er:50000:400000", "rmat:12", "grid:300:300", "complete:300",
                                  "tripartite:40:50:60"])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_and_structured_graphs_match_the_cpu_kernel(gpu, spec, seed):
    graph = tcdist.load_graph(spec, seed=seed)
    expected = cpu_count(graph.rowptr, graph.col, graph.n)
    rowptr, col = on_device(graph)
    for label, kernel in every_tile():
        assert kernel(rowptr, col, graph.n) == expected, (spec, label)


def test_every_option_of_every_kernel(gpu):
    """Every combination of every GPU kernel's options (lstc-group: tile x group x warp rows x hashing)."""
    for spec in ("rmat:12", "complete:700", "er:3000:40000"):
        graph = tcdist.load_graph(spec)
        rowptr, col = on_device(graph)
        expected = cpu_count(graph.rowptr, graph.col, graph.n)
        for kernel in of_backend("gpu").values():
            for values in itertools.product(*(o.choices for o in kernel.options)):
                options = dict(zip((o.name for o in kernel.options), values))
                assert bound(kernel, **options)(rowptr, col, graph.n) == expected, (spec, kernel.name, options)


def test_long_rows_span_many_tiles(gpu):
    """K_1500: out-degrees up to 1499, so N+(u) needs up to 24 tiles of 64."""
    graph = tcdist.load_graph("complete:1500")
    rowptr, col = on_device(graph)
    for label, kernel in every_tile():
        assert kernel(rowptr, col, graph.n) == 1500 * 1499 * 1498 // 6, label


@pytest.mark.parametrize("bits", [8, 12])
def test_bitmaps_of_the_hubs_search_the_other_ids(gpu, bits):
    """Bitmaps of 2^bits ids, the highest, not a bit per vertex: K_1500 has 1,500 ids and rmat:16
    65,536, so most w lie below the bitmap and are searched in N+(u). Exact against C(n, 3) and
    the CPU, on the whole graph and on 3 parts, where the top of the local ids (below the
    proxies) takes half the bits, and on their slices, whose sources meet a target range each."""
    from tcdist.budget import slices as plans
    from tcdist.partition import slices

    bitmap = of_backend("gpu")["bitmap"]
    for spec in ("complete:1500", "rmat:16"):
        graph = tcdist.load_graph(spec)
        expected = cpu_count(graph.rowptr, graph.col, graph.n)
        assert spec != "complete:1500" or expected == 1500 * 1499 * 1498 // 6
        for threads in (32, 256):
            count = bound(bitmap, bits=bits, threads=threads)
            assert count(*on_device(graph), graph.n) == expected, (spec, threads)
            parts = partition_graph(graph, 3, seed=1).parts
            assert sum(count(*on_device(p), p.n_local) for p in parts) == expected, (spec, threads, "parts")
            pieces = [piece.made() for p in parts for piece in slices.cut(p, plans.plan(p, part_need(*p.sizes()) // 3,
                                                                                         part_need))]
            assert len(pieces) > 6
            assert sum(count(*on_device(p), p.n_local) for p in pieces) == expected, (spec, threads, "slices")


@pytest.mark.parametrize("shared,bits", [(10, 0), (10, 8), (20, 0)])
def test_bitmaps_of_the_highest_ids_in_shared_memory_count_exactly(gpu, shared, bits):
    """The bits of the top 2^shared ids in each block's shared memory, those below in its bitmap in
    global memory (every id, or with bits the 2^bits just below, the others searched in N+(u)):
    rmat:16's 65,536 ids and complete:1500's, whole, in 3 parts and their slices, int32 and int64
    columns, exact against the CPU (shared=20: every id in shared memory)."""
    from tcdist.budget import slices as plans
    from tcdist.partition import slices

    for spec in ("complete:1500", "rmat:16"):
        graph = tcdist.load_graph(spec)
        expected = cpu_count(graph.rowptr, graph.col, graph.n)
        for threads in (32, 256):
            count = bound(of_backend("gpu")["bitmap"], shared=shared, bits=bits, threads=threads)
            rowptr, col = on_device(graph)
            assert count(rowptr, col, graph.n) == count(rowptr, col.astype(np.int64), graph.n) == expected
            parts = partition_graph(graph, 3, seed=1).parts
            assert sum(count(*on_device(p), p.n_local) for p in parts) == expected, (spec, threads, "parts")
            pieces = [piece.made() for p in parts for piece in slices.cut(p, plans.plan(p, part_need(*p.sizes()) // 3,
                                                                                         part_need))]
            assert sum(count(*on_device(p), p.n_local) for p in pieces) == expected, (spec, threads, "slices")


@pytest.mark.parametrize("shared,chunk", [(0, 32), (13, 256), (20, 4096)])
def test_middle_bitmap_lists_the_in_edges_the_cpu_lists_and_counts_exactly(gpu, shared, chunk):
    """middle-bitmap's listing on the GPU is the CPU kernel middle's, less the edges whose span is
    empty or whose head has no edge of its own (order within a head aside: atomics place them),
    on rmat:16 and complete:1500, whole and in 3 parts (proxies whose edges lead back to the local
    rows take the whole span of a row); and its count, in tasks of chunk in-edges, with the bits
    of the top 2^shared ids in shared memory, is the CPU's."""
    from tcdist.count.cpu import in_edges

    kernel = of_backend("gpu")["middle-bitmap"]
    options = kernel.configure({"shared": str(shared), "chunk": str(chunk)})
    for spec in ("complete:1500", "rmat:16"):
        graph = tcdist.load_graph(spec)
        expected = cpu_count(graph.rowptr, graph.col, graph.n)
        found = 0
        for part in [graph, *partition_graph(graph, 3, seed=1).parts]:
            n_local = getattr(part, "n_local", graph.n)
            in_ptr, first, stop = in_edges(part.rowptr, part.col, n_local)
            heads = np.repeat(np.arange(in_ptr.size - 1), np.diff(in_ptr))
            listed = (stop > first) & (np.diff(part.rowptr)[heads] > 0)
            cpu_listing = sorted(zip(heads[listed].tolist(), first[listed].tolist(), stop[listed].tolist()))
            prepared = kernel.prepare(*on_device(part), n_local, **options)
            gpu_ptr, gpu_first, gpu_stop = (a.get() for a in prepared[:3])
            gpu_heads = np.repeat(np.arange(gpu_ptr.size - 1), np.diff(gpu_ptr))
            assert sorted(zip(gpu_heads.tolist(), gpu_first.tolist(), gpu_stop.tolist())) == cpu_listing, spec
            counted = kernel.count(*on_device(part), n_local, prepared=prepared, **options)
            if part is graph:
                assert counted == expected, spec
            else:
                found += counted
        assert found == expected, (spec, "parts")


def test_the_rules_statistics_on_the_gpu_are_the_hosts(gpu):
    """--kernel auto's statistics in one launch on the device (cuda/degree_stats.cu) equal the
    host's whole-array steps: parts with proxies (whose rows do not count), the whole graph, no
    local vertex, and rows of odd and even lengths."""
    import cupy

    from tcdist.graph.degrees import degree_summary

    graph = tcdist.load_graph("rmat:14")
    rows = [(p.rowptr, p.n_local) for p in partition_graph(graph, 5, seed=3).parts]
    for rowptr, n_local in [*rows, (graph.rowptr, graph.n), (graph.rowptr, 0)]:
        assert degree_summary(cupy.asarray(rowptr), n_local) == degree_summary(rowptr, n_local), n_local
    assert degree_summary(graph.rowptr, graph.n)["max_out"] > 64
    assert degree_summary(graph.rowptr, 0) == {"wedges": 0, "max_out": 0, "edges": 0, "rows": 0}


def test_int64_columns(gpu):
    graph = tcdist.load_graph("rmat:11")
    rowptr, col = on_device(graph)
    expected = cpu_count(graph.rowptr, graph.col, graph.n)
    for kernel in of_backend("gpu").values():
        assert bound(kernel)(rowptr, col.astype(np.int64), graph.n) == expected, kernel.name
    for hashed in (False, True):
        assert bound(of_backend("gpu")["lstc-group"], hashed=hashed)(rowptr, col.astype(np.int64), graph.n) == expected
    hubs = bound(of_backend("gpu")["bitmap"], bits=8)  # 256 of rmat:11's ids: the others searched, in 64 bits
    assert hubs(rowptr, col.astype(np.int64), graph.n) == expected
    found = 0
    for part in partition_graph(graph, 3, seed=1).parts:
        part_rowptr, part_col = on_device(part)
        found += hubs(part_rowptr, part_col.astype(np.int64), part.n_local)
    assert found == expected


@pytest.mark.parametrize("entry", dataset_params())
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_partitions_built_on_the_gpu_add_up(gpu, entry, scheme):
    import cupy

    graph = tcdist.load_graph(DATASETS / entry["file"])
    graph.rowptr, graph.col = on_device(graph)
    for parts in (1, 2, 3, 4, 7, 16):
        for prune in PRUNE_MODES:
            p = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=parts)
            assert all(isinstance(q.col, cupy.ndarray) for q in p.parts)
            for name, kernel in every_kernel().items():
                got = sum(kernel(q.rowptr, q.col, q.n_local) for q in p.parts)
                assert got == entry["published_triangles"], (parts, prune, name)


@pytest.mark.parametrize("spec", ["rmat:13", "er:3000:30000"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_gpu_partitions_equal_cpu_partitions(gpu, spec, scheme):
    """The GPU's passes (partition/gpu_parts.py) make the host's parts, array for array, for
    every prune mode and P, from 32- and 64-bit columns."""
    host = tcdist.load_graph(spec)
    device = tcdist.load_graph(spec)
    device.rowptr, device.col = on_device(device)
    wide = tcdist.load_graph(spec)
    wide.rowptr, wide.col = on_device(wide)
    wide.col = wide.col.astype(np.int64)
    for parts in (1, 2, 5, 16):
        for prune in PRUNE_MODES:
            a = partition_graph(host, parts, scheme=scheme, prune=prune, seed=3)
            for on_gpu in (device, wide):
                b = partition_graph(on_gpu, parts, scheme=scheme, prune=prune, seed=3)
                for x, y in zip(a.parts, b.parts, strict=True):
                    assert x.stats == y.stats, (parts, prune, x.index)
                    for field in ("rowptr", "col", "global_id"):
                        assert np.array_equal(getattr(x, field), getattr(y, field).get()), (parts, prune, x.index, field)


def _same_parts(a, b, *where):
    assert (a.index, a.n_local, a.stats) == (b.index, b.n_local, b.stats), where
    for field in ("rowptr", "col", "global_id"):
        x, y = getattr(a, field), getattr(b, field)
        y = y.get() if hasattr(y, "get") else y
        assert x.dtype == y.dtype and np.array_equal(x, y), (*where, field)


@pytest.mark.parametrize("spec", ["rmat:13", "er:3000:30000"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_parts_built_from_chunks_of_rows_streamed_or_on_the_gpu_are_the_host_s(gpu, spec, scheme):
    """gpu_parts' passes over chunks of a few thousand edges (Algorithm 2's rounds inside each,
    its reach across them): rows copied from host memory with 32-bit columns, and views of rows
    on the GPU with 64-bit ones, make the host's parts array for array, for every prune mode and
    P (40: two groups of masks)."""
    import cupy

    from tcdist.partition.gpu_parts import GpuParts, ResidentRows, StreamedRows

    host = tcdist.load_graph(spec)
    wide = host.col.astype(np.int64)
    for parts in (2, 5, 40):
        for prune in PRUNE_MODES:
            expected = partition_graph(host, parts, scheme=scheme, prune=prune, seed=3)
            for rows in (StreamedRows(host.rowptr, host.col, edges=4000, rows=1000),
                         ResidentRows(cupy.asarray(host.rowptr), cupy.asarray(wide), edges=4000, rows=1000)):
                assert rows.bounds.size > 10
                built = GpuParts(rows, expected.assignment, parts, prune)
                for part in expected.parts:
                    _same_parts(part, built.build(part.index), spec, parts, prune, type(rows).__name__)
                rows.close()


def test_streamed_parts_reach_along_chains_of_proxies_across_chunks(gpu):
    """Algorithm 2 taking a round a link (conftest.chains_to_a_hub), in chunks of 7 rows: reached
    within a chunk round by round, and from the chunks before it."""
    from tcdist.partition.build import build_parts
    from tcdist.partition.gpu_parts import GpuParts, StreamedRows

    chains = 20
    graph, assignment = chains_to_a_hub(chains)
    for prune in PRUNE_MODES:
        rows = StreamedRows(graph.rowptr, graph.col, edges=10, rows=7)
        built = GpuParts(rows, assignment, 2, prune)
        for part in build_parts(graph, assignment, 2, prune):
            _same_parts(part, built.build(part.index), prune)
        rows.close()
    rows = StreamedRows(graph.rowptr, graph.col, edges=10, rows=7)
    kept = GpuParts(rows, assignment, 2, "lstc").build(0)  # each chain's last vertex, of degree 2, ranks below
    assert kept.stats["v_res"] == graph.n - chains, "the rest are reached"  # the one before it: its edge points back
    rows.close()


def test_from_a_streamed_part_that_does_not_fit_on_the_host_builds_the_parts(gpu, monkeypatch):
    """iter_parts_streamed: the first part whose sizes fits() refuses, and every part after it, are
    the host builder's, the GPU's builder given back first (its buffers and registered pages: the
    slices of those parts take the GPU); the parts are the host's, whichever builder made them."""
    import cupy

    from tcdist.partition import gpu_parts

    graph = tcdist.load_graph("rmat:13")
    expected = partition_graph(graph, 5, seed=2)
    asked, closed, close = [], [], gpu_parts.StreamedRows.close

    def fits(sizes, held):
        asked.append((sizes, held))
        return len(asked) != 2

    monkeypatch.setattr(gpu_parts.StreamedRows, "close", lambda rows: closed.append(len(asked)) or close(rows))
    built = list(gpu_parts.iter_parts_streamed(graph, expected.assignment, 5, "lstc", fits))
    assert [isinstance(p.col, cupy.ndarray) for p in built] == [True, False, False, False, False]
    assert [s for s, _ in asked] == [p.sizes() for p in expected.parts[:2]] and all(h > 0 for _, h in asked)
    assert closed[0] == 2, "given back when the second part was refused"
    for a, b in zip(expected.parts, built, strict=True):
        _same_parts(a, b)


def test_the_gpu_generates_the_same_graphs_as_the_cpu(gpu):
    import cupy

    from tcdist.io import generate, generators

    for spec in ("rmat:15", "er:5000:40000"):
        a, b = generate(spec, seed=3), generate(spec, seed=3, xp=cupy)
        assert np.array_equal(a.src, b.src.get()) and np.array_equal(a.dst, b.dst.get()), spec
    with pytest.MonkeyPatch.context() as patch:  # RMAT's CUDA pass: pieces that cross its draw blocks
        patch.setattr(generators, "_DRAW_BLOCK", 4096)
        a = generate("rmat:15:3", seed=3)
        drawn = list(generators.pieces("rmat:15:3", seed=3, xp=cupy, size=1000)[2])
        assert np.array_equal(a.src, cupy.concatenate([p[0] for p in drawn]).get())
        assert np.array_equal(a.dst, cupy.concatenate([p[1] for p in drawn]).get())
    for spec in ("rmat:15", "rmat:19"):  # rmat:19 is two of the host's pieces (before, two other graphs)
        host, device = tcdist.load_graph(spec), tcdist.load_graph(spec, device="gpu")
        assert host.fingerprint() == device.fingerprint(), spec


def test_a_permutation_short_of_gpu_memory_for_its_sort_is_sorted_on_the_host_the_same(gpu):
    import cupy

    from tcdist.device.allocator import limited
    from tcdist.io import draws, generators

    host = generators._Random(np, 4).permutation(1 << 20)
    held, sorted_here = cupy.get_default_memory_pool().used_bytes(), []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(draws, "stable_order", lambda keys, order=draws.stable_order: sorted_here.append(1) or order(keys))
        with limited(held + (40 << 20)):  # its draws (32 bytes an id at their peak), not the sort's 42 MiB
            device = generators._Random(cupy, 4).permutation(1 << 20)
    assert sorted_here == [1] and np.array_equal(host, device.get())


@pytest.mark.parametrize("scale", range(16, 24))
def test_rmat_16_to_23_generated_and_built_on_the_gpu(gpu, scale):
    import cupy

    graph = tcdist.load_graph(f"rmat:{scale}", device="gpu")
    assert isinstance(graph.col, cupy.ndarray)
    expected = cpu_count(graph.rowptr.get(), graph.col.get(), graph.n)
    if scale == 23:
        assert expected > 2**32
    for name, kernel in every_kernel().items():
        assert kernel(graph.rowptr, graph.col, graph.n) == expected, name


def test_cli_gpu_backend(cli):
    record = cli("count", "--backend", "gpu", "--json").json()
    assert (record["triangles"], record["backend"], record["kernel"]) == (1612010, "gpu", "auto")
    assert record["kernels"] == {"bitmap": 1}  # 21.8 wedges per edge: skewed degrees (count/auto.py)
    assert record["timings"]["transfer"] > 0
    record = cli("count", "--json", "--kernel", "lstc:tile=128", "-P", "4").json()
    assert (record["triangles"], record["backend"], record["parts"]) == (1612010, "gpu", 4)
    assert (record["kernel"], record["kernel_options"]) == ("lstc", {"tile": 128})


def test_store_counted_on_the_gpu(tmp_path, cli):
    store = tmp_path / "p.h5"
    assert cli("partition", "rmat:14", "-o", store, "-P", "3", "--scheme", "metis").code == 0
    on_gpu = cli("count", store, "--backend", "gpu", "--json").json()
    on_cpu = cli("count", store, "--backend", "cpu", "--json").json()
    assert on_gpu["triangles"] == on_cpu["triangles"] and on_gpu["timings"]["transfer"] > 0


def test_a_graph_too_large_for_the_gpu_is_counted_in_slices_or_refused_with_advice(cli, monkeypatch):
    """Too little free memory: the graph is built on the host and counted in slices that fit (before
    slices, the upload stopped); below one slice's least, the count stops in one line with advice."""
    from tcdist.device import gpu

    graph = DATASETS / "soc-Epinions1.txt.gz"
    monkeypatch.setattr(gpu, "free_bytes", lambda: 4_000_000)  # the count needs about 7.4 MB
    record = cli("count", graph, "--backend", "gpu", "--json").json()
    assert record["triangles"] == 1_624_481 and record["slices"] > 1
    monkeypatch.setattr(gpu, "free_bytes", lambda: 100_000)
    result = cli("count", graph, "--backend", "gpu")
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith("tcdist: error: part 0 cannot be sliced to fit 87.9 KiB on the device")
    assert "give the device more memory or count more parts" in result.err
