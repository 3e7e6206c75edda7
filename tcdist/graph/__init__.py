"""Clean, rank and orient a graph into CSR (ARCHITECTURE.md: the stages)."""

from tcdist.graph.build import build_graph
from tcdist.graph.graph import Graph

__all__ = ["Graph", "build_graph"]
