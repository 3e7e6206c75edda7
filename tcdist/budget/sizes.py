"""Sizes in bytes as people write and read them: '4GiB' in, '1.5 GiB' out."""

import re
from decimal import MAX_PREC, Context, Decimal

from tcdist.errors import TcdistError

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3, "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
          "g": 1 << 30, "gib": 1 << 30, "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_EXACT = Context(prec=MAX_PREC)  # a product of any number of digits, exact (a float of 400 digits is infinite)
# ASCII digits only (\d and int() take any script's, ٤ for 4); a sign is read, so -1GiB is refused as below one byte
_SIZE = re.compile(r"\s*([-+]?[0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")

def parse_size(text: str) -> int:
    """Bytes of '4GiB', '512M', '1.5GB' (K, M, G, T and KiB... are powers of 1024; KB... of 1000)."""
    match = _SIZE.fullmatch(str(text))
    unit = match.group(2).lower() if match else None
    if unit not in _UNITS:
        raise TcdistError(f"'{text}' is not a size (write it as 4GiB, 512MiB or 2G)")
    value = int(_EXACT.multiply(Decimal(match.group(1)), _UNITS[unit]))
    if value < 1:
        raise TcdistError(f"'{text}' is not a size of at least one byte")
    return value


def size_text(nbytes: int) -> str:
    """Bytes for people: '312 KiB', '1.5 GiB'."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):.1f} {unit}"
    return f"{max(nbytes, 0)} bytes"
