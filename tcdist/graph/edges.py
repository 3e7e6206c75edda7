"""The raw edges a reader or generator produces, before cleaning."""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class EdgeList:
    """Edges as found in the source: ids >= 0, possibly with self loops, duplicates or both directions."""

    src: np.ndarray
    dst: np.ndarray
    name: str
    warnings: list = field(default_factory=list)
    labels: object = None  # the vertices' labels when the source's ids were not integers; ids index them

    def __len__(self):
        return int(self.src.size)
