"""How long --parts auto takes to decide, and what it decides, for budgets that force parts and
budgets no P fits, on one tcdist tree or several (a tree's own search against another's):

    python jobs/bench_auto_parts.py --graph rmat:20 rmat:21 rmat:22 --budget 0.7x 0.5x 0.1x \
        --tree . --tree /path/to/other/tcdist --device cpu-2core --timeout 600 \
        --out results/auto-parts-cpu2.json [--verify]

A budget is a size (2GiB) or a multiple of the whole graph's need on the CPU device (0.5x). Each
tree runs in its own process (its tcdist first on the path): the graph is made once there, then
budget.search.auto_parts runs for every budget (the CPU device's memory model, one part at a
time), timed alone; a decision still running after --timeout seconds is stopped (between two
probes) and recorded as such. --verify builds every part of the P chosen and records the largest's need, to compare
with the budget.
"""

import argparse
import json
import os
import subprocess
import sys

from meta import metadata

CHILD = r"""
import json, signal, sys, time
import tcdist
from tcdist.budget import search
from tcdist.budget.model import need
from tcdist.budget.sizes import parse_size
from tcdist.errors import TcdistError
from tcdist.partition import partition_graph


class TimedOut(Exception):
    pass


def stop(*_):
    raise TimedOut


graph_spec, budgets, verify, timeout = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1", int(sys.argv[4])
signal.signal(signal.SIGALRM, stop)
t0 = time.perf_counter()
graph = tcdist.load_graph(graph_spec)
made = time.perf_counter() - t0
whole = need(graph.n, graph.m, graph.n, 4)
for budget_text in budgets:
    budget = int(float(budget_text[:-1]) * whole) if budget_text.endswith("x") else parse_size(budget_text)
    record = {"graph": graph_spec, "n": graph.n, "m": graph.m, "whole_need": whole, "budget": budget,
              "budget_asked": budget_text, "made_s": round(made, 3)}
    t0 = time.perf_counter()
    signal.alarm(timeout)
    try:
        chose = search.auto_parts(graph, "random", "lstc", 0, budget, 1, need)
        record["parts"] = getattr(chose, "parts", chose)
        record["why"] = getattr(chose, "why", "")
        record["built"] = getattr(chose, "built", None)
    except TcdistError as e:
        record["parts"], record["why"] = None, str(e)
    except TimedOut:
        record["parts"], record["timed_out"] = None, True
    signal.alarm(0)
    record["decision_s"] = round(time.perf_counter() - t0, 4)
    if verify and record["parts"] and record["parts"] > 1:
        parts = partition_graph(graph, record["parts"], seed=0, lazy=True).parts
        record["largest_need"] = max(need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], 4) for p in parts)
    print(json.dumps(record), flush=True)
"""


def decide(tree: str, graph: str, budgets: list, verify: bool, timeout: int) -> list:
    """The records of one tree's decisions on one graph (the graph made once)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    done = subprocess.run([sys.executable, "-c", CHILD, graph, ",".join(budgets), "1" if verify else "0",
                           str(timeout)], env=env, capture_output=True, text=True)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0:
        records.append({"graph": graph, "error": done.stderr.strip().splitlines()[-1:]})
    return records


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", nargs="+", default=["rmat:20"])
    p.add_argument("--budget", nargs="+", default=["0.7x", "0.5x", "0.1x"])
    p.add_argument("--tree", action="append", help="a tcdist tree (repeatable; default: this one)")
    p.add_argument("--timeout", type=int, default=600, help="seconds one decision may take (then it is stopped)")
    p.add_argument("--verify", action="store_true", help="build the chosen parts and record the largest's need")
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    trees = args.tree or [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    runs = []
    for graph in args.graph:
        for tree in trees:
            for record in decide(tree, graph, args.budget, args.verify, args.timeout):
                record["tree"] = tree
                runs.append(record)
                print(json.dumps(record), flush=True)
    with open(args.out, "w") as f:
        json.dump({"meta": metadata(args.device), "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
