"""The work estimate of rows: the probes before every row, compiled on the host and summed a step
of edges at a time (the GPU's way), against a row-by-row reference."""

import numpy as np
import pytest
from conftest import probes_row_by_row

import tcdist
from tcdist.graph import work


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40", "er:5:0"])
def test_the_compiled_probes_before_each_row_are_the_row_by_row_sums(spec):
    graph = tcdist.load_graph(spec)
    assert np.array_equal(work.probes_before(graph), probes_row_by_row(graph))


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40"])
@pytest.mark.parametrize("step", [1, 7, 1000, 1 << 26])
def test_the_stepwise_probes_before_each_row_are_the_row_by_row_sums_for_any_step(monkeypatch, spec, step):
    graph = tcdist.load_graph(spec)
    monkeypatch.setattr(work, "PROBES_STEP", step)
    assert np.array_equal(work.stepwise_probes_before(graph), probes_row_by_row(graph))
