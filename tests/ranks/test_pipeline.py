"""Counting parts one after another: the next part is read while the current one is counted."""

import threading

import pytest

import tcdist
from tcdist.device import resolve
from tcdist.partition import partition_graph
from tcdist.ranks.pipeline import count_parts


def test_the_next_part_is_read_while_the_current_one_is_counted():
    graph = tcdist.load_graph("rmat:10")
    parts = partition_graph(graph, 4, seed=2).parts
    events, reading = [], threading.Event()
    device = resolve("cpu")
    count = device.count

    def fetch(i):
        events.append(("read", i))
        if i == 1:
            reading.set()
        return parts[i]

    def counted(part, prepared=None):
        if part.index == 0:
            assert reading.wait(10), "part 1 was not read while part 0 was counted"
        events.append(("count", part.index))
        return count(part, prepared)

    device.count = counted
    results = count_parts(device, range(4), fetch, num_parts=4)
    assert sum(r.triangles for r in results) == tcdist.count_triangles(graph, backend="cpu").triangles
    assert events.index(("read", 1)) < events.index(("count", 0))
    assert [e for e in events if e[0] == "count"] == [("count", i) for i in range(4)]


def test_a_stop_between_parts_reads_no_further():
    """check() raises before the next part is taken: nothing past it is read."""
    graph = tcdist.load_graph("rmat:9")
    parts = partition_graph(graph, 5).parts
    read, checks = [], []

    def check():
        checks.append(1)
        if len(checks) == 3:
            raise RuntimeError("another rank failed")

    with pytest.raises(RuntimeError, match="another rank failed"):
        count_parts(resolve("cpu"), range(5), lambda i: read.append(i) or parts[i], num_parts=5, check=check)
    assert read == [0, 1]


def test_the_stages_add_up_to_the_total_when_credits_kernels_are_checked_when_first_needed(tmp_path):
    """Under --kernel auto the per-vertex kernels are checked on K_40 when a part first needs them:
    that check was timed as count and as compile both, and the stages passed the total."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tcdist", "count", "rmat:14", "--backend", "cpu", "--per-vertex",
                           str(tmp_path / "v.csv"), "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout)
    timings = record["timings"]
    assert record["kernels"] == {"per-vertex (marker)": 1}  # the compiled kernel, checked when first needed
    staged = sum(v for k, v in timings.items() if k not in ("total", "other") and not k.endswith("_overlapped"))
    assert staged <= timings["total"] + 1e-3, timings
