"""Ways of getting a part read from a file onto the GPU, timed on one array (4 GiB by default):
read into pageable memory, copy from it; allocate pinned memory, fill it, copy from it; read
into pinned memory; register the pageable array's pages, copy, unregister. Why tcdist registers
a part's pages for its copy rather than allocating pinned buffers (device.py, _Stager).

    python jobs/bench_copy.py [--gib 4] --out results/pinned-copy-h200.json
"""

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import cupy
import numpy as np
from meta import metadata

BLOCK = 64 << 20


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=4.0)
    p.add_argument("--file", default="/tmp/bench_copy.bin")
    p.add_argument("--device", default="gpu")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    size = int(args.gib * (1 << 30)) // 4 * 4
    seconds = {}
    threads = ThreadPoolExecutor(8)

    def timed(name, work):
        t0 = time.perf_counter()
        result = work()
        cupy.cuda.Device().synchronize()
        seconds[name] = round(time.perf_counter() - t0, 3)
        print(f"{seconds[name]:8.3f} s  {name}", flush=True)
        return result

    cupy.zeros(1)  # the context, before anything is timed
    data = np.random.default_rng(0).integers(0, 1 << 30, size // 4, dtype=np.int32)
    data.tofile(args.file)
    fd = os.open(args.file, os.O_RDONLY)

    def read_into(array):  # as tcdist reads a store's arrays: 64 MiB blocks on threads
        raw = memoryview(array).cast("B")

        def block(start):
            view, done = raw[start : start + BLOCK], 0
            while done < len(view):
                done += os.preadv(fd, [view[done:]], start + done)

        list(threads.map(block, range(0, len(raw), BLOCK)))
        return array

    on_gpu = cupy.empty(size // 4, np.int32)
    pageable = timed("read into pageable memory", lambda: read_into(np.empty(size // 4, np.int32)))
    timed("copy from pageable memory", lambda: on_gpu.set(pageable))
    memory = timed("allocate pinned memory", lambda: cupy.cuda.alloc_pinned_memory(size))
    pinned = np.frombuffer(memory, np.int32, size // 4)
    step = BLOCK // 4
    timed("fill pinned memory (8 threads)",
          lambda: list(threads.map(lambda s: np.copyto(pinned[s : s + step], pageable[s : s + step]),
                                   range(0, pageable.size, step))))
    timed("copy from pinned memory", lambda: on_gpu.set(pinned))
    timed("read into pinned memory", lambda: read_into(pinned))
    again = timed("read into pageable memory again", lambda: read_into(np.empty(size // 4, np.int32)))
    timed("register its pages", lambda: cupy.cuda.runtime.hostRegister(again.ctypes.data, again.nbytes, 0))
    timed("copy from registered pages", lambda: on_gpu.set(again))
    timed("unregister them", lambda: cupy.cuda.runtime.hostUnregister(again.ctypes.data))
    assert np.array_equal(on_gpu[-1000:].get(), data[-1000:])
    os.remove(args.file)
    with open(args.out, "w") as f:
        json.dump({**metadata(args.device), "bytes": size, "seconds": seconds}, f, indent=1)


if __name__ == "__main__":
    main()
