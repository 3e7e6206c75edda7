"""The CPU device: Numba kernels on this rank's threads, run on a worker thread so that a
signal ends a long count within a fraction of a second instead of at its end."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext

from tcdist import compiled
from tcdist.budget.host import available
from tcdist.device.core import Device
from tcdist.graph import check
from tcdist.io.scratch import on_disk
from tcdist.partition import slices
from tcdist.partition.part import Part

INLINE_EDGES = 1 << 16  # a part or slice of fewer edges is counted on the calling thread (milliseconds)
# `middle` walks a row's wedges, which probes miss: shares of RMAT-22 and -23 of equal probes took
# up to 2.7-3.4 times one another on 4 threads of a 16-core Xeon; weighing a wedge as 4 probes
# (2-10 tried) brought that to 1.4-1.75 times, and the slowest of four ranks' loads from 1.25-1.39
# to 1.03-1.06 times their mean (jobs/share_costs.py)
MIDDLE_WEDGE_WEIGHT = 4


class CpuDevice(Device):
    kind = "cpu"
    name = "cpu"

    def __init__(self, *, local_rank: int = 0, **given):
        super().__init__(**given)
        self._credits_by = "marker"  # the kernel of the last credits: a part's label names it

    def describe(self) -> str:
        return f"cpu ({self.threads} threads)"

    @property
    def wedge_weight(self) -> int:
        """Wedges weigh in the shares' estimate where `middle` counts them (--kernel auto picks it)."""
        return MIDDLE_WEDGE_WEIGHT if self._auto or self.kernel == "middle" else 0

    def budget(self) -> int:
        """The memory limit, else nine tenths of what this process may still take."""
        return self.memory_limit if self.memory_limit is not None else int(0.9 * available()[0])

    def sliced(self, part: Part) -> bool:
        """Under a memory limit the CPU plans slices as a GPU with that limit would (so the plans
        are tested without a GPU); a part whose columns lie on disk is read a slice at a time."""
        return self.memory_limit is not None or on_disk(part.col)

    def start_warm_up(self, per_vertex: bool = False, builds: bool = True, per_edge: bool = False) -> None:
        """Now, not on a thread: Numba's compiling must not meet a partitioning's parallel loops. The
        kernel given by name (or the per-vertex and per-edge ones), and the check of a part's CSR
        (compiled for large parts). Under auto, nothing: its choice is checked when a part first
        needs it, since a small part's `lookup` needs no compiler at all (and what is then compiled,
        `marker` or the check, is serial code: no parallel region of its own); so are per-vertex and
        per-edge credits (a small part's from lookup's triangles). With credits, only their kernels:
        the counts come from the credits, no counting kernel runs (compiling those took seconds of
        a first run)."""
        if self._auto is not None:
            self._test_when_needed = True
            return
        counting = [] if per_vertex or per_edge else list(self.candidates())

        def warm_up():
            check.prebuild()
            self.self_test(counting, per_vertex=per_vertex, per_edge=per_edge)

        self.warming.run(warm_up)

    def ready_while_waiting(self) -> Callable[[], None] | None:
        """Under auto, the CSR check and `middle` compiled (or loaded: 0.5-0.8 s on two cores) and
        checked on a thread while this rank only waits, finished before this process runs any
        parallel loop of its own (`marker`, for slices, is loaded where one comes). A rank then
        counts small parts with `middle`, not `lookup`: a job of several ranks is run for graphs
        `lookup` does not suit."""
        if not self._test_when_needed:
            return None
        self.warming.start(lambda: (check.prebuild(), self.self_test(["middle"])))
        return self.warming.wait

    def _fits(self, spec: str, part: Part) -> bool:
        """Whether a kernel's own memory (middle's listing of the edges) fits in the host memory this
        process may still take, and under a memory limit beside the part."""
        kernel, options = self._auto.choices[spec]
        if kernel.extra_bytes is None:
            return True
        extra = kernel.extra_bytes(part.rowptr.size - 1, part.col.size, part.n_local, part.col.itemsize, **options)
        room = int(0.9 * available()[0])
        if self.memory_limit is not None:
            room = min(room, self.memory_limit - self.need_of(part))
        return extra <= room

    def placed(self, part: Part) -> Part:
        return part

    def moved(self, part) -> tuple[Part, float, float]:
        """A slice counted where it lies when it can be (a share of the graph the ranks share: no
        copy per rank), else laid out in host memory."""
        if isinstance(part, slices.Slice):
            part = part.in_place() or part.made()
        return part, 0.0, 0.0

    def within_memory(self, part: Part):
        return nullcontext()

    def run(self, part: Part, work: Callable):
        if part.col.size < INLINE_EDGES:  # done before a signal's handler would wait long: no thread's start
            compiled.set_threads(self.threads)
            return work()
        return self._interruptible(work)

    def count_per_vertex(self, part: Part):
        """The triangles each vertex of the part is in, from its local rows (uint64 per row)."""
        from tcdist.count import cpu
        from tcdist.count.kernels import lookup

        if self._by_lookup(part):
            return lookup.per_vertex(part.rowptr, part.col, part.n_local, part.start)
        self._credits_tested(part, per_vertex=True)
        return self._interruptible(lambda: cpu.per_vertex(part.rowptr, part.col, part.n_local, part.start))

    def count_per_edge(self, part: Part):
        """The triangles each edge of the part is in, from its local rows (uint64 per CSR position)."""
        from tcdist.count import cpu
        from tcdist.count.kernels import lookup

        self.refuse_slice(part)
        if self._by_lookup(part):
            return lookup.per_edge(part.rowptr, part.col, part.n_local)
        self._credits_tested(part, per_edge=True)
        return self._interruptible(lambda: cpu.per_edge(part.rowptr, part.col, part.n_local))

    def _by_lookup(self, part: Part) -> bool:
        """Whether a part's credits come from lookup's triangles: under auto, a part auto would
        count with lookup (small, while Numba is not loaded), as its count would."""
        by_lookup = self._auto is not None and self._auto.label(part) == "lookup"
        self._credits_by = "lookup" if by_lookup else "marker"
        return by_lookup

    def _credits_tested(self, part: Part, per_vertex: bool = False, per_edge: bool = False) -> None:
        """The compiled credits' kernels checked on K_40, once, when a part first needs them."""
        if not self._test_when_needed:
            return
        key = ("per-vertex" if per_vertex else "per-edge", part.col.dtype)
        with self._testing:
            if key in self._tested:
                return
            self._tested.add(key)  # first: the test's own credits pass through here
        compiled.loaded()  # so that K_40's credits are the compiled kernels', not lookup's
        self.warming.also(lambda: self.self_test([], [part.col.dtype], per_vertex, per_edge))

    def per_vertex_all(self, part: Part) -> list:
        return [self.count_per_vertex(part)]

    def per_vertex_kernel(self, part: Part) -> str:
        return f"per-vertex ({self._credits_by})"

    def per_edge_kernel(self, part: Part) -> str:
        return f"per-edge ({self._credits_by})"

    def _interruptible(self, work: Callable):
        """work() on a daemon thread with this device's Numba threads, waited for in steps short
        enough for signal handlers to run."""
        outcome = {}

        def run():
            try:
                compiled.set_threads(self.threads)  # Numba's thread count is the calling thread's own
                outcome["value"] = work()
            except BaseException as e:  # handed to the waiting thread
                outcome["error"] = e

        worker = threading.Thread(target=run, name="tcdist-kernel", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

