"""Rank 0's shares for the ranks: of about equal work, covering every row once."""

import numpy as np
import pytest
from conftest import probes_row_by_row

import tcdist
from tcdist.config import CountConfig
from tcdist.device import resolve
from tcdist.device.cpu import MIDDLE_WEDGE_WEIGHT
from tcdist.ranks import prepare
from tcdist.ranks.prepare import Held
from tcdist.results import Timings


@pytest.mark.parametrize("ranks", [1, 3, 4])
@pytest.mark.parametrize("wedge_weight", [0, 4])
def test_shares_cover_every_row_once_with_their_work_and_the_same_count(ranks, wedge_weight):
    graph = tcdist.load_graph("rmat:12")
    timings = Timings()
    prepared = prepare._replicated(Held(graph=graph), ranks, "", timings, None, wedge_weight=wedge_weight)
    assert timings.partition > 0  # the estimate, the stand-in for LSTC's parts, is timed as partition
    shares = prepared.shares
    assert shares[0][0] == 0 and shares[-1][1] == graph.n and all(b == c for (_, b), (c, _) in zip(shares, shares[1:]))
    assert len(shares) <= ranks * prepare.SHARES_PER_RANK
    out = np.diff(graph.rowptr).astype(np.int64)
    before = probes_row_by_row(graph) + graph.rowptr + wedge_weight * np.concatenate([[0], np.cumsum(out * (out - 1) // 2)])
    assert [prepared.work[i] for i in range(len(shares))] == [int(before[b] - before[a]) for a, b in shares]
    count = ranks * prepare.SHARES_PER_RANK
    heaviest_row = int(np.diff(before).max())
    assert all(w <= before[-1] / count + heaviest_row for w in prepared.work.values())  # each share near its goal


@pytest.mark.parametrize("kernel,weight", [("auto", MIDDLE_WEDGE_WEIGHT), ("middle", MIDDLE_WEDGE_WEIGHT), ("marker", 0)])
def test_cpu_ranks_weigh_wedges_in_their_shares_where_middle_counts_them(kernel, weight):
    """`middle` walks each row's wedges, so the shares of CPU ranks that count with it weigh them;
    `marker` intersects rows, whose probes the estimate counts already."""
    graph = tcdist.load_graph("rmat:12")
    device = resolve("cpu", kernel=kernel, threads=1)
    prepared, _ = prepare.prepare("rmat:12", CountConfig(backend="cpu", kernel=kernel), device, 4, Timings(), 1 << 40)
    assert prepared.mode == "replicated" and weight == device.wedge_weight
    out = np.diff(graph.rowptr).astype(np.int64)
    before = probes_row_by_row(graph) + graph.rowptr + weight * np.concatenate([[0], np.cumsum(out * (out - 1) // 2)])
    assert [prepared.work[i] for i in range(len(prepared.shares))] == [int(before[b] - before[a])
                                                                       for a, b in prepared.shares]
