"""What this process may still take of its host: the cores it may run on, and how much memory,
so a step that cannot fit is refused with an estimate and a way out, instead of ending in a
silent OOM kill.

The limit is the smallest of: the memory the kernel reports available, the cgroup's limit
less its usage (what Slurm and containers enforce), RLIMIT_AS less the address space
already mapped, and, inside `bounded(limit)` (one process given --host-memory-limit), the limit
less what the process's resident memory has grown by since it was set, its code aside: what it
grows by while a library loads or a function compiles (`code_loading`) is the process's footprint,
not the count's, and so is the freed heap glibc keeps resident (given back before the room is
measured again, where less than half the limit seems left).
"""

import ctypes
import os
import resource
import threading
from contextlib import contextmanager

from tcdist.budget.sizes import size_text
from tcdist.errors import TcdistError, named

_bound = None  # inside bounded(): [the limit, the resident bytes when it was set, and the code's since]
_loading = threading.local()  # .depth: code_loading blocks open on this thread (the outermost measures)


def bound_cores() -> int:
    """The cores this process may run on (several ranks on a node each get their share)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _read_int(path):
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo(key):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cgroup_room():
    """Room left under this process's cgroup memory limit (v2 or v1), or None without one."""
    try:
        with open("/proc/self/cgroup") as f:
            entries = [line.strip().split(":", 2) for line in f if line.strip()]
    except OSError:
        return None
    for _, controllers, path in entries:
        if controllers == "":  # v2
            base = f"/sys/fs/cgroup{path}"
            limit, used = _read_int(f"{base}/memory.max"), _read_int(f"{base}/memory.current")
        elif "memory" in controllers.split(","):  # v1
            base = f"/sys/fs/cgroup/memory{path}"
            limit, used = _read_int(f"{base}/memory.limit_in_bytes"), _read_int(f"{base}/memory.usage_in_bytes")
        else:
            continue
        if limit is not None and used is not None and limit < 1 << 60:
            return limit - used
    return None


def _address_space_room():
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    return soft - mapped


def _resident() -> int:
    """This process's resident memory, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def bounded(limit: int | None):
    """Inside the block, this process takes at most limit bytes more than it holds now, its code aside
    (None: no bound)."""
    global _bound
    before, _bound = _bound, _bound if limit is None else [limit, _resident(), 0]
    try:
        yield
    finally:
        _bound = before


def is_bounded() -> bool:
    """Whether this process is inside bounded(limit) with a limit."""
    return _bound is not None


@contextmanager
def code_loading():
    """Inside the block, what resident memory grows by is code (a library loaded, a function
    compiled or loaded from a cache): outside the bound. (Another thread's data made meanwhile is
    taken for code too.)"""
    bound, depth = _bound, getattr(_loading, "depth", 0)
    if bound is None or depth:
        yield
        return
    began, _loading.depth = _resident(), 1
    try:
        yield
    finally:
        _loading.depth = 0
        bound[2] += max(0, _resident() - began)


def give_back_freed() -> None:
    """Inside bounded(limit), return the memory this process has freed to the system (glibc keeps
    freed heap resident, which the bound, read from resident memory, would count as taken)."""
    if _bound is None:
        return
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # (not glibc)
        pass


def _bound_room():
    if _bound is None:
        return None
    room = _bound[0] - max(0, _resident() - _bound[1] - _bound[2])
    if room < _bound[0] // 2:  # freed heap that glibc keeps resident is not taken: measured again without it
        give_back_freed()
        room = _bound[0] - max(0, _resident() - _bound[1] - _bound[2])
    return room


def available() -> tuple[int, str]:
    """(bytes this process may still allocate, what limits it)."""
    limits = [(v, what) for v, what in ((_meminfo("MemAvailable"), "available memory"),
                                        (_cgroup_room(), "the cgroup's memory limit"),
                                        (_address_space_room(), "the address-space limit (ulimit -v)"),
                                        (_bound_room(), named("{host_memory_limit}")))
              if v is not None]
    return min(limits) if limits else (1 << 62, "no known limit")


def require(nbytes: int, what: str, way_out: str) -> None:
    """Refuse a step whose estimate exceeds what this process may still take."""
    room, limit = available()
    if nbytes > room:
        need, left = size_text(nbytes), size_text(room)
        if need == left:  # (apart by less than they are rounded to)
            need, left = f"{nbytes:,} bytes", f"{room:,} bytes"
        if _bound is not None and limit == named("{host_memory_limit}") and limit not in named(way_out):
            way_out = f"{way_out}, or give a larger {limit}"  # (the user's own limit is what binds)
        raise TcdistError(f"{what} needs about {need} of memory but {limit} leaves {left}; {way_out}")
