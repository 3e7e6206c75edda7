"""Read graphs from files, generators and in-memory objects."""

from __future__ import annotations

import os

from tcdist.config import EDGE_LIST_SUFFIXES, HDF5_SUFFIXES, MTX_SUFFIXES
from tcdist.errors import InputError, OptionError, TcdistError
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import Graph
from tcdist.io.edgelist import read_edge_list
from tcdist.io.generators import generate, is_spec, not_a_spec, pieces, spec_edges
from tcdist.io.h5graph import read_graph
from tcdist.io.hdf5 import looks_hdf5
from tcdist.io.mtx import read_mtx
from tcdist.io.text import is_stream, open_binary, read_block


def _sniff(path):
    """Format from content: HDF5 magic, a Matrix Market banner, else an edge list."""
    with open(path, "rb") as f:
        if looks_hdf5(f.read(16)):
            return "h5"
    with open_binary(path) as (stream, _):
        head = read_block(stream, path, 64)
    return "mtx" if head.lower().startswith(b"%%matrixmarket") else "edgelist"


def detect_format(path: str | os.PathLike) -> str:
    """'edgelist', 'mtx' or 'h5': by extension (a .gz suffix aside), by content when unknown."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(HDF5_SUFFIXES):
        return "h5"
    if name.endswith(MTX_SUFFIXES):
        return "mtx"
    if name.endswith(EDGE_LIST_SUFFIXES):
        with open(path, "rb") as f:
            head = f.read(16)
        return "h5" if looks_hdf5(head) else "edgelist"
    return _sniff(path)


def _read_stream(path, gpu_room):
    """Input that can be read only once: the format from its first bytes, then one pass."""
    with open_binary(path) as (stream, raw):
        head = stream.peek(64)[:64]
        if looks_hdf5(head):
            raise InputError(path, "an HDF5 file cannot be read from a pipe; give its path")
        reader = read_mtx if head.lower().startswith(b"%%matrixmarket") else read_edge_list
        return reader(path, (stream, raw), gpu_room)


def _read_labelled(path) -> EdgeList:
    from tcdist.io.labels import read_labelled

    fmt = "edgelist" if is_stream(path) else detect_format(path)
    if fmt != "edgelist":
        kind = {"h5": "an HDF5 file", "mtx": "a Matrix Market file"}[fmt]
        raise OptionError(f"{path}: {{labels}} reads text edge lists, and this is {kind} (its ids are numbers)")
    return read_labelled(path)


def check_readable(path):
    """One-line errors for a missing path, a directory or an unreadable file."""
    if path == "-":
        return
    if not os.path.exists(path):
        problem = not_a_spec(os.fspath(path))
        raise TcdistError(problem) if problem else InputError(path, "no such file")
    if os.path.isdir(path):
        raise InputError(path, "is a directory, not a graph file")
    if not os.access(path, os.R_OK):
        raise InputError(path, "permission denied")


def read(path: str | os.PathLike, gpu_room: int | None = None, labels: bool = False) -> EdgeList | Graph:
    """An EdgeList (text formats) or a Graph (tcdist HDF5) from a file. gpu_room: text is parsed on
    the current GPU, its edges kept there while they and their build fit in that many bytes; a
    graph file's arrays go there where they and their count fit.
    labels: an edge list whose ids are names (io/labels.py)."""
    check_readable(path)
    if labels:
        return _read_labelled(path)
    if is_stream(path):
        return _read_stream(path, gpu_room)
    fmt = detect_format(path)
    if fmt == "h5":
        return read_graph(path, gpu_room)
    return (read_mtx if fmt == "mtx" else read_edge_list)(path, gpu_room=gpu_room)


__all__ = ["detect_format", "generate", "is_spec", "pieces", "read", "spec_edges"]
