"""Stage 2: clean, rank and orient a graph into CSR (see DESIGN.md)."""

from tcdist.graph.build import build_graph
from tcdist.graph.graph import Graph

__all__ = ["Graph", "build_graph"]
