"""The per-vertex file: vertex,triangles,clustering, one row per vertex, as CSV, Parquet or HDF5."""

from __future__ import annotations

from tcdist.errors import OptionError
from tcdist.io.write import atomic_path, stream_fd, stream_writer, suffix_kind
from tcdist.results import PerVertex

PER_VERTEX_KINDS = {".csv": "csv", ".parquet": "parquet", ".h5": "hdf5", ".hdf5": "hdf5"}


def per_vertex_kind(path) -> str:
    """csv, parquet or hdf5, by the file's name; a one-line error for any other."""
    kind = suffix_kind(path, PER_VERTEX_KINDS)
    if kind is None:
        raise OptionError(f"{path}: {{per_vertex}} writes .csv, .parquet or .h5 files; name it so")
    return kind


def write_per_vertex(pv: PerVertex, path) -> None:
    """vertex,triangles,clustering: one row per vertex, written atomically; to a stream (stream_fd) as CSV."""
    fd = stream_fd(path)
    if fd is not None:
        with stream_writer(fd, path) as out:
            _write_csv(pv, out)
        return
    kind = per_vertex_kind(path)
    with atomic_path(path) as tmp:
        if kind == "hdf5":
            import h5py

            with h5py.File(tmp, "w") as f:
                vertex = pv.vertex if pv.vertex.dtype != object else pv.vertex.astype(str).astype(object)
                f.create_dataset("vertex", data=vertex, dtype=h5py.string_dtype() if vertex.dtype == object else None)
                f.create_dataset("triangles", data=pv.triangles)
                f.create_dataset("clustering", data=pv.clustering)
        elif kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(_table(pv), tmp)
        else:
            with open(tmp, "wb") as f:
                _write_csv(pv, f)


def _table(pv: PerVertex):
    import pyarrow as pa

    vertex = pv.vertex.astype(str) if pv.vertex.dtype == object else pv.vertex
    return pa.table({"vertex": vertex, "triangles": pv.triangles, "clustering": pv.clustering})


def _write_csv(pv: PerVertex, out) -> None:
    import pyarrow.csv as pcsv

    out.write(b"vertex,triangles,clustering\n")  # the header unquoted; labels quoted where they need it
    quoting = "needed" if pv.vertex.dtype == object else "none"
    pcsv.write_csv(_table(pv), out, pcsv.WriteOptions(include_header=False, quoting_style=quoting))
