"""--host-memory-limit binds one process: its peak resident memory stays within the limit plus the
fixed footprint of a small count that loads the same libraries, and the count is exact."""

import json
import subprocess
import sys

import numpy as np

import tcdist

# the peak from /proc (VmHWM: this program's own), not getrusage (whose maximum a child keeps from its parent)
PEAK = ("import sys\nfrom tcdist import compiled\nfrom tcdist.cli import main\n{load}"
        "code = main(sys.argv[1:])\n"
        "peak = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "print('peak', peak * 1024, file=sys.stderr)\nsys.exit(code)")


def peak_run(*args, load_numba=False):
    """(the JSON result, the peak resident bytes) of `tcdist count ARGS --json` in a process of its own."""
    program = PEAK.format(load="compiled.loaded()\n" if load_numba else "")
    done = subprocess.run([sys.executable, "-c", program, "count", *args, "--backend", "cpu", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), int(done.stderr.split("peak")[-1])


def test_one_process_under_a_host_memory_limit_stays_within_it_and_counts_exactly():
    limit = 48 << 20
    footprint = peak_run("rmat:10", load_numba=True)[1]  # Python, NumPy, h5py, Numba and LLVM: 160 MB here
    free, free_peak = peak_run("rmat:17")
    bound, bound_peak = peak_run("rmat:17", "--host-memory-limit", str(limit))
    assert bound["triangles"] == free["triangles"] and (bound["n"], bound["m"]) == (free["n"], free["m"])
    assert bound_peak <= limit + footprint < free_peak, (bound_peak, limit, footprint, free_peak)


def test_a_text_file_whose_graph_the_limit_cannot_hold_is_counted_from_disk_within_it(tmp_path):
    """RMAT-16 as text under 8 MiB (its CSR alone takes 4.7 MB beside 1.5 MB of ids' arrays): read
    again with its parsed pairs spilled to scratch, its columns written there, counted a slice at a
    time read from them; exact, within the limit and the footprint, and the scratch left empty."""
    from tcdist import io

    path, folder, limit = tmp_path / "g.txt", tmp_path / "scratch", 8 << 20
    edges = io.generate("rmat:16")
    np.savetxt(path, np.stack([edges.src, edges.dst], axis=1), fmt="%d")
    folder.mkdir()
    footprint = peak_run("rmat:10", load_numba=True)[1]
    free = peak_run(str(path))[0]
    bound, bound_peak = peak_run(str(path), "--host-memory-limit", str(limit), "--scratch", str(folder))
    assert (bound["triangles"], bound["n"], bound["m"]) == (free["triangles"], free["n"], free["m"])
    assert bound["slices"] > 1 and bound_peak <= limit + footprint and not list(folder.iterdir())


def test_a_graph_file_whose_graph_the_limit_cannot_hold_is_counted_from_the_file_within_it(tmp_path):
    """RMAT-16 as a tcdist graph file under 8 MiB (it was read whole, 4.7 MB of CSR, whatever the
    limit): its columns left in the file, checked in one pass over them, counted a slice at a time
    read from it; exact, within the limit and the footprint. A column changed in the file is
    still refused, by its digest, as when it is read whole."""
    import h5py

    path, small, limit = tmp_path / "g.h5", tmp_path / "small.h5", 8 << 20
    assert tcdist.convert("rmat:16", path)["m"] > 0 and tcdist.convert("rmat:10", small)["m"] > 0
    footprint = peak_run(str(small), load_numba=True)[1]  # (with h5py and libhdf5 loaded, as a graph file's count)
    free = peak_run(str(path))[0]
    bound, bound_peak = peak_run(str(path), "--host-memory-limit", str(limit))
    assert (bound["triangles"], bound["n"], bound["m"]) == (free["triangles"], free["n"], free["m"])
    assert bound["slices"] > 1 and bound_peak <= limit + footprint, (bound_peak, limit, footprint)
    with h5py.File(path, "r") as f:
        at = f["col"].id.get_offset() + f["col"].dtype.itemsize * (f["col"].shape[0] // 2)
    with open(path, "r+b") as f:  # (the seal covers the metadata, the digest the arrays)
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 1]))
    done = subprocess.run([sys.executable, "-m", "tcdist", "count", str(path), "--backend", "cpu",
                           "--host-memory-limit", str(limit)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (2, f"tcdist: error: {path}: the graph's arrays or attributes do not "
                                                 "match its digest (corrupt or altered)\n")


def test_freed_heap_kept_resident_is_not_taken_for_the_count_s_data():
    """glibc keeps freed heap resident beneath a block still held; under a limit, a step that fits
    once that is given back is not refused (a text file's sampled first bytes, parsed and freed,
    refused its first block under 8 MiB)."""
    program = ("from tcdist.budget import host\nwith host.bounded(32 << 20):\n"
               "    freed = [bytes(4000) for _ in range(12_000)]\n    held = bytes(4000)\n    del freed\n"
               "    host.require(16 << 20, 'a step', 'no way out')\nprint('fits')")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["fits"], done.stderr[-2000:]


def test_a_refusal_by_less_than_its_rounding_says_the_bytes(monkeypatch):
    from tcdist.budget import host
    from tcdist.errors import TcdistError

    monkeypatch.setattr(host, "available", lambda: (10_050_000, "a test's limit"))
    try:
        host.require(10_060_000, "a step", "no way out")
    except TcdistError as refused:
        said = str(refused)
    assert said == "a step needs about 10,060,000 bytes of memory but a test's limit leaves 10,050,000 bytes; no way out"
