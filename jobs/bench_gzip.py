"""Gzip inflate rates on this host: ISA-L's one stream against rapidgzip on 1, 2, 4, ... cores, the
file in the page cache; what tcdist.io.gzipped.PARALLEL_FROM is chosen by.

    python jobs/bench_gzip.py FILE.gz --device-kind nvidia-h100-x1 [--repeat 3] [--out results/]
"""

import argparse
import json
import os
import time

from meta import metadata

PIECE = 16 << 20


def inflate_isal(path) -> int:
    from isal import igzip

    out = 0
    with open(path, "rb") as f, igzip.IGzipFile(fileobj=f, mode="rb") as g:
        while chunk := g.read(PIECE):
            out += len(chunk)
    return out


def inflate_rapidgzip(path, threads: int) -> int:
    import rapidgzip

    out = 0
    with rapidgzip.open(path, parallelization=threads) as g:
        while chunk := g.read(PIECE):
            out += len(chunk)
    return out


def best(work, repeat: int) -> tuple[float, int]:
    times, out = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file")
    p.add_argument("--device-kind", required=True)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results"))
    args = p.parse_args()
    cores = len(os.sched_getaffinity(0))
    with open(args.file, "rb") as f:  # into the page cache
        while f.read(PIECE):
            pass
    rows = []
    seconds, out = best(lambda: inflate_isal(args.file), args.repeat)
    rows.append({"inflater": "isal", "threads": 1, "best_s": seconds, "GB_per_s": out / seconds / 1e9})
    threads = 1
    while threads <= cores:
        seconds, got = best(lambda: inflate_rapidgzip(args.file, threads), args.repeat)
        assert got == out, f"rapidgzip gave {got} bytes, ISA-L {out}"
        rows.append({"inflater": "rapidgzip", "threads": threads, "best_s": seconds, "GB_per_s": out / seconds / 1e9})
        threads = threads * 2 if threads * 2 <= cores or threads == cores else cores
    for row in rows:
        print(f"{row['inflater']:10} {row['threads']:3} threads  {row['best_s']:7.3f} s  {row['GB_per_s']:.2f} GB/s out")
    result = {**metadata(args.device_kind), "file": os.path.basename(args.file), "bytes_in": os.path.getsize(args.file),
              "bytes_out": out, "cores": cores, "rows": rows}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"gzip-inflate-{args.device_kind}.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
