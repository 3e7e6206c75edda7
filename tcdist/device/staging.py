"""Copies of parts to the GPU beside the count: a non-blocking stream of its own, fed from
pinned host memory (pageable memory would make every copy synchronous and half as fast).

A slice of a graph that another rank shares on its GPU (ranks/share.py) is copied device to
device. A part is pinned where it lies (its pages registered with CUDA) while it, or each of its
slices, is copied; a small one, or one whose pages cannot be registered, goes through two pinned
buffers used in turn, and where pinned memory is refused, copies go from pageable memory.
Registering costs a fraction of allocating a pinned buffer of the part's size
(results/pinned-copy-h200.json).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from tcdist.errors import TcdistError
from tcdist.partition import slices
from tcdist.partition.part import Part
from tcdist.xp import REGISTER_FROM, copy_into, copy_to_device, register_pages, unregister_pages

_FILL_PIECE = 32 << 20  # bytes each copier thread copies into pinned memory at a time
_COPIERS = min(8, os.cpu_count() or 1)


def on_gpu(part: Part | slices.Slice) -> bool:
    """Whether the part is on the GPU (a slice is cut from a part in host memory: never)."""
    import cupy

    return isinstance(part, Part) and isinstance(part.rowptr, cupy.ndarray) and isinstance(part.col, cupy.ndarray)


@dataclass
class Staged:
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


class Stager:
    """The copy stream of one GPU, its two pinned buffers and the parts whose pages it registered."""

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
        """pinned[:] = run, in pieces on the copiers' threads (one thread's copy, at a few GB/s,
        would be the slowest step of a sliced count; NumPy lets go of the GIL while it copies)."""
        step = max(_FILL_PIECE // max(pinned.itemsize, 1), 1)
        pieces = [slice(i, i + step) for i in range(0, pinned.size, step)]
        if len(pieces) <= 1:
            np.copyto(pinned, run)
            return
        list(self.copiers.map(lambda s: np.copyto(pinned[s], run[s]), pieces))

    def start(self, part: Part | slices.Slice) -> Staged:
        """The part with its copy under way (on this rank's GPU also from a reader thread; one
        copy is started at a time, so two never take the same slot)."""
        import cupy

        with self.lock, cupy.cuda.Device(self.gpu):
            if self.closed:  # a reader thread outlived the run: register and copy nothing more
                raise TcdistError("internal error: a copy was started after the device was closed")
            return self._start(part)

    def _start(self, part: Part | slices.Slice) -> Staged:
        import cupy

        slot, self.turn = self.turn, self.turn ^ 1
        with self.stream:
            runs, make = part.copies(cupy)  # a slice is laid out on the device from the runs copied
        if self.last_copy[slot] is not None:
            self.last_copy[slot].synchronize()  # the slot's buffer is free again
        whole = part.part if isinstance(part, slices.Slice) else part
        on_device = isinstance(whole.col, cupy.ndarray)  # a slice of a graph another rank shares on a GPU
        registers = max(whole.rowptr.nbytes, whole.col.nbytes) >= REGISTER_FROM and \
            all(run.dtype == into.dtype for run, into in runs)  # a slice's wider ids need a cast: buffers
        if on_device or registers and self._pin(whole):
            hosts = [run for run, _ in runs]
        else:
            hosts = self._filled(slot, runs, pageable=registers)
        with self.stream:
            started = cupy.cuda.Event()
            started.record()
            for host, (_, into) in zip(hosts, runs):
                if not on_device:
                    copy_to_device(into, host, self.stream)
                elif host.dtype == into.dtype:
                    copy_into(into, host)  # device to device, from a peer GPU too (NVLink)
                else:
                    into[...] = host  # ids widened: the cast reads the peer's memory
            moved = make()
            done = cupy.cuda.Event()
            done.record()
        self.last_copy[slot] = done
        last = not isinstance(part, slices.Slice) or not part.share and part.slice.k == part.slice.of - 1
        return Staged(moved, started, done, (lambda: self.unpin(whole)) if last else None)

    def _filled(self, slot: int, runs, pageable: bool = False) -> list[np.ndarray]:
        """The runs copied into the slot's pinned buffer (grown if it is too small); with
        pageable (a large part whose pages could not be registered, and its slices), or where
        pinned memory is refused, the runs as they are
        (cast where a slice's ids widen): the copy is slower, and still runs beside the count."""
        offsets = np.cumsum([0] + [-(-into.nbytes // 256) * 256 for _, into in runs])
        if self.buffers[slot] is None or self.buffers[slot][1] < offsets[-1]:
            self.buffers[slot] = None
            grown = None if pageable else _pinned(int(offsets[-1]))
            if grown is None:
                return [run if run.dtype == into.dtype else run.astype(into.dtype) for run, into in runs]
            self.buffers[slot] = (grown, int(offsets[-1]))
        buffer = self.buffers[slot][0]
        pinned = [np.ndarray(into.shape, into.dtype, buffer=buffer, offset=int(o))
                  for (_, into), o in zip(runs, offsets)]
        for host, (run, _) in zip(pinned, runs):
            self._fill(host, run)
        return pinned

    def _pin(self, part: Part) -> bool:
        """Whether the part's arrays are pinned where they lie (registered now if they are not):
        the pages they span, those two arrays share taken once."""
        if id(part) not in self.pinned:
            self.pinned[id(part)] = (part, register_pages((part.rowptr, part.col)))
        return self.pinned[id(part)][1] is not None

    def unpin(self, part: Part) -> None:
        """Let go of the part's registered pages: called when its last slice's copy is done, so
        that every copy from them is (the stream runs them in order). Not under the lock, which the
        reader thread holds while it stages the next part (a copy, a fill, a registration): the
        part's entry is popped at once (the GIL), and only the main thread closes."""
        import cupy

        with cupy.cuda.Device(self.gpu):
            unregister_pages(self.pinned.pop(id(part), (None, None))[1])

    def __enter__(self) -> "Stager":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def release(self) -> None:
        """Let go of every part's registered pages, once the copies under way are done: before
        the memory that holds them is freed (a rank's shares lie in a window MPI unmaps)."""
        import cupy

        with self.lock, cupy.cuda.Device(self.gpu):
            pinned, self.pinned = self.pinned, {}
            try:
                self.stream.synchronize()
            finally:  # every part's pages, even past a sticky CUDA error (the first error raised after)
                failed = None
                for _, pages in pinned.values():
                    try:
                        unregister_pages(pages)
                    except cupy.cuda.runtime.CUDARuntimeError as error:
                        failed = failed or error
                if failed is not None:
                    raise failed

    def close(self) -> None:
        """Release, and register or copy nothing more."""
        with self.lock:
            self.closed = True
        self.release()
        self.copiers.shutdown(wait=False)


def _pinned(size: int):
    """Pinned host memory of size bytes, or None where the system refuses it (locked-memory limit)."""
    import cupy

    try:
        return cupy.cuda.alloc_pinned_memory(size)
    except cupy.cuda.runtime.CUDARuntimeError:
        return None


