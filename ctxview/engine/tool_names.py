"""Which tool produced a tool result: from its call, else from the text (the seed's patterns)."""

from __future__ import annotations

import re
from typing import Iterable

from ctxview.model import Message
from ctxview.tiers import DEFAULT_POLICY, CompressionPolicy

__all__ = ["detect_tool_name", "is_rerunnable", "tool_names_by_call_id"]


# Ruby's \s is [ \t\r\n\f\v] and \d is [0-9]; Python's are Unicode-wide, so the
# classes are spelled out. Ruby's ^ is line-anchored: re.MULTILINE.
# The seed's Read pattern is /^\s*\d+→/, whose \s takes newlines: tried at every
# line start, it runs over all the blank lines that follow, so 60,000 newlines
# and a "→" took half a minute. A match whose leading blanks hold a newline is
# also a match from the line start after that newline, so leaving "\n" out of
# the class finds a match exactly when the seed's does, in linear time.
_READ_RE = re.compile(r"^[ \t\r\f\v]*[0-9]+→", re.MULTILINE)
_GLOB_RE = re.compile(r"^Found [0-9]+ files? matching", re.MULTILINE)
_GREP_RE = re.compile(r"matches in [0-9]+ files?|No matches found")


def _line_start_test(literal: str):
    # Same as re.compile("^" + literal, re.M).search, at substring-search speed.
    after_newline = "\n" + literal
    return lambda text: text.startswith(literal) or after_newline in text


_MEMORY_GLOB_AT = _line_start_test("Memory entries matching")
_MEMORY_WRITE_AT = _line_start_test("Stored at memory://")
_MEMORY_DELETE_AT = _line_start_test("Deleted memory://")


# re's scan for a literal pattern steps to each occurrence of its first character: in a text
# stored at 2 bytes a character (a Read output, with its "→") it finds "://" in half the time
# str's substring search takes for "memory://"; in an ASCII text str's search is the faster
_URL_SCHEME_AT = re.compile("://").search


def _has_memory_url(text: str) -> bool:
    """"memory://" in text, ruled out first by its ":" alone: a one-character search is a memchr,
    many times faster than a substring search, and settles most texts that have no colon."""
    if ":" not in text:
        return False
    if not text.isascii() and _URL_SCHEME_AT(text) is None:  # (isascii reads a flag)
        return False
    return "memory://" in text


def detect_tool_name(text: str | None) -> str | None:
    """The tool that produced a result, guessed from its text as the original does.

    The seed's `case` in its order; each regex runs only when substrings
    every match must contain are present, so a text costs a few substring
    scans rather than six regex scans. A single character a match needs
    ("M" or "F" for the globs' line starts, ":" for "memory://") is looked
    for first: that search is a memchr, which rules out most texts at a
    fraction of a substring scan's cost.
    """
    if not isinstance(text, str) or not text:
        return None
    if "→" in text and _READ_RE.search(text):
        return "MemoryRead" if _has_memory_url(text) else "Read"
    capital_m = "M" in text
    if (capital_m or "F" in text) and " matching" in text:
        if capital_m and _MEMORY_GLOB_AT(text):
            return "MemoryGlob"
        if "Found " in text and _GLOB_RE.search(text):
            return "Glob"
    if "matches " in text and _GREP_RE.search(text):
        return "MemoryGrep" if _has_memory_url(text) else "Grep"
    if _has_memory_url(text):
        if _MEMORY_WRITE_AT(text):
            return "MemoryWrite"
        if _MEMORY_DELETE_AT(text):
            return "MemoryDelete"
    return None


def is_rerunnable(name: str | None, policy: CompressionPolicy = DEFAULT_POLICY) -> bool:
    """Whether re-running the tool gets the same data back (so a hint is worth adding)."""
    return name is not None and name in policy.rerunnable_tools


def tool_names_by_call_id(messages: Iterable[Message]) -> dict[str, str]:
    """{tool call id: tool name} for every tool call of the given messages."""
    names: dict[str, str] = {}
    for msg in messages:
        for call in msg.tool_calls:
            if call.id:
                names[call.id] = call.name
    return names
