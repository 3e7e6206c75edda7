"""--kernel auto (the default): each part's kernel, by a rule taken from measurements.

The rule reads one degree statistic of the part, its wedges per edge (sum over local u of
C(d+(u), 2), over the part's edges): the work a wedge-checking kernel does per edge, and the
skew of the out-degrees (a hub's row has d+^2/2 wedges). On nvidia-h200 at 04fdc8f
(results/kernels-h200.md):
- about one wedge per edge (a grid: 1.0): `wetric` (0.77 ms against lstc-group's 6.74 ms): a
  thread per few wedges, where every block of one row per vertex would idle;
- uniform moderate degrees (ER, 6.9): `lstc-group` (15.6 ms; wetric 16.3, bitmap 64.6);
- skewed degrees (RMAT, 78-160; the SNAP graphs, 9.9-14): `bitmap`, a bitmap of N+(u) per block
  (1.6-1.8x lstc-group on RMAT-20..24, 1.2-1.3x lstc on the small SNAP graphs).
Parts of fewer than SMALL_PART_EDGES edges between the two ends go to LSTC's Algorithm 3 at tile
128 (nvidia-h100-x1, results/gpu-h100.md: lstc-group's second launch and degree split cost more
than they save there).
CPU (results/cpu-rmat18.json): `marker` beat `merge` 4.5x, so it is always `marker`.
"""

from tcdist.count.registry import choose
from tcdist.xp import array_module

SMALL_PART_EDGES = 500_000
SPARSE_WEDGES_PER_EDGE = 2.0   # below: wetric
SKEWED_WEDGES_PER_EDGE = 8.0   # from here: bitmap
_SPECS = {"gpu": ("wetric", "lstc:tile=128", "lstc-group", "bitmap"), "cpu": ("marker",)}


def wedges_per_edge(part) -> float:
    """Sum over the part's local vertices of C(d+, 2), per edge of the part (0 for no edge)."""
    xp = array_module(part.rowptr)
    out = xp.diff(part.rowptr[: int(part.n_local) + 1])
    return int((out * (out - 1) // 2).sum()) / max(int(part.col.size), 1)


class Auto:
    """The rule for one backend: label(part) names one of choices (spec -> kernel, options)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.choices = {spec: choose(backend, spec) for spec in _SPECS[backend]}

    def label(self, part, fits=lambda spec: True) -> str:
        """The spec that counts this part (a Part: its rows and its size); fits(spec) says whether
        a kernel's own memory (bitmaps) fits on the device now, else one that needs none counts."""
        if self.backend == "cpu":
            return "marker"
        small = int(part.col.size) < SMALL_PART_EDGES
        per_edge = wedges_per_edge(part)
        if per_edge < SPARSE_WEDGES_PER_EDGE:
            return "wetric"
        if per_edge >= SKEWED_WEDGES_PER_EDGE and fits("bitmap"):
            return "bitmap"
        return "lstc:tile=128" if small else "lstc-group"
