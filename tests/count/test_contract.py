"""Every kernel of the registry keeps the contract (count/registry.py): the triangles whose
lowest vertex is local, exact on closed forms and on parts with proxies, with int32 and int64
columns, 0 for a part without local rows. New kernels are picked up here with no edit."""

import numpy as np
import pytest

import tcdist
from tcdist.count.cpu import count_marker
from tcdist.count.registry import kernels
from tcdist.partition import partition_graph

CASES = [("complete:30", 1, 30 * 29 * 28 // 6), ("tripartite:4:5:6", 1, 4 * 5 * 6), ("grid:20:30", 3, 2 * 19 * 29),
         ("rmat:10", 4, None)]


def _params():
    for name, kernel in kernels().items():
        yield pytest.param(name, id=name, marks=[pytest.mark.gpu] if kernel.backend == "gpu" else [])


@pytest.mark.parametrize("name", list(_params()))
def test_every_registered_kernel_keeps_the_contract(name):
    kernel = kernels()[name]
    options = kernel.configure({})
    xp = np
    if kernel.backend == "gpu":
        import cupy as xp
    for spec, parts, expected in CASES:
        graph = tcdist.load_graph(spec)
        truth = count_marker(graph.rowptr, graph.col, graph.n)
        assert expected is None or truth == expected
        for dtype in (np.int32, np.int64):
            found = [kernel.run(xp.asarray(p.rowptr), xp.asarray(p.col.astype(dtype)), p.n_local, options)
                     for p in partition_graph(graph, parts, seed=1).parts]
            assert sum(found) == truth and all(isinstance(f, int) for f in found), (spec, dtype)
            assert kernel.run(xp.asarray(graph.rowptr), xp.asarray(graph.col.astype(dtype)), 0, options) == 0
