"""`<system-reminder>` blocks: find, extract, strip, and locate them.

Faithful to SwarmSDK's ContextManager, whose pattern is the Ruby regex
`%r{<system-reminder>.*?</system-reminder>}m`: Ruby's `/m` makes `.` match
newlines, which is Python's `re.DOTALL` (not `re.MULTILINE`). Matching is
case-sensitive, non-greedy and does not nest, exactly like the original.

The functions below do not run that regex: on a text with many openers and no
closer it is quadratic (every opener scans to the end), which 60,000 openers
in a hostile file turn into a hang. `_blocks` finds the same blocks with two
substring searches per block: a block starts at the first opener and ends at
the first closer after it, and when an opener has no closer after it no later
opener has one either, so the scan stops there.
"""

from __future__ import annotations

import re

__all__ = ["RUBY_WHITESPACE", "SYSTEM_REMINDER_REGEX", "extract", "has", "remove", "ruby_strip", "spans", "strip"]

SYSTEM_REMINDER_REGEX = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)  # the original's, for callers
OPEN, CLOSE = "<system-reminder>", "</system-reminder>"

# What Ruby's String#strip removes at both ends: ASCII whitespace and NUL,
# nothing else (not U+00A0, not U+3000; Python's str.strip() would).
RUBY_WHITESPACE = " \t\n\v\f\r\0"


def ruby_strip(text: str) -> str:
    """`text.strip` as Ruby computes it."""
    return text.strip(RUBY_WHITESPACE)


def _blocks(text: str) -> list[tuple[int, int]]:
    """What SYSTEM_REMINDER_REGEX.finditer would find, as spans, in linear time."""
    out = []
    find = text.find
    start = find(OPEN)
    while start >= 0:
        end = find(CLOSE, start + len(OPEN))
        if end < 0:
            break  # no closer after this opener, so none after any later one
        end += len(CLOSE)
        out.append((start, end))
        start = find(OPEN, end)
    return out


def extract(text: str | None) -> list[str]:
    """Every reminder block in `text`, in order ([] for None or "")."""
    if not text or OPEN not in text:
        return []
    return [text[s:e] for s, e in _blocks(text)]


def remove(text: str) -> str:
    """`text` without its reminder blocks (`SYSTEM_REMINDER_REGEX.sub("", text)`), not stripped."""
    found = _blocks(text) if OPEN in text else []
    if not found:
        return text
    pieces, pos = [], 0
    for s, e in found:
        pieces.append(text[pos:s])
        pos = e
    pieces.append(text[pos:])
    return "".join(pieces)


def strip(text: str | None) -> str | None:
    """`text` without its reminder blocks, Ruby-stripped; None and "" come back as they are."""
    if not text:
        return text
    return ruby_strip(remove(text))


def has(text: str | None) -> bool:
    """Whether `text` holds at least one complete reminder block."""
    if not text:
        return False
    start = text.find(OPEN)
    return start >= 0 and text.find(CLOSE, start + len(OPEN)) >= 0


def spans(text: str | None) -> list[tuple[int, int]]:
    """(start, end) character offsets of every reminder block, end exclusive."""
    if not text or OPEN not in text:
        return []
    return _blocks(text)
