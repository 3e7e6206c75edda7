"""The warm-up of a device: its kernels compiled (or loaded) and checked on K_40 before anything
is timed, since a first CuPy launch in a process costs far more than a count. On a GPU it runs on
a thread of its own while the graph is read: the text parser and the build's passes, and a
kernel given by name; a kernel that --kernel auto chooses is compiled and checked when a part
first needs it, so a run compiles only what it launches."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.partition import slices
from tcdist.partition.part import Part

CLIQUE = 40  # rows up to 39 long: both the short-row and the long-row paths of a kernel run


def self_test(device, labels, dtypes=(np.int32, np.int64), per_vertex: bool = False, per_edge: bool = False) -> None:
    """Run the device's kernels of these labels on K_40 with each column type of dtypes, whole and
    in two slices put on the device as a sliced part is (copy, layout, CSR check), and check that
    each gives C(40, 3); with per_vertex, also that every per-vertex kernel credits every vertex
    C(39, 2); with per_edge, that the per-edge kernel credits every edge 38."""
    n = CLIQUE
    rowptr = np.concatenate([[0], np.cumsum(np.arange(n - 1, -1, -1))]).astype(np.int64)
    col = np.concatenate([np.arange(u + 1, n) for u in range(n)])
    halves = [(0, n // 2, 0, n), (n // 2, n, 0, n)]  # sources by halves, every row a target
    for dtype in dtypes:
        on_host = Part(0, rowptr, col.astype(dtype), None, n, {})
        clique = device.placed(on_host)
        sliced = [device.checked(piece)[0] for piece in slices.cut(on_host, halves)]
        for label in labels:
            kernel, options = device.candidates()[label]
            found = [kernel.run(p.rowptr, p.col, p.n_local, options) for p in (clique, *sliced)]
            if found[0] != n * (n - 1) * (n - 2) // 6 or sum(found[1:]) != found[0]:
                raise TcdistError(f"the {label} kernel miscounts K_{n} on {device.describe()}: this device or "
                                  "build is broken")
        credits = device.per_vertex_all(clique) if per_vertex else []
        if not all((c == (n - 1) * (n - 2) // 2).all() for c in credits):
            raise TcdistError(f"a per-vertex kernel miscounts K_{n} on {device.describe()}: this device or build "
                              "is broken")
        if per_edge and not (device.count_per_edge(clique) == n - 2).all():
            raise TcdistError(f"the per-edge kernel miscounts K_{n} on {device.describe()}: this device or build "
                              "is broken")


def warm_up_build() -> None:
    """Compile (or load) the passes a build on the current GPU uses (one program) and load CuPy's
    sort, on K_40 given twice with self loops, in both directions: once with ids 0..39, once spread
    far apart (the other way of compacting ids)."""
    import cupy

    u, v = np.triu_indices(CLIQUE)
    for ids in (np.arange(CLIQUE), np.arange(CLIQUE) * 10**9):
        src, dst = cupy.asarray(ids[np.concatenate([u, v])]), cupy.asarray(ids[np.concatenate([v, u])])
        build_graph(EdgeList(src, dst, "warm-up"))


class WarmUp:
    """A warm-up run at once or on a thread of its own, and how long the run waited for it."""

    def __init__(self):
        self.seconds = 0.0  # how long the warm-up took
        self.waited = 0.0   # of it, what the run waited for: the rest was hidden
        self._future = None

    def run(self, work) -> None:
        """work() now, all of it waited for."""
        t0 = time.perf_counter()
        work()
        self.seconds = self.waited = time.perf_counter() - t0

    def start(self, work) -> None:
        """work() on a thread of its own."""

        def timed():
            t0 = time.perf_counter()
            work()
            self.seconds = time.perf_counter() - t0

        pool = ThreadPoolExecutor(1, thread_name_prefix="tcdist-warm-up")
        self._future = pool.submit(timed)
        pool.shutdown(wait=False)

    def wait(self) -> None:
        """Wait for it (raising what it raised), counting the wait as not hidden."""
        if self._future is not None:
            t0 = time.perf_counter()
            self.ready()
            self.waited += time.perf_counter() - t0

    def also(self, work) -> None:
        """work() now, once the warm-up has ended, counted as more of it and waited for (a kernel
        compiled and tested when a part first needs it)."""
        self.ready()
        t0 = time.perf_counter()
        work()
        spent = time.perf_counter() - t0
        self.seconds += spent
        self.waited += spent

    def ready(self) -> None:
        """Wait for it, if one is under way (raising what it raised), counting nothing."""
        if self._future is not None:
            self._future.result()  # from any thread, as often as asked

    def raise_failed(self) -> None:
        """Raise what it raised, if it has ended; one still under way is not waited for."""
        if self._future is not None and self._future.done():
            self._future.result()

    def close(self) -> None:
        """Wait for one under way, dropping what it raised (the run's own error is the one to report)."""
        if self._future is not None:
            self._future.exception()


def prebuild_gpu() -> int:
    """Compile (or load) on the current GPU every kernel instance tcdist has and the build's passes,
    into CuPy's cache: the number of kernel instances."""
    from tcdist.count.registry import of_backend
    from tcdist.cuda import launch
    from tcdist.cuda.build import DEGREE_STATS, PARSE, PARTS, PER_EDGE, PER_VERTEX

    modules = [*of_backend("gpu").values(), PARSE, PER_VERTEX, PER_EDGE, DEGREE_STATS, PARTS]
    for module in modules:
        launch.compile_every_instance(module)
    warm_up_build()
    warm_up_parts()
    return sum(len(module.instantiations()) for module in modules)


PARTS_GRAPH = "rmat:18"  # large enough for CuPy's kernels of large arrays (its CUB reductions and scans)


def warm_up_parts() -> None:
    """Compile (or load) CuPy's kernels that building LSTC's parts on the current GPU uses
    (partition/build.py: a fresh host's first part took 12.8 s), on PARTS_GRAPH in 3 random parts,
    every prune mode (K_40 left most of them out: CuPy picks other kernels for large arrays)."""
    import cupy

    from tcdist.io.generators import generate
    from tcdist.partition import PRUNE_MODES, assign, build_parts

    graph = build_graph(generate(PARTS_GRAPH, xp=cupy))
    for prune in PRUNE_MODES:
        build_parts(graph, assign(graph, "random", 3, 0), 3, prune)
