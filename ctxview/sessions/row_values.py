"""The values of an index row made from what a session file records: times as ISO 8601 UTC, text as
one line, the first prompt the user typed (not the lines the harness injected)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

__all__ = ["iso", "iso_from_ns", "one_line", "prompt", "text_of"]

_TITLE_CHARS = 200


def iso(value: Any) -> str | None:
    """A recorded timestamp as ISO 8601 UTC (`2026-03-02T09:15:00Z`), or None (also for one that is
    no date, or one the calendar cannot hold in UTC)."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        when = datetime.fromisoformat(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (ValueError, OverflowError):  # (9999-12-31T23:00-05:00 is past the calendar's end in UTC)
        return None


def iso_from_ns(ns: int) -> str | None:
    """A file time (ns since the epoch) as ISO 8601 UTC; None for none, or for one outside the calendar
    (an archive restored with a time of year 10^6, or a negative one)."""
    if not ns:
        return None
    try:
        when = datetime.fromtimestamp(ns // 1_000_000_000, timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")


def one_line(text: str) -> str:
    return " ".join(text.split())[:_TITLE_CHARS]


def text_of(content: Any) -> str | None:
    """The text of a message's content: a string, or a list of text parts (None if it holds a tool result)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                if part.get("type") in ("tool_result", "function_call_output"):
                    return None
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) if texts else None
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return None


# Lines the harness wrote as the user's: slash commands and their output, reminders, caveats,
# the environment and instructions blocks. None is what the user typed.
_INJECTED = re.compile(
    r"\s*(<command-|<local-command-|<system-reminder>|<user-prompt-submit-hook>|<environment_context>|"
    r"<user_instructions>|<permissions instructions>|<INSTRUCTIONS>|# AGENTS\.md instructions|"
    r"Caveat: The messages below|\[Request interrupted|This session is being continued from a previous)")


def prompt(text: str | None) -> str | None:
    if text is None or not text.strip() or _INJECTED.match(text):
        return None
    return one_line(text)
