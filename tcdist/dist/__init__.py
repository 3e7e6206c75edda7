"""Stage 6: ranks. The root partitions, every rank counts its parts on its own device, and
the counts meet in a reduce; one process is the one-rank case (see DESIGN.md, "The run path")."""
