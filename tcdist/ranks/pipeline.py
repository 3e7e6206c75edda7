"""Parts to counts on one device: fetch a part, put it on the device, count it, record the result.

The first part is read while the GPU warms up (Device.start_warm_up), and the next part is
fetched (read from the store and checked) on a thread while the current one is counted, and on
a GPU its copy is started there too (Device.stage: a stream of its own, registered pages) when
both parts fit the device; so reading a store and copying parts cost only what the counting
does not hide. Two parts are in host memory at most, and on the device. A part
too large for the device is counted in slices (partition/slices.py), cut one at a time from it
in host memory and streamed the same way."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

from tcdist import compiled, progress
from tcdist.budget.model import csr_bytes
from tcdist.budget.slices import pieces
from tcdist.device.core import Device
from tcdist.edge_triangles import EdgeCredits
from tcdist.errors import TcdistError
from tcdist.graph.degrees import exact_sum
from tcdist.partition import slices
from tcdist.partition.part import Part, recorded
from tcdist.results import PartResult
from tcdist.xp import to_numpy


def count_parts(device: Device, indices: Iterable[int], fetch: Callable[[int], Part], *, num_parts: int,
                rank: int = 0, record: Callable[[PartResult], None] | None = None,
                expected: int | None = None, check: Callable[[], None] | None = None,
                per_vertex=None, per_edge: EdgeCredits | None = None, read_ahead: bool = True,
                builds: bool = False, host_room: int | None = None) -> list[PartResult]:
    """Count the parts named by indices, one at a time (the next one read meanwhile); a part too
    large for the device is counted in slices (Device.pieces), one result for all of them.

    fetch(i) gives part i (read from a store, taken from memory, or with builds, built when
    due): the wait for it (and for cutting a slice) is timed as store_read (built: partition),
    the reading or building that ran during a count as read_overlapped (partition_overlapped);
    the copy to a GPU (the host's part of a staged copy and the device's) likewise as transfer
    and transfer_overlapped;
    record, if given, receives each result as soon as it exists (the journal);
    expected is how many parts this rank will count, for the progress bar (None when dynamic);
    check, if given, is called before each piece and raises to stop (another rank failed);
    per_vertex, if given (uint64, one entry per vertex of the graph), receives the triangles of
    every vertex, each part crediting its vertices by global id; per_edge, if given, receives
    each part's per-edge triangles (whole parts only); with either, the part's count is taken
    from those credits; read_ahead=False reads each part only when it is due (a dynamic queue's
    next part must not be claimed early); host_room, the host memory that slices of a part whose
    columns lie on disk may take (else what the host has free).
    """
    results, pending = [], None
    stages = expected is None or expected > 1  # a lone part has no count to hide its copy behind
    pieces = _pieces(indices, fetch, device, host_room)
    pieces = _read_ahead(pieces, check, device, stages) if read_ahead else _read_when_due(pieces, check, device)
    with closing(pieces), progress.bar(expected, "count parts" if num_parts > 1 else "count") as bar:
        # closing: on an error, the reader thread is joined before the caller closes the device
        for index, part, (read_wait, reading, compiling), (stage_wait, staging) in pieces:
            part, put_wait, copied = device.put(part)
            transfer = stage_wait + put_wait
            read_compiling = min(read_wait, compiling)  # the reading's compiling that was waited for
            t1, waited = time.perf_counter(), device.warming.waited
            credits = per_vertex is not None or per_edge is not None
            prepared = None if credits else device.prepare(part)
            t2, launched_at = time.perf_counter(), time.time()
            t1 += device.warming.waited - waited  # a kernel compiled when first chosen is compile, not prepare
            waited, spent = device.warming.waited, compiled.spent()
            if credits:
                found, kernel = _credited(device, part, per_vertex, per_edge)
            else:
                found, kernel = device.count(part, prepared), prepared[0]
            tested = device.warming.waited - waited  # kernels checked when first needed: the run's compile already
            count_compiling = max(compiled.spent() - spent - tested, 0.0)  # what else this thread compiled meanwhile
            del prepared  # what the kernel's prepare step holds on the device goes before the next part comes
            result = PartResult(index, rank, found, read_wait - read_compiling, transfer,
                                max(time.perf_counter() - t2 - tested - count_compiling, 0.0),
                                recorded(part.stats), read_overlapped=max(reading - read_wait, 0.0),
                                transfer_overlapped=max(staging + copied - transfer, 0.0), prepare=t2 - t1,
                                kernel=kernel, launched_at=launched_at, built=builds,
                                compile=read_compiling + count_compiling)
            pending = result if pending is None else pending.joined(result)
            last = part.slice is None or part.slice.k == part.slice.of - 1
            del part
            if last:
                if record is not None:
                    record(pending)
                results.append(pending)
                pending = None
                bar.update()
    return results


def _pieces(indices: Iterable[int], fetch: Callable[[int], Part | slices.Slice], device: Device,
            host_room: int | None):
    """(index, piece, seconds its fetching and cutting took, of them compiling) for each piece of each part: the
    part itself, or its slices in turn; a slice fetched (a share of a replicated graph) is one piece."""
    for index in indices:
        t0, spent = time.perf_counter(), compiled.spent()
        part = fetch(index)
        for piece in [part] if isinstance(part, slices.Slice) else pieces(device, part, host_room):
            yield index, piece, time.perf_counter() - t0, compiled.spent() - spent
            t0, spent = time.perf_counter(), compiled.spent()
        part = piece = None  # let go of before the next is fetched: built on a GPU, it is built beside no other


def _read_ahead(pieces, check, device: Device, stages: bool):
    """(index, piece, (seconds waited for its reading, seconds its reading took), (the same for
    staging it)) for each piece; the next piece is read and staged on a thread as soon as the
    current one is handed out (a slice always is staged: its part's other slices follow it).
    check() runs before each piece is taken."""
    before = 0  # device bytes the piece handed out last may still take while the next one is staged

    def fetch_and_stage():
        nonlocal before
        item = next(pieces, None)
        if item is None:
            return None
        index, part, reading, compiling = item
        device.warming.ready()  # the main thread counts this wait as compile time, not as staging
        t0 = time.perf_counter()
        staged = device.stage(part, before) if stages or part.slice is not None else part
        before = device.need_of(part) - (csr_bytes(*part.sizes()) if staged is not part else 0)
        return index, staged, reading, compiling, time.perf_counter() - t0 if staged is not part else 0.0

    def take():
        if check is not None:
            check()
        return pool.submit(fetch_and_stage)

    with ThreadPoolExecutor(1, thread_name_prefix="tcdist-read") as pool:
        ahead = take()
        device.warming.wait()  # the first piece is read meanwhile
        while True:
            t0 = time.perf_counter()
            item = ahead.result()
            waited = time.perf_counter() - t0
            if item is None:
                return
            ahead = take()
            index, part, reading, compiling, staging = item
            del item
            stage_wait = min(waited, staging)  # the thread stages after it reads: a wait ends in the staging
            yield index, part, (waited - stage_wait, reading, compiling), (stage_wait, staging)
            del part


def _read_when_due(pieces, check, device: Device):
    """As _read_ahead, each piece taken and read only when the one before is counted."""
    while True:
        if check is not None:
            check()
        item = next(pieces, None)
        device.warming.wait()  # the first piece was read meanwhile
        if item is None:
            return
        index, part, seconds, compiling = item
        del item
        yield index, part, (seconds, seconds, compiling), (0.0, 0.0)
        del part


def _credited(device: Device, part: Part, per_vertex, per_edge: EdgeCredits | None) -> tuple[int, str]:
    """(the part's count, the kernels that gave it) from its per-vertex and per-edge credits, each
    its own pass; given both, they must find the same triangles."""
    found = {}
    if per_vertex is not None:
        found[device.per_vertex_kernel(part)] = _credit(device, part, per_vertex)
    if per_edge is not None:
        credits = device.count_per_edge(part)
        per_edge.add(part, credits)
        found[device.per_edge_kernel(part)] = exact_sum(credits) // 3
    if len(set(found.values())) != 1:
        raise TcdistError(f"internal error: part {part.index}: the per-vertex and per-edge passes found "
                          f"{' and '.join(map(str, found.values()))} triangles")
    return next(iter(found.values())), ", ".join(found)


def _credit(device: Device, part: Part, per_vertex) -> int:
    """Add the part's per-vertex triangles into per_vertex; returns the part's count."""
    local = device.count_per_vertex(part)
    if part.slice is not None:
        local = slices.fold(local, part)
    if part.global_id is None:
        per_vertex += local
    else:
        per_vertex[to_numpy(part.global_id)] += local  # distinct ids; parts built on a GPU keep them there
    return exact_sum(local) // 3
