"""tcdist as a networkx backend: ``nx.triangles(G, backend="tcdist")``, or every call once
``nx.config.backend_priority = ["tcdist"]``. Importing this package loads nothing: info.py is read
by networkx at its own import; interface.py (the backend networkx loads on first dispatch) brings
the rest."""
