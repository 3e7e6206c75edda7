"""The kernel registry: kernels found by module, specs parsed, options checked once with a clear error."""

from dataclasses import replace
from importlib import resources

import numpy as np
import pytest
from conftest import cpu_device

import tcdist
from tcdist.count.registry import choose, kernels, of_backend, parse_spec
from tcdist.errors import TcdistError
from tcdist.partition import partition_graph
from tcdist.partition.part import Part


def test_every_module_of_the_package_is_a_kernel_with_its_own_sources():
    modules = {p.name[:-3] for p in (resources.files("tcdist.count") / "kernels").iterdir()
               if p.name.endswith(".py") and p.name != "__init__.py"}
    assert {k.replace("-", "_") for k in kernels()} == modules
    folder = resources.files("tcdist.cuda")
    for kernel in of_backend("gpu").values():
        assert kernel.sources and all((folder / f).is_file() for f in kernel.sources)
        assert kernel.instantiations()


@pytest.mark.parametrize("spec,parsed", [
    ("lstc", ("lstc", {})),
    ("lstc-group:tile=256,group=16", ("lstc-group", {"tile": "256", "group": "16"})),
    (" lstc : tile = 128 ", ("lstc", {"tile": "128"})),
])
def test_specs(spec, parsed):
    assert parse_spec(spec) == parsed


def test_options_are_checked_and_take_their_types():
    kernel, options = choose("gpu", "lstc-group:tile=256,hashed=false")
    assert kernel.name == "lstc-group"
    assert options == {"tile": 256, "group": 32, "warp_rows": True, "hashed": False}


@pytest.mark.parametrize("backend,spec,message", [
    ("gpu", "lstc:tile=100", "kernel lstc: tile must be one of 64, 128, 256, 512, 1024, got '100'"),
    ("gpu", "lstc:group=4", "kernel lstc has no option group (its options: tile)"),
    ("cpu", "lstc", "unknown cpu kernel 'lstc' (choose from lookup, marker, merge, middle); it is a gpu kernel"),
    ("cpu", "nosuch", "unknown cpu kernel 'nosuch' (choose from lookup, marker, merge, middle)"),
    ("gpu", "lstc:tile", "kernel spec 'lstc:tile': write options as NAME:OPTION=VALUE,OPTION=VALUE"),
    ("cpu", "auto:x=1", "kernel auto takes no options (given 'auto:x=1'); name a kernel to give it options"),
])
def test_bad_specs_are_one_clear_line(backend, spec, message):
    with pytest.raises(TcdistError) as e:
        choose(backend, spec)
    assert str(e.value) == message


def test_the_cli_takes_a_spec_and_says_what_is_wrong(cli):
    record = cli("count", "rmat:10", "--backend", "cpu", "--kernel", "merge", "--json").json()
    assert (record["kernel"], record["kernel_options"]) == ("merge", {})
    result = cli("count", "rmat:10", "--backend", "cpu", "--kernel", "marker:tile=4")
    assert result.code == 2 and result.err == "tcdist: error: kernel marker has no option tile (its options: none)\n"


def test_a_prepare_step_is_timed_apart_and_handed_to_count():
    """The contract's optional prepare: run once per part before its count, timed as prepare."""
    import time

    import numpy as np

    import tcdist
    from tcdist.count.cpu import count_marker
    from tcdist.count.registry import Kernel
    from tcdist.partition import partition_graph
    from tcdist.ranks.pipeline import count_parts

    def prepare(rowptr, col, n_local):
        time.sleep(0.05)
        return {"edges": int(rowptr[n_local])}

    def count(rowptr, col, n_local, prepared):
        assert prepared == {"edges": int(rowptr[n_local])}
        return count_marker(rowptr, col, n_local)

    kernel = Kernel("test-prepare", "cpu", "a kernel with a prepare step", count, prepare=prepare)
    device = cpu_device(kernel)
    device.start_warm_up()
    graph = tcdist.load_graph("rmat:10")
    parts = partition_graph(graph, 3).parts
    results = count_parts(device, range(3), parts.__getitem__, num_parts=3)
    assert sum(r.triangles for r in results) == count_marker(np.asarray(graph.rowptr), np.asarray(graph.col), graph.n)
    assert all(r.prepare >= 0.05 > r.count for r in results)


def test_a_kernel_that_miscounts_the_clique_stops_before_it_counts():
    """Every kernel, and every per-vertex and per-edge kernel when asked for, must get K_40 right first."""
    from tcdist.count.cpu import count_marker
    from tcdist.count.registry import Kernel

    broken = Kernel("off-by-one", "cpu", "miscounts", lambda rowptr, col, n_local: count_marker(rowptr, col, n_local) + 1)
    with pytest.raises(TcdistError, match="the off-by-one kernel miscounts K_40 on cpu"):
        cpu_device(broken).start_warm_up()
    device = cpu_device(kernels()["marker"])
    device.start_warm_up(per_vertex=True)
    device.count_per_vertex = lambda part: np.zeros(part.rowptr.size - 1, np.uint64)
    with pytest.raises(TcdistError, match="a per-vertex kernel miscounts K_40"):
        device.start_warm_up(per_vertex=True)
    device.start_warm_up(per_edge=True)
    device.count_per_edge = lambda part: np.ones(part.col.size, np.uint64)
    with pytest.raises(TcdistError, match="the per-edge kernel miscounts K_40"):
        device.start_warm_up(per_edge=True)


def test_a_kernel_s_own_bytes_join_the_part_model():
    """What a kernel's prepare step allocates counts in the budget, the room check and --parts auto."""
    from tcdist.budget.model import need as part_need
    from tcdist.count.registry import Kernel

    plain = Kernel("plain", "cpu", "no extra", lambda rowptr, col, n_local: 0)
    hungry = Kernel("hungry", "cpu", "a byte per edge more", lambda rowptr, col, n_local: 0,
                    extra_bytes=lambda v_res, e_res, n_local, col_bytes: e_res)
    assert cpu_device(plain).need(10, 100, 5, 4) == part_need(10, 100, 5, 4)
    assert cpu_device(hungry).need(10, 100, 5, 4) == part_need(10, 100, 5, 4) + 100


def test_auto_takes_each_part_s_kernel_by_the_measured_rule():
    """Even out-degrees with many wedges to wedge-group; small out-degrees otherwise to forward;
    skewed degrees (8 wedges per local edge and more) to bitmap,
    a quarter of the bitmaps, bitmaps of the hubs only, or none as memory allows (and slices of
    skewed parts are planned to leave room for those); few wedges with a hub to wetric; between,
    lstc-group (Algorithm 3 at tile 128 for small parts)."""
    from tcdist.count.auto import SMALL_PART_EDGES, Auto, degree_stats

    def star_part(spokes, leaves=0, proxy_edges=0):
        """A local hub with `spokes` out-neighbours, `leaves` local vertices with one out-edge
        each, and a proxy row of proxy_edges edges (not the part's to count from)."""
        rows = [spokes] + [1] * leaves + [proxy_edges]
        rowptr = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        return Part(0, rowptr, np.zeros(int(rowptr[-1]), np.int32), None, 1 + leaves, {})

    gpu = Auto("gpu")
    even = star_part(64)  # 31.5 wedges per edge, half the mean out-degree
    assert degree_stats(even) == (63 / 2, 64, 64.0) and gpu.label(even) == "wedge-group:group=32"
    assert gpu.label(star_part(65)) == "wedge-group:group=32"  # even with a row past forward's
    assert gpu.label(star_part(12)) == "wedge-group:group=8"  # 5.5 wedges per edge: 8 lanes per vertex
    short = star_part(10, leaves=100)  # 45 wedges over 110 edges
    assert degree_stats(short) == (45 / 110, 10, 110 / 101) and gpu.label(short) == "forward"
    even_but_few = star_part(9)  # 4 wedges per edge: below wedge-group's
    assert degree_stats(even_but_few)[0] == 4 and gpu.label(even_but_few) == "forward"
    skewed = star_part(65, leaves=200, proxy_edges=10**6)  # C(65, 2) over 265 local edges: proxies do not count
    assert degree_stats(skewed) == (2080 / 265, 65, 265 / 201) and gpu.label(skewed) == "lstc-group"  # a large part
    skewed = star_part(65, leaves=195)  # 2080 / 260 = 8
    assert degree_stats(skewed)[:2] == (8.0, 65) and gpu.label(skewed) == "bitmap"
    fewer = "bitmap:threads=256,blocks_per_sm=8"
    assert gpu.label(skewed, fits=lambda spec: spec != "bitmap") == "bitmap:bits=20"  # bits for the top 1 M ids
    assert gpu.label(skewed, fits=lambda spec: spec.endswith("=16")) == "bitmap:bits=16"  # of 64 K
    assert gpu.label(skewed, fits=lambda spec: spec.startswith(fewer)) == fewer  # a quarter of the bitmaps
    assert gpu.label(skewed, fits=lambda spec: spec == f"{fewer},bits=16") == f"{fewer},bits=16"
    assert gpu.label(skewed, fits=lambda spec: not spec.startswith("bitmap")) == "lstc:tile=128"  # for none
    assert gpu.kept_for_slices(skewed) == ("bitmap:bits=20", "bitmap:bits=18", "bitmap:bits=16", f"{fewer},bits=16")
    assert gpu.kept_for_slices(even) == gpu.kept_for_slices(short) == Auto("cpu").kept_for_slices(skewed) == ()
    assert gpu.fallback(skewed) == "lstc:tile=128"
    sparse_hub = star_part(100, leaves=10_000)  # 4,950 wedges over 10,100 local edges
    assert degree_stats(sparse_hub)[:2] == (4950 / 10_100, 100) and gpu.label(sparse_hub) == "wetric:spread=8"
    middle = star_part(2001, leaves=SMALL_PART_EDGES)  # 2,001,000 wedges over 502,001 local edges
    assert 2 < degree_stats(middle)[0] < 8 and gpu.label(middle) == "lstc-group"
    assert gpu.choices["wetric:spread=8"][1] == {"spread": 8} and gpu.choices["bitmap"][0].name == "bitmap"



def test_auto_takes_lookup_on_the_cpu_for_a_small_part_while_numba_is_not_loaded(monkeypatch):
    """NumPy's lookups for a part of up to LOOKUP_WEDGES wedges when counting it would first load
    Numba; middle for a larger part, or once Numba is loaded; marker where middle's own memory does
    not fit."""
    from tcdist import compiled
    from tcdist.count.auto import LOOKUP_WEDGES, Auto

    def star(spokes):  # a local hub with spokes out-neighbours: C(spokes, 2) wedges
        return Part(0, np.array([0, spokes] + [spokes] * spokes, np.int64), np.arange(1, spokes + 1, dtype=np.int32),
                    None, spokes + 1, {})

    at_most = int((1 + (1 + 8 * LOOKUP_WEDGES) ** 0.5) // 2)  # the most spokes whose wedges are LOOKUP_WEDGES at most
    cpu = Auto("cpu")
    monkeypatch.setattr(compiled, "is_loaded", lambda: False)
    assert (cpu.label(star(at_most)), cpu.label(star(at_most + 1))) == ("lookup", "middle")
    monkeypatch.setattr(compiled, "is_loaded", lambda: True)
    assert cpu.label(star(at_most)) == "middle"
    assert cpu.label(star(at_most), fits=lambda spec: spec != "middle") == cpu.fallback(star(at_most)) == "marker"


def test_the_cpu_takes_middle_where_its_listing_fits_and_marker_for_slices_or_where_it_does_not(monkeypatch):
    """middle lists every local edge by its head (8 bytes an edge, kernels/middle.py): under a memory
    limit that holds the part but not that listing, auto counts with marker, as it does a slice of a
    part with proxies (middle, like forward, relies on a part's id order)."""
    from tcdist import compiled
    from tcdist.count.kernels.middle import extra_bytes
    from tcdist.device import resolve
    from tcdist.partition import slices

    graph = tcdist.load_graph("rmat:12")
    part = Part(0, graph.rowptr, graph.col, None, graph.n, {})
    monkeypatch.setattr(compiled, "is_loaded", lambda: True)  # (auto's lookup is for runs that have not loaded Numba)
    roomy = resolve("cpu")
    need = roomy.need_of(part)
    listing = extra_bytes(graph.n, graph.col.size, graph.n, graph.col.itemsize)
    tight = resolve("cpu", memory_limit=need + listing - 1)
    try:
        assert (roomy.pick(part), tight.pick(part)) == ("middle", "marker")
        assert resolve("cpu", memory_limit=need + listing).pick(part) == "middle"
        proxied = partition_graph(graph, 4, seed=1).parts[0]
        rows = proxied.rowptr.size - 1
        unordered = next(slices.cut(proxied, [(0, proxied.n_local // 2, 0, rows)])).made()
        assert not unordered.slice.ordered
        assert roomy.pick(proxied) == "middle" and roomy.pick(unordered) == "marker"
    finally:
        roomy.close()
        tight.close()


def test_a_slice_gets_a_kernel_that_intersects_rows():
    """A kernel that walks wedges walks a source's every wedge again in each of its slices, and
    forward and wetric find a proxy's edge to a local vertex by the part's id order, which a
    slice of a part with proxies does not keep (both become targets): a slice, ordered or not,
    gets lstc or lstc-group where a whole part gets forward, wedge-group or wetric (before,
    RMAT-25 under 2 GiB counted in 3.08 s with forward and wedge-group in its slices, 2.39 s with
    lstc-group), and bitmap only where a whole part would (before, a slice of even out-degrees got
    bitmap); per-vertex credits of a slice without the order take the warp per edge (a thread per
    vertex is forward's walk)."""
    from tcdist.count.auto import Auto
    from tcdist.count.registry import kernels
    from tcdist.partition.slices import SliceOf

    def star(spokes, leaves, ordered):
        rows = [spokes] + [1] * leaves
        rowptr = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        return Part(0, rowptr, np.zeros(int(rowptr[-1]), np.int32), None, 1 + leaves, {},
                    slice=SliceOf(0, 2, 0, ordered))

    def whole(spokes, leaves):
        return replace(star(spokes, leaves, True), slice=None)

    gpu = Auto("gpu")
    assert gpu.label(whole(10, 100)) == "forward" and gpu.label(whole(100, 10_000)) == "wetric:spread=8"
    for ordered in (True, False):
        assert gpu.label(star(10, 100, ordered)) == gpu.label(star(100, 10_000, ordered)) == "lstc:tile=128"
        assert gpu.label(star(10, 600_000, ordered)) == "lstc-group"  # 500,000 edges and more
        assert gpu.label(star(300, 20, ordered)) == "bitmap"  # skewed: 140 wedges per edge
        even = replace(star(20, 0, ordered), rowptr=np.arange(0, 20 * 50 + 1, 20), col=np.zeros(1000, np.int32),
                       n_local=50)  # 50 rows of out-degree 20: 9.5 wedges per edge, even
        assert gpu.label(replace(even, slice=None)) == "wedge-group:group=8"
        assert gpu.label(even) == "lstc:tile=128"  # not bitmap, 4.6x wedge-group's time on ER
    assert Auto.per_vertex_by_thread(star(10, 100, True)) and not Auto.per_vertex_by_thread(star(10, 100, False))
    assert sorted(k.name for k in kernels().values() if k.part_order) == ["forward", "middle", "middle-bitmap", "wetric"]


def test_a_slice_reads_as_its_part():
    """The rule reads a slice by its part's degrees: rmat:16's ids are degree ranks, so each
    slice's source rows alone have about equal out-degrees and read as even (before, every slice
    of the skewed graph went to lstc where the graph went to bitmap); ER's slices stay off bitmap."""
    from tcdist.budget import slices as plans
    from tcdist.budget.model import need as part_need
    from tcdist.count.auto import Auto
    from tcdist.partition import slices

    gpu = Auto("gpu")
    for spec, expected in (("rmat:16", {"bitmap:bits=16"}), ("er:20000:300000", {"lstc:tile=128"})):
        for parts in (1, 3):
            part = partition_graph(tcdist.load_graph(spec), parts).parts[0]
            bounds = plans.plan(part, part_need(*part.sizes()) // 4, part_need)
            assert len(bounds) > 8
            labels = {gpu.label(piece.made(), fits=lambda spec: spec.endswith("bits=16"))
                      for piece in slices.cut(part, bounds)}
            assert labels == expected, (spec, parts)


def test_auto_reads_a_part_as_it_reads_the_whole_graph():
    """Wedges per local edge: random parts of rmat:14 read as skewed as the graph (before, per
    edge of the part, proxies' rows included, they fell about as 1 / P and went to wetric)."""
    from tcdist.count.auto import Auto, degree_stats

    graph = tcdist.load_graph("rmat:14")
    whole = degree_stats(Part(0, graph.rowptr, graph.col, None, graph.n, {}))[0]
    for part in partition_graph(graph, 16, seed=1).parts:
        assert 0.5 * whole < degree_stats(part)[0] < 2 * whole
        assert Auto("gpu").label(part) in ("bitmap", "lstc:tile=128", "lstc-group")


def test_the_cli_says_what_auto_chose(cli):
    """With Numba loaded (run alone, the test saw lookup, which auto takes for a small part while
    nothing has loaded it: the suite's order had loaded it before)."""
    from tcdist import compiled

    compiled.loaded()
    record = cli("count", "rmat:12", "--backend", "cpu", "-P", 3, "--kernel", "auto", "--json").json()
    assert (record["kernel"], record["kernels"]) == ("auto", {"middle": 3})
    assert [p["kernel"] for p in record["part_stats"]] == ["middle"] * 3
    assert "kernel auto (middle for 3 parts)" in cli("count", "rmat:12", "--backend", "cpu", "-P", 3).out


def test_parts_taken_from_the_journal_keep_the_kernel_that_counted_them(tmp_path):
    """A resumed run's summary names the kernel of every part, the journalled ones too (they were
    left out: 'auto (middle for 0 parts)')."""
    import tcdist

    store = str(tmp_path / "s.h5")
    first = tcdist.count_triangles("rmat:10", backend="cpu", parts=4, store=store)
    again = tcdist.count_triangles(store, backend="cpu", resume=True)
    assert again.resumed_parts == 4 and again.triangles == first.triangles
    assert again.kernels == first.kernels == {"middle": 4}


def test_what_a_part_s_prepare_step_made_is_gone_before_the_next_part_is_prepared():
    """A prepare step's arrays (hash tables, bitmaps) were held until the next part's had been
    made: two parts' worth on the device where the budget planned for one."""
    import weakref

    import tcdist
    from tcdist.count.cpu import count_marker
    from tcdist.count.registry import Kernel
    from tcdist.partition import partition_graph
    from tcdist.ranks.pipeline import count_parts

    class Tables:
        pass

    made = []

    def prepare(rowptr, col, n_local):
        assert all(ref() is None for ref in made), "the last part's prepared state is still alive"
        tables = Tables()
        made.append(weakref.ref(tables))
        return tables

    kernel = Kernel("tables", "cpu", "prepares an object", lambda rowptr, col, n_local, prepared:
                    count_marker(rowptr, col, n_local), prepare=prepare)
    device = cpu_device(kernel)
    parts = partition_graph(tcdist.load_graph("rmat:10"), 3).parts
    results = count_parts(device, range(3), parts.__getitem__, num_parts=3)
    assert len(made) == 3 and all(r.kernel == "tables" for r in results)
