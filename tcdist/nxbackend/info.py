"""What networkx reads of the tcdist backend when it starts (the ``networkx.backend_info`` entry
point): read at every ``import networkx``, so it imports nothing (no NumPy, Numba or CuPy)."""

DECLINED = (" tcdist declines {}: where networkx chose the backend it runs them itself; with backend='tcdist' "
            "they raise NotImplementedError.")
FUNCTIONS = {
    "triangles": "Counted exactly for the whole graph at once (a single node or a list of nodes too); self loops "
                 "are ignored." + DECLINED.format("multigraphs with nodes given"),
    "clustering": "Unweighted undirected graphs." + DECLINED.format("weighted, directed and multigraph calls"),
    "average_clustering": "Unweighted undirected graphs (nodes and count_zeros as networkx)."
                          + DECLINED.format("weighted, directed and multigraph calls"),
    "transitivity": "Undirected graphs without parallel edges." + DECLINED.format("directed graphs and multigraphs"),
    "all_triangles": "Listed from tcdist's oriented CSR in blocks (each triangle once, as a tuple of nodes).",
}


def get_info() -> dict:
    """The backend's name, summary and functions, for networkx's dispatch and docstrings."""
    return {
        "backend_name": "tcdist",
        "project": "tcdist",
        "package": "tcdist",
        "short_summary": "Exact triangle counts and clustering by tcdist (Numba on the CPU, CuPy on a GPU).",
        "functions": {name: {"additional_docs": note} for name, note in FUNCTIONS.items()},
    }
