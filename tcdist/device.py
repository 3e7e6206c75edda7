"""Where a run counts: decided once (backend, GPU index, kernel, threads), then trusted by every step.

``Device.put`` is the one way a part reaches the counting device: it checks that the part
fits and copies it; ``Device.count`` runs the kernel on what ``put`` returned. On a GPU,
``Device.stage`` may start that copy early, on a stream of its own from pinned host memory,
while the part before is counted; ``put`` then waits for it.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from tcdist import memory
from tcdist.budget import csr_bytes, part_need
from tcdist.count.auto import Auto
from tcdist.count.registry import choose, spec_of
from tcdist.errors import InputError, TcdistError
from tcdist.graph.graph import csr_problem
from tcdist.memory import size_text
from tcdist.partition import slices
from tcdist.partition.part import Part

BACKENDS = ("auto", "cpu", "gpu")
_FILL_PIECE = 32 << 20  # bytes each copier thread copies into pinned memory at a time
_REGISTER_FROM = 32 << 20  # a part of this many bytes or more is registered, not copied into pinned buffers
_COPIERS = min(8, os.cpu_count() or 1)
_POOL_UNIT = 512  # CuPy's pool rounds every allocation up to a multiple of this
LEAST_GPU_LIMIT = 256 << 10  # a GPU limit below this may not hold the warm-up (under 64 KiB it did not)
_ALONE = 0.75  # of the budget, what a slice with no room for the next beside it may take (slices planned at the
               # whole of a 1 MiB limit went past it, when the limit was CuPy's pool's; not measured again since)


def gpu_device_problem() -> str | None:
    """Why CuPy cannot use a CUDA device here, or None when it can."""
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'tcdist[cuda12]' or 'tcdist[cuda13]')"
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver or runtime missing: CuPy raises several types
        return f"no usable CUDA device ({type(e).__name__}: {e})"
    if devices == 0:
        return "no CUDA device found"
    return None


def free_gpu_bytes() -> int:
    """Bytes the current device can still give: free device memory plus CuPy's cached blocks."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    return int(free + pool.total_bytes() - pool.used_bytes())


def set_threads(threads: int | None) -> int:
    """Use this many CPU threads for the Numba kernels (None: all Numba may use)."""
    import numba

    if threads is None:
        return numba.get_num_threads()
    limit = numba.config.NUMBA_NUM_THREADS
    if not 1 <= threads <= limit:
        raise TcdistError(f"--threads must be between 1 and {limit}, got {threads}")
    numba.set_num_threads(threads)
    return threads


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise TcdistError(f"unknown backend '{backend}' (choose from {', '.join(BACKENDS)})")


def _resolve_kind(backend: str) -> str:
    check_backend(backend)
    if backend == "cpu":
        return "cpu"
    reason = gpu_device_problem()
    if reason is None:
        return "gpu"
    if backend == "gpu":
        raise TcdistError(f"--backend gpu: {reason}")
    return "cpu"


@dataclass
class Device:
    """The counting device of one rank, with its kernel."""

    kind: str                # 'cpu' or 'gpu'
    kernel: str
    threads: int
    gpu: int | None = None   # index among the visible GPUs
    bus_id: str | None = None
    name: str = "cpu"
    _kernel: object = field(default=None, repr=False)  # the registry kernel (None with --kernel auto)
    _options: dict = field(default_factory=dict)        # its options, checked
    memory_limit: int | None = None  # --gpu-memory-limit: enforced by the allocator on a GPU
    _peak: object = None             # the allocator that records the GPU peak
    _stager: object = field(default=None, repr=False)  # the copy stream and pinned buffers (GPU)
    _auto: object = field(default=None, repr=False)    # --kernel auto: count/auto.py's rule for this backend
    _warming: object = field(default=None, repr=False)  # the warm-up under way on a GPU (start_warm_up)
    warm_up_seconds: float = 0.0  # how long the warm-up took
    warm_up_waited: float = 0.0   # of it, what the run waited for (wait_warm_up): the rest was hidden

    @classmethod
    def resolve(cls, backend: str = "auto", *, kernel: str | None = None, threads: int | None = None,
                local_rank: int = 0, local_size: int = 1, memory_limit: int | None = None) -> Device:
        """Decide the device of this rank: the backend, then (on a GPU) the device by node-local
        rank, selected before anything compiles; the kernel (a registry spec such as
        'lstc-group:tile=256') and its options are checked here once.
        On a GPU, memory_limit caps what the run's arrays hold at once (an allocation past it
        fails; _PeakAllocator), which also records the peak (without a limit, CuPy's own allocator
        is left alone)."""
        from tcdist.dist.binding import cpu_threads, gpu_index

        kind = _resolve_kind(backend)
        if kind == "gpu" and memory_limit is not None and memory_limit < LEAST_GPU_LIMIT:
            raise TcdistError(f"--gpu-memory-limit {size_text(memory_limit)} is below the {size_text(LEAST_GPU_LIMIT)} "
                              "a count on the GPU needs at the least (its warm-up counts K_40 with every kernel)")
        index = bus_id = None
        label = "cpu"
        if kind == "gpu":
            import cupy

            index = gpu_index(local_rank, cupy.cuda.runtime.getDeviceCount())
            device = cupy.cuda.Device(index)
            device.use()
            bus_id = device.pci_bus_id
            label = cupy.cuda.runtime.getDeviceProperties(index)["name"].decode()
        auto = Auto(kind) if kernel in (None, "auto") else None
        chosen, options = (None, {}) if auto else choose(kind, kernel)
        if threads is None and local_size > 1:
            threads = cpu_threads(local_size)
        threads = set_threads(threads)  # may refuse: before anything is installed on the GPU
        stager = _Stager(index) if kind == "gpu" else None
        peak = _PeakAllocator.install(memory_limit) if kind == "gpu" and memory_limit is not None else None
        return cls(kind, "auto" if auto else chosen.name, threads, index, bus_id, label, chosen, options, memory_limit,
                   peak, stager, auto)

    def close(self) -> None:
        """Give back the allocator this device installed: a count called from Python must not
        leave it on the caller's process. A warm-up under way is waited for
        first (what it raised, if the run stopped before it asked, is dropped: the run's own
        error is the one to report)."""
        if self._warming is not None:
            self._warming.exception()
        if self._peak is not None:
            self._peak.uninstall()
            self._peak = None
        if self._stager is not None:
            self._stager.close()
            self._stager = None

    def need(self, v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
        """Bytes a part of these sizes takes on this device with this kernel: budget.part_need (CSR,
        check, the kernel's working rows) plus what the kernel's prepare step allocates. Under
        --kernel auto not the last: a kernel whose own memory would not fit is passed over (pick)."""
        extra = 0  # sizes may be arrays: every vertex's own part at once
        if self._auto is None and self._kernel.extra_bytes is not None:
            extra = self._kernel.extra_bytes(v_res, e_res, n_local, col_bytes, **self._options)
        return part_need(v_res, e_res, n_local, col_bytes) + extra

    def _candidates(self) -> dict:
        """Every kernel this device may run: label -> (kernel, options)."""
        return self._auto.choices if self._auto else {self.spec: (self._kernel, self._options)}

    def pick(self, part: Part) -> str:
        """The label of the kernel that counts this part (with --kernel auto, by the rule, among
        the kernels whose own memory fits beside the part)."""
        return self._auto.label(part, fits=lambda spec: self._fits(spec, part)) if self._auto else self.spec

    def _fits(self, spec: str, part: Part) -> bool:
        """Whether a kernel's own memory fits on the device now, beside the part already put there
        and the working memory the model keeps for it (a count outruns hiding the next part's
        copy: that copy waits, or goes unstaged)."""
        kernel, options = self._auto.choices[spec]
        if not self.is_gpu:
            return True
        working = self.part_bytes(part) - part.rowptr.nbytes - part.col.nbytes
        return working + kernel.extra_bytes(part.rowptr.size - 1, part.col.size, part.n_local, part.col.itemsize,
                                            **options) <= self.room()

    def pieces(self, part: Part) -> Iterator[Part]:
        """The part, or where it does not fit the GPU, its slices (partition/slices.py), made one
        at a time: small enough that two fit side by side (the next one's copy overlaps the
        count), or if that cannot be, one. The CPU slices under a memory limit too, as a GPU with
        that limit would (the plans are the same, but for the room the GPU keeps for bitmaps under
        --kernel auto, and the CPU's are tested without a GPU)."""
        sliced = self.memory_limit is not None if not self.is_gpu else not _on_gpu(part)
        bounds = self._slice_plan(part) if sliced else None
        return iter([part]) if bounds is None else slices.cut(part, bounds)

    def _slice_plan(self, part: Part):
        budget, need = self.budget(), self.part_bytes(part)
        if need <= budget:
            return None
        if self._kernel is not None and self._kernel.part_order and part.n_local < part.rowptr.size - 1:
            raise TcdistError(f"part {part.index} needs {size_text(need)} and the device has "
                              f"{size_text(budget)}: it can be counted in slices, but not by --kernel {self.kernel}, "
                              "which relies on a part's id order; let --kernel auto choose, or count more parts")
        kept = self._kept_for_slices(part)
        try:
            return slices.plan(part, (budget - kept) // 2, self._need_beside_another)
        except TcdistError:
            return slices.plan(part, int(budget * _ALONE), self.need, budget)

    def refuse_unsliceable(self, part: Part, advice: str) -> None:
        """Stop if neither of the rooms _slice_plan tries holds a slice of the part (one beside
        another, or one alone), with the second's reason; the room kept for the hubs' bitmaps is
        left out, so this never refuses what pieces() would count."""
        budget = self.budget()
        try:
            slices.refuse_unsliceable(part, budget // 2, self._need_beside_another)
        except TcdistError:
            slices.refuse_unsliceable(part, int(budget * _ALONE), self.need, budget, advice)

    def _need_beside_another(self, v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
        """What a slice planned beside another takes of their shared room: its CSR, and half its
        working memory (the check's, the kernel's), which only the slice being checked or counted
        holds, not the one being copied (stage() starts a copy beside the working memory of the
        one before; before, both slices' were planned, and RMAT-25 under 2 GiB made 74 slices
        whose peak was 1.63 GiB)."""
        csr = csr_bytes(v_res, e_res, n_local, col_bytes)
        return csr + (self.need(v_res, e_res, n_local, col_bytes) - csr) // 2

    def _kept_for_slices(self, part: Part) -> int:
        """Bytes a part's slices leave free for the kernel's own memory: under --kernel auto, the
        largest bitmaps of the hubs within an eighth of the budget where the rule gives the slices
        bitmap (a kernel fixed by name has its memory in need already)."""
        specs = self._auto.kept_for_slices(part) if self._auto is not None and self.is_gpu else ()
        if not specs:
            return 0
        v_res, n_local = part.rowptr.size - 1 + part.n_local, part.n_local  # a slice's rows at most
        share = self.budget() // 8
        for spec in specs:  # largest first
            kernel, options = self._auto.choices[spec]
            need = int(kernel.extra_bytes(v_res, 0, n_local, 4, **options))
            if need <= share:
                return need
        return 0

    def part_bytes(self, part: Part | slices.Slice) -> int:
        return self.need(*part.sizes())

    def room(self) -> int:
        """Bytes the GPU can still give this run: free memory and CuPy's cached blocks, and no
        more than the memory limit leaves."""
        import cupy

        free = free_gpu_bytes()
        if self.memory_limit is not None:
            free = min(free, self.memory_limit - cupy.get_default_memory_pool().used_bytes())
        return free

    def budget(self) -> int:
        """The bytes one part may take on this device (for --parts auto and slices): the memory
        limit, else nine tenths of what is free (on the CPU: of what this process may still take)."""
        if self.memory_limit is not None:
            return self.memory_limit
        if not self.is_gpu:
            return int(0.9 * memory.available()[0])
        import cupy

        with cupy.cuda.Device(self.gpu):  # asked from a reader thread too, which starts on device 0
            return int(0.9 * free_gpu_bytes())

    @property
    def gpu_peak_bytes(self) -> int | None:
        """The most CuPy's pool held in use at once in this process (None on the CPU or without a
        memory limit)."""
        return None if self._peak is None else self._peak.peak

    @property
    def spec(self) -> str:
        """The kernel with its options, as a spec ('auto' when each part's is chosen)."""
        return "auto" if self._auto else spec_of(self.kernel, self._options)

    @property
    def options(self) -> dict:
        """The kernel's options, checked (defaults filled in)."""
        return self._options

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"

    def describe(self) -> str:
        return f"gpu {self.gpu} ({self.name}, {self.bus_id})" if self.is_gpu else f"cpu ({self.threads} threads)"

    def start_warm_up(self, per_vertex: bool = False) -> None:
        """Warm up (warm_up): on a GPU on a thread of its own, so that the first part is read from
        the store meanwhile (its compiling took 0.8-1.6 s of a rank's 6.6 s on RMAT-26 at 4 GPUs);
        the device's every use waits for it. On the CPU now: its compiling (Numba) must not meet a
        partitioning's parallel loops in the same process."""
        if not self.is_gpu:
            t0 = time.perf_counter()
            self.warm_up(per_vertex)
            self.warm_up_seconds = self.warm_up_waited = time.perf_counter() - t0
            return

        def warm():
            import cupy

            t0 = time.perf_counter()
            with cupy.cuda.Device(self.gpu):
                self.warm_up(per_vertex)
            self.warm_up_seconds = time.perf_counter() - t0

        pool = ThreadPoolExecutor(1, thread_name_prefix="tcdist-warm-up")
        self._warming = pool.submit(warm)
        pool.shutdown(wait=False)

    def wait_warm_up(self) -> None:
        """Wait for the warm-up (raising what it raised), counting the wait as not hidden."""
        if self._warming is not None:
            t0 = time.perf_counter()
            self.ready()
            self.warm_up_waited += time.perf_counter() - t0

    def raise_failed_warm_up(self) -> None:
        """Raise what the warm-up raised, if it has ended; one still under way is not waited for
        (it hides the first part's reading)."""
        if self._warming is not None and self._warming.done():
            self._warming.result()

    def ready(self) -> None:
        """Wait for the warm-up, if one is under way (raising what it raised), counting nothing."""
        if self._warming is not None:
            self._warming.result()  # from any thread, as often as asked

    def warm_up(self, per_vertex: bool = False) -> None:
        """Run every kernel this device may use on K_40 with each column type, before anything is
        timed: whole, and in two slices put on the device as a sliced part is (copy, layout, CSR
        check). This compiles (or loads) them and every helper they launch (a first CuPy launch in
        a process costs far more than a count: a sliced count's first checks compiled for 9.8 s,
        timed as 'other'), and checks that each gives C(40, 3); with per_vertex, also that every
        per-vertex kernel credits every vertex with C(39, 2)."""
        xp = np
        if self.is_gpu:
            import cupy as xp

            from tcdist.count import gpu

            for kernel, _ in self._candidates().values():
                gpu.compile_kernel(kernel)  # these kernels only: every kernel is a module of its own
        n = 40  # rows up to 39 long: both the short-row and the long-row paths of a kernel run
        rowptr = np.concatenate([[0], np.cumsum(np.arange(n - 1, -1, -1))]).astype(np.int64)
        col = np.concatenate([np.arange(u + 1, n) for u in range(n)])
        halves = [(0, n // 2, 0, n), (n // 2, n, 0, n)]  # sources by halves, every row a target
        for dtype in (np.int32, np.int64):
            on_host = Part(0, rowptr, col.astype(dtype), None, n, {})
            clique = Part(0, xp.asarray(rowptr), xp.asarray(on_host.col), None, n, {})
            sliced = [self._put(piece)[0] for piece in slices.cut(on_host, halves)]
            for label, (kernel, options) in self._candidates().items():
                found = [kernel.run(p.rowptr, p.col, p.n_local, options) for p in (clique, *sliced)]
                if found[0] != n * (n - 1) * (n - 2) // 6 or sum(found[1:]) != found[0]:
                    raise TcdistError(f"the {label} kernel miscounts K_{n} on {self.describe()}: this device or "
                                      "build is broken")
            credits = self._per_vertex_all(clique) if per_vertex else []
            if not all((c == (n - 1) * (n - 2) // 2).all() for c in credits):
                raise TcdistError(f"a per-vertex kernel miscounts K_{n} on {self.describe()}: this device or build "
                                  "is broken")

    def stage(self, part: Part, beside: int) -> Part | _Staged:
        """Start the part's copy to the GPU on the copy stream, if its CSR fits with `beside`
        bytes still to come for the part before it (its kernel's working memory, or all of it if
        it is not on the device yet); else the part as it was, for put() to copy when it is due.
        Its own working memory comes after the part before has gone (the copy of the one after
        it is staged beside that: the pipeline's `before`)."""
        if not self.is_gpu:
            return part
        import cupy

        self.ready()
        with cupy.cuda.Device(self.gpu):  # a reader thread starts on device 0: every step here is this rank's GPU
            if _on_gpu(part) or self.room() < beside + csr_bytes(*part.sizes()):
                return part
            try:
                return self._stager.start(part)
            except cupy.cuda.memory.OutOfMemoryError:  # the pool could not give it: copy it when it is due
                return part

    def put(self, part: Part | _Staged) -> tuple[Part, float, float]:
        """(the part on this device, seconds waited for its copy, seconds the copy took), its CSR
        checked there (whole-array passes on the device: sorted rows, ids in range) before any
        kernel trusts it. A staged part's copy ran while the part before was counted, so the wait
        is what the overlap did not hide. A part that does not fit stops the run with a way out."""
        self.ready()
        return self._put(part)

    def _put(self, part: Part | _Staged) -> tuple[Part, float, float]:
        waited = copied = 0.0
        if isinstance(part, _Staged):
            part, waited, copied = part.finish()
        elif self.is_gpu:
            part, waited = self._upload(part)
            copied = waited
        elif isinstance(part, slices.Slice):
            part = part.made()
        with self._within_memory(part):
            problem = csr_problem(part.rowptr, part.col, part.n_local)
        if problem:
            raise InputError(part.source, f"part {part.index}: {problem}") if part.source else \
                TcdistError(f"part {part.index}: {problem}")
        return part, waited, copied

    def _upload(self, part: Part | slices.Slice) -> tuple[Part, float]:
        """The part copied now, as a staged one is (the copy stream, its pages registered)."""
        if _on_gpu(part):
            return part, 0.0
        need, free = self.part_bytes(part), self.room()
        if need > free:
            raise TcdistError(f"part {part.index} needs {size_text(need)} on the GPU but {size_text(free)} are "
                              f"free{' under the limit' if self.memory_limit else ''}; count it in more parts "
                              f"(--parts auto picks them)")
        t0 = time.perf_counter()
        with self._within_memory(part):
            moved, _, _ = self._stager.start(part).finish()
        return moved, time.perf_counter() - t0

    def prepare(self, part: Part) -> tuple[str, object]:
        """(the label of the kernel that counts the part, what its prepare step made of the part:
        edge lists, wedge offsets, bitmaps, or None); timed as prepare, not count."""
        label = self.pick(part)
        try:
            return label, self._prepared(label, part)
        except TcdistError:
            if self._auto is None or self._candidates()[label][0].extra_bytes is None:
                raise
        # auto's kernel lost its memory to the next part's copy, started meanwhile: one without any
        label = self._auto.fallback(part)
        return label, self._prepared(label, part)

    def _prepared(self, label: str, part: Part):
        kernel, options = self._candidates()[label]
        if kernel.prepare is None:
            return None
        return self._on_device(part, lambda: _finished(kernel.prepare(part.rowptr, part.col, part.n_local, **options),
                                                       self.is_gpu))

    def count(self, part: Part, prepared: tuple[str, object] | None = None) -> int:
        """Triangles of the part whose lowest-rank vertex is local (the part as put() returned it,
        with what prepare() made of it, or prepared here when not given).

        A CPU kernel runs on a worker thread (it releases the GIL) while this thread waits in short
        steps, so a signal ends a long count within a fraction of a second instead of at its end.
        """
        label, state = prepared if prepared is not None else self.prepare(part)
        kernel, options = self._candidates()[label]
        given = {} if kernel.prepare is None else {"prepared": state}
        return self._on_device(part, lambda: kernel.count(part.rowptr, part.col, part.n_local, **given, **options))

    def _on_device(self, part: Part, work: Callable):
        if self.is_gpu:
            with self._within_memory(part):
                return work()
        return _interruptible(work)

    @contextmanager
    def _within_memory(self, part: Part):
        """An allocation past the GPU's memory (or its limit) becomes one line naming the part."""
        if not self.is_gpu:
            yield
            return
        import cupy

        try:
            yield
        except cupy.cuda.memory.OutOfMemoryError:
            limit = f"the limit of {size_text(self.memory_limit)}" if self.memory_limit else "the GPU's memory"
            raise TcdistError(f"part {part.index} went past {limit} (peak {size_text(self.gpu_peak_bytes or 0)}); "
                              "count it in more parts (--parts auto picks them)") from None

    def count_per_vertex(self, part: Part):
        """The triangles each vertex of the part is in, from its local rows (uint64 per vertex,
        indexed like the part's rows, in host memory)."""
        if self.is_gpu:
            from tcdist.count import gpu

            with self._within_memory(part):
                return gpu.per_vertex(part.rowptr, part.col, part.n_local, Auto.per_vertex_by_thread(part)).get()
        from tcdist.count.cpu import per_vertex

        return _interruptible(lambda: per_vertex(part.rowptr, part.col, part.n_local))

    def _per_vertex_all(self, part: Part) -> list:
        """The part's per-vertex credits by every per-vertex kernel of this device (warm-up)."""
        if not self.is_gpu:
            return [self.count_per_vertex(part)]
        from tcdist.count import gpu

        return [gpu.per_vertex(part.rowptr, part.col, part.n_local, by_thread).get() for by_thread in (False, True)]

    def per_vertex_kernel(self, part: Part) -> str:
        """The per-vertex kernel that credits this part."""
        if not self.is_gpu:
            return "per-vertex (marker)"
        return "per-vertex (thread per vertex)" if Auto.per_vertex_by_thread(part) else "per-vertex (edge warps)"


def _finished(value, on_gpu: bool):
    """value, once the GPU has finished what made it (so a step's time is its own): its stream
    only, not the device, whose copy stream may be staging the next part meanwhile (before, each
    slice's prepare step waited for the next one's copy: 0.37 s of a sliced count's 1.37 on
    RMAT-25 under 2 GiB, nvidia-h200)."""
    if on_gpu:
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    return value


def _on_gpu(part: Part | slices.Slice) -> bool:
    """Whether the part is on the GPU (a slice is cut from a part in host memory: never)."""
    import cupy

    return isinstance(part, Part) and isinstance(part.rowptr, cupy.ndarray) and isinstance(part.col, cupy.ndarray)


@dataclass
class _Staged:
    """A part whose copy to the GPU is under way on the copy stream."""

    part: Part       # its arrays on the device, being filled
    started: object  # CUDA events around the copy
    done: object
    then: Callable[[], None] | None = None  # run once the copy is done (the last slice's: unpin its part)

    @property
    def slice(self):
        return self.part.slice

    def finish(self) -> tuple[Part, float, float]:
        """(the part, seconds waited for the copy now, seconds the copy took on the GPU)."""
        import cupy

        t0 = time.perf_counter()
        self.done.synchronize()
        waited = time.perf_counter() - t0
        if self.then is not None:
            self.then()
        return self.part, waited, cupy.cuda.get_elapsed_time(self.started, self.done) / 1e3


class _Stager:
    """Copies parts to the GPU on a non-blocking stream of its own from pinned host memory:
    pageable memory would make every copy synchronous and half as fast. A part is pinned where it
    lies (its pages registered with CUDA) while it, or each of its slices, is copied; a small one,
    or one whose pages cannot be registered, goes through two pinned buffers used in turn. On
    nvidia-h200, for 4 GiB: registering 0.17 s, the copy 0.08 s, unregistering 0.09 s, where
    allocating a pinned buffer took 1.7 s (a rank's only part paid it: 2.5 s of 'transfer' at 4
    ranks on nvidia-h200-x4) and a copy from pageable memory 0.51 s."""

    def __init__(self, gpu: int):
        import cupy

        self.gpu = gpu
        with cupy.cuda.Device(gpu):
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self.lock = threading.Lock()
        self.buffers = [None, None]  # (pinned memory, bytes) of each slot
        self.last_copy = [None, None]  # the event that ends each slot's last copy
        self.turn = 0
        self.copiers = ThreadPoolExecutor(_COPIERS, thread_name_prefix="tcdist-pin")
        self.pinned = {}  # id(part) -> (the part, kept while its pages are registered; their starts, or None)
        self.closed = False

    def _fill(self, pinned: np.ndarray, run: np.ndarray) -> None:
        """pinned[:] = run, in pieces on the copiers' threads: one thread's copy, at a few GB/s,
        was the slowest step of a sliced count (NumPy lets go of the GIL while it copies)."""
        step = max(_FILL_PIECE // max(pinned.itemsize, 1), 1)
        pieces = [slice(i, i + step) for i in range(0, pinned.size, step)]
        if len(pieces) <= 1:
            np.copyto(pinned, run)
            return
        list(self.copiers.map(lambda s: np.copyto(pinned[s], run[s]), pieces))

    def start(self, part: Part | slices.Slice) -> _Staged:
        """The part with its copy under way (on this rank's GPU also from a reader thread; one
        copy is started at a time, so two never take the same slot)."""
        import cupy

        with self.lock, cupy.cuda.Device(self.gpu):
            if self.closed:  # a reader thread outlived the run: register and copy nothing more
                raise TcdistError("internal error: a copy was started after the device was closed")
            return self._start(part)

    def _start(self, part: Part | slices.Slice) -> _Staged:
        import cupy

        slot, self.turn = self.turn, self.turn ^ 1
        with self.stream:
            runs, make = part.copies(cupy)  # a slice is laid out on the device from the runs copied
        if self.last_copy[slot] is not None:
            self.last_copy[slot].synchronize()  # the slot's buffer is free again
        whole = part.part if isinstance(part, slices.Slice) else part
        registers = whole.rowptr.nbytes + whole.col.nbytes >= _REGISTER_FROM and \
            all(run.dtype == into.dtype for run, into in runs)  # a slice's wider ids need a cast: buffers
        if registers and self._pin(whole):
            hosts = [run for run, _ in runs]
        else:
            hosts = self._filled(slot, runs, pageable=registers)
        with self.stream:
            started = cupy.cuda.Event()
            started.record()
            for host, (_, into) in zip(hosts, runs):
                into.set(host, stream=self.stream)
            moved = make()
            done = cupy.cuda.Event()
            done.record()
        self.last_copy[slot] = done
        last = not isinstance(part, slices.Slice) or part.slice.k == part.slice.of - 1
        return _Staged(moved, started, done, (lambda: self.unpin(whole)) if last else None)

    def _filled(self, slot: int, runs, pageable: bool = False) -> list[np.ndarray]:
        """The runs copied into the slot's pinned buffer (grown if it is too small); with
        pageable (a large part whose pages could not be registered: slices of it too, which
        before took slice-sized buffers), or where pinned memory is refused, the runs as they are
        (cast where a slice's ids widen): the copy is slower, and still runs beside the count.
        Before, such a part took pinned buffers of its full size, seconds to allocate, and a
        refusal ended the run with CuPy's message."""
        offsets = np.cumsum([0] + [-(-into.nbytes // 256) * 256 for _, into in runs])
        if self.buffers[slot] is None or self.buffers[slot][1] < offsets[-1]:
            self.buffers[slot] = None
            grown = None if pageable else _pinned(int(offsets[-1]))
            if grown is None:
                return [run if run.dtype == into.dtype else run.astype(into.dtype) for run, into in runs]
            self.buffers[slot] = (grown, int(offsets[-1]))
        buffer = self.buffers[slot][0]
        pinned = [np.ndarray(into.shape, into.dtype, buffer=buffer, offset=int(o)) for (_, into), o in zip(runs, offsets)]
        for host, (run, _) in zip(pinned, runs):
            self._fill(host, run)
        return pinned

    def _pin(self, part: Part) -> bool:
        """Whether the part's arrays are pinned where they lie (registered now if they are not):
        the pages they span, those two arrays share taken once."""
        import cupy

        if id(part) not in self.pinned:
            page = 4096
            spans = sorted((a.ctypes.data // page * page, -(-(a.ctypes.data + a.nbytes) // page) * page)
                           for a in (part.rowptr, part.col) if a.nbytes)
            merged = []
            for begin, end in spans:
                if merged and begin <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
                else:
                    merged.append((begin, end))
            registered = []
            try:
                for begin, end in merged:
                    cupy.cuda.runtime.hostRegister(begin, end - begin, 0)
                    registered.append(begin)
            except cupy.cuda.runtime.CUDARuntimeError:  # not allowed here (locked-memory limit): fill buffers
                for begin in registered:
                    cupy.cuda.runtime.hostUnregister(begin)
                registered = None
            self.pinned[id(part)] = (part, registered)
        return self.pinned[id(part)][1] is not None

    def unpin(self, part: Part) -> None:
        """Let go of the part's registered pages: called when its last slice's copy is done, so
        that every copy from them is (the stream runs them in order). Not under the lock, which the
        reader thread holds while it stages the next part (a copy, a fill, a registration): the
        part's entry is popped at once (the GIL), and only the main thread closes."""
        import cupy

        with cupy.cuda.Device(self.gpu):
            for begin in self.pinned.pop(id(part), (None, None))[1] or []:
                cupy.cuda.runtime.hostUnregister(begin)

    def close(self) -> None:
        """Let go of every part's registered pages, once the copies under way are done."""
        import cupy

        with self.lock, cupy.cuda.Device(self.gpu):
            self.closed = True
            self.stream.synchronize()
            for begin in [b for _, pages in self.pinned.values() for b in pages or []]:
                cupy.cuda.runtime.hostUnregister(begin)
            self.pinned.clear()
        self.copiers.shutdown(wait=False)


class _PeakAllocator:
    """CuPy's default pool under the memory limit, recording the most it held in use at once:
    the peak the allocator saw. uninstall() puts back the allocator that was there before.

    The limit is on what the run's arrays hold at once, checked here before each allocation (under
    a lock: the reader thread stages copies beside the count). It is not the pool's own limit,
    which counts the free blocks the pool keeps, and a free block split to serve a smaller array
    cannot be given back while that array lives: soc-Epinions1 in 331 parts under 1 MiB was
    refused an allocation at 832 KiB in use. Once the pool has grown past the limit, it gives back
    what free blocks it can (each count's copy stream caches its own); not before, which would
    empty the cache, and wait for the device, on every allocation near the limit."""

    def __init__(self, pool, limit: int):
        import cupy

        self.pool, self.limit, self.peak = pool, limit, 0
        self.before = None
        self.lock = threading.RLock()  # the pool may collect garbage while it allocates: a finalizer may too
        self.refused = cupy.cuda.memory.OutOfMemoryError

    def __call__(self, size: int):
        rounded = -(-size // _POOL_UNIT) * _POOL_UNIT
        with self.lock:
            used = self.pool.used_bytes()
            if used + rounded > self.limit:
                raise self.refused(size, used, self.limit)
            try:
                memory = self.pool.malloc(size)
            except self.refused:  # the device itself is short: other processes, or blocks cached on it
                self.pool.free_all_blocks()
                memory = self.pool.malloc(size)
            if self.pool.total_bytes() > self.limit:  # grown past it: give back what the cache can
                self.pool.free_all_blocks()
            self.peak = max(self.peak, self.pool.used_bytes())
        return memory

    @classmethod
    def install(cls, limit: int) -> _PeakAllocator:
        import cupy

        pool = cupy.get_default_memory_pool()
        allocator = cls(pool, limit)
        allocator.before = cupy.cuda.get_allocator()
        pool.free_all_blocks()
        cupy.cuda.set_allocator(allocator)
        return allocator

    def uninstall(self) -> None:
        import cupy

        cupy.cuda.set_allocator(self.before)
        self.pool.free_all_blocks()


def _pinned(size: int):
    """Pinned host memory of size bytes, or None where the system refuses it (locked-memory limit)."""
    import cupy

    try:
        return cupy.cuda.alloc_pinned_memory(size)
    except cupy.cuda.runtime.CUDARuntimeError:
        return None


def _interruptible(work: Callable):
    """work() on a daemon thread, waited for in steps short enough for signal handlers to run."""
    outcome = {}

    def run():
        try:
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
