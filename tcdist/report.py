"""What a person reads: the summary of a count, the tables of parts (LSTC Tables 3-4) and ranks."""

import os

from tcdist.budget.sizes import size_text
from tcdist.count.registry import spec_of
from tcdist.errors import TcdistError


def print_through(text, out):
    """Text written through at once (a summary, --help): a standard output that is closed or full is an error of the
    run."""
    if out is None:  # Python's stand-in for a descriptor closed at start (>&-), which print() skips silently
        raise TcdistError("standard output is closed; tcdist prints its result there (redirect it to a file)")
    try:
        print(text, file=out)
        out.flush()
    except BrokenPipeError:  # a reader that left (| head): the CLI's own exit status for it
        raise
    except OSError as e:
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())  # what Python would flush again at exit goes nowhere
        raise TcdistError(f"cannot write to standard output ({e.strerror or e})") from None


def cleaning(r) -> str:
    """What cleaning did to the input's edges, in words."""
    return (f"dropped {r.self_loops:,} self loops and {r.duplicates:,} repeated edges; merged {r.reciprocal:,} "
            "edges given in both directions")


def kernel_spec(r):
    """The kernel as a spec that runs it again (lstc:tile=128); with auto, what it chose."""
    if r.kernel == "auto":
        chosen = ", ".join(f"{spec} for {n} part{'s' * (n != 1)}" for spec, n in r.kernels.items())
        return f"auto ({chosen})" if chosen else "auto"
    return spec_of(r.kernel, r.kernel_options)


def threads(n: int) -> str:
    return f"{n} thread{'s' * (n != 1)}"


def seconds(timings):
    return " | ".join(f"{k} {v:.3f} s" for k, v in timings.items() if v >= 0.0005 or k == "total")


def parts_auto(chose: dict) -> str:
    """What --parts auto chose, why, and what choosing took."""
    built = chose["built"]
    probed = f", {built} partitioning{'s' * (built != 1)} built" if built else ""
    return f"{chose['why']} (chosen in {chose['seconds']:.3f} s{probed})"


def count_lines(r, per_vertex_file=None, per_edge_file=None) -> list[str]:
    """What `tcdist count` prints: the graph, the count, the run, its parts and ranks."""
    lines = [
        r.name,
        f"  vertices   {r.n:,}",
        f"  edges      {r.m:,}   ({cleaning(r)})",
        f"  triangles  {r.triangles:,}",
        f"  backend    {r.backend}, kernel {kernel_spec(r)}, {threads(r.threads)}, "
        f"{f'{r.parts} share(s) of the rows' if r.mode == 'replicated' else f'{r.parts} part(s)'}, {r.ranks} rank(s)",
        f"  time       {seconds(r.timings)}",
    ]
    if r.part_stats:
        resumed = f", {r.resumed_parts} taken from the journal" if r.resumed_parts else ""
        lines[-2:-2] = [f"  parts      {r.parts} ({r.scheme}, prune {r.prune}, schedule {r.schedule}{resumed})"]
        lines += ["", *parts_table(r.part_stats, r.n, r.m, extra=("triangles", "rank"))]
    if r.memory_budget is not None or r.gpu_peak_bytes is not None or r.slices > r.parts:
        budget = f"budget {size_text(r.memory_budget)}" if r.memory_budget else ""
        whole = "the graph" if r.parts == 1 else "parts"
        sliced = f"{r.slices} slices ({whole} too large for the device, counted in pieces that fit)" \
            if r.slices > r.parts else ""
        peak = f"GPU peak {size_text(r.gpu_peak_bytes)}" if r.gpu_peak_bytes is not None else ""
        lines[4:4] = [f"  memory     {'; '.join(filter(None, (budget, sliced, peak)))}"]
    if r.parts_auto is not None:
        lines[4:4] = [f"  parts auto {parts_auto(r.parts_auto)}"]
    if r.mode_reason:
        lines[4:4] = [f"  mode       {r.mode_reason}"]
    if r.per_edge is not None:
        lines[4:4] = [f"  per edge   the triangles of each of the {r.m:,} edges in {per_edge_file}"]
    if r.per_vertex is not None:
        lines[4:4] = [f"  clustering transitivity {r.transitivity:.6f}, average local {r.average_clustering:.6f}; "
                      f"per vertex in {per_vertex_file}"]
    if r.ranks > 1:
        lines += ["", *ranks_table(r.rank_stats)]
    return lines


def ranks_table(ranks):
    """One line per rank: where it counted, its parts, count and seconds."""
    lines = []
    for s in ranks:
        where = f"gpu {s['gpu']} ({s['gpu_bus_id']})" if s["device"] == "gpu" else f"cpu, {threads(s['threads'])}"
        if s.get("counted_by") is not None:
            lines.append(f"  rank {s['rank']} on {s['host']}, {where}: waited while rank {s['counted_by']} counted on "
                         "its GPU")
            continue
        t = s["timings"]
        held = f", held {size_text(s['graph_peak_bytes'])} of the graph" if s.get("graph_peak_bytes") else ""
        held += f", {size_text(s['scratch_bytes'])} of it on scratch" if s.get("scratch_bytes") else ""
        lines.append(f"  rank {s['rank']} on {s['host']}, {where}: parts {s['parts']}, triangles {s['triangles']:,}, "
                     f"partition {t['partition']:.3f} s, read {t['store_read']:.3f} s, transfer {t['transfer']:.3f} s, "
                     f"count {t['count']:.3f} s{held}")
    return lines


_COLUMNS = (("part", "part"), ("n_local", "local"), ("v_ind", "V_ind"), ("v_res", "V_res"), ("e_ind", "E_ind"),
            ("e_res", "E_res"), ("bytes", "bytes"), ("work", "work"))


def parts_table(stats, n, m, extra=()):
    """Per-part statistics as LSTC Tables 3-4 show them, with a total row and the replication."""
    columns = list(_COLUMNS) + [(k, k) for k in extra]
    rows = [[f"{s[k]:,}" for k, _ in columns] for s in stats]
    totals = {k: sum(s[k] for s in stats) for k, _ in columns[1:]}
    rows.append(["total"] + ["" if k == "rank" else f"{totals[k]:,}" for k, _ in columns[1:]])
    header = [title for _, title in columns]
    widths = [max(len(r[j]) for r in [header, *rows]) for j in range(len(columns))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(-1, lines[1])
    v, e = totals["v_res"] / max(n, 1), totals["e_res"] / max(m, 1)
    return lines + [f"replication: vertices {v:.3f}x, edges {e:.3f}x of the graph ({n:,} vertices, {m:,} edges)"]
