"""What the bloat analysis (bloat.py) reads off every message, in one pass: the tokens by role, the
tool results and the call each answers, the texts that hold a reminder, and the units (a call and
its results). `scan_by_id` is the rule; ctxview._fast.bloat has its twin in one pass without a
table of the calls by id, for the usual shape."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NamedTuple, Sequence

from ctxview.engine import reminders
from ctxview.engine.grouping import unit_runs
from ctxview.engine.tiers_saving import result_text
from ctxview.model import Message

__all__ = ["Scan", "scan_by_id"]


class Scan(NamedTuple):
    """What the analysis reads off every message, gathered in one pass (each pass over 100k
    messages costs about as much in memory reads as in work)."""
    by_role: dict[str, int]    # tokens by role
    results: list[int]         # the indices of the tool results
    calls: list[Any]           # the call each result answers (the last call with its id), or None
    reminded: list[str]        # the texts of the other messages that hold a reminder block
    units: list[Sequence[int]]  # grouping.unit_runs(messages)


def scan_by_id(messages: Sequence[Message], per: Sequence[int]) -> Scan:
    """The scan as defined: every call by its id, then each result's call looked up."""
    calls: dict[str, Any] = {}
    owner: dict[str, int] = {}  # grouping.call_owner(messages)
    by_role: dict[str, int] = defaultdict(int)
    results = []
    reminded = []
    for i, m in enumerate(messages):
        role = m.role
        by_role[role] += per[i]
        if role == "tool":
            results.append(i)  # (their reminders are looked for once per distinct text: _Tally)
        else:
            text = result_text(m)
            if reminders.OPEN in text:
                reminded.append(text)
        if m.tool_calls:
            for c in m.tool_calls:
                if c.id:
                    calls[c.id] = c
                    owner[c.id] = i
    answered = [calls.get(messages[i].tool_call_id) if messages[i].tool_call_id else None for i in results]
    return Scan(by_role, results, answered, reminded, unit_runs(messages, owner, results))
