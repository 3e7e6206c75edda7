"""Stage 5: kernels. A kernel takes one oriented CSR and ``n_local`` and returns the number of
triangles whose lowest-rank vertex u is local (``u < n_local``), as a Python int."""

from tcdist.count.cpu import CPU_KERNELS

__all__ = ["CPU_KERNELS"]
