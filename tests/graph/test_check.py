"""The structural check of a CSR: the GPU's one pass names what the host's passes name."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdist.graph import build_graph
from tcdist.graph.check import csr_problem
from tcdist.io import generate

GRAPH = build_graph(generate("rmat:9", seed=2))
DAMAGES = ["none", "swap", "repeat", "too high", "negative", "rowptr falls", "rowptr end", "n_local", "backward",
           "empty col"]


def damaged(kind: str, at: int, dtype):
    """(rowptr, col, n_local) of GRAPH with one kind of damage near index at."""
    rowptr, col, n = GRAPH.rowptr.copy(), GRAPH.col.astype(dtype), GRAPH.n
    rows = np.flatnonzero(np.diff(rowptr) >= 2)  # a row with a column before j's in it
    row = rows[at % rows.size]
    j, x = rowptr[row] + 1, at % n
    if kind == "swap":
        col[j - 1], col[j] = col[j], col[j - 1]
    elif kind == "repeat":
        col[j] = col[j - 1]
    elif kind in ("too high", "negative"):
        col[j] = n if kind == "too high" else -1
    elif kind == "rowptr falls":
        rowptr[x + 1] = rowptr[x] - 1
    elif kind == "rowptr end":
        rowptr[-1] -= 1
    elif kind == "backward":
        col[rowptr[row]] = row
    elif kind == "empty col":
        rowptr, col = np.zeros_like(rowptr), col[:0]
    return rowptr, col, (n + 1 if kind == "n_local" else n)


@pytest.mark.gpu
@settings(max_examples=120, deadline=None)
@given(st.sampled_from(DAMAGES), st.integers(0, 10**6), st.sampled_from([np.int32, np.int64]), st.booleans())
def test_the_gpu_check_names_the_hosts_problem(kind, at, dtype, ascending):
    import cupy

    rowptr, col, n_local = damaged(kind, at, dtype)
    expected = csr_problem(rowptr, col, n_local, ascending=ascending)
    assert (expected is None) == (kind in ("none", "empty col") or (kind == "backward" and not ascending))
    assert csr_problem(cupy.asarray(rowptr), cupy.asarray(col), n_local, ascending=ascending) == expected


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DAMAGES), st.integers(0, 10**6), st.sampled_from([np.int32, np.int64]), st.booleans())
def test_the_compiled_check_names_the_whole_array_passes_problem(kind, at, dtype, ascending):
    """Graphs from COMPILED_FROM columns on are checked in one compiled pass over every thread."""
    from tcdist.graph import check

    rowptr, col, n_local = damaged(kind, at, dtype)
    with mock.patch.object(check, "COMPILED_FROM", 1 << 62):
        expected = csr_problem(rowptr, col, n_local, ascending=ascending)
    assert (expected is None) == (kind in ("none", "empty col") or (kind == "backward" and not ascending))
    with mock.patch.object(check, "COMPILED_FROM", 1):
        assert csr_problem(rowptr, col, n_local, ascending=ascending) == expected
