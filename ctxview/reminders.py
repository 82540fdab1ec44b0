"""`<system-reminder>` blocks: find, extract, strip, and locate them.

Faithful to SwarmSDK's ContextManager, whose pattern is the Ruby regex
`%r{<system-reminder>.*?</system-reminder>}m`: Ruby's `/m` makes `.` match
newlines, which is Python's `re.DOTALL` (not `re.MULTILINE`). Matching is
case-sensitive, non-greedy and does not nest, exactly like the original.
"""

from __future__ import annotations

import re

__all__ = ["RUBY_WHITESPACE", "SYSTEM_REMINDER_REGEX", "extract", "has", "ruby_strip", "spans", "strip"]

SYSTEM_REMINDER_REGEX = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)

# What Ruby's String#strip removes at both ends: ASCII whitespace and NUL,
# nothing else (not U+00A0, not U+3000; Python's str.strip() would).
RUBY_WHITESPACE = " \t\n\v\f\r\0"


def ruby_strip(text: str) -> str:
    """`text.strip` as Ruby computes it."""
    return text.strip(RUBY_WHITESPACE)


def extract(text: str | None) -> list[str]:
    """Every reminder block in `text`, in order ([] for None or "")."""
    if not text:
        return []
    return SYSTEM_REMINDER_REGEX.findall(text)


def strip(text: str | None) -> str | None:
    """`text` without its reminder blocks, Ruby-stripped; None and "" come back as they are."""
    if not text:
        return text
    return ruby_strip(SYSTEM_REMINDER_REGEX.sub("", text))


def has(text: str | None) -> bool:
    """Whether `text` holds at least one complete reminder block."""
    if not text:
        return False
    return SYSTEM_REMINDER_REGEX.search(text) is not None


def spans(text: str | None) -> list[tuple[int, int]]:
    """(start, end) character offsets of every reminder block, end exclusive."""
    if not text:
        return []
    return [m.span() for m in SYSTEM_REMINDER_REGEX.finditer(text)]
