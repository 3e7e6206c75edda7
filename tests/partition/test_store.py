"""The HDF5 partition store: round trip, reuse, and refusal of every kind of bad file."""

import os
import sys

import h5py
import numpy as np
import pytest
from conftest import edited_h5, run_module

import tcdist
from tcdist.errors import InputError
from tcdist.partition import partition_graph
from tcdist.partition import store as store_module
from tcdist.partition.part import STAT_KEYS
from tcdist.partition.store import Store, write_store

ROUND_TRIP = ("rowptr", "col", "global_id")


@pytest.fixture
def parts_file(tmp_path, cli):
    path = tmp_path / "parts.h5"
    assert cli("partition", "rmat:12", "-o", path, "-P", "4", "--seed", "3").code == 0
    return path


def one_line(result):
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


def test_round_trip_keeps_every_array_and_attribute(tmp_path):
    graph = tcdist.load_graph("rmat:11")
    p = partition_graph(graph, 5, scheme="contiguous", prune="minimal", seed=9)
    path = tmp_path / "p.h5"
    write_store(p, path)
    with Store(path) as s:
        h = s.header
        assert h["fingerprint"] == graph.fingerprint()
        assert (h["scheme"], h["prune"], h["seed"], s.num_parts, h["graph_n"], h["graph_m"]) == (
            "contiguous", "minimal", 9, 5, graph.n, graph.m)
        assert np.array_equal(s.assignment(), p.assignment)
        back = [s.part(i) for i in range(s.num_parts)]
    for a, b in zip(p.parts, back):
        assert {k: a.stats[k] for k in STAT_KEYS} == b.stats and a.n_local == b.n_local  # not the rule's degrees
        for name in ROUND_TRIP:
            assert np.array_equal(getattr(a, name), getattr(b, name))
    with h5py.File(path) as f:
        assert f.attrs["format"] == "tcdist-partitions" and f.attrs["version"] == 3
        assert f.attrs["tcdist_version"] == tcdist.__version__
        assert len(f.attrs["digest"]) == 32 and all(len(f[f"part{i:05d}"].attrs["digest"]) == 32 for i in range(5))


def test_count_from_store_equals_direct_count(parts_file, cli):
    record = cli("count", parts_file, "--json").json()
    direct = cli("count", "rmat:12", "--seed", "3", "--json").json()
    assert record["triangles"] == direct["triangles"]
    assert (record["parts"], record["scheme"], record["prune"]) == (4, "random", "lstc")
    assert [s["part"] for s in record["part_stats"]] == [0, 1, 2, 3]
    assert sum(s["triangles"] for s in record["part_stats"]) == record["triangles"]
    assert {"v_ind", "v_res", "e_ind", "e_res", "bytes", "work", "n_local"} <= record["part_stats"][0].keys()


def test_count_with_store_writes_then_reuses(tmp_path, cli):
    path = tmp_path / "s.h5"
    first = cli("count", "rmat:11", "-P", "3", "--store", path, "--json").json()
    stamp = path.stat().st_mtime_ns
    again = cli("count", "rmat:11", "-P", "3", "--store", path, "--json").json()
    assert path.stat().st_mtime_ns == stamp, "an existing matching store is reused, not rewritten"
    assert first["triangles"] == again["triangles"] == cli("count", "rmat:11", "--json").json()["triangles"]


def test_info_prints_the_statistics_table(parts_file, cli):
    text = cli("info", parts_file).out
    assert "V_ind" in text and "E_res" in text and "total" in text and "replication" in text
    record = cli("info", parts_file, "--json").json()
    assert len(record["part_stats"]) == 4 and record["scheme"] == "random"


def test_store_of_another_graph_is_refused_and_kept(parts_file, cli):
    before = parts_file.read_bytes()
    result = cli("count", "rmat:11", "-P", "4", "--seed", "3", "--store", parts_file)
    assert result.code == 2 and "it was made from another graph" in one_line(result)
    assert parts_file.read_bytes() == before


def test_store_with_other_options_is_refused(parts_file, cli):
    result = cli("count", "rmat:12", "-P", "8", "--seed", "3", "--store", parts_file)
    assert result.code == 2 and "parts 4 (asked for 8)" in one_line(result)
    result = cli("count", parts_file, "--parts", "2")
    assert result.code == 2 and "parts 2 cannot apply" in one_line(result)


def test_corrupt_part_dataset_is_refused(parts_file, cli):
    with h5py.File(parts_file, "r") as f:
        offset = f["part00002/col"].id.get_offset()
    data = bytearray(parts_file.read_bytes())
    data[offset + 40] ^= 0x5A
    parts_file.write_bytes(bytes(data))
    result = cli("count", parts_file)
    assert result.code == 2
    assert one_line(result) == (f"tcdist: error: {parts_file}: part 2 is corrupt "
                                "(its arrays or attributes do not match its digest)")


def test_truncated_store_is_refused(parts_file, cli):
    data = parts_file.read_bytes()
    parts_file.write_bytes(data[: len(data) * 2 // 3])
    result = cli("count", parts_file)
    assert result.code == 2 and one_line(result).startswith(f"tcdist: error: {parts_file}: ")


def test_future_version_store_is_refused(parts_file, cli):
    with edited_h5(parts_file) as f:
        f.attrs["version"] = 4
    result = cli("count", parts_file)
    assert result.code == 2 and "tcdist-partitions version 4 is not supported" in one_line(result)


def test_store_with_a_missing_part_is_refused(parts_file, cli):
    with edited_h5(parts_file) as f:
        del f["part00003"]
    result = cli("count", parts_file)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {parts_file}: part 3 of 4 is missing"


@pytest.mark.parametrize("group,name,value,problem", [
    ("part00001", "n_local", 7, "part 1 is corrupt (its arrays or attributes do not match its digest)"),
    ("part00001", "work", 0, "part 1 is corrupt"),
    ("", "parts", 2, "the store header does not match its digest"),
    ("", "parts", 10**10, "part 4 of 10000000000 is missing"),
    ("", "fingerprint", "0" * 32, "the store header does not match its digest"),
    ("", "seed", 4, "the store header does not match its digest"),
    ("part00001", "n_local", "seven", "part 1: attribute 'n_local' is not an integer"),
    ("", "graph_n", 1.5, "store header: attribute 'graph_n' is not an integer"),
])
def test_a_changed_attribute_is_refused(parts_file, cli, group, name, value, problem):
    """Attributes were outside every checksum: a flipped n_local changed the count, a smaller
    'parts' dropped parts, a huge one looped for hours, a swapped fingerprint reused another store."""
    with edited_h5(parts_file) as f:
        (f[group] if group else f).attrs[name] = value
    result = cli("count", parts_file)
    assert result.code == 2 and problem in one_line(result)


def test_a_missing_attribute_is_refused(parts_file, cli):
    with edited_h5(parts_file) as f:
        del f["part00002"].attrs["n_local"]
    result = cli("count", parts_file)
    assert result.code == 2 and "part 2: attribute 'n_local' is missing" in one_line(result)


def _rewrite_with(tmp_path, change):
    """A store whose part 1 was altered before it was written, so its digests are consistent."""
    p = partition_graph(tcdist.load_graph("rmat:12"), 3, seed=1)
    change(p.parts[1])
    path = tmp_path / "altered.h5"
    write_store(p, path)
    return path


def _reverse_a_row(part):
    row = int(np.flatnonzero(np.diff(part.rowptr) >= 2)[0])
    lo, hi = part.rowptr[row], part.rowptr[row + 1]
    part.col[lo:hi] = part.col[lo:hi][::-1].copy()


def _lower_a_row_end(part):
    part.rowptr[2] = part.rowptr[3] + 1


def _point_outside(part):
    """Once a segfault: an id past the end reached the Numba kernel unchecked."""
    part.col[-1] = part.n + 1000


def _turn_an_edge_back(part):
    """A local edge u -> 0, sorted and in range: only the order of the ids says it is wrong (the
    forward and wetric kernels would miss or double count its triangles)."""
    out = np.diff(part.rowptr[: part.n_local + 1])
    u = 1 + int(np.flatnonzero(out[1:] > 0)[0])
    part.col[part.rowptr[u]] = 0


@pytest.mark.parametrize("change,problem", [
    (_turn_an_edge_back, "an edge breaks the order of its ids (locals, then proxies, each in rank order)"),
    (_reverse_a_row, "a row is not sorted (or repeats a column)"),
    (_lower_a_row_end, "rowptr does not rise from 0 to the number of edges"),
    (_point_outside, "a column index lies outside 0..{last}"),
])
@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_consistently_signed_store_with_a_bad_csr_is_refused(tmp_path, cli, change, problem, backend):
    """On the GPU the same check runs on the device's copy (Device.put), before any kernel."""
    path = _rewrite_with(tmp_path, change)
    result = cli("count", path, "--backend", backend)
    with Store(path) as store:
        last = store.stats(1)["v_res"] - 1
    assert result.code == 2 and one_line(result) == f"tcdist: error: {path}: part 1: {problem.format(last=last)}"


def test_a_graph_file_with_a_changed_attribute_or_array_is_refused(tmp_path, cli):
    path = tmp_path / "g.h5"
    assert cli("convert", "rmat:10", path).code == 0
    with edited_h5(path) as f:
        f.attrs["m"] = 5
    result = cli("count", path)
    assert result.code == 2 and "do not match its digest" in one_line(result)


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_consistently_signed_graph_file_whose_edge_turns_back_is_refused(tmp_path, cli, backend):
    """A row u whose first column is 0 < u (sorted, in range, digests made after the change):
    checked on the host, or on the GPU that the graph is read into."""
    from tcdist.io.h5graph import write_graph

    graph = tcdist.load_graph("rmat:8")
    u = int(np.flatnonzero(np.diff(graph.rowptr) > 0)[1])
    graph.col = graph.col.copy()
    graph.col[graph.rowptr[u]] = 0
    write_graph(graph, tmp_path / "g.h5")
    result = cli("count", tmp_path / "g.h5", "--backend", backend)
    assert result.code == 2 and one_line(result) == (f"tcdist: error: {tmp_path / 'g.h5'}: inconsistent CSR arrays: "
                                                     "an edge u -> v has u >= v (not oriented by rank)")


def test_a_graph_file_is_not_a_store(tmp_path, cli):
    graph_file = tmp_path / "g.h5"
    assert cli("convert", "rmat:10", graph_file).code == 0
    result = cli("count", "rmat:10", "-P", "2", "--store", graph_file)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {graph_file}: exists and cannot be reused (a " \
                                                   "'tcdist-graph' file); give --store another name"


def test_a_crash_while_writing_leaves_no_file(tmp_path, monkeypatch):
    graph = tcdist.load_graph("rmat:10")
    p = partition_graph(graph, 4)
    calls = []

    def failing(group, name, data):
        calls.append(name)
        if len(calls) == 5:
            raise RuntimeError("disk full")
        group.create_dataset(name, data=data)

    monkeypatch.setattr(store_module, "write_dataset", failing)
    with pytest.raises(RuntimeError):
        write_store(p, tmp_path / "p.h5")
    assert list(tmp_path.iterdir()) == []


def test_a_part_that_fails_to_build_while_the_one_before_is_written_leaves_no_file(tmp_path):
    p = partition_graph(tcdist.load_graph("rmat:10"), 4)
    built = iter(p.parts)

    def parts():
        yield next(built)
        yield next(built)
        raise RuntimeError("out of memory")

    p.parts = parts()
    with pytest.raises(RuntimeError, match="out of memory"):
        write_store(p, tmp_path / "p.h5")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
@pytest.mark.parametrize("spec,parts", [("rmat:14", 5), ("rmat:20", 2)])  # rmat:20's columns copied to registered pages
def test_a_store_built_on_the_gpu_is_the_one_built_on_the_host(tmp_path, spec, parts):
    stores = {}
    for backend in ("gpu", "cpu"):
        tcdist.api.partition(spec, parts=parts, output=tmp_path / f"{backend}.h5", backend=backend)
        with Store(tmp_path / f"{backend}.h5") as store:
            stores[backend] = store.header, [store.part(i) for i in range(parts)]
    (gpu_header, gpu_parts), (cpu_header, cpu_parts) = stores["gpu"], stores["cpu"]
    assert gpu_header == cpu_header
    for a, b in zip(gpu_parts, cpu_parts):
        assert all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("rowptr", "col", "global_id"))


@pytest.mark.parametrize("args,problem", [
    (["partition", "rmat:8", "-o", "x.h5"], "the following arguments are required: --parts/-P"),
    (["partition", "rmat:8", "-o", "x.h5", "-P", "0"], "must be at least 1"),
    (["count", "--scheme", "spectral"], "invalid choice: 'spectral'"),
    (["count", "--prune", "some"], "invalid choice: 'some'"),
])
def test_impossible_partition_options(cli, args, problem):
    result = cli(*args)
    assert result.code == 2 and problem in one_line(result)


def test_metis_without_pymetis_says_how_to_install(monkeypatch, cli):
    import builtins

    real_import = builtins.__import__

    def no_pymetis(name, *args, **kwargs):
        if name == "pymetis":
            raise ImportError("no pymetis")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pymetis)
    result = cli("count", "rmat:8", "-P", "2", "--scheme", "metis")
    assert result.code == 2 and "pip install 'tcdist[metis]'" in one_line(result)


def test_an_edit_behind_the_seal_is_refused_before_libhdf5_parses_it(parts_file, cli):
    with h5py.File(parts_file, "a") as f:  # a valid HDF5 edit, but not sealed again
        f["part00001"].attrs["n_local"] = 7
    size = parts_file.stat().st_size
    result = cli("count", parts_file)
    assert result.code == 2 and one_line(result).startswith(
        f"tcdist: error: {parts_file}: truncated or altered file ({size:,} bytes, its seal says ")


def test_a_flipped_metadata_bit_that_hung_libhdf5_is_refused(tmp_path):
    """Found by the fuzz test (seed 101, case 88): bit 3 of byte 3349 of the HDF5 part of this
    store sent h5py's first attribute read into an endless loop inside libhdf5. The byte is
    where libhdf5 1.14 (h5py 3.x wheels) lays out this store; elsewhere the flip still must be refused."""
    path = tmp_path / "s.h5"
    assert run_module("partition", "rmat:8", "-o", path, "-P", "3", "-q").returncode == 0
    data = bytearray(path.read_bytes())
    block = int(data[:32].split(b"\n")[0].split()[-1])
    data[block + 3349] ^= 1 << 3
    path.write_bytes(bytes(data))
    result = run_module("count", path, "--backend", "cpu", timeout=60)
    assert result.returncode == 2 and "damaged HDF5 metadata" in result.stderr


def test_no_metadata_flip_reaches_libhdf5(parts_file, monkeypatch):
    """Every bit flipped outside the raw data (every 7th byte, a different bit each) is refused by
    the seal before h5py is asked to open the file."""
    from tcdist.io import hdf5, seal

    fields, block = seal.read_seal(parts_file)
    raw = [range(o, o + n) for o, n in fields["raw"]]
    original = parts_file.read_bytes()
    opened = []
    monkeypatch.setattr(h5py, "File", lambda *a, **k: opened.append(a))
    positions = [i for i in range(block, len(original), 7) if not any(i in r for r in raw)]
    assert len(positions) > 500
    for i in positions:
        damaged = bytearray(original)
        damaged[i] ^= 1 << (i % 8)
        parts_file.write_bytes(bytes(damaged))
        with pytest.raises(InputError, match="damaged HDF5 metadata"):
            hdf5.open_h5(parts_file)
    assert opened == []


@pytest.mark.parametrize("first,problem", [
    (b"tcdist-seal 1 999\n", "damaged tcdist seal (its first line)"),
    (b"tcdist-seal 1 2048\n{{", "damaged tcdist seal (not JSON)"),
    (b"tcdist-seal 1 2147483648\n", "damaged tcdist seal (its first line)"),
])
def test_a_damaged_seal_is_one_line(parts_file, cli, first, problem):
    data = bytearray(parts_file.read_bytes())
    data[: len(first)] = first
    parts_file.write_bytes(bytes(data))
    result = cli("count", parts_file)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {parts_file}: {problem}"


def test_a_seal_with_odd_fields_is_one_line(parts_file, cli):
    data = parts_file.read_bytes()
    first, rest = data.split(b"\n", 1)
    text = rest.split(b"\0", 1)[0]
    odd = text.replace(b'"version":3', b'"version":-3')
    parts_file.write_bytes(first + b"\n" + odd + data[len(first) + 1 + len(odd):])
    result = cli("count", parts_file)
    assert result.code == 2 and one_line(result) == f"tcdist: error: {parts_file}: damaged tcdist seal (odd fields or ranges)"


@pytest.mark.parametrize("at", [1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 3 * (1 << 16) - 1])
def test_the_row_order_check_sees_a_fall_on_either_side_of_its_slices(at):
    """csr_problem compares columns a slice at a time (to bound its memory): a fall at a slice's
    first or last column, or across two slices, is still found; a new row may start lower."""
    from tcdist.graph.check import csr_problem

    size = 3 * (1 << 16)
    col = np.arange(size, dtype=np.int64)
    rowptr = np.full(size // 2 + 1, size, dtype=np.int64)  # two long rows, then empty ones
    rowptr[:2] = 0, size // 2
    col[size // 2 :] -= size // 2  # the second row starts again from 0: not a fall
    assert csr_problem(rowptr, col, 2) is None
    col[at], col[at - 1] = col[at - 1], col[at]
    assert csr_problem(rowptr, col, 2) == "a row is not sorted (or repeats a column)"


@pytest.mark.parametrize("layout", ["contiguous", "chunked", "compressed"])
def test_an_array_and_its_checksum_are_read_as_h5py_reads_them(tmp_path, layout):
    """read_array reads a contiguous dataset straight from the file, block by block on threads,
    each block's crc32 taken as it comes (others through h5py): the same values, and the same
    checksum array_checksum gives, over a dataset of several 64 MiB blocks and an empty one."""
    from tcdist.io.hdf5 import array_checksum, read_array

    values = np.random.default_rng(5).integers(-2**62, 2**62, size=(150 << 20) // 8 + 3, dtype=np.int64)
    options = {"contiguous": {}, "chunked": {"chunks": (1 << 20,)}, "compressed": {"compression": "gzip"}}[layout]
    path = tmp_path / "a.h5"
    with h5py.File(path, "w", userblock_size=4096) as f:
        f.create_dataset("big", data=values, **options)
        f.create_dataset("empty", shape=(0,), dtype=np.int32, **({} if layout == "contiguous" else
                                                                  {"chunks": (8,), "maxshape": (None,)}))
        f.create_dataset("flat", data=np.zeros((2, 2), np.int32))
    with h5py.File(path, "r") as f:
        for name, expected in (("big", values), ("empty", np.zeros(0, np.int32))):
            data, checksum = read_array(path, f, name)
            assert data.dtype == expected.dtype and np.array_equal(data, expected)
            assert checksum == array_checksum(expected)
        assert len(read_array(path, f, "big")[1][2]) == 3  # three blocks
        with pytest.raises(InputError, match="not a one-dimensional integer array"):
            read_array(path, f, "flat")


def test_an_array_is_read_from_the_file_h5py_has_open_even_if_another_now_lies_at_its_path(tmp_path):
    """The raw read takes h5py's own file handle: a file written over the path after it was opened
    (a store replaced by a later partitioning) is not mixed into the open one."""
    from tcdist.io.hdf5 import read_array

    path, other = tmp_path / "a.h5", tmp_path / "b.h5"
    for where, start in ((path, 0), (other, 7)):
        with h5py.File(where, "w") as f:
            f.create_dataset("x", data=np.arange(start, start + 1000, dtype=np.int64))
    with h5py.File(path, "r") as f:
        os.replace(other, path)
        assert np.array_equal(read_array(path, f, "x")[0], np.arange(1000))


def test_every_block_of_a_part_is_sent_to_the_disk_as_it_is_written(tmp_path, monkeypatch):
    """The disk starts on each 64 MiB block of an array as soon as it is in the page cache, not
    at the part's sync: before, the kernel held gigabytes of a part before it began, and the disk
    sat idle while a part was copied in (`partition rmat:26 --parts 4` waited 16.9 s for a
    store that dd writes in 14.8 s). The ranges started cover every byte of every array, once."""
    from tcdist.io import hdf5

    started = []
    monkeypatch.setattr(hdf5, "CHECKSUM_BLOCK", 1 << 12)
    monkeypatch.setattr(hdf5, "start_writeback", lambda fd, offset, length: started.append((offset, length)))
    p = partition_graph(tcdist.load_graph("rmat:10"), 3)
    write_store(p, tmp_path / "p.h5")
    with h5py.File(tmp_path / "p.h5", "r") as f:
        arrays = [f[name] for name in ("assignment", "original_id", "degree")] + \
                 [f[f"part{i:05d}/{name}"] for i in range(3) for name in ("rowptr", "col", "global_id")]
        spans = sorted((a.id.get_offset(), a.id.get_storage_size()) for a in arrays if a.size)
    assert sum(n for _, n in started) == sum(n for _, n in spans), "each byte once"
    assert _merged(started) == _merged(spans) and all(n <= 1 << 12 for _, n in started), "a block at a time"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
def test_the_disk_is_started_through_the_c_library_on_linux(tmp_path):
    from tcdist.io import hdf5

    assert hdf5._sync_file_range is not None
    with open(tmp_path / "f", "wb") as f:
        f.write(b"x" * 100_000)
        f.flush()
        assert hdf5._sync_file_range(f.fileno(), 0, 100_000, hdf5._SYNC_FILE_RANGE_WRITE) == 0


def _merged(ranges):
    """(offset, length) ranges joined where they touch."""
    joined = []
    for offset, length in sorted(ranges):
        if joined and joined[-1][0] + joined[-1][1] == offset:
            joined[-1] = (joined[-1][0], joined[-1][1] + length)
        else:
            joined.append((offset, length))
    return joined
