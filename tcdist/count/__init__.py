"""Stage 5: kernels. A kernel takes one oriented CSR and ``n_local`` and returns the number of
triangles whose lowest-rank vertex u is local (``u < n_local``), as a Python int. Each is a
module of count/kernels/, found by count/registry.py."""
