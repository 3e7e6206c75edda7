"""Errors a user can fix: the CLI prints them as one line and exits with status 2.

An error that names an option (OptionError) is written once with the option's API name in
braces, ``{parts}``, and said in the words of whoever runs tcdist: the API's parameter names
(``parts``), or, inside ``options_named(...)``, other names for them (the CLI's ``--parts``).
"""

import contextvars
import re
from collections.abc import Iterator
from contextlib import contextmanager

OPTIONS = ("backend", "kernel", "threads", "parts", "scheme", "prune", "seed", "store", "schedule", "read", "resume",
           "per_vertex", "per_edge", "gpu_memory_limit", "host_memory_limit", "force", "json_file", "output", "labels",
           "ranks_per_gpu", "scratch", "plan")
_NAMED = re.compile(r"\{(" + "|".join((*OPTIONS, "count_labels")) + r")\}")  # count_labels: the count's {labels}
_NAMES = contextvars.ContextVar("tcdist_option_names", default={})
_READS_NAMES = contextvars.ContextVar("tcdist_reads_names", default=True)


@contextmanager
def options_named(names: dict[str, str]) -> Iterator[None]:
    """Errors name the options by these names inside the block (the CLI's flags)."""
    token = _NAMES.set(names)
    try:
        yield
    finally:
        _NAMES.reset(token)


class TcdistError(Exception):
    """A problem with the input or the options, not a bug in tcdist."""


class OptionError(TcdistError):
    """A problem that names options, written with ``{name}`` fields (see above)."""

    def __str__(self) -> str:
        return named(super().__str__())


@contextmanager
def ids_kept_as_integers() -> Iterator[None]:
    """Inside (a call that writes a partition store or a graph file: they keep integer ids only),
    advice to read ids as names names the count, which can."""
    token = _READS_NAMES.set(False)
    try:
        yield
    finally:
        _READS_NAMES.reset(token)


def names_advice() -> str:
    """How to read ids that are names, from here (a problem's text, its options named when said)."""
    if _READS_NAMES.get():
        return "to read ids as names, use {labels}"
    return "to read ids as names, use {count_labels}; a partition store or a converted graph keeps integer ids"


def named(text: str) -> str:
    """text with each {option} in the words of whoever runs tcdist."""
    names = _NAMES.get()

    def name(found):
        option = found.group(1)
        if option == "count_labels":
            return f"tcdist count {names['labels']}" if "labels" in names else "count_triangles(labels=True)"
        return names.get(option, option)

    return _NAMED.sub(name, text)


class InputError(TcdistError):
    """A file that cannot be used; the message names the file and, where known, the line."""

    def __init__(self, path, problem, line=None):
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.problem = problem
        self.line = line
        self.problem = problem

    def __str__(self) -> str:
        return named(super().__str__())  # a problem may name an option ({labels})
