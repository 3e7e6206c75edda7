"""The GPU device: one CUDA device chosen by node-local rank, a copy stream beside the count
(device/staging.py) and, with a memory limit, an allocator that holds the run's arrays under it
(device/allocator.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager

import numpy as np

from tcdist.budget import host, model
from tcdist.budget.sizes import size_text
from tcdist.budget.slices import kept_for_slices
from tcdist.count.auto import Auto
from tcdist.device.allocator import limited
from tcdist.device.core import Device
from tcdist.device.staging import Staged, Stager, on_gpu
from tcdist.errors import OptionError
from tcdist.partition.part import Part

LEAST_GPU_LIMIT = 256 << 10  # a GPU limit below this may not hold the warm-up (under 64 KiB it did not)


def problem() -> str | None:
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


def free_bytes() -> int:
    """Bytes the current device can still give: free device memory plus CuPy's cached blocks."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    return int(free + pool.total_bytes() - pool.used_bytes())


def check_limit(memory_limit: int | None) -> None:
    if memory_limit is not None and memory_limit < LEAST_GPU_LIMIT:
        raise OptionError(f"{{gpu_memory_limit}} {size_text(memory_limit)} is below the {size_text(LEAST_GPU_LIMIT)} "
                          "a count on the GPU needs at the least (its warm-up counts K_40 with every kernel)")


class GpuDevice(Device):
    kind = "gpu"

    def __init__(self, *, local_rank: int = 0, **given):
        from tcdist.device.binding import bus_id, gpu_index

        super().__init__(**given)
        with host.code_loading():  # CuPy and the CUDA context: the process's footprint, not the count's
            import cupy

            self.gpu = gpu_index(local_rank, cupy.cuda.runtime.getDeviceCount())
            self.using().use()
        self.bus_id = bus_id(self.gpu)
        self.name = cupy.cuda.runtime.getDeviceProperties(self.gpu)["name"].decode()
        self._held = ExitStack()
        self._stager = self._held.enter_context(Stager(self.gpu))
        self._peak = self._held.enter_context(limited(self.memory_limit)) if self.memory_limit is not None else None

    def close(self) -> None:
        """Give back the copy stream's pages and the allocator: a count called from Python must
        not leave them in the caller's process."""
        super().close()
        self._held.close()

    def release_host_memory(self) -> None:
        self._stager.release()

    @property
    def gpu_peak_bytes(self) -> int | None:
        return None if self._peak is None else self._peak.peak

    def describe(self) -> str:
        return f"gpu {self.gpu} ({self.name}, {self.bus_id})"

    def using(self):
        """This rank's GPU as a context, for steps on threads that start on device 0 (a fresh one
        each time: a CuPy Device keeps the device to go back to, and threads must not share it)."""
        import cupy

        return cupy.cuda.Device(self.gpu)

    # What fits.

    def room(self) -> int:
        """Bytes the GPU can still give this run: free memory and CuPy's cached blocks, and no
        more than the memory limit leaves."""
        import cupy

        free = free_bytes()
        if self.memory_limit is not None:
            free = min(free, self.memory_limit - cupy.get_default_memory_pool().used_bytes())
        return free

    def budget(self) -> int:
        """The memory limit, else nine tenths of what is free."""
        if self.memory_limit is not None:
            return self.memory_limit
        with self.using():  # asked from a reader thread too, which starts on device 0
            return int(0.9 * free_bytes())

    def sliced(self, part: Part) -> bool:
        return not on_gpu(part)

    def kept_for_slices(self, part: Part, budget: int) -> int:
        return kept_for_slices(self._auto, part, budget)

    def _fits(self, spec: str, part: Part) -> bool:
        """Whether a kernel's own memory fits on the device now, beside the part already put there
        and the working memory the model keeps for it."""
        kernel, options = self._auto.choices[spec]
        working = self.need_of(part) - part.rowptr.nbytes - part.col.nbytes
        return working + kernel.extra_bytes(part.rowptr.size - 1, part.col.size, part.n_local, part.col.itemsize,
                                            **options) <= self.room()

    # The warm-up: on a thread of its own, so that the first part is read meanwhile.

    def start_warm_up(self, per_vertex: bool = False, builds: bool = True, per_edge: bool = False) -> None:
        """On a thread: where this process builds the graph, the text parser and the build's passes
        compiled (or loaded) while it is read, else the passes that check a graph read whole; a
        kernel given by name checked; auto's choice is checked per part."""
        from tcdist.cuda import launch
        from tcdist.cuda.build import PARSE, PASSES
        from tcdist.device.warmup import warm_up_build

        def warm():
            with self.using():
                if builds:
                    launch.compile_every_instance(PARSE)
                    warm_up_build()
                else:
                    launch.kernel(PASSES, "csr_problems_int")
                if self._auto is None or per_vertex or per_edge:
                    self.self_test([] if self._auto else [self.spec], [np.int32], per_vertex, per_edge)

        self._test_when_needed = True
        self.warming.start(warm)

    def placed(self, part: Part) -> Part:
        import cupy

        return Part(part.index, cupy.asarray(part.rowptr), cupy.asarray(part.col), part.global_id, part.n_local,
                    part.stats)

    # A part's way through the GPU.

    def stage(self, part: Part, beside: int) -> Part | Staged:
        """Start the part's copy on the copy stream, if its CSR fits with `beside` bytes still to
        come for the part before it; else the part as it was, for put() to copy when it is due."""
        import cupy

        self.warming.ready()
        with self.using():  # a reader thread starts on device 0
            if on_gpu(part) or self.room() < beside + model.csr_bytes(*part.sizes()):
                return part
            try:
                return self._stager.start(part)
            except cupy.cuda.memory.OutOfMemoryError:  # the pool could not give it: copy it when it is due
                return part

    def moved(self, part) -> tuple[Part, float, float]:
        if isinstance(part, Staged):
            return part.finish()
        if on_gpu(part):
            return part, 0.0, 0.0
        need, free = self.need_of(part), self.room()
        if need > free:
            raise OptionError(f"part {part.index} needs {size_text(need)} on the GPU but {size_text(free)} are "
                              f"free{' under the limit' if self.memory_limit else ''}; count it in more parts "
                              "({parts} auto picks them)")
        t0 = time.perf_counter()
        with self.within_memory(part):
            moved, _, _ = self._stager.start(part).finish()
        waited = time.perf_counter() - t0
        return moved, waited, waited

    @contextmanager
    def within_memory(self, part: Part):
        """An allocation past the GPU's memory (or its limit) becomes one line naming the part."""
        import cupy

        try:
            yield
        except cupy.cuda.memory.OutOfMemoryError:
            limit = f"the limit of {size_text(self.memory_limit)}" if self.memory_limit else "the GPU's memory"
            raise OptionError(f"part {part.index} went past {limit} (peak {size_text(self.gpu_peak_bytes or 0)}); "
                              "count it in more parts ({parts} auto picks them)") from None

    def run(self, part: Part, work: Callable):
        with self.within_memory(part):
            return work()

    def finished(self, value):
        """value, once this stream has finished what made it: not the device, whose copy stream
        may be staging the next part meanwhile."""
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        return value

    def count_per_vertex(self, part: Part):
        """The triangles each vertex of the part is in, from its local rows (uint64 per row, in
        host memory)."""
        from tcdist.count.per_vertex import per_vertex

        with self.within_memory(part):
            return per_vertex(part.rowptr, part.col, part.n_local, Auto.per_vertex_by_thread(part)).get()

    def count_per_edge(self, part: Part):
        """The triangles each edge of the part is in, from its local rows (uint64 per CSR position,
        in host memory)."""
        from tcdist.count.per_edge import per_edge

        self.refuse_slice(part)
        with self.within_memory(part):
            return per_edge(part.rowptr, part.col, part.n_local).get()

    def per_vertex_all(self, part: Part) -> list:
        """The part's per-vertex credits by every per-vertex kernel (warm-up)."""
        from tcdist.count.per_vertex import per_vertex

        return [per_vertex(part.rowptr, part.col, part.n_local, by_thread).get() for by_thread in (False, True)]

    def per_vertex_kernel(self, part: Part) -> str:
        return "per-vertex (thread per vertex)" if Auto.per_vertex_by_thread(part) else "per-vertex (edge warps)"

    def per_edge_kernel(self, part: Part) -> str:
        return "per-edge (edge warps)"

