"""Shared fixtures: the dataset manifest, an independent counter, a CLI runner, graphs compared."""

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import pytest

from tcdist.cli import main
from tcdist.io.seal import read_seal, write_seal


def _spread_workers_over_gpus():
    """Under pytest-xdist on a host of several GPUs, worker k's first GPU is the k-th one (all stay
    visible, in turn), so ``pytest -m gpu -n 4`` counts on four GPUs, not four times on one. Run
    before any test starts CUDA (importing tcdist does not), which reads CUDA_VISIBLE_DEVICES once."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    gpus = visible.split(",") if visible else [str(i) for i in range(len(list(Path("/proc/driver/nvidia/gpus").glob("*"))))]
    if worker.startswith("gw") and len(gpus) > 1:
        k = int(worker[2:]) % len(gpus)
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(gpus[k:] + gpus[:k])


_spread_workers_over_gpus()
os.environ["TCDIST_BACKGROUND_WARM_UP"] = "0"  # the suite's many fresh caches each began one (tests of it set it back)

REPO = Path(__file__).resolve().parents[1]
# The full manifest beside the checkout (or named by TCDIST_DATASETS) when it is there; else the
# small real graphs shipped in tests/data (each with its published count).
_FULL = REPO.parent / "shared" / "datasets"
DATASETS = Path(os.environ.get("TCDIST_DATASETS", _FULL if (_FULL / "MANIFEST.json").exists() else REPO / "tests" / "data"))


def manifest():
    """The datasets with their published counts (read in place, never copied)."""
    path = DATASETS / "MANIFEST.json"
    if not path.exists():
        pytest.fail(f"dataset manifest not found at {path}; set TCDIST_DATASETS")
    return json.loads(path.read_text())


def dataset_params():
    return [pytest.param(entry, id=entry["name"]) for entry in manifest()]


def brute_force_triangles(pairs):
    """Triangles of the simple undirected graph of raw pairs, by plain set intersection."""
    adj = {}
    for u, v in pairs:
        if u != v:
            adj.setdefault(u, set()).add(v)
            adj.setdefault(v, set()).add(u)
    return sum(1 for u in adj for v in adj[u] if u < v for w in adj[u] & adj[v] if v < w)


def read_table(path, columns):
    """A per-vertex or per-edge file as {column: list}, by its format; a CSV's header checked."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if str(path).endswith(".csv"):
        assert Path(path).read_text().startswith(",".join(columns) + "\n")
        return pcsv.read_csv(path).to_pydict()
    if str(path).endswith(".parquet"):
        return pq.read_table(path).to_pydict()
    with h5py.File(path) as f:
        return {k: f[k][()].tolist() for k in columns}


def count_read_once(how, data: bytes, tmp_path):
    """``tcdist count --json`` of bytes that can be read only once: through a FIFO (as <(...)
    gives), or standard input ('-', '/dev/stdin')."""
    import threading

    if how != "fifo":
        return run_module("count", how, "--json", input=data.decode("latin-1"), encoding="latin-1")
    fifo = tmp_path / "graph"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    result = run_module("count", fifo, "--json")
    writer.join()
    return result


def scratch_held(folder, pid="*") -> list[str]:
    """The scratch files in folder that process pid (every process: "*") holds open, each removed
    from the folder as it was opened (its link reads "... (deleted)")."""
    found = []
    for fd in Path("/proc").glob(f"{pid}/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:  # (closed meanwhile, or another user's)
            continue
        if target.startswith(os.path.join(str(folder), "tcdist-scratch-")):
            found.append(target)
    return found


def same_graph(built, reference):
    """Two Graphs alike in every array (and the columns' dtype) and every count."""
    from tcdist.xp import to_numpy

    for name in ("rowptr", "col", "original_id"):
        assert np.array_equal(to_numpy(getattr(built, name)), to_numpy(getattr(reference, name))), name
    assert built.col.dtype == reference.col.dtype
    for name in ("n", "m", "self_loops", "duplicates", "reciprocal", "degrees"):
        assert getattr(built, name) == getattr(reference, name), name


def cpu_device(kernel):
    """A CPU device that counts with this registry kernel (one thread)."""
    from tcdist.device.cpu import CpuDevice

    return CpuDevice(kernel=kernel.name, threads=1, chosen=kernel, options={}, memory_limit=None, auto=None)


class CliResult:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    def json(self):
        """The --json record; a run that printed none fails naming its exit status and stderr."""
        try:
            return json.loads(self.out)
        except json.JSONDecodeError:
            raise AssertionError(f"no JSON record (exit {self.code}): stderr {self.err.strip()!r}, "
                                 f"stdout {self.out[:500]!r}") from None


@pytest.fixture
def cli(capsys):
    """Run ``tcdist ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args):
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:
            code = e.code
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@contextmanager
def edited_h5(path):
    """Edit a tcdist HDF5 file with h5py, then seal it again: a file altered behind its seal (as
    another program or a future tcdist could write it), to reach the checks behind the seal."""
    seal, _ = read_seal(path)
    with h5py.File(path, "a") as f:
        yield f
    write_seal(path, seal["format"], seal["version"])


def bgzf(data: bytes, block: int = 65280) -> bytes:
    """BGZF as bgzip writes it (written here from its specification, SAM v1 section 4.1): members of
    at most 64 KiB, each with its size in a 'BC' extra field, then the empty member that ends it."""
    import struct
    import zlib

    out = []
    for i in range(0, len(data), block):
        piece = data[i : i + block]
        deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = deflate.compress(piece) + deflate.flush()
        out.append(b"\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\x00BC\x02\x00" + struct.pack("<H", 18 + len(body) + 8 - 1)
                   + body + struct.pack("<II", zlib.crc32(piece), len(piece)))
    return b"".join(out) + bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


def gzip_of(data: bytes, kinds: tuple, block: int = 65280) -> bytes:
    """data's lines cut into len(kinds) pieces, each compressed as its kind says ('bgzf': bgzf(),
    'gzip': one plain gzip member), end to end: a file made by `cat a.bgz b.gz ...`."""
    import gzip

    cuts = [0, *(data.rindex(b"\n", 0, len(data) * k // len(kinds)) + 1 for k in range(1, len(kinds))), len(data)]
    return b"".join(bgzf(data[a:b], block) if kind == "bgzf" else gzip.compress(data[a:b])
                    for kind, a, b in zip(kinds, cuts, cuts[1:]))


def run_module(*args, **kwargs):
    """Run ``python -m tcdist ARGS`` in a child process (for exit status and no-traceback checks)."""
    kwargs.setdefault("timeout", 300)
    return subprocess.run([sys.executable, "-m", "tcdist", *map(str, args)], capture_output=True, text=True, **kwargs)


class FreshCudaCache:
    """An environment whose CuPy cache starts empty (TCDIST_CACHE_DIR in tmp_path, the checkout on
    PYTHONPATH, each program's source kept beside it), and the programs it then holds: what a run
    would compile on a fresh host."""

    def __init__(self, tmp_path):
        self.folder = tmp_path / "cache" / "cupy"
        checkout = str(Path(__file__).parents[1])
        self.env = {**os.environ, "TCDIST_CACHE_DIR": str(tmp_path / "cache"), "CUPY_CACHE_SAVE_CUDA_SOURCE": "1",
                    "PYTHONPATH": os.pathsep.join(filter(None, [checkout, os.environ.get("PYTHONPATH")]))}
        self.env.pop("CUPY_CACHE_DIR", None)

    def programs(self) -> set:
        return set(os.listdir(self.folder)) if self.folder.exists() else set()

    def kernels(self, names) -> list:
        """The kernels that programs (by their file names) define, read from their kept sources."""
        found = []
        for name in sorted(names):
            if name.endswith(".cu"):
                found += re.findall(r"__global__\s+void\s+(\w+)", (self.folder / name).read_text(errors="replace"))
        return found


def probes_row_by_row(graph):
    """The work estimate's reference: each row's out-neighbours' out-degrees, summed row by row,
    before every row."""
    out = np.diff(graph.rowptr)
    rows = [int(out[graph.col[graph.rowptr[u]:graph.rowptr[u + 1]]].sum()) for u in range(graph.n)]
    return np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])


def chains_to_a_hub(chains: int, length: int = 30):
    """(graph, assignment) where Algorithm 2 takes a round a link: chains of `length` vertices
    i -> i + 1, each vertex also pointing to one hub; part 0 holds the hub and each chain's first
    vertex, so the rest of a chain are in-neighbours of the hub, each reached from the one before
    it (each chain's last vertex, of degree 2, ranks below the one before it: not reached)."""
    import tcdist

    hub = chains * length
    chain = np.arange(hub).reshape(chains, length)
    src = np.concatenate([chain[:, :-1].ravel(), chain.ravel()])
    dst = np.concatenate([chain[:, 1:].ravel(), np.full(hub, hub)])
    graph = tcdist.load_graph((src, dst))
    ids = np.asarray(graph.original_id)
    return graph, np.where((ids % length == 0) | (ids == hub), 0, 1).astype(np.int64)


def checkout_environment(cache: Path, more: dict | None = None) -> dict:
    """The environment of a process running this checkout's tcdist with its compiled code in cache."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # the checkout first
    env = {**os.environ, "TCDIST_CACHE_DIR": str(cache), "PYTHONPATH": path, **(more or {})}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("CUPY_CACHE_DIR", None)
    return env


def warm_up_process(cache: Path, backend: str):
    """`tcdist warm-up --backend backend --json` into cache, finished."""
    done = subprocess.run([sys.executable, "-m", "tcdist", "warm-up", "--backend", backend, "--json"],
                          capture_output=True, text=True, env=checkout_environment(cache), timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def pytest_configure(config):
    """A folder every pytest-xdist worker shares (the controller makes it; removed at the end)."""
    if "TCDIST_TEST_SHARED" not in os.environ:
        os.environ["TCDIST_TEST_SHARED"] = tempfile.mkdtemp(prefix="tcdist-tests-")
        config.add_cleanup(_removed_shared)


def _removed_shared():
    shared = Path(os.environ.pop("TCDIST_TEST_SHARED"))
    started = shared / "warmed-cache.pid"
    if started.exists() and not (shared / "warmed-cache.status").exists():  # (the tests ended before it did)
        try:
            os.killpg(int(started.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass
    shutil.rmtree(shared, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Where a test needs warmed_cache, its warm-up begins now, in the background, once for every
    worker: the workers go on with other tests meanwhile, none idle while one warms up (two cores:
    35-50 s of a worker)."""
    if any("warmed_cache" in item.fixturenames for item in items):
        _warm_up_begun()


def _warm_up_begun() -> Path:
    """The cache `tcdist warm-up --backend cpu` fills from empty, begun once in the background;
    when it ends, its JSON in the cache's file done, its exit status and errors beside the cache."""
    shared = Path(os.environ["TCDIST_TEST_SHARED"])
    cache = shared / "warmed-cache"
    with open(shared / "warmed-cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cache.exists():
            cache.mkdir()
            warm_up = f"cd {shared} && {sys.executable} -m tcdist warm-up --backend cpu --json"
            pid = os.posix_spawnp("bash", ["bash", "-c", f"{warm_up} > warmed-cache.json 2> warmed-cache.stderr; "
                                           "echo $? > warmed-cache.status; mv warmed-cache.json warmed-cache/done"],
                                  checkout_environment(cache), setsid=True)  # (no Popen left to warn as it goes)
            (shared / "warmed-cache.pid").write_text(str(pid))
    return cache


@pytest.fixture(scope="session")
def warmed_cache():
    """A compile cache `tcdist warm-up --backend cpu` filled from empty, once for every pytest-xdist
    worker (begun in the background as the tests were collected); its JSON in the file done."""
    cache = _warm_up_begun()
    status, deadline = cache.with_suffix(".status"), time.monotonic() + 1200
    while not status.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    ended = status.read_text().strip() if status.exists() else "still running"
    assert ended == "0", f"tcdist warm-up: {ended}\n{cache.with_suffix('.stderr').read_text()[-3000:]}"
    while not (cache / "done").exists():  # (renamed just after the status is written)
        time.sleep(0.05)
    return cache
