"""Array code is written once against the NumPy API; this picks NumPy or CuPy for it."""

import sys

import numpy as np


def array_module(*arrays):
    """CuPy if any argument is a CuPy array, else NumPy (never imports CuPy itself)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(a, cupy.ndarray) for a in arrays):
        return cupy
    return np


PAGE = 4096
OWN_PAGES = 32 << 20  # glibc maps an allocation this large on its own (its top mmap threshold): pages no other shares


def register_pages(arrays) -> list[int] | None:
    """Pin host arrays where they lie (CUDA registers the pages they span, pages two arrays share
    once), so that copies to and from them run at the link's speed (pageable memory: a seventh of
    it, results/pinned-copy-h200.json); the registered spans' starts, or None where the system
    refuses (the locked-memory limit: copies stay pageable). Only arrays of OWN_PAGES or more are
    registered: a smaller one's pages may hold other objects, and CUDA rejects any copy that starts
    in a registered span and runs past it (a smaller array's copy is short anyway)."""
    import cupy

    spans = sorted((a.ctypes.data // PAGE * PAGE, -(-(a.ctypes.data + a.nbytes) // PAGE) * PAGE)
                   for a in arrays if a.nbytes >= OWN_PAGES)
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
        try:
            cupy.cuda.runtime.hostUnregister(begin)
        except cupy.cuda.runtime.CUDARuntimeError as error:
            failed = failed or error
    if failed is not None:
        raise failed


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


def to_gpu(arrays) -> list:
    """Host arrays copied to the current GPU at the link's speed: their pages registered for the
    copies (pageable ones run at a seventh of it), then let go."""
    import cupy

    pages = register_pages(arrays)
    try:
        return [cupy.asarray(a) for a in arrays]
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
