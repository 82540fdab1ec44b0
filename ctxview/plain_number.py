"""The one rule for reading a whole number out of text that came from a file or a person.

`str.isdigit()` accepts characters `int()` refuses (`²`, `①`), `int()` accepts digits a reader
would not call plain (`٣`, `1_0`, ` 7 `), and refuses strings of more than 4,300 digits with an
error of its own. Every number read from session text or typed in a field goes through here, so
none of those reaches `int()` and none becomes a traceback.
"""

from __future__ import annotations

MAX_DIGITS = 18  # any count, index or size a session holds fits; int64 is 19 digits


def plain_number(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """`text` as a non-negative whole number when it is ASCII digits only, of at most `max_digits`
    significant digits (leading zeros are not counted); None for anything else."""
    if not (text.isascii() and text.isdigit()):
        return None
    significant = text.lstrip("0") or "0"
    return int(significant) if len(significant) <= max_digits else None
