"""The triangle file of `tcdist list`: columns u, v, w (u < v < w in the input's ids; labels as
text, or bytes, as in a result table), one row per triangle, streamed block by block as Parquet or CSV, so
a listing larger than memory is written whole."""

from __future__ import annotations

from tcdist.errors import OptionError
from tcdist.io.table import arrow_column, bytes_as_text
from tcdist.io.write import atomic_path, stream_fd, stream_writer, suffix_kind

TRIANGLE_KINDS = {".parquet": "parquet", ".csv": "csv"}


def triangle_kind(path) -> str:
    """parquet or csv, by the file's name; a one-line error for any other."""
    kind = suffix_kind(path, TRIANGLE_KINDS)
    if kind is None:
        raise OptionError(f"{path}: a triangle list is written as .parquet or .csv; name it so")
    return kind


def write_triangles(blocks, path, as_bytes: bool = False) -> int:
    """Every (k, 3) block of triangles to path (a stream: CSV), in order: the rows written. as_bytes:
    labels as bytes in Parquet (table.names_as_bytes of the graph's labels: each block's column alike)."""
    import pyarrow as pa  # here: only a listing writes this file

    rows = 0

    def tables():
        nonlocal rows
        for block in blocks:
            rows += len(block)
            names_as_text = as_bytes and kind == "csv"  # (every name as its bytes' text: see table.bytes_as_text)
            yield pa.table({name: arrow_column(bytes_as_text(block[:, corner]) if names_as_text else block[:, corner],
                                               as_bytes and kind == "parquet") for corner, name in enumerate("uvw")})

    fd = stream_fd(path)
    kind = "csv" if fd is not None else triangle_kind(path)
    if fd is not None:
        with stream_writer(fd, path) as out:
            _csv(tables(), out)
        return rows
    with atomic_path(path) as tmp:
        if kind == "parquet":
            _parquet(tables(), tmp)
        else:
            with open(tmp, "wb") as out:
                _csv(tables(), out)
    return rows


def _parquet(tables, path) -> None:
    import pyarrow.parquet as pq

    writer = None
    for table in tables:
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    if writer is None:  # no triangle: an empty file with the columns
        import pyarrow as pa

        pq.write_table(pa.table({"u": pa.array([], pa.int64()), "v": pa.array([], pa.int64()),
                                 "w": pa.array([], pa.int64())}), path)
    else:
        writer.close()


def _csv(tables, out) -> None:
    import pyarrow.csv as pcsv

    out.write(b"u,v,w\n")
    for table in tables:
        pcsv.write_csv(table, out, pcsv.WriteOptions(include_header=False))
