"""What every counting device shares (device/cpu.py and device/gpu.py are the two kinds).

``put`` is the one way a part reaches the device: it checks the part's CSR there and, on a GPU,
copies it (``stage`` may start that copy early, beside the count of the part before);
``prepare`` and ``count`` run the part's kernel on what ``put`` returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from tcdist.budget import model
from tcdist.count.auto import Auto
from tcdist.count.registry import spec_of
from tcdist.device.warmup import WarmUp, self_test
from tcdist.errors import InputError, OptionError, TcdistError
from tcdist.graph.check import csr_problem
from tcdist.partition import slices
from tcdist.partition.part import Part


class Device:
    """What a CPU and a GPU device share: the kernel choice, the memory model applied to it and
    the order of put, prepare and count. A kind of device gives budget() (the bytes one part may
    take), sliced(part) (whether a part is planned in slices), start_warm_up(), moved(part) (the
    part on the device), within_memory(part) and run(part, work) (its kernels on the part)."""

    kind = ""
    gpu = None      # index among the visible GPUs
    bus_id = None
    gpu_peak_bytes = None  # the most the run's GPU arrays held at once (with a memory limit)
    wedge_weight = 0  # probes a row's wedge weighs in the estimate that cuts shares (a GPU's kernels intersect)

    def __init__(self, *, kernel: str, threads: int, chosen, options: dict, memory_limit: int | None,
                 auto: Auto | None):
        self.kernel, self.threads, self.memory_limit = kernel, threads, memory_limit
        self._kernel, self._options, self._auto = chosen, options, auto  # _kernel: None under --kernel auto
        self.warming = WarmUp()
        self._tested = set()  # (label, column dtype) of the kernels checked on K_40
        self._test_when_needed = False  # whether the warm-up left auto's kernels to check per part
        self._testing = threading.Lock()  # a part may be prepared on a reader thread

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"

    @property
    def spec(self) -> str:
        """The kernel with its options, as a spec ('auto' when each part's is chosen)."""
        return "auto" if self._auto else spec_of(self.kernel, self._options)

    @property
    def fixed_kernel(self):
        """The registry kernel named by the run (None under --kernel auto)."""
        return self._kernel

    @property
    def options(self) -> dict:
        """The kernel's options, checked (defaults filled in)."""
        return self._options

    def close(self) -> None:
        """Let go of what the device holds (a warm-up under way is waited for first)."""
        self.warming.close()

    def release_host_memory(self) -> None:
        """Let go of the host memory the device holds on to (a GPU's registered pages, which its
        copies read from): called before that memory is freed."""

    # What fits: the memory model with this device's kernel.

    def need(self, v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
        """Bytes a part of these sizes takes on this device with this kernel: the memory model
        and what the kernel's prepare step allocates (under --kernel auto not the last: a kernel
        whose own memory would not fit is passed over)."""
        extra = 0
        if self._auto is None and self._kernel.extra_bytes is not None:
            extra = self._kernel.extra_bytes(v_res, e_res, n_local, col_bytes, **self._options)
        return model.need(v_res, e_res, n_local, col_bytes, extra)

    def need_of(self, part: Part | slices.Slice) -> int:
        return self.need(*part.sizes())

    def kept_for_slices(self, part: Part, budget: int) -> int:
        """Bytes a part's slices leave free in budget for the kernel's own memory (none but on a GPU)."""
        return 0

    # The kernels.

    def candidates(self) -> dict:
        """Every kernel this device may run: label -> (kernel, options)."""
        return self._auto.choices if self._auto else {self.spec: (self._kernel, self._options)}

    def pick(self, part: Part) -> str:
        """The label of the kernel that counts this part (with --kernel auto, by the rule, among
        the kernels whose own memory fits beside the part)."""
        return self._auto.label(part, fits=lambda spec: self._fits(spec, part)) if self._auto else self.spec

    def _fits(self, spec: str, part: Part) -> bool:
        return True

    # A part's way through the device.

    def stage(self, part: Part, beside: int):
        """Start the part's copy to the device early, where there is one (GpuDevice)."""
        return part

    def put(self, part) -> tuple[Part, float, float]:
        """(the part on this device, seconds waited for its copy, seconds the copy took), its CSR
        checked there (whole-array passes: sorted rows, ids in range) before any kernel trusts
        it."""
        self.warming.ready()
        return self.checked(part)

    def checked(self, part) -> tuple[Part, float, float]:
        part, waited, copied = self.moved(part)
        if part.checked:  # the whole graph, checked once by rank 0: not again for every share of it
            return part, waited, copied
        with self.within_memory(part):
            problem = csr_problem(part.rowptr, part.col, part.n_local)
        if problem:
            raise InputError(part.source, f"part {part.index}: {problem}") if part.source else \
                TcdistError(f"part {part.index}: {problem}")
        return part, waited, copied

    def prepare(self, part: Part) -> tuple[str, object]:
        """(the label of the kernel that counts the part, what its prepare step made of the part:
        edge lists, wedge offsets, bitmaps, or None); timed as prepare, not count."""
        label = self.pick(part)
        self.tested(label, part.col.dtype)
        try:
            return label, self._prepared(label, part)
        except TcdistError:
            if self._auto is None or self.candidates()[label][0].extra_bytes is None:
                raise
        # auto's kernel lost its memory to the next part's copy, started meanwhile: one without any
        label = self._auto.fallback(part)
        self.tested(label, part.col.dtype)
        return label, self._prepared(label, part)

    def ready_while_waiting(self) -> Callable[[], None] | None:
        """Start what a rank can make ready while rank 0 reads and builds the graph, so that its
        first part waits for nothing it could have made meanwhile; returns what waits for it (then
        counted as compile), or None: nothing here (a GPU's warm-up already runs on its thread)."""
        return None

    def self_test(self, labels, dtypes=(np.int32, np.int64), per_vertex: bool = False, per_edge: bool = False) -> None:
        """Check these kernels on K_40 now (warmup.self_test), so that no part checks them again."""
        self_test(self, labels, dtypes, per_vertex, per_edge)
        self._tested.update((label, np.dtype(dtype)) for label in labels for dtype in dtypes)

    def tested(self, label: str, dtype) -> None:
        """Compile and check on K_40 the kernel of this label for this column type, once, when a
        part first needs it (the warm-up checked the kernels it knew would run)."""
        if not self._test_when_needed:
            return
        with self._testing:
            if (label, np.dtype(dtype)) not in self._tested:
                self.warming.also(lambda: self.self_test([label], [dtype]))

    def _prepared(self, label: str, part: Part):
        kernel, options = self.candidates()[label]
        if kernel.prepare is None:
            return None
        given = {"start": part.start} if part.start else {}  # (as count's)
        return self.run(part, lambda: self.finished(kernel.prepare(part.rowptr, part.col, part.n_local, **given,
                                                                   **options)))

    def count(self, part: Part, prepared: tuple[str, object] | None = None) -> int:
        """Triangles of the part whose lowest-rank vertex is local (the part as put() returned it,
        with what prepare() made of it, or prepared here when not given)."""
        label, state = prepared if prepared is not None else self.prepare(part)
        kernel, options = self.candidates()[label]
        given = {} if kernel.prepare is None else {"prepared": state}
        given |= {"start": part.start} if part.start else {}  # only the CPU's kernels count from a row on
        return self.run(part, lambda: kernel.count(part.rowptr, part.col, part.n_local, **given, **options))

    def finished(self, value):
        """value, once the device has finished what made it (so a step's time is its own)."""
        return value

    @staticmethod
    def refuse_slice(part: Part) -> None:
        """Per-edge credits are counted on whole parts: a slice of a part holds only some of the
        rows whose edges a triangle credits."""
        if part.slice is not None or part.start:
            raise OptionError(f"part {part.index} does not fit the device whole, and {{per_edge}} counts whole parts "
                              "only; count in more parts ({parts} auto picks them)")

