"""A result table (named columns of one length, ids possibly labels) as CSV, Parquet or HDF5 by
the file's name; to a stream as CSV. The per-vertex and per-edge files are such tables."""

from __future__ import annotations

from itertools import repeat

import numpy as np

from tcdist.errors import OptionError
from tcdist.io.write import atomic_path, new_h5, stream_fd, stream_writer, suffix_kind

TABLE_KINDS = {".csv": "csv", ".parquet": "parquet", ".h5": "hdf5", ".hdf5": "hdf5"}


def table_kind(path, option: str) -> str:
    """csv, parquet or hdf5, by the file's name; a one-line error naming the option for any other."""
    kind = suffix_kind(path, TABLE_KINDS)
    if kind is None:
        raise OptionError(f"{path}: {{{option}}} writes .csv, .parquet or .h5 files; name it so")
    return kind


def write_table(columns: dict, path, option: str) -> None:
    """The columns, one row per entry, written atomically; to a stream (stream_fd) as CSV."""
    fd = stream_fd(path)
    if fd is not None:
        with stream_writer(fd, path) as out:
            _write_csv(columns, out)
        return
    kind = table_kind(path, option)
    with atomic_path(path) as tmp:
        if kind == "hdf5":
            import h5py

            as_bytes = names_as_bytes(*columns.values())
            with new_h5(tmp) as f:
                for name, values in columns.items():
                    if values.dtype == object and as_bytes:  # labels, as HDF5 strings of bytes
                        f.create_dataset(name, data=labels_as_bytes(values), dtype=h5py.string_dtype("ascii"))
                    elif values.dtype == object:  # labels, as HDF5 strings
                        f.create_dataset(name, data=as_text(values), dtype=h5py.string_dtype())
                    else:
                        f.create_dataset(name, data=values)
        elif kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(_arrow(columns, names_as_bytes(*columns.values())), tmp)
        else:
            with open(tmp, "wb") as f:
                _write_csv(columns, f)


def as_text(values):
    """Labels (an object array: names, tuples, integers past int64) as an object array of str, each
    as long as it is (NumPy's astype(str) makes every one as wide as the longest); bytes as Python
    writes them, b'\\xe9', unlike any name of the text \\xe9."""
    return np.fromiter(map(str, values), object, values.size)


def names_as_bytes(*columns) -> bool:
    """Whether labels are written as bytes (Parquet, HDF5): where some are (names that are not UTF-8), as text
    they would have no form of their own."""
    return any(values.dtype == object and any(map(isinstance, values, repeat(bytes))) for values in columns)


def bytes_as_text(values):
    """Labels, some of them bytes, each as Python writes its bytes (b'alice', b'\xe9'): in a CSV no
    text name (b'\xe9' itself) then reads as another's bytes."""
    return as_text(labels_as_bytes(values))


def labels_as_bytes(values):
    """Labels as an object array of bytes: bytes as they are, any other as its text in UTF-8."""
    return np.fromiter(map(_bytes, values), object, values.size)


def _bytes(label) -> bytes:
    return label if isinstance(label, bytes) else str(label).encode()


def arrow_column(values, as_bytes: bool = False):
    """A column as Arrow writes it: numbers as they are, labels as text (or as_bytes: as bytes)."""
    import pyarrow as pa

    if values.dtype != object:
        return values
    return pa.array(labels_as_bytes(values), pa.large_binary()) if as_bytes else pa.array(as_text(values), pa.string())


def _arrow(columns: dict, as_bytes: bool = False):
    import pyarrow as pa

    return pa.table({name: arrow_column(values, as_bytes) for name, values in columns.items()})


def _write_csv(columns: dict, out) -> None:
    import pyarrow.csv as pcsv

    if names_as_bytes(*columns.values()):
        columns = {name: bytes_as_text(values) if values.dtype == object else values
                   for name, values in columns.items()}
    out.write((",".join(columns) + "\n").encode())  # the header unquoted; labels quoted where they need it
    quoting = "needed" if any(values.dtype == object for values in columns.values()) else "none"
    pcsv.write_csv(_arrow(columns), out, pcsv.WriteOptions(include_header=False, quoting_style=quoting))
