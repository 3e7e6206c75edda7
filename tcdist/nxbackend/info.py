"""What networkx reads of the tcdist backend when it starts (the ``networkx.backend_info`` entry
point): read at every ``import networkx``, so it imports nothing (no NumPy, Numba or CuPy)."""

FUNCTIONS = {
    "triangles": "Counted exactly for the whole graph at once (a single node or a list of nodes too); "
                 "self loops are ignored. Directed graphs run in networkx, and so do multigraphs with nodes given.",
    "clustering": "Unweighted undirected graphs only; weighted, directed and multigraph calls run in networkx.",
    "average_clustering": "Unweighted undirected graphs only (nodes and count_zeros as networkx); the rest runs "
                          "in networkx.",
    "transitivity": "Undirected graphs without parallel edges; directed graphs and multigraphs run in networkx.",
    "all_triangles": "Listed from tcdist's oriented CSR in blocks (each triangle once, as a tuple of nodes); "
                     "directed graphs run in networkx.",
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
