"""The CUDA side shared by every stage: the ``.cu`` sources shipped with tcdist (build.py,
free of CuPy) and their compiled modules and launches (launch.py, which imports CuPy)."""
