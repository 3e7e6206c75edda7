"""The memory budget of a count: how much a part needs on the counting device, and the
smallest number of parts whose largest part fits (``--parts auto``).

A part on the device holds its CSR (rowptr int64, col int32 or int64), the structural check's
temporaries (a row-length and a flag per row, a flag per column) and the kernel's per-row
output; ``part_need`` adds them up from a part's statistics alone, so a plan is made before any
part is built. The largest part shrinks as P grows, but not strictly, so the search doubles P
until the largest part fits and then bisects between the last P that did not and that one.
"""

from __future__ import annotations

import re

from tcdist.errors import TcdistError
from tcdist.memory import size_text

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
          "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")
_CHECK_BYTES_PER_ROW = 9   # the structural check: a comparison per row (and slack)
_CHECK_BYTES_PER_EDGE = 2  # and a flag per column (row starts), the order compared a sixteenth at a time
_STALLED = 0.8  # four times the parts and the largest shrank by less than a fifth: more will not fit
_KERNEL_BYTES_PER_LOCAL = 48  # the kernel's row lengths, masks, the scans behind its row lists, the lists


def parse_size(text: str) -> int:
    """Bytes of '4GiB', '512M', '1.5GB' (K, M, G, T and KiB... are powers of 1024; KB... of 1000)."""
    match = _SIZE.fullmatch(str(text))
    unit = match.group(2).lower() if match else None
    if unit not in _UNITS:
        raise TcdistError(f"'{text}' is not a size (write it as 4GiB, 512MiB or 2G)")
    value = int(float(match.group(1)) * _UNITS[unit])
    if value < 1:
        raise TcdistError(f"'{text}' is not a size of at least one byte")
    return value


def csr_bytes(v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
    """Bytes of a part's arrays (rowptr and col) alone."""
    return 8 * (v_res + 1) + col_bytes * e_res


def part_need(v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
    """Bytes a part of v_res rows, e_res columns and n_local local rows needs on the device."""
    return (csr_bytes(v_res, e_res, n_local, col_bytes) + _CHECK_BYTES_PER_ROW * (v_res + 1)
            + _CHECK_BYTES_PER_EDGE * e_res + _KERNEL_BYTES_PER_LOCAL * n_local)


def need_of_stats(stats: dict, col_bytes: int) -> int:
    return part_need(stats["v_res"], stats["e_res"], stats["n_local"], col_bytes)


def smallest_parts(n: int, whole_need: int, budget: int, largest_need, floor_need: int, heaviest,
                   alike: bool = False) -> int:
    """The smallest P (1..n) whose largest part fits the budget, within the bracket the search
    finds (the largest part shrinks with P, but not strictly).

    whole_need: bytes of the graph as one part; largest_need(P, budget, measured=None): bytes of
    the largest of the first `measured` parts (all by default) of the P-way partitioning, or of
    the first part found over the budget (a probe that fails stops there); floor_need: a cheap
    lower bound of what the heaviest vertex's own part needs; heaviest(): (vertex, bytes) of the
    vertex whose part, alone with its out-neighbours, needs most, asked only when no P fits, to
    say why. alike: the parts of one P are alike (random assignment), so the search probes each
    P by its first part, and checks the P it finds whole; if a part of it is over (the one a hub
    fell in), the search goes on above it with every part measured.
    """
    if whole_need <= budget or n <= 1:  # with at most one vertex there is no other P
        return 1
    if floor_need > budget:
        _none_fits(budget, heaviest, n)
    low = max(2, -(-whole_need // budget))  # the largest part is at least whole / P: fewer cannot fit
    if alike:
        found = _search(low, n, budget, lambda parts: largest_need(parts, budget, 1), heaviest)
        if largest_need(found, budget) <= budget:
            return found
        if found >= n:
            _none_fits(budget, heaviest, n)
        low = found + 1  # before: P + 1, each checked whole, up to thousands of them on soc-Epinions1
    return _search(low, n, budget, lambda parts: largest_need(parts, budget), heaviest)


def _search(low: int, n: int, budget: int, probe, heaviest) -> int:
    """The smallest P in a bracket above low that fits by probe (P doubled until one fits, then
    halved); stopped where parts stop shrinking."""
    if low > n:
        _none_fits(budget, heaviest, n)
    high, needs = low, []
    while (need := probe(high)) > budget:
        if high >= n:
            _none_fits(budget, heaviest, n)
        needs.append(need)
        if len(needs) >= 3 and needs[-1] > _STALLED * needs[-3]:
            _refuse_heaviest(budget, heaviest)
            raise TcdistError(f"parts stop shrinking: with {high:,} parts one still needs {size_text(need)}, over "
                              f"the budget of {size_text(budget)} (vertices whose out-neighbourhoods every part "
                              f"needs, such as a dense core of high-degree vertices); more parts will not fit it")
        low, high = high + 1, min(2 * high, n)
    while low < high:  # the smallest P in [low, high] that fits (high does)
        middle = (low + high) // 2
        if probe(middle) <= budget:
            high = middle
        else:
            low = middle + 1
    return high


def _refuse_heaviest(budget: int, heaviest):
    """Stop if one vertex's own part is over the budget: no P can fit then."""
    vertex, need = heaviest()
    if need > budget:
        raise TcdistError(f"no number of parts fits the budget of {size_text(budget)}: vertex {vertex} alone with "
                          f"its out-neighbours needs {size_text(need)}; give the device more memory")


def _none_fits(budget: int, heaviest, n: int):
    _refuse_heaviest(budget, heaviest)
    raise TcdistError(f"even {n:,} parts leave a part over the budget of {size_text(budget)}, though every vertex's "
                      "own part fits: this scheme puts several vertices in some parts; try --scheme contiguous")
