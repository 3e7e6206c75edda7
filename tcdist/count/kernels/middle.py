"""CPU: each triangle found from its middle vertex v. The local rows' edges are listed by their
head first (the prepare step); then N+(v) is marked in a per-thread byte array and the rest of
each in-neighbour's row looked up: a triangle's wedge u -> v, u -> w is looked at once, where
`marker` reads all of N+(v) for every u -> v (three times the lookups on RMAT). The listing takes
8 bytes per local edge (16 from 2^32 edges on)."""

from tcdist.count.registry import Kernel


def prepare(rowptr, col, n_local, start=0):
    from tcdist.count.cpu import in_edges  # Numba is imported when a kernel runs, not when it is listed

    return in_edges(rowptr, col, n_local, start)


def count(rowptr, col, n_local, start=0, prepared=None):
    from tcdist.count.cpu import count_middle

    return count_middle(rowptr, col, n_local, start, prepared)


def extra_bytes(v_res, e_res, n_local, col_bytes):
    """The listing: in_ptr, and two spans per edge."""
    return 8 * (v_res + 1) + 2 * (4 if e_res < 1 << 32 else 8) * e_res


KERNEL = Kernel("middle", "cpu", "Numba, each triangle from its middle vertex: in-edges listed, N+(v) marked",
                count, prepare=prepare, extra_bytes=extra_bytes, part_order=True)
