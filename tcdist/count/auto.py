"""--kernel auto (the default): each part's kernel, by a rule taken from measurements.

The rule reads two degree statistics of the part's local rows: wedges per edge (sum over local u
of C(d+(u), 2), over the part's edges: the work of a wedge-checking kernel per edge, and the
skew of the out-degrees, a hub's row having d+^2/2 wedges) and the largest out-degree. On
nvidia-h200 (results/kernels-h200.md):
- skewed degrees (RMAT: 78-160 wedges per edge; the SNAP graphs: 9.9-22): `bitmap`, a bitmap of
  N+(u) per block (RMAT-20..24 1.6-2.6x lstc-group); where its 32 bitmaps per multiprocessor do
  not fit beside the part, 8 blocks of 256 threads (a quarter of the bitmaps, as fast on
  RMAT-22/23, 13 % slower on RMAT-20: results/kernels-h200-sweep.md); where neither fits, on;
- out-degrees all small (a grid's d+ <= 4, ER's <= 40): `forward`, a thread per vertex merging
  rows (grid 0.25 ms against lstc-group's 6.74 and wetric's 1.2 with its wedge map; ER 11.9 ms
  against 15.3 and 12.6); a thread holding a hub's row would keep its block waiting;
- few wedges per edge but a hub: `wetric`, a thread per eight wedges of a static map;
- between: `lstc-group`, or LSTC's Algorithm 3 at tile 128 for parts of fewer than
  SMALL_PART_EDGES edges (nvidia-h100-x1, results/gpu-h100.md: lstc-group's second launch and
  degree split cost more than they save there).
CPU (results/cpu-rmat18.json): `marker` beat `merge` 4.5x, so it is always `marker`.
"""

from tcdist.count.registry import choose
from tcdist.xp import array_module

SMALL_PART_EDGES = 500_000
SPARSE_WEDGES_PER_EDGE = 2.0   # below (with a hub): wetric
SKEWED_WEDGES_PER_EDGE = 8.0   # from here: bitmap
EVEN_MAX_OUT_DEGREE = 64       # up to here: forward
BITMAPS = ("bitmap", "bitmap:threads=256,blocks_per_sm=8")  # the fastest, then the one of fewer bitmaps
_SPECS = {"gpu": (*BITMAPS, "forward", "wetric:spread=8", "lstc:tile=128", "lstc-group"), "cpu": ("marker",)}


def degree_stats(part) -> tuple[float, int]:
    """(wedges per edge of the part, the largest out-degree) over its local rows."""
    xp = array_module(part.rowptr)
    out = xp.diff(part.rowptr[: int(part.n_local) + 1])
    if not out.size:
        return 0.0, 0
    return int((out * (out - 1) // 2).sum()) / max(int(part.col.size), 1), int(out.max())


class Auto:
    """The rule for one backend: label(part) names one of choices (spec -> kernel, options)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.choices = {spec: choose(backend, spec) for spec in _SPECS[backend]}

    def label(self, part, fits=lambda spec: True) -> str:
        """The spec that counts this part (a Part: its rows and its size); fits(spec) says whether
        a kernel's own memory (bitmaps) fits on the device now, else another counts."""
        if self.backend == "cpu":
            return "marker"
        per_edge, max_out = degree_stats(part)
        if per_edge >= SKEWED_WEDGES_PER_EDGE:
            for spec in BITMAPS:
                if fits(spec):
                    return spec
        if max_out <= EVEN_MAX_OUT_DEGREE:
            return "forward"
        if per_edge < SPARSE_WEDGES_PER_EDGE:
            return "wetric:spread=8"
        return "lstc:tile=128" if int(part.col.size) < SMALL_PART_EDGES else "lstc-group"
