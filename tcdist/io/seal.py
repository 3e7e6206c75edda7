"""A seal on tcdist's HDF5 files, checked before libhdf5 reads a byte of them.

libhdf5 trusts its own metadata: one flipped bit in an object header can send it into a loop
inside C, where no Python check or signal handler runs (the fuzz test found one). So every
file tcdist writes begins with an HDF5 user block, which libhdf5 skips and h5py reads past as
usual. It holds the file's format, version and size, the byte ranges of its datasets' raw data
and a blake2b digest of every other byte: the metadata libhdf5 would parse. A file whose seal
is missing, damaged or not matching is refused before h5py opens it. The raw data are covered
by the digests every reader checks after reading them (io/hdf5.py).

The digest is not keyed: it guards against damage (bit flips, truncation, a file stitched or
edited by another program), not against a file crafted to pass it, whose declared raw ranges
could cover its metadata.

The block: b"tcdist-seal 1 " + its own size in decimal + b"\\n" + one JSON object, NUL padded.
Reading a seal takes plain file reads; h5py is imported only to write a file.
"""

import hashlib
import json
import os
import re
from contextlib import contextmanager

from tcdist.errors import InputError
from tcdist.io.write import new_h5

MAGIC = b"tcdist-seal 1 "
_FIRST_LINE = re.compile(rb"tcdist-seal 1 (\d{3,10})\n")
_SMALLEST, _LARGEST = 512, 1 << 30  # HDF5: a power of two, at least 512
_SPAN = 1 << 20


def _block_size(datasets: int) -> int:
    """Room for the seal of a file with this many datasets (a range is at most 45 bytes of JSON)."""
    need = 1024 + 48 * datasets
    return max(_SMALLEST, 1 << (need - 1).bit_length())


@contextmanager
def sealed_file(path, kind: str, version: int, datasets: int):
    """A new HDF5 file at path, open for writing, sealed when the block ends; datasets is (at
    least) how many datasets will be written, to size the seal."""
    with new_h5(path, _block_size(datasets)) as f:
        yield f
    write_seal(path, kind, version)


def write_seal(path, kind: str, version: int) -> None:
    """Seal a complete HDF5 file that tcdist wrote with a user block (libhdf5 may read it)."""
    import h5py

    with h5py.File(path, "r") as f:
        block = f.userblock_size
        found = []
        f.visititems(lambda _, obj: found.append(obj) if isinstance(obj, h5py.Dataset) else None)
        raw = sorted([d.id.get_offset(), d.id.get_storage_size()] for d in found if d.id.get_storage_size())
    fields = {"format": kind, "version": version, "size": os.path.getsize(path), "raw": raw}
    seal = {**fields, "digest": _digest(path, fields, block)}
    text = MAGIC + str(block).encode() + b"\n" + json.dumps(seal, separators=(",", ":")).encode()
    if len(text) > block:
        raise RuntimeError(f"internal error: the seal of {path} needs {len(text)} bytes, {block} reserved")
    with open(path, "r+b") as f:
        f.write(text.ljust(block, b"\0"))


def _digest(path, fields: dict, block: int) -> str:
    """blake2b of the fields and of every byte after the block outside the raw ranges."""
    h = hashlib.blake2b(json.dumps(fields, sort_keys=True).encode(), digest_size=16)
    with open(path, "rb") as f:
        position = block
        for offset, length in [*fields["raw"], (fields["size"], 0)]:
            f.seek(position)
            left = offset - position
            while left > 0:
                chunk = f.read(min(left, _SPAN))
                if not chunk:
                    raise InputError(path, "truncated file (shorter than its seal says)")
                h.update(chunk)
                left -= len(chunk)
            position = offset + length
    return h.hexdigest()


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_seal(path) -> tuple[dict, int] | None:
    """The seal's fields and the block's size, checked for shape (not yet against the file's
    bytes), or None when the file does not start with a seal."""
    with open(path, "rb") as f:
        head = f.read(32)
        if not head.startswith(MAGIC):
            return None
        line = _FIRST_LINE.match(head)
        block = int(line.group(1)) if line else 0
        if block < _SMALLEST or block > _LARGEST or block & (block - 1):
            raise InputError(path, "damaged tcdist seal (its first line)")
        f.seek(0)
        body = f.read(block)[line.end():].split(b"\0", 1)[0]
    try:
        seal = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise InputError(path, "damaged tcdist seal (not JSON)") from None
    ok = isinstance(seal, dict) and isinstance(seal.get("format"), str) and isinstance(seal.get("digest"), str) \
        and _is_int(seal.get("version")) and _is_int(seal.get("size")) and isinstance(seal.get("raw"), list)
    position = block
    for r in seal.get("raw", []) if ok else []:
        if not (isinstance(r, list) and len(r) == 2 and _is_int(r[0]) and _is_int(r[1]) and r[0] >= position):
            ok = False
            break
        position = r[0] + r[1]
    if not ok or position > seal["size"]:
        raise InputError(path, "damaged tcdist seal (odd fields or ranges)")
    return seal, block


def check_seal(path) -> dict:
    """The seal's fields, once every byte libhdf5 will parse matches it; a one-line error if not."""
    found = read_seal(path)
    if found is None:
        raise InputError(path, "not a tcdist HDF5 file (no tcdist seal: written by another program or an older "
                               "tcdist); give its edges as a text edge list or Matrix Market file (tcdist convert "
                               "makes a graph file of one)")
    seal, block = found
    size = os.path.getsize(path)
    if size != seal["size"]:
        raise InputError(path, f"truncated or altered file ({size:,} bytes, its seal says {seal['size']:,})")
    fields = {k: seal[k] for k in ("format", "version", "size", "raw")}
    if _digest(path, fields, block) != seal["digest"]:
        raise InputError(path, "damaged HDF5 metadata (it does not match the file's seal)")
    return fields
