"""bench_parts.py's JSON as LSTC Tables 3-4 at our scale (markdown) and a plot of each P's time
against the whole graph's.

    python jobs/report_parts.py results/lstc-parts-h200-s33.json [more.json ...] --plot results/lstc-parts-h200.png
"""

import argparse
import json
import statistics


def rows(records):
    for record in records:
        for entry in record["table"]:
            if "error" in entry:
                continue
            stats, m = entry["record"]["part_stats"], entry["record"]["m"]
            biggest = max(stats, key=lambda s: s["bytes"])
            yield {"scale": entry["scale"], "parts": entry["parts"], "n": entry["record"]["n"], "m": m,
                   "v_ind": statistics.mean(s["v_ind"] for s in stats), "v_res": statistics.mean(s["v_res"] for s in stats),
                   "e_ind": statistics.mean(s["e_ind"] for s in stats), "e_res": statistics.mean(s["e_res"] for s in stats),
                   "bytes": biggest["bytes"], "wall": entry["wall_s"], "whole": entry["whole_wall_s"],
                   "device": record["device"]}


def table(found) -> str:
    lines = ["| graph | P | mean \\|V_ind\\| | mean \\|V_res\\| | mean \\|E_ind\\| / m | mean \\|E_res\\| / m "
             "| largest part | seconds | whole graph |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in found:
        lines.append(f"| RMAT-{r['scale']} (m = {r['m'] / 1e6:,.0f} M) | {r['parts']} | {r['v_ind'] / 1e6:.2f} M "
                     f"| {r['v_res'] / 1e6:.2f} M | {r['e_ind'] / r['m']:.2f} | {r['e_res'] / r['m']:.2f} "
                     f"| {r['bytes'] / 2**30:.1f} GiB | {r['wall']:.2f} | {r['whole']:.2f} |")
    return "\n".join(lines)


def plot(found, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for scale in sorted({r["scale"] for r in found}):
        mine = [r for r in found if r["scale"] == scale]
        ax.plot([r["parts"] for r in mine], [r["wall"] / r["whole"] for r in mine], marker="o", label=f"RMAT-{scale}")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("parts P")
    ax.set_ylabel("time with P parts / whole graph")
    ax.set_title(f"LSTC parts, command to answer ({found[0]['device']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="+")
    p.add_argument("--plot")
    args = p.parse_args()
    records = []
    for path in args.json:
        with open(path) as f:
            records.append(json.load(f))
    found = list(rows(records))
    print(table(found))
    if args.plot:
        plot(found, args.plot)


if __name__ == "__main__":
    main()
