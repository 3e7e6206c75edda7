"""CPU: merge the sorted rows N+(u) and N+(v) of every oriented edge (count/cpu.py)."""

from tcdist.count.registry import Kernel


def count(rowptr, col, n_local, start=0):
    from tcdist.count.cpu import (
        count_merge,  # Numba is imported when a kernel runs, not when it is listed
    )

    return count_merge(rowptr, col, n_local, start)


KERNEL = Kernel("merge", "cpu", "Numba, sorted rows merged per edge", count)
