"""Parts to counts on one device: fetch a part, put it on the device, count it, record the result."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from tcdist import progress
from tcdist.clustering import exact_sum
from tcdist.device import Device
from tcdist.partition.part import Part
from tcdist.results import PartResult


def count_parts(device: Device, indices: Iterable[int], fetch: Callable[[int], Part], *, num_parts: int,
                rank: int = 0, record: Callable[[PartResult], None] | None = None,
                expected: int | None = None, check: Callable[[], None] | None = None,
                per_vertex=None) -> list[PartResult]:
    """Count the parts named by indices, one at a time (only one is held at once).

    fetch(i) gives part i (read from a store or taken from memory: timed as store_read);
    record, if given, receives each result as soon as it exists (the journal);
    expected is how many parts this rank will count, for the progress bar (None when dynamic);
    check, if given, is called before each part and raises to stop (another rank failed);
    per_vertex, if given (uint64, one entry per vertex of the graph), receives the triangles of
    every vertex, each part crediting its vertices by global id.
    """
    results = []
    label = "count parts" if num_parts > 1 else "count"
    for index in progress.iterate(indices, expected, label):
        if check is not None:
            check()
        t0 = time.perf_counter()
        part = fetch(index)
        read = time.perf_counter() - t0
        part, transfer = device.put(part, num_parts)
        t1 = time.perf_counter()
        found = device.count(part) if per_vertex is None else _credit(device, part, per_vertex)
        result = PartResult(index, rank, found, read, transfer, time.perf_counter() - t1, dict(part.stats))
        del part
        if record is not None:
            record(result)
        results.append(result)
    return results


def _credit(device: Device, part: Part, per_vertex) -> int:
    """Add the part's per-vertex triangles into per_vertex; returns the part's count."""
    local = device.count_per_vertex(part)
    if part.global_id is None:
        per_vertex += local
    else:
        per_vertex[part.global_id] += local  # a part's global ids are distinct
    return exact_sum(local) // 3
