"""--kernel auto (the default): each part's kernel, by a rule taken from measurements.

GPU (nvidia-h100-x1, results/gpu-h100.md): LSTC Algorithm 3 at tile 128 beat `lstc-group` on
every graph of up to 0.41 M edges (0.11-0.25 ms against 0.30-0.37 ms: `lstc-group`'s second
launch and its split of the vertices by degree cost more than they save there), and
`lstc-group` won on every graph from 31.8 M edges on (1.34-1.51x). The crossover between is
not measured yet: a part of fewer than SMALL_PART_EDGES edges goes to Algorithm 3. The seed
kernels join the rule when they have been measured (issue 10).
CPU (results/cpu-rmat18.json): `marker` beat `merge` 4.5x, so it is always `marker`.
"""

from tcdist.count.registry import choose

SMALL_PART_EDGES = 500_000
_SPECS = {"gpu": ("lstc:tile=128", "lstc-group"), "cpu": ("marker",)}


class Auto:
    """The rule for one backend: label(part sizes) names one of choices (spec -> kernel, options)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.choices = {spec: choose(backend, spec) for spec in _SPECS[backend]}

    def label(self, part) -> str:
        """The spec for one part (a Part: its size and, once the rule needs them, its stats)."""
        if self.backend == "cpu":
            return "marker"
        return "lstc:tile=128" if int(part.col.size) < SMALL_PART_EDGES else "lstc-group"
