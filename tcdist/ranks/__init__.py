"""The run: rank 0 prepares, every rank counts its parts on its own device, and the counts meet
in a reduce; one process is the one-rank case (ARCHITECTURE.md: the run path)."""
