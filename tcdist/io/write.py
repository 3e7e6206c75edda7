"""Writing files so that a crash never leaves a half-written file under the final name."""

import os
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tcdist.errors import TcdistError


@contextmanager
def atomic_path(path):
    """Yield a temporary name beside path; rename it to path only if the block succeeds."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise TcdistError(f"{path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise TcdistError(f"{path}: is a directory")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_edge_list(src, dst, path):
    """Tab-separated 'u v' lines (gzip-compressed when path ends in .gz)."""
    table = pa.table({"u": np.asarray(src, np.int64), "v": np.asarray(dst, np.int64)})
    options = pcsv.WriteOptions(include_header=False, delimiter="\t")
    with atomic_path(path) as tmp:
        compression = "gzip" if str(path).endswith(".gz") else None
        with pa.output_stream(tmp, compression=compression) as out:
            pcsv.write_csv(table, out, options)


def write_text(path, text):
    """A small text file (a JSON record), written atomically."""
    try:
        with atomic_path(path) as tmp, open(tmp, "w") as f:
            f.write(text)
    except OSError as e:
        raise TcdistError(f"{path}: cannot write ({e.strerror})") from None
