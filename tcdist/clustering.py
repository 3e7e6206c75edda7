"""Per-vertex triangles to clustering coefficients, and the per-vertex file.

local clustering c(v) = 2 t(v) / (d(v) (d(v) - 1)) on the simple undirected graph (0 for d < 2);
transitivity = 3 T / wedges; the average local clustering is taken over the graph's vertices
(those with at least one edge; networkx also averages in isolated nodes, at 0).
Counts stay integers until the final ratios.
"""

from __future__ import annotations

import numpy as np

from tcdist.errors import TcdistError
from tcdist.results import PerVertex

PER_VERTEX_KINDS = {".csv": "csv", ".parquet": "parquet", ".h5": "hdf5", ".hdf5": "hdf5"}


def exact_sum(values) -> int:
    """The exact sum of non-negative integers below 2^63 (uint64 halves summed apart: NumPy's
    sum wraps silently past 2^64)."""
    values = np.asarray(values).astype(np.uint64)
    return (int((values >> np.uint64(32)).sum()) << 32) + int((values & np.uint64(0xFFFFFFFF)).sum())


def wedge_counts(degree):
    """d (d - 1) / 2 per vertex, as uint64 (0 for d < 2)."""
    d = np.asarray(degree).astype(np.uint64)
    return np.where(d >= 2, d * (d - np.uint64(1)) // np.uint64(2), np.uint64(0))


def per_vertex_result(ids, degree, triangles, total: int) -> tuple[PerVertex, float, float]:
    """(per-vertex arrays, transitivity, average local clustering) of a whole graph."""
    pairs = wedge_counts(degree)
    credited = exact_sum(triangles)
    if credited != 3 * total:
        raise TcdistError(f"internal error: per-vertex triangles add up to {credited}, not 3 x {total}")
    clustering = np.divide(triangles.astype(np.float64), pairs.astype(np.float64),
                           out=np.zeros(triangles.size), where=pairs > 0)
    wedges = exact_sum(pairs)
    transitivity = 3 * total / wedges if wedges else 0.0
    return PerVertex(ids, triangles, clustering), transitivity, float(clustering.mean()) if clustering.size else 0.0


def per_vertex_kind(path) -> str:
    """csv, parquet or hdf5, by the file's name; a one-line error for any other."""
    name = str(path).lower()
    for suffix, kind in PER_VERTEX_KINDS.items():
        if name.endswith(suffix):
            return kind
    raise TcdistError(f"{path}: --per-vertex writes .csv, .parquet or .h5 files; name it so")


def write_per_vertex(pv: PerVertex, path) -> None:
    """vertex,triangles,clustering: one row per vertex, written atomically."""
    from tcdist.io.write import atomic_path

    kind = per_vertex_kind(path)
    with atomic_path(path) as tmp:
        if kind == "hdf5":
            import h5py

            with h5py.File(tmp, "w") as f:
                vertex = pv.vertex if pv.vertex.dtype != object else pv.vertex.astype(str).astype(object)
                f.create_dataset("vertex", data=vertex, dtype=h5py.string_dtype() if vertex.dtype == object else None)
                f.create_dataset("triangles", data=pv.triangles)
                f.create_dataset("clustering", data=pv.clustering)
            return
        import pyarrow as pa

        vertex = pv.vertex.astype(str) if pv.vertex.dtype == object else pv.vertex
        table = pa.table({"vertex": vertex, "triangles": pv.triangles, "clustering": pv.clustering})
        if kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
        else:
            import pyarrow.csv as pcsv

            with open(tmp, "wb") as f:  # the header unquoted; labels quoted where they need it
                f.write(b"vertex,triangles,clustering\n")
                quoting = "needed" if pv.vertex.dtype == object else "none"
                pcsv.write_csv(table, f, pcsv.WriteOptions(include_header=False, quoting_style=quoting))
