"""Edge lists formatted as text on every thread: the lines Python's own formatting makes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdist.io import lines
from tcdist.io.write import write_edge_list

ids = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ids, ids), max_size=200), st.sampled_from("\t,"))
def test_text_is_pythons_formatting(edges, separator):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    assert lines.text(src, dst, ord(separator)).tobytes() == "".join(f"{u}{separator}{v}\n" for u, v in edges).encode()


def test_blocks_are_written_in_order(monkeypatch, tmp_path):
    monkeypatch.setattr(lines, "BLOCK", 7)
    src = np.arange(100, dtype=np.int64) * 123457 - 5000
    dst = np.arange(100, dtype=np.int64)[::-1] * 99
    write_edge_list(src, dst, tmp_path / "e.txt")
    assert (tmp_path / "e.txt").read_bytes() == "".join(f"{u}\t{v}\n" for u, v in zip(src, dst)).encode()


def test_the_bytes_pyarrows_csv_writer_wrote(tmp_path):
    """The files (gzip included) are byte for byte what write_edge_list wrote before, with pyarrow's CSV writer."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    src, dst = (np.random.default_rng(2).integers(0, 10**12, 300_000) for _ in range(2))
    for name in ("e.txt", "e.txt.gz"):
        with pa.output_stream(tmp_path / f"pa-{name}", compression="gzip" if name.endswith(".gz") else None) as out:
            pcsv.write_csv(pa.table({"u": src, "v": dst}), out, pcsv.WriteOptions(include_header=False, delimiter="\t"))
        write_edge_list(src, dst, tmp_path / name)
        assert (tmp_path / name).read_bytes() == (tmp_path / f"pa-{name}").read_bytes()
