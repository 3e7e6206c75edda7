"""What the watch checks (watch_check.py, row_parts_watch_check.py) share: the failure the last
rank is given, and rank 0's report of what every rank said."""

import json


def out_of_memory(*args):
    raise MemoryError("out of memory allocating 1,024 bytes")


def report(comm, step, done: str) -> None:
    """step() on every rank; rank 0 prints a JSON list of what each said: done, or "TYPE: MESSAGE"
    of what it raised."""
    try:
        step()
        said = done
    except BaseException as error:
        said = f"{type(error).__name__}: {error}"
    every = comm.gather(said)  # (every rank is here: none waits for the failed one)
    if comm.rank == 0:
        print(json.dumps(every))
