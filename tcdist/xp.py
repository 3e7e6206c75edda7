"""Array code is written once against the NumPy API; this picks NumPy or CuPy for it."""

import sys
import threading

import numpy as np


def array_module(*arrays):
    """CuPy if any argument is a CuPy array, else NumPy (never imports CuPy itself)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(a, cupy.ndarray) for a in arrays):
        return cupy
    return np


PAGE = 4096
REGISTER_FROM = 32 << 20  # smaller arrays are copied as they are: registering them costs about what it saves

_registered: dict[int, int] = {}  # the start -> the end of each span of pages this process registered
_registered_lock = threading.Lock()  # (a reader thread registers the next part while the main one copies)


def register_pages(arrays) -> list[int] | None:
    """Pin host arrays of REGISTER_FROM bytes or more where they lie, so that copies to and from
    them run at the link's speed (pageable memory: a seventh of it, results/pinned-copy-h200.json):
    the pages each array holds whole. The pages at its ends may hold its neighbours on the heap
    (glibc carves even an array of hundreds of MiB from free heap), and CUDA refuses a copy that
    runs across a registered span's edge, so those stay pageable, and copy_to_device and
    copy_to_host cut an array's copies at the edges. The spans' starts, or None where the system
    refuses (the locked-memory limit: copies stay pageable)."""
    import cupy

    spans = sorted((-(-a.ctypes.data // PAGE) * PAGE, (a.ctypes.data + a.nbytes) // PAGE * PAGE)
                   for a in arrays if a.nbytes >= REGISTER_FROM)
    merged = []
    for begin, end in spans:
        if end <= begin:
            continue
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    registered = []
    try:
        for begin, end in merged:
            cupy.cuda.runtime.hostRegister(begin, end - begin, 0)
            with _registered_lock:
                _registered[begin] = end
            registered.append(begin)
    except cupy.cuda.runtime.CUDARuntimeError:
        unregister_pages(registered)
        return None
    return registered


def unregister_pages(starts) -> None:
    """Let go of pages register_pages registered (starts: what it returned, or None)."""
    if not starts:
        return
    import cupy

    failed = None
    for begin in starts:  # each one, even past one that fails (a sticky CUDA error): that one is raised after
        with _registered_lock:
            _registered.pop(begin, None)
        try:
            cupy.cuda.runtime.hostUnregister(begin)
        except cupy.cuda.runtime.CUDARuntimeError as error:
            failed = failed or error
    if failed is not None:
        raise failed


def _pieces(host: np.ndarray) -> list[slice]:
    """The bytes of a contiguous host array cut where registered spans begin and end: each piece
    wholly registered or wholly pageable."""
    begin, end = host.ctypes.data, host.ctypes.data + host.nbytes
    if begin == end:
        return []
    with _registered_lock:
        cuts = sorted({edge for span in _registered.items() for edge in span if begin < edge < end})
    edges = [0, *(cut - begin for cut in cuts), host.nbytes]
    return [slice(lo, hi) for lo, hi in zip(edges[:-1], edges[1:])]


def copy_to_device(out, host: np.ndarray, stream=None) -> None:
    """out[...] = host (a CuPy array, both contiguous and of one size), cut at registered spans'
    edges (CUDA refuses one copy across an edge)."""
    if not out.flags.c_contiguous:  # (a reshaped copy would take the values, and out would not)
        raise ValueError("copy_to_device: out must be C-contiguous")
    host = np.ascontiguousarray(host)  # (strided: a copy of its own, on no registered page)
    host_bytes, out_bytes = host.reshape(-1).view(np.uint8), out.reshape(-1).view(np.uint8)
    for piece in _pieces(host):
        out_bytes[piece].set(host_bytes[piece], stream=stream)


def copy_to_host(out: np.ndarray, values, stream=None, blocking: bool = True) -> None:
    """out[...] = values (a CuPy array, both contiguous and of one size), cut at registered spans'
    edges (CUDA refuses one copy across an edge)."""
    if not out.flags.c_contiguous:  # (a reshaped copy would take the values, and out would not)
        raise ValueError("copy_to_host: out must be C-contiguous")
    out_bytes, values_bytes = out.reshape(-1).view(np.uint8), values.reshape(-1).view(np.uint8)
    for piece in _pieces(out):
        values_bytes[piece].get(stream=stream, out=out_bytes[piece], blocking=blocking)


SORT_SPARE = 64 << 10  # a GPU sort's workspace beyond its copies and a quarter of the keys: CUB's histograms


def reserve_sort(keys, copies: int = 1) -> None:
    """Before a GPU sort of keys (copies: arrays of the keys' size it makes, 4 for an argsort),
    take its workspace and give it back to the pool, which keeps the block for the sort:
    CuPy 13's sort does not pass on an allocation that fails in its workspace and leaves the keys
    unsorted (cupy#9894), so a shortfall is raised here, as out of memory, before the sort. The
    copies and CUB's own: 1.15 times the keys for a sort, measured."""
    xp = array_module(keys)
    if xp is not np:
        spare = xp.empty(copies * keys.nbytes + (keys.nbytes >> 2) + SORT_SPARE, xp.uint8)
        del spare


def multiprocessors() -> int:
    """The current GPU's multiprocessors (what a kernel's grid of resident blocks is sized by)."""
    import cupy

    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def to_gpu(arrays) -> list:
    """Host arrays copied to the current GPU at the link's speed: their pages registered for the
    copies (pageable ones run at a seventh of it), then let go."""
    import cupy

    pages = register_pages(arrays)
    try:
        copies = [cupy.empty(a.shape, a.dtype) for a in arrays]
        for copy, a in zip(copies, arrays):
            copy_to_device(copy, a)
        return copies
    finally:
        unregister_pages(pages)


def to_numpy(a):
    """A host copy of a NumPy or CuPy array."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def copy_into(out, a) -> None:
    """out[:] = a, of contiguous arrays of one dtype and size: on the GPU a device copy (CuPy's
    assignment would compile a kernel of its own for it)."""
    if isinstance(out, np.ndarray):
        out[:] = a
    elif a.size:
        out.data.copy_from_device_async(a.data, a.nbytes)


def segment_ids(counts):
    """[0]*counts[0] + [1]*counts[1] + ...: np.repeat(arange, counts), which CuPy cannot do."""
    xp = array_module(counts)
    if xp is np:
        return np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    return xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right")


SELECT_BATCH = 1 << 30  # CuPy's boolean indexing overflows once 2^31 elements are selected


def select(mask, *arrays):
    """``a[mask]`` for each array, taken in batches of SELECT_BATCH elements, so that CuPy can
    select more than 2^31 of them (its boolean indexing counts the selection in a 32-bit int)."""
    if mask.size <= SELECT_BATCH:
        return tuple(a[mask] for a in arrays)
    xp = array_module(mask)
    pieces = [[] for _ in arrays]
    for lo in range(0, mask.size, SELECT_BATCH):
        part = mask[lo : lo + SELECT_BATCH]
        for piece, a in zip(pieces, arrays):
            piece.append(a[lo : lo + SELECT_BATCH][part])
    return tuple(xp.concatenate(piece) for piece in pieces)
