"""Errors a user can fix: the CLI prints them as one line and exits with status 2."""


class TcdistError(Exception):
    """A problem with the input or the options, not a bug in tcdist."""


class InputError(TcdistError):
    """A file that cannot be used; the message names the file and, where known, the line."""

    def __init__(self, path, problem, line=None):
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem
