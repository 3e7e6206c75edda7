"""The memory budget: sizes, the part-size model, --parts auto (CPU; the enforced GPU limit is
in the gpu-marked tests at the end)."""

import numpy as np
import pytest
from conftest import DATASETS

import tcdist
from tcdist import xp
from tcdist.budget.model import need as part_need
from tcdist.budget.search import smallest_parts
from tcdist.budget.sizes import parse_size
from tcdist.count.registry import of_backend
from tcdist.errors import TcdistError
from tcdist.graph.graph import col_dtype
from tcdist.partition import partition_graph

GRAPH = DATASETS / "email-Enron.txt.gz"


def _need_of_stats(stats: dict, col_bytes: int) -> int:
    """The memory model of a part, from the statistics it was stored with."""
    return part_need(stats["v_res"], stats["e_res"], stats["n_local"], col_bytes)


@pytest.mark.parametrize("text,size", [("4GiB", 4 << 30), ("512M", 512 << 20), ("1.5GB", 1_500_000_000),
                                       ("2k", 2048), ("100", 100), (" 3 TiB ", 3 << 40), ("0.5k", 512),
                                       pytest.param("9" * 400 + "G", int("9" * 400) << 30, id="400 digits")])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["2KB/s", "GiB", "-1G", "0", "4 parsecs", "", "\u0664GiB", "\u0664"])
def test_what_is_not_a_size(text):
    with pytest.raises(TcdistError, match="is not a size"):
        parse_size(text)


def test_the_model_of_a_part_from_its_statistics_is_the_model_of_its_arrays():
    """--parts auto plans from statistics, the device checks the arrays: one number for both (what
    the model must cover on a GPU is measured in the gpu test below)."""
    graph = tcdist.load_graph(GRAPH)
    for part in partition_graph(graph, 3, seed=1).parts:
        v, e, local = part.rowptr.size - 1, part.col.size, part.n_local
        assert part.rowptr.nbytes + part.col.nbytes == part.stats["bytes"]
        assert part_need(v, e, local, part.col.itemsize) == _need_of_stats(part.stats, part.col.itemsize) > \
            part.stats["bytes"]


@pytest.mark.parametrize("sizes", [
    {p: 1000 // p + 10 for p in range(1, 200)},                    # falls as P grows
    {p: 1000 // p + 10 + 40 * (p % 3 == 0) for p in range(1, 200)},  # and not strictly
])
def test_the_search_returns_a_fitting_p_whose_predecessor_does_not_fit(sizes):
    probes = []

    def largest(p, budget, measured=None):
        probes.append(p)
        return sizes[p]

    for budget in (60, 100, 150, 400):
        p = smallest_parts(199, sizes[1], budget, largest, 0, None)
        assert sizes[p] <= budget and sizes[p - 1] > budget
    assert len(probes) < 60  # a search, not a walk over every P


def test_alike_parts_are_probed_by_their_first_and_the_answer_checked_whole():
    """Random parts: a probe builds one part; the P found is then checked with all of its parts,
    and the next P taken while any part is over (here P = 10's first part fits, another does not)."""
    calls = []

    def largest(p, budget, measured=None):
        calls.append((p, measured))
        first = 1000 // p
        return first if measured == 1 else first + (15 if p == 10 else 0)

    assert smallest_parts(10**6, 1000, 100, largest, 0, None, alike=True) == 11
    assert all(measured == 1 for p, measured in calls[:-2]) and calls[-2:] == [(10, None), (11, None)]
    calls.clear()
    assert smallest_parts(10**6, 1000, 100, largest, 0, None) == 11  # not alike: every probe whole
    assert all(measured is None for _, measured in calls)


def test_alike_parts_whose_first_is_far_from_the_largest_are_searched_not_walked():
    """The part a hub falls in can need twice the first: on soc-Epinions1 under 512 KiB on
    nvidia-h200 the search found P = 299 by first parts and then tried P + 1, each whole, for
    longer than the 150 s the run was given. Above the P found, P is now searched again."""
    whole = []

    def largest(p, budget, measured=None):
        whole.extend([p] if measured is None else [])
        return 1000 // p if measured == 1 else 2000 // p

    assert smallest_parts(10**6, 1000, 10, largest, 0, None, alike=True) == 182  # 2000 // 181 = 11
    assert whole[0] == 100 and len(whole) < 12  # before: P = 100, 101, ..., 182


def test_the_search_never_answers_more_parts_than_vertices():
    """Ten vertices whose first part fits at P = 10 and every part only at P = 11: the search
    went on above 10 and answered 11 parts (one of them empty)."""

    def largest(p, budget, measured=None):
        return 5 if p >= (10 if measured == 1 else 11) else 50

    with pytest.raises(TcdistError, match="even 10 parts leave a part over the budget"):
        smallest_parts(10, 100, 10, largest, 0, lambda: (0, 5), alike=True)


def test_parts_that_stop_shrinking_end_the_search_with_the_size_they_need():
    """On RMAT-25 (nvidia-h200-x4) the largest random part needed 2.2 GiB at P = 6 and 2.1 GiB at
    P = 12: every part holds the dense core. The search doubled P up to n, a full partitioning
    each time; it now stops after two doublings that gained little, and says what would fit."""
    probes = []

    def largest(p, budget, measured=None):
        probes.append(p)
        return 2000 + 1000 // p

    with pytest.raises(TcdistError, match=r"parts stop shrinking: with 12 parts one still needs 2.0 KiB"):
        smallest_parts(10**6, 4000, 1500, largest, 0, lambda: (7, 1000))  # vertex 7's own part fits
    assert probes == [3, 6, 12]


def test_a_search_of_few_probes_stops_at_the_last_and_says_so():
    """Contiguous and metis parts are found by building them, at most MAX_PROBES partitionings:
    here the largest part shrinks by three tenths each doubling, and three probes are allowed."""
    probes = []

    def largest(p, budget, measured=None):
        probes.append(p)
        return int(4000 * 0.7 ** (p.bit_length() - 1))

    with pytest.raises(TcdistError, match=r"^3 partitionings probed, and none of their largest parts fit the budget "
                                          r"of 100 bytes \(the last: 8 parts\)"):
        smallest_parts(10**6, 4000, 100, largest, 0, None, low=2, probes=3)
    assert probes == [2, 4, 8]


def test_a_failing_probe_stops_at_its_first_part_over_the_budget(monkeypatch):
    """--parts auto probes P by building the parts; a probe that fails stops at the first part
    over the budget instead of building the rest (ER-100M under 1 GiB on nvidia-h100-x1 spent
    259 s in probes that built every part, against a count of 1 s)."""
    from tcdist.budget import search

    graph = tcdist.load_graph("er:20000:200000")
    probed, measured = [], []

    def probe(*args, **kwargs):
        probed.append(args[1])
        return partition_graph(*args, **kwargs)

    def need(v_res, e_res, n_local, col_bytes):
        measured.append(e_res)
        return part_need(v_res, e_res, n_local, col_bytes)

    monkeypatch.setattr(search, "partition_graph", probe)
    budget = part_need(graph.n, graph.m, graph.n, 4) // 3
    parts = search.auto_parts(graph, "random", "lstc", 0, budget, 1, need).parts
    sizes = [part_need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], 4)
             for p in partition_graph(graph, parts, seed=0).parts]
    fewer = [part_need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], 4)
             for p in partition_graph(graph, parts - 1, seed=0).parts]
    assert max(sizes) <= budget < max(fewer)  # still the smallest P that fits
    failed = [p for p in probed if p < parts]
    assert failed and len(measured) < sum(probed)  # before: every probe measured all of its parts


@pytest.mark.parametrize("scheme", ["random", "contiguous", "metis"])
def test_parts_auto_picks_a_p_that_fits_and_one_fewer_does_not(cli, scheme):
    graph = tcdist.load_graph(GRAPH)
    budget = 2 << 20
    record = cli("count", GRAPH, "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2MiB", "--scheme",
                 scheme, "--json").json()
    assert record["triangles"] == 727_044 and record["memory_budget"] == budget and record["scheme"] == scheme
    p, col_bytes = record["parts"], np.dtype(col_dtype(graph.n)).itemsize
    assert p > 1 and max(_need_of_stats(s, col_bytes) for s in record["part_stats"]) <= budget
    fewer = partition_graph(graph, p - 1, scheme=scheme)
    assert max(_need_of_stats(part.stats, col_bytes) for part in fewer.parts) > budget


def test_a_budget_that_holds_the_whole_graph_counts_it_whole(cli):
    record = cli("count", GRAPH, "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "1GiB", "--json").json()
    assert (record["triangles"], record["parts"], record["part_stats"]) == (727_044, 1, [])


def test_a_vertex_too_heavy_for_any_p_is_named_and_the_graph_counted_in_slices(cli):
    """Its part can shrink no further: it is the part's only local vertex. Slices of the whole graph
    fit, and count it (before, it was refused); below what one slice needs, it is refused."""
    result = cli("count", "complete:40", "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2KiB", "--json")
    # vertex 0 of K_40 has 39 out-neighbours and C(39, 2) edges among them: 40 rows, 780 columns
    need = part_need(40, 39 + 741, 1, 4)
    record = result.json()
    assert (record["triangles"], record["parts"]) == (40 * 39 * 38 // 6, 1) and record["slices"] > 1
    assert record["warnings"] == [f"no number of parts fits the budget of 2.0 KiB: vertex 0 alone with its "
                                  f"out-neighbours needs {need / 1024:.1f} KiB; give the device more memory; counting "
                                  "1 part in slices that fit instead"]
    refused = cli("count", "complete:40", "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "1KiB")
    assert refused.code == 2 and refused.err.startswith("tcdist: error: part 0 cannot be sliced to fit 1.0 KiB")
    assert "; nor do any parts: no number of parts fits the budget of 1.0 KiB: vertex 0" in refused.err
    assert refused.err.count("give the device more memory") == 1
    assert refused.err.endswith("; give the device more memory\n") and refused.err.count("\n") == 1


def test_an_empty_graph_needs_no_search(cli):
    """It crashed looking for its heaviest vertex (argmax of nothing)."""
    record = cli("count", "er:5:0", "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "16", "--json").json()
    assert (record["triangles"], record["parts"]) == (0, 1)


@pytest.mark.gpu
def test_the_gpu_limit_is_enforced_and_the_peak_reported(cli):
    record = cli("count", GRAPH, "--backend", "gpu", "--parts", "auto", "--gpu-memory-limit", "1536KiB", "--json").json()
    assert record["triangles"] == 727_044 and record["parts"] > 1  # whole, the graph needs about 2 MiB
    assert 0 < record["gpu_peak_bytes"] <= 1536 << 10


@pytest.mark.gpu
def test_a_part_past_the_gpu_limit_is_one_line(cli):
    """Below what one slice of it needs (the pointers of its rows and its longest row), one part
    asked for (with no number given, tcdist finds parts whose slices fit: tests/test_advice.py)."""
    result = cli("count", GRAPH, "--backend", "gpu", "--gpu-memory-limit", "256KiB", "--parts", "1")
    assert result.code == 2 and result.err.startswith("tcdist: error: part 0 cannot be sliced to fit 256.0 KiB")
    assert result.err.count("\n") == 1


@pytest.mark.gpu
def test_a_gpu_limit_below_the_warm_ups_is_one_line_and_the_least_one_counts(cli):
    """Before, a limit the warm-up's K_40 could not fit in ended in CuPy's traceback."""
    from tcdist.device.gpu import LEAST_GPU_LIMIT

    refused = cli("count", "complete:40", "--backend", "gpu", "--gpu-memory-limit", LEAST_GPU_LIMIT // 2)
    assert refused.code == 2 and refused.err.count("\n") == 1
    assert refused.err.startswith("tcdist: error: --gpu-memory-limit 128.0 KiB is below the 256.0 KiB")
    record = cli("count", "complete:40", "--backend", "gpu", "--gpu-memory-limit", LEAST_GPU_LIMIT, "--json").json()
    assert record["triangles"] == 9880 and record["gpu_peak_bytes"] <= LEAST_GPU_LIMIT


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["auto", *sorted(of_backend("gpu"))])
def test_a_graph_over_the_gpu_limit_is_counted_in_slices_by_every_kernel(cli, kernel):
    """The whole graph needs about 2 MiB: under 1 MiB each kernel counts it in slices, exactly, the
    peak under the limit (before, the count was refused); but bitmap, whose bitmaps (one per block,
    a bit per row) alone are over it, is refused in one line (test_slices: its plan had 414,755
    slices), and middle-bitmap, over it too, since its slices would lose the part's order."""
    result = cli("count", GRAPH, "--backend", "gpu", "--gpu-memory-limit", "1MiB", "--kernel", kernel, "--json")
    if kernel == "bitmap":
        assert result.code == 2 and "would need more than 10,000 slices" in result.err
        return
    if kernel == "middle-bitmap":  # its bitmaps are over the limit, and its listing needs the part's order
        assert result.code == 2 and "but not by --kernel middle-bitmap, which relies on a part's id order" in result.err
        return
    record = result.json()
    assert record["triangles"] == 727_044 and record["slices"] > 1 and record["parts"] == 1
    assert 0 < record["gpu_peak_bytes"] <= 1 << 20


@pytest.mark.gpu
def test_sliced_parts_streamed_from_a_store_credit_every_vertex_exactly(cli, tmp_path):
    """Parts of rmat:16 read from a store, each over the limit: their slices are copied on the copy
    stream while the one before is counted, by every kernel that needs no part order, and the
    per-vertex triangles equal the CPU's (before, a slice of few out-degrees went to forward's
    walk, which missed the triangles of a proxy's edge to a local vertex: 15,435,433 of
    15,571,314); the kernels that need the order are refused in one line, and bitmap, whose
    plan is over 10,000 slices."""
    store, out = tmp_path / "parts.h5", tmp_path / "pv.csv"
    assert cli("partition", "rmat:16", "-P", 2, "-o", store).code == 0
    plain = tcdist.count_triangles("rmat:16", backend="cpu", per_vertex=True)
    record = cli("count", store, "--backend", "gpu", "--gpu-memory-limit", "4MiB", "--per-vertex", out,
                 "--json").json()
    assert record["triangles"] == plain.triangles and all(p["slices"] > 2 for p in record["part_stats"])
    assert 0 < record["gpu_peak_bytes"] <= 4 << 20 and record["timings"]["transfer_overlapped"] > 0
    vertex, triangles = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1), dtype=np.int64).T
    expected = plain.per_vertex
    assert np.array_equal(triangles[np.argsort(vertex)], expected.triangles[np.argsort(expected.vertex)])
    for name, kernel in sorted(of_backend("gpu").items()):
        result = cli("count", store, "--backend", "gpu", "--gpu-memory-limit", "4MiB", "--kernel", name, "--json")
        if kernel.part_order:
            assert result.code == 2 and "can be counted in slices, but not by --kernel" in result.err
        elif name == "bitmap":  # its bitmaps leave no room for a slice of more than a few rows
            assert result.code == 2 and "would need more than 10,000 slices" in result.err
        else:
            assert result.json()["triangles"] == plain.triangles, name


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(of_backend("gpu")))
@pytest.mark.parametrize("source", [GRAPH, "rmat:16"])
def test_the_part_model_covers_what_a_part_takes_on_the_gpu(source, kernel):
    """The allocator's peak while a part is copied, checked, prepared and counted stays within
    Device.part_bytes (part_need and the kernel's extra bytes), for every GPU kernel and for the
    per-vertex kernel: before, the model counted a flag per column where the check held four, and
    a count under a 1.5 MiB limit ran past it (the check now compares columns in slices)."""
    from tcdist.device import resolve

    graph = tcdist.load_graph(source)
    device = resolve("gpu", kernel=kernel, memory_limit=64 << 30)  # a limit installs the peak recorder
    try:
        device.start_warm_up()
        device.warming.wait()
        for part in partition_graph(graph, 3, seed=2).parts:
            for per_vertex in (False, True):
                pool_before = device._peak.pool.used_bytes()
                device._peak.peak = pool_before
                on_gpu = device.put(part)[0]
                if per_vertex:
                    device.count_per_vertex(on_gpu)
                else:
                    device.count(on_gpu, device.prepare(on_gpu))
                del on_gpu
                assert device._peak.peak - pool_before <= device.need_of(part), (kernel, part.index, per_vertex)
    finally:
        device.close()


@pytest.mark.gpu
def test_auto_passes_over_a_kernel_whose_memory_does_not_fit(cli, tmp_path):
    """rmat:16 has skewed degrees (the rule's bitmap kernel), and a limit below what the model
    gives the part with the bitmaps of every block: auto counts it with a quarter of the bitmaps,
    and under less with a kernel that needs no memory of its own, within the limit (before, the
    bitmaps were planned for every part, and a limit the CSR alone met was refused; then the
    bitmaps were fitted without the working memory the model keeps for the part, and a count took
    bitmaps its counter had no room beside). From a store: the peak is the count's, not the graph
    build's."""
    from tcdist.device import resolve

    store = tmp_path / "one.h5"
    assert cli("partition", "rmat:16", "-P", 1, "-o", store).code == 0
    part = partition_graph(tcdist.load_graph("rmat:16"), 1).parts[0]
    fewer_bitmaps = "bitmap:threads=256,blocks_per_sm=8"

    def need(kernel):
        device = resolve("gpu", kernel=kernel)
        try:
            return device.need_of(part)
        finally:
            device.close()

    def count(*options):
        return cli("count", store, "--backend", "gpu", *options, "--json").json()

    roomy = count("--gpu-memory-limit", "64GiB")
    plain = count("--gpu-memory-limit", "64GiB", "--kernel", "lstc-group")
    fewer = count("--gpu-memory-limit", "64GiB", "--kernel", fewer_bitmaps)
    assert roomy["kernels"] == {"bitmap": 1}
    assert roomy["gpu_peak_bytes"] > fewer["gpu_peak_bytes"] > plain["gpu_peak_bytes"]  # the bitmaps are real
    needs = [need(kernel) for kernel in ("bitmap", fewer_bitmaps, "lstc-group")]
    assert needs[0] > needs[1] > needs[2]
    for limit, kernel in zip([(a + b) // 2 for a, b in zip(needs, needs[1:])], (fewer_bitmaps, "lstc-group")):
        tight = count("--gpu-memory-limit", str(limit))
        assert tight["kernels"] == {kernel: 1} and tight["triangles"] == roomy["triangles"]
        assert tight["gpu_peak_bytes"] <= limit


@pytest.mark.gpu
def test_slices_of_a_skewed_graph_are_counted_by_bitmaps_of_its_hubs(cli):
    """rmat:20 (about 136 MiB as one part) under 96 MiB is counted in slices, and their plan
    leaves room for bitmaps of the highest ids (count/auto.py HUB_BITMAPS): every slice is counted
    by one, exactly, the peak under the limit (before, every slice went to lstc-group, 2.1-2.7x
    slower than bitmap in memory on RMAT-25/26: results/budget.md). The graph counted whole is
    built on the GPU, the sliced one on the host: the same graph (before, rmat:19 and up were not)."""
    from tcdist.count.auto import HUB_BITMAPS

    whole = cli("count", "rmat:20", "--backend", "gpu", "--json").json()
    record = cli("count", "rmat:20", "--backend", "gpu", "--gpu-memory-limit", "96MiB", "--json").json()
    assert record["triangles"] == whole["triangles"] == 423_817_377 and record["slices"] > 1
    assert {k for label in record["kernels"] for k in label.split(", ")} <= set(HUB_BITMAPS), record["kernels"]
    assert 0 < record["gpu_peak_bytes"] <= 96 << 20


@pytest.mark.gpu
def test_a_count_under_a_limit_leaves_the_process_as_it_was():
    """The pool limit and the peak recorder are the run's, not the caller's: before, a count with
    a limit left CuPy's pool capped, and every later GPU count in the process ran out of memory."""
    import cupy

    pool, allocator = cupy.get_default_memory_pool(), cupy.cuda.get_allocator()
    limited = tcdist.count_triangles(GRAPH, backend="gpu", parts="auto", gpu_memory_limit="1536KiB")
    assert limited.triangles == 727_044 and limited.parts > 1
    assert pool.get_limit() == 0 and cupy.cuda.get_allocator() is allocator
    assert tcdist.count_triangles("rmat:14", backend="gpu").triangles == \
        tcdist.count_triangles("rmat:14", backend="cpu").triangles


@pytest.mark.gpu
def test_parts_built_from_a_streamed_graph_leave_no_page_registered_nor_memory_held(monkeypatch):
    """Parts under a limit are built on the GPU from the graph's pages registered there: before, the
    builder, suspended after the last part, kept them registered (and its masks and buffers held)
    until collected, so a later copy into memory reusing those pages failed ('invalid argument')."""
    from tcdist.partition import gpu_parts

    registered, starts, register, unregister = [], [], gpu_parts.register_pages, gpu_parts.unregister_pages
    monkeypatch.setattr(gpu_parts, "register_pages", lambda arrays: starts.append(register(arrays)) or
                        registered.append(starts[-1]) or starts[-1])
    monkeypatch.setattr(gpu_parts, "unregister_pages", lambda starts: registered.remove(starts) or unregister(starts))
    found = tcdist.count_triangles("rmat:21", backend="gpu", parts=4, gpu_memory_limit="1GiB")
    assert found.triangles == tcdist.count_triangles("rmat:21", backend="gpu").triangles and found.parts == 4
    assert len(starts) == 1 and starts[0], "its columns (128 MiB) registered"
    assert registered == [], "and unregistered when the count returned"


@pytest.mark.gpu
def test_parts_a_streaming_gpu_refuses_are_built_on_the_host_and_counted_there_whole(monkeypatch):
    """Where the GPU's builder finds the first part too large for it, the host builds that part and
    the rest, and they are counted within the limit: the builder's arrays given back first."""
    from tcdist import plan

    chosen, refused = plan.streaming_fits, []

    def refusing(device, graph):
        fits = chosen(device, graph)
        return None if fits is None else lambda sizes, held: refused.append(sizes) is not None

    monkeypatch.setattr(plan, "streaming_fits", refusing)
    found = tcdist.count_triangles(GRAPH, backend="gpu", parts=4, gpu_memory_limit="8MiB")
    assert found.triangles == 727_044 and found.parts == 4 and len(refused) == 1


@pytest.mark.gpu
def test_a_cached_block_split_for_a_smaller_array_does_not_refuse_what_the_limit_allows():
    """The limit is on the arrays in use, not on CuPy's pool, which counts the free part of a
    block it split to serve a smaller array and cannot give back while that array lives: before,
    soc-Epinions1 in 331 parts under 1 MiB was refused an allocation at 832 KiB in use."""
    import cupy

    from tcdist.device.allocator import limited

    before = cupy.get_default_memory_pool().used_bytes()  # arrays other tests left alive
    with limited(before + (1 << 20)) as allocator:
        freed = cupy.empty(600 << 10, dtype=cupy.uint8)
        del freed
        small = cupy.empty(100 << 10, dtype=cupy.uint8)  # served from the freed block, split
        large = cupy.empty(800 << 10, dtype=cupy.uint8)  # 900 KiB in use of the 1 MiB allowed
        with pytest.raises(cupy.cuda.memory.OutOfMemoryError):
            cupy.empty(200 << 10, dtype=cupy.uint8)  # 1.1 MiB in use would be past it
        assert allocator.peak - before == small.nbytes + large.nbytes == 900 << 10


@pytest.mark.gpu
def test_a_store_streamed_under_a_limit_is_exact_with_the_copies_overlapped(cli, tmp_path):
    """Parts read from a store, the next one copied on the copy stream while one is counted."""
    store = tmp_path / "parts.h5"
    made = cli("partition", "rmat:16", "-P", 12, "-o", store, "--json").json()
    record = cli("count", store, "--backend", "gpu", "--gpu-memory-limit", "64MiB", "--json").json()
    assert record["triangles"] == tcdist.count_triangles("rmat:16", backend="cpu").triangles
    assert 0 < record["gpu_peak_bytes"] <= 64 << 20 and made["parts"] == 12
    parts = record["part_stats"]
    assert all(p["transfer_s"] >= 0 for p in parts) and record["timings"]["transfer_overlapped"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("register_from", [0, 1 << 40], ids=["registered", "pinned-buffers"])
def test_a_part_is_copied_from_its_own_registered_pages_and_let_go_of_after(monkeypatch, register_from):
    """Whole parts are copied from where they lie, their pages registered with CUDA for the copy
    (allocating a pinned buffer took 1.7 s for 4 GiB on nvidia-h200; registering 0.17 s), and
    unregistered once it is done (the pages each array holds whole: two staged at once may share
    a page, which neither registers). Either way every part arrives whole and no page stays
    registered."""
    from tcdist.device import resolve
    from tcdist.device import staging as devices

    monkeypatch.setattr(devices, "REGISTER_FROM", register_from)
    monkeypatch.setattr(xp, "REGISTER_FROM", register_from)
    graph = tcdist.load_graph("rmat:15")
    parts = partition_graph(graph, 4, seed=1).parts
    device = resolve("gpu")
    try:
        for first, second in zip(parts[::2], parts[1::2]):
            staged = [device.stage(first, beside=0), device.stage(second, beside=0)]
            assert (len(device._stager.pinned) > 0) == (register_from == 0)
            for part, copy in zip((first, second), staged):
                on_gpu, _, copied = device.put(copy)
                assert np.array_equal(on_gpu.col.get(), part.col) and np.array_equal(on_gpu.rowptr.get(), part.rowptr)
                assert copied > 0
            assert device._stager.pinned == {}
            on_gpu = device.put(first)[0]  # a copy when it is due goes the same way
            assert np.array_equal(on_gpu.col.get(), first.col) and device._stager.pinned == {}
    finally:
        device.close()


@pytest.mark.gpu
@pytest.mark.parametrize("register_from", [0, 1 << 40])
def test_where_pinned_memory_is_refused_parts_are_copied_from_pageable_memory(monkeypatch, tmp_path, register_from):
    """A locked-memory limit refuses both the registration of a part's pages and pinned buffers:
    before, a large part then asked for pinned buffers of its full size (seconds to allocate), and
    a refusal ended the run with CuPy's message, not one line. Now the copy goes from pageable
    memory, still beside the count (the staging thread makes it), and the count is exact. Parts
    read from a store are staged (the warm-up's slices are too); parts built on the GPU from the
    graph streamed there, its pages refused too, count the same."""
    import cupy

    from tcdist.device import staging as devices

    def refuse(*args):
        raise cupy.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation

    pageable, filled = [], devices.Stager._filled

    def filling(self, slot, *args, **kwargs):
        hosts = filled(self, slot, *args, **kwargs)
        pageable.append(self.buffers[slot] is None)  # no pinned buffer: the runs went as they lie
        return hosts

    monkeypatch.setattr(cupy.cuda.runtime, "hostRegister", refuse)
    monkeypatch.setattr(cupy.cuda, "alloc_pinned_memory", refuse)
    monkeypatch.setattr(devices, "REGISTER_FROM", register_from)
    monkeypatch.setattr(xp, "REGISTER_FROM", register_from)  # small arrays asked for too, and refused
    monkeypatch.setattr(devices.Stager, "_filled", filling)
    expected = tcdist.count_triangles("rmat:15", backend="cpu").triangles
    built = tcdist.count_triangles("rmat:15", backend="gpu", parts=4, gpu_memory_limit="1GiB")
    assert built.triangles == expected and built.parts == 4 and len(pageable) <= 2  # K_40's slices at most
    staged = len(pageable)
    found = tcdist.count_triangles("rmat:15", backend="gpu", parts=4, gpu_memory_limit="1GiB",
                                   store=tmp_path / "parts.h5")
    assert found.triangles == expected and found.parts == 4
    assert len(pageable) >= staged + 4 and all(pageable)  # the 4 parts read from the store


@pytest.mark.gpu
def test_a_staged_part_arrives_whole_and_counts_as_one_put_synchronously():
    """Device.stage copies from pinned memory on its own stream; put() waits and checks the CSR."""
    from tcdist.device import resolve
    from tcdist.device.staging import Staged as _Staged

    graph = tcdist.load_graph("rmat:15")
    parts = partition_graph(graph, 4, seed=1).parts
    device = resolve("gpu")
    try:
        for part in parts:
            staged = device.stage(part, beside=0)
            assert isinstance(staged, _Staged)
            on_gpu, waited, copied = device.put(staged)
            assert np.array_equal(on_gpu.col.get(), part.col) and np.array_equal(on_gpu.rowptr.get(), part.rowptr)
            assert copied > 0 and waited >= 0
            assert device.count(on_gpu) == device.count(device.put(part)[0])
    finally:
        device.close()


def test_a_skewed_part_s_slices_keep_room_for_the_largest_hub_bitmaps_in_an_eighth(monkeypatch):
    """The room a sliced part's plan keeps for --kernel auto's bitmaps of the hubs (without a GPU:
    an H200's 132 multiprocessors, the budget the limit): for slices of up to 2n rows, the
    largest of them within an eighth of the budget, none if none fits, and none for an even part,
    a kernel named, or the CPU."""
    from tcdist.budget.slices import kept_for_slices
    from tcdist.count.auto import Auto
    from tcdist.count.kernels import bitmap

    monkeypatch.setattr(bitmap, "multiprocessors", lambda: 132)
    skewed = partition_graph(tcdist.load_graph("rmat:16"), 1).parts[0]
    words = (2 * (skewed.rowptr.size - 1) + 31) // 32  # 2n rows: between 2^16 and 2^18 bits
    assert (1 << 16) // 32 < words < (1 << 18) // 32
    full, of_16, quarter_of_16 = 4224 * 4 * words, 4224 * 4 * 2048, 1056 * 4 * 2048  # 2^20, 2^18: a bit per row

    def kept(part, limit, kind="gpu", auto=True):
        return kept_for_slices(Auto(kind) if auto else None, part, limit)

    assert kept(skewed, 8 * full) == full and kept(skewed, 8 * full - 8) == of_16
    assert kept(skewed, 8 * of_16 - 8) == quarter_of_16 and kept(skewed, 8 * quarter_of_16 - 8) == 0
    assert kept(skewed, 8 * full, auto=False) == kept(skewed, 8 * full, kind="cpu") == 0
    even = partition_graph(tcdist.load_graph("er:20000:300000"), 1).parts[0]
    assert kept(even, 1 << 40) == 0


def test_a_limit_no_number_of_parts_can_be_sliced_to_fit_is_one_line_that_says_so(cli):
    """rmat:12 under 8 KiB: its longest row alone takes more; up to 64 times the parts tried (their
    rows still shrinking), then the first refusal, with no advice to count more parts."""
    result = cli("count", "rmat:12", "--backend", "cpu", "--gpu-memory-limit", "8KiB")
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith("tcdist: error: part 0 cannot be sliced to fit 8.0 KiB on the device")
    assert result.err.endswith("; give the device more memory\n")



def test_parts_whose_rows_stop_shrinking_are_not_doubled_further(monkeypatch):
    """K_40's parts each hold nearly every vertex as a row: after 2 and 4 parts keep the rows of
    the whole, the search stops (not at 40 parts) with the first refusal."""
    from tcdist import plan

    tried = []
    monkeypatch.setattr(plan, "partition_graph", lambda graph, parts, partition_graph=plan.partition_graph,
                        **options: tried.append(parts) or partition_graph(graph, parts, **options))
    with pytest.raises(tcdist.TcdistError, match="^part 0 cannot be sliced to fit 1.0 KiB on the device"):
        tcdist.count_triangles("complete:40", backend="cpu", gpu_memory_limit=1 << 10)
    assert tried == [2, 4]
