"""Gzip input. A regular file on a host of PARALLEL_FROM cores or more is inflated on every core
(rapidgzip); a pipe, or a file on fewer cores, on one (ISA-L: three times zlib's speed), on the
read-ahead thread beside the parse. Measured in results/gzip-inflate-h100.json.

rapidgzip returns the data of a file cut short without an error, so its end is checked here: the
gzip trailer's size must be what came out. Where it is not, the file is cut short or holds several
gzip members (whose last trailer counts the last only), and one pass of ISA-L tells which.
"""

from __future__ import annotations

import importlib.util
import io
import os
import zlib

from isal import igzip, isal_zlib

from tcdist.budget.host import bound_cores

PARALLEL_FROM = 8  # cores from which rapidgzip's parallel inflate is faster than ISA-L's one stream
MOST_THREADS = 16  # rapidgzip's threads at most (each may hold some 160 MiB; 16 inflate 1.2 GB/s, past the parse)
BGZF_END = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")  # BGZF's last, empty member
_PASS_BYTES = 16 << 20  # what the checking pass inflates at a time
ERRORS = (EOFError, OSError, zlib.error, isal_zlib.error)  # what damaged gzip data raises on reading


def parallel(path) -> bool:
    """Whether this regular file is inflated on every core (rapidgzip is a dependency; a Python
    path that lacks it reads on one core)."""
    return bound_cores() >= PARALLEL_FROM and path != "-" and os.path.isfile(path) and \
        importlib.util.find_spec("rapidgzip") is not None


def one_stream(raw) -> io.BufferedReader:
    """The inflated bytes of an open gzip stream, on one core."""
    return io.BufferedReader(igzip.IGzipFile(fileobj=raw, mode="rb"), 1 << 20)


class Inflated(io.RawIOBase):
    """A gzip file's inflated bytes, made on every core, its end checked; read_so_far: what tells
    the file's bytes read so far (as a file read in one stream tells them: its tell())."""

    def __init__(self, path):
        import rapidgzip

        self.path, self.out, self.ended = path, 0, False
        self._file = rapidgzip.open(os.fspath(path), parallelization=min(bound_cores(), MOST_THREADS))
        self.read_so_far = _ReadSoFar(self._file)

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        try:
            got = self._file.readinto(view)
        except MemoryError:
            raise
        except Exception as e:  # rapidgzip's (C++ errors as Python's): a bad checksum, the file ending mid-trailer
            raise OSError(f"corrupt gzip data: {e}") from None
        self.out += got
        if not got and not self.ended:
            self.ended = True
            self._check_end()
        return got

    def _check_end(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(max(os.fstat(f.fileno()).st_size - len(BGZF_END), 0))
            end = f.read()
            if int.from_bytes(end[-4:], "little") == self.out % 2**32 or end == BGZF_END:  # (BGZF: many members)
                return
            f.seek(0)
            with igzip.IGzipFile(fileobj=f, mode="rb") as members:  # raises where the file is cut short
                while members.read(_PASS_BYTES):
                    pass

    def close(self) -> None:
        if not self.closed:
            self._file.close()  # (its threads joined: one left running aborts the interpreter at exit)
        super().close()


class _ReadSoFar:
    def __init__(self, file):
        self._file = file

    def tell(self) -> int:
        return self._file.tell_compressed() // 8  # (rapidgzip counts bits)
