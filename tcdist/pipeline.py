"""Parts to counts on one device: fetch a part, put it on the device, count it, record the result.

The next part is fetched (read from the store and checked) on a thread while the current one
is counted, and on a GPU its copy is started there too (Device.stage: a stream of its own,
pinned memory) when both parts fit the device; so reading a store and copying parts cost only
what the counting does not hide. Two parts are in host memory at most, and on the device."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from tcdist import progress
from tcdist.clustering import exact_sum
from tcdist.device import Device
from tcdist.partition.part import Part, recorded
from tcdist.results import PartResult
from tcdist.xp import to_numpy


def count_parts(device: Device, indices: Iterable[int], fetch: Callable[[int], Part], *, num_parts: int,
                rank: int = 0, record: Callable[[PartResult], None] | None = None,
                expected: int | None = None, check: Callable[[], None] | None = None,
                per_vertex=None, read_ahead: bool = True) -> list[PartResult]:
    """Count the parts named by indices, one at a time (the next one read meanwhile).

    fetch(i) gives part i (read from a store or taken from memory): the wait for it is timed as
    store_read, the reading that ran during a count as read_overlapped; the copy to a GPU (the
    host's part of a staged copy and the device's) likewise as transfer and transfer_overlapped;
    record, if given, receives each result as soon as it exists (the journal);
    expected is how many parts this rank will count, for the progress bar (None when dynamic);
    check, if given, is called before each part and raises to stop (another rank failed);
    per_vertex, if given (uint64, one entry per vertex of the graph), receives the triangles of
    every vertex, each part crediting its vertices by global id; read_ahead=False reads each part
    only when it is due (a dynamic queue's next part must not be claimed early).
    """
    results = []
    label = "count parts" if num_parts > 1 else "count"
    stages = expected is None or expected > 1  # a lone part has no count to hide its copy behind
    parts = _read_ahead(indices, fetch, check, device, stages) if read_ahead else _read_when_due(indices, fetch, check)
    for index, part, (read_wait, reading), (stage_wait, staging) in progress.iterate(parts, expected, label):
        part, put_wait, copied = device.put(part, num_parts)
        transfer = stage_wait + put_wait
        t1 = time.perf_counter()
        prepared = device.prepare(part) if per_vertex is None else None
        t2 = time.perf_counter()
        found = device.count(part, prepared) if per_vertex is None else _credit(device, part, per_vertex)
        kernel = device.per_vertex_kernel(part) if per_vertex is not None else prepared[0]
        del prepared  # what the kernel's prepare step holds on the device goes before the next part comes
        result = PartResult(index, rank, found, read_wait, transfer, time.perf_counter() - t2, recorded(part.stats),
                            read_overlapped=max(reading - read_wait, 0.0),
                            transfer_overlapped=max(staging + copied - transfer, 0.0), prepare=t2 - t1,
                            kernel=kernel)
        del part
        if record is not None:
            record(result)
        results.append(result)
    return results


def _read_ahead(indices: Iterable[int], fetch: Callable[[int], Part], check, device: Device, stages: bool):
    """(index, part, (seconds waited for its reading, seconds its reading took), (the same for
    staging it)) for each index; the next index is taken, and its part read and staged on a
    thread, as soon as the current part is handed out. check() runs before each part is taken."""
    before = 0  # device bytes the part handed out last may still take while the next one is staged

    def fetch_and_stage(index):
        nonlocal before
        part, reading = _timed_fetch(fetch, index)
        t0 = time.perf_counter()
        staged = device.stage(part, before) if stages else part
        before = device.part_bytes(part) - (part.rowptr.nbytes + part.col.nbytes if staged is not part else 0)
        return staged, reading, time.perf_counter() - t0 if staged is not part else 0.0

    def take():
        if check is not None:
            check()
        index = next(indices, None)
        return None if index is None else (index, pool.submit(fetch_and_stage, index))

    indices = iter(indices)
    with ThreadPoolExecutor(1, thread_name_prefix="tcdist-read") as pool:
        ahead = take()
        while ahead is not None:
            index, future = ahead
            t0 = time.perf_counter()
            part, reading, staging = future.result()
            waited = time.perf_counter() - t0
            ahead = take()
            stage_wait = min(waited, staging)  # the thread stages after it reads: a wait ends in the staging
            yield index, part, (waited - stage_wait, reading), (stage_wait, staging)
            del part


def _read_when_due(indices: Iterable[int], fetch: Callable[[int], Part], check):
    """As _read_ahead, each part taken and read only when the one before is counted."""
    indices = iter(indices)
    while True:
        if check is not None:
            check()
        index = next(indices, None)
        if index is None:
            return
        part, seconds = _timed_fetch(fetch, index)
        yield index, part, (seconds, seconds), (0.0, 0.0)
        del part


def _timed_fetch(fetch: Callable[[int], Part], index: int):
    t0 = time.perf_counter()
    part = fetch(index)
    return part, time.perf_counter() - t0


def _credit(device: Device, part: Part, per_vertex) -> int:
    """Add the part's per-vertex triangles into per_vertex; returns the part's count."""
    local = device.count_per_vertex(part)
    if part.global_id is None:
        per_vertex += local
    else:
        per_vertex[to_numpy(part.global_id)] += local  # distinct ids; parts built on a GPU keep them there
    return exact_sum(local) // 3
