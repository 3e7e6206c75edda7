"""What fits: the one memory model (model.py), the host's memory (host.py), sizes in bytes
(sizes.py), the search for the number of parts (search.py) and the plan of slices (slices.py).
Nothing is imported here, so the stages below partitioning may use the model and the host's
memory without the search and plan, which sit above partitioning."""
