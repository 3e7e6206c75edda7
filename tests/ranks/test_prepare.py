"""Rank 0's shares for the ranks: of about equal work, covering every row once."""

import numpy as np
import pytest
from conftest import probes_row_by_row

import tcdist
from tcdist.ranks import prepare
from tcdist.ranks.prepare import Held
from tcdist.results import Timings


@pytest.mark.parametrize("ranks", [1, 3, 4])
def test_shares_cover_every_row_once_with_their_work_and_the_same_count(ranks):
    graph = tcdist.load_graph("rmat:12")
    timings = Timings()
    prepared = prepare._replicated(Held(graph=graph), ranks, "", timings, None)
    assert timings.partition > 0  # the estimate, the stand-in for LSTC's parts, is timed as partition
    shares = prepared.shares
    assert shares[0][0] == 0 and shares[-1][1] == graph.n and all(b == c for (_, b), (c, _) in zip(shares, shares[1:]))
    assert len(shares) <= ranks * prepare.SHARES_PER_RANK
    before = probes_row_by_row(graph) + graph.rowptr
    assert [prepared.work[i] for i in range(len(shares))] == [int(before[b] - before[a]) for a, b in shares]
    count = ranks * prepare.SHARES_PER_RANK
    heaviest_row = int(np.diff(before).max())
    assert all(w <= before[-1] / count + heaviest_row for w in prepared.work.values())  # each share near its goal
