"""A cached row as stored ([size, mtime_ns, the row's fields...]) and the checks it must pass to be used.

The cache is a file anyone (or any program) can write: each field must have its type (a number
where a count belongs, never a bool; text or null where text belongs; a timestamp in the one shape
the index writes), and the row must be the one for the file it is keyed by (its path, size and
mtime). Anything else is no row: its file is indexed again.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ctxview.sessions.index import ROW_FIELDS, SessionRow

__all__ = ["CACHE_FIELDS", "checked_row", "entry_of"]

CACHE_FIELDS = ROW_FIELDS

_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")  # what index._iso writes, nothing else


def _text(v: Any) -> bool:
    return v is None or type(v) is str


def _count(v: Any) -> bool:
    return v is None or (type(v) is int and v >= 0)


def _time(v: Any) -> bool:
    return v is None or (type(v) is str and _ISO.match(v) is not None)


def _int(v: Any) -> bool:
    return type(v) is int


def _flag(v: Any) -> bool:
    return type(v) is bool


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "path": lambda v: type(v) is str, "format": _text, "project": _text, "title": _text, "started": _time,
    "updated": _time, "messages": _count, "messages_estimated": _flag, "size_bytes": _int, "mtime_ns": _int,
    "model": _text, "tokens": _count, "problem": _text,
}
assert set(_CHECKS) == set(ROW_FIELDS), "every field of a row has its check"
_IN_ORDER = tuple(_CHECKS[name] for name in ROW_FIELDS)
_PATH, _SIZE, _MTIME = (ROW_FIELDS.index(n) for n in ("path", "size_bytes", "mtime_ns"))


def entry_of(row: SessionRow, size: int, mtime_ns: int) -> list:
    return [size, mtime_ns, *row.as_list()]


def checked_row(key: str, entry: Any, size: int | None = None, mtime_ns: int | None = None) -> SessionRow | None:
    """The row `entry` holds for the file `key`, when every field has its type and the row is that
    file's (and, given them, of that size and mtime); else None."""
    if type(entry) is not list or len(entry) != len(ROW_FIELDS) + 2:
        return None
    stored_size, stored_mtime, values = entry[0], entry[1], entry[2:]
    if (size is not None and stored_size != size) or (mtime_ns is not None and stored_mtime != mtime_ns):
        return None  # out of date (the common case: checked first)
    if not all(check(v) for check, v in zip(_IN_ORDER, values)):
        return None
    if values[_PATH] != key or values[_SIZE] != stored_size or values[_MTIME] != stored_mtime:
        return None  # another file's row, or one at odds with itself
    return SessionRow(*values)
