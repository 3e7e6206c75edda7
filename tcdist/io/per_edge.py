"""The per-edge file: u,v,triangles, one row per edge (u < v, sorted), as CSV, Parquet or HDF5."""

from __future__ import annotations

from tcdist.io.table import table_kind, write_table
from tcdist.results import PerEdge


def per_edge_kind(path) -> str:
    """csv, parquet or hdf5, by the file's name; a one-line error for any other."""
    return table_kind(path, "per_edge")


def write_per_edge(pe: PerEdge, path) -> None:
    """u,v,triangles: one row per edge, written atomically; to a stream (stream_fd) as CSV."""
    write_table({"u": pe.u, "v": pe.v, "triangles": pe.triangles}, path, "per_edge")
