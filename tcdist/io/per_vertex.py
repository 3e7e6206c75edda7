"""The per-vertex file: vertex,triangles,clustering, one row per vertex, as CSV, Parquet or HDF5."""

from __future__ import annotations

from tcdist.io.table import table_kind, write_table
from tcdist.results import PerVertex


def per_vertex_kind(path) -> str:
    """csv, parquet or hdf5, by the file's name; a one-line error for any other."""
    return table_kind(path, "per_vertex")


def write_per_vertex(pv: PerVertex, path) -> None:
    """vertex,triangles,clustering: one row per vertex, written atomically; to a stream (stream_fd) as CSV."""
    write_table({"vertex": pv.vertex, "triangles": pv.triangles, "clustering": pv.clustering}, path, "per_vertex")
