"""What a person reads: the summary's words."""

from tcdist import report

RANK = {"host": "node1", "device": "cpu", "gpu": None, "gpu_bus_id": None, "parts": [0, 2], "triangles": 1234,
        "timings": {"partition": 0.25, "store_read": 0.5, "transfer": 0.0, "count": 1.25}}


def test_one_thread_is_one_thread_in_the_summary(cli):
    """The summary said '1 threads'."""
    backend = next(line for line in cli("count", "complete:5", "--backend", "cpu", "--threads", "1").out.splitlines()
                   if line.startswith("  backend "))
    assert backend.endswith(" for 1 part), 1 thread, 1 part(s), 1 rank(s)")  # (auto's kernel: lookup, or middle
                                                                              # once Numba is loaded)
    assert ", 2 threads, " in cli("count", "complete:5", "--backend", "cpu", "--threads", "2").out


def test_one_thread_is_one_thread_in_the_ranks_table():
    """The MPI summary's ranks said '1 threads'."""
    assert report.ranks_table([{**RANK, "rank": 0, "threads": 1}, {**RANK, "rank": 1, "threads": 16}]) == [
        "  rank 0 on node1, cpu, 1 thread: parts [0, 2], triangles 1,234, partition 0.250 s, read 0.500 s, "
        "transfer 0.000 s, count 1.250 s",
        "  rank 1 on node1, cpu, 16 threads: parts [0, 2], triangles 1,234, partition 0.250 s, read 0.500 s, "
        "transfer 0.000 s, count 1.250 s"]


def test_a_rank_of_parts_across_ranks_says_how_much_of_the_graph_it_held():
    line = report.ranks_table([{**RANK, "rank": 3, "threads": 2, "graph_peak_bytes": 3 << 20}])[0]
    assert line.endswith(", count 1.250 s, held 3.0 MiB of the graph")
