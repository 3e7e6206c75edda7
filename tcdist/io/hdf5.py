"""HDF5 plumbing shared by tcdist's graph files and partition stores: checksummed datasets,
one-line errors for foreign, truncated, future or corrupt files."""

import h5py

from tcdist.errors import InputError

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def write_dataset(group, name, data):
    """A dataset with a fletcher32 checksum (HDF5 cannot chunk, so cannot checksum, an empty one)."""
    group.create_dataset(name, data=data, fletcher32=data.size > 0)


def open_h5(path):
    """Open an HDF5 file for reading, refusing truncated or non-HDF5 files in one line."""
    try:
        return h5py.File(path, "r")
    except OSError as e:
        problem = "truncated HDF5 file" if "truncated" in str(e) else "not a readable HDF5 file"
        raise InputError(path, problem) from None


def read_array(path, group, name):
    """A whole dataset, with checksum failures and missing datasets named."""
    full = f"{group.name.strip('/')}/{name}".lstrip("/")
    if name not in group:
        raise InputError(path, f"dataset '{full}' is missing")
    try:
        return group[name][()]
    except OSError:
        raise InputError(path, f"dataset '{full}' is corrupt (checksum mismatch or truncated data)") from None


def file_format(f):
    """The 'format' attribute of an open tcdist file, or None."""
    found = f.attrs.get("format")
    return found.decode() if isinstance(found, bytes) else found


def check_format(path, f, expected, version):
    """Refuse files of another format or of a version this tcdist cannot read."""
    found = file_format(f)
    if found != expected:
        what = f"a '{found}' file" if found else "not a tcdist file (no 'format' attribute)"
        raise InputError(path, f"{what}; expected {expected}")
    if int(f.attrs.get("version", -1)) != version:
        raise InputError(path, f"{expected} version {f.attrs.get('version')} is not supported (this tcdist reads version {version})")


def format_of_file(path):
    """The tcdist format name of an HDF5 file (None for a foreign one)."""
    with open_h5(path) as f:
        return file_format(f)
