"""CPU: mark N+(u) in a per-thread byte array, then look up the w of every N+(v) (count/cpu.py)."""

from tcdist.count.registry import Kernel


def count(rowptr, col, n_local, start=0):
    from tcdist.count.cpu import (
        count_marker,  # Numba is imported when a kernel runs, not when it is listed
    )

    return count_marker(rowptr, col, n_local, start)


KERNEL = Kernel("marker", "cpu", "Numba, N+(u) marked per thread, N+(v) looked up", count)
