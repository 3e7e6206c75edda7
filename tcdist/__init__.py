"""tcdist: exact triangle counting on one GPU, several GPUs or a cluster.

Importing tcdist touches neither CUDA nor MPI; the public API is loaded on first use.
"""

from tcdist.caches import use_cache_dir

use_cache_dir()  # before CuPy or Numba is imported

__version__ = "0.1.0"
__all__ = ["count_triangles", "plan_count", "load_graph", "convert", "write_generated", "list_triangles",
           "TriangleCount", "Graph", "TcdistError", "__version__"]

_LAZY = {
    "count_triangles": "tcdist.api",
    "plan_count": "tcdist.api",
    "load_graph": "tcdist.api",
    "convert": "tcdist.api",
    "write_generated": "tcdist.api",
    "list_triangles": "tcdist.api",
    "TriangleCount": "tcdist.api",
    "Graph": "tcdist.graph",
    "TcdistError": "tcdist.errors",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tcdist' has no attribute {name!r}")
