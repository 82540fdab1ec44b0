"""The offline summary, fast: engine.budget.extractive_summary's twin.

It formats only the requests it shows (the others are counted), counts the tools of a list in one
Counter call, and looks a call's arguments up with `in` when they are a dict (most calls have none
of the path keys). tests/test_fast_equals_plain.py holds it equal to the rule.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from ctxview.engine.budget import ERROR_LINE, PATH_KEYS, first_line, summary_text
from ctxview.engine.reminders import strip as strip_reminders
from ctxview.model import Message

__all__ = ["extractive_summary"]


def extractive_summary(messages: Sequence[Message], *, max_requests: int = 10, max_errors: int = 5) -> str:
    """engine.budget.extractive_summary(messages, max_requests=..., max_errors=...)."""
    requests: list[str] = []   # the first max_requests (those shown); the others are only counted
    more_requests = 0
    cap = max(max_requests, 0)
    called: list[str] = []   # the tool of each call, counted at the end (Counter counts a list in C)
    files: dict[str, None] = {}
    errors: list[str] = []
    for msg in messages:
        role = msg.role
        if role == "user" and not msg.injected:
            text = strip_reminders(msg.text) or ""
            if text.strip():
                if len(requests) < cap:
                    requests.append(first_line(text))
                else:
                    more_requests += 1
        for call in msg.tool_calls:
            called.append(call.name or "?")
            args = call.arguments
            if type(args) is dict:  # (`in` before reading: most calls have none of the keys)
                for key in PATH_KEYS:
                    if key in args:
                        value = args[key]
                        if isinstance(value, str) and value:
                            files.setdefault(value, None)
                continue
            get = getattr(args, "get", None)
            if get is not None:
                for key in PATH_KEYS:
                    value = get(key)
                    if isinstance(value, str) and value:
                        files.setdefault(value, None)
        if role == "tool" and len(errors) < max_errors:
            m = ERROR_LINE.search(msg.text)
            if m:
                errors.append(first_line(m.group(0)))
    return summary_text(requests, more_requests, Counter(called), files, errors)
