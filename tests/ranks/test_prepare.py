"""Rank 0's estimates for the ranks: the probes before every row (summed a step of edges at a
time), and shares of about equal work that cover every row once."""

import numpy as np
import pytest

import tcdist
from tcdist.ranks import prepare
from tcdist.ranks.prepare import Held


def _probes_row_by_row(graph):
    """The reference: each row's out-neighbours' out-degrees, summed row by row."""
    out = np.diff(graph.rowptr)
    rows = [int(out[graph.col[graph.rowptr[u]:graph.rowptr[u + 1]]].sum()) for u in range(graph.n)]
    return np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40"])
@pytest.mark.parametrize("step", [1, 7, 1000, 1 << 26])
def test_the_probes_before_each_row_are_the_row_by_row_sums_for_any_step(monkeypatch, spec, step):
    graph = tcdist.load_graph(spec)
    monkeypatch.setattr(prepare, "PROBES_STEP", step)
    assert np.array_equal(prepare._probes_before(graph), _probes_row_by_row(graph))


@pytest.mark.parametrize("ranks", [1, 3, 4])
def test_shares_cover_every_row_once_with_their_work_and_the_same_count(ranks):
    graph = tcdist.load_graph("rmat:12")
    prepared = prepare._replicated(Held(graph=graph), ranks, "", None)
    shares = prepared.shares
    assert shares[0][0] == 0 and shares[-1][1] == graph.n and all(b == c for (_, b), (c, _) in zip(shares, shares[1:]))
    assert len(shares) <= ranks * prepare.SHARES_PER_RANK
    before = _probes_row_by_row(graph) + graph.rowptr
    assert [prepared.work[i] for i in range(len(shares))] == [int(before[b] - before[a]) for a, b in shares]
    count = ranks * prepare.SHARES_PER_RANK
    heaviest_row = int(np.diff(before).max())
    assert all(w <= before[-1] / count + heaviest_row for w in prepared.work.values())  # each share near its goal
