"""A stream's rows packed as little-endian float64 in base64, the form the probes write their
first items in: packing is a copy of the numbers, where formatting each float as JSON text costs
microseconds a row on the training's hot thread. A missing (or non-finite) value travels as NaN
and reads back as None; a whole number reads back as an int. Stdlib only: the probes import it
in every process of the job."""

import array
import base64
import binascii
import math
import sys

PACKED = "packed"       # the key of a columnar event's packed rows (beside "cols")
_NAN = float("nan")


def pack(rows, width: int) -> str:
    """`rows`: tuples of `width` numbers or None. Raises TypeError or ValueError on anything else."""
    flat = array.array("d", [_NAN if v is None else v for row in rows for v in row])
    if len(flat) != len(rows) * width:
        raise ValueError("rows of uneven width")
    if sys.byteorder != "little":
        flat.byteswap()
    return base64.b64encode(flat.tobytes()).decode("ascii")


def unpack(text: str, width: int) -> list:
    """The rows of `pack`, as lists. Raises ValueError on text `pack` never makes."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, AttributeError) as exc:
        raise ValueError("not base64") from exc
    if width <= 0 or len(raw) % (8 * width):
        raise ValueError("not whole rows")
    flat = array.array("d")
    flat.frombytes(raw)
    if sys.byteorder != "little":
        flat.byteswap()
    values = [None if not math.isfinite(v) else (int(v) if v.is_integer() else v) for v in flat]
    return [values[i:i + width] for i in range(0, len(values), width)]


def rows_of(event: dict) -> list:
    """A columnar event's rows, written plain ("rows") or packed."""
    if PACKED in event:
        return unpack(event[PACKED], len(event.get("cols") or ()))
    return event.get("rows") or []
