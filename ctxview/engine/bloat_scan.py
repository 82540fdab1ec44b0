"""What the bloat analysis (bloat.py) reads off every message, in one pass: the tokens by role, the
tool results and the call each answers, the texts that hold a reminder, and the units (a call and
its results). `scan_by_id` is the rule; `scan_linear` the same in one pass without a table of the
calls by id, for the usual shape (tests/test_bloat_fastpath.py holds the two equal)."""

from __future__ import annotations

from collections import defaultdict
from itertools import islice
from typing import Any, NamedTuple, Sequence

from ctxview.engine import reminders
from ctxview.engine.grouping import unit_runs, units
from ctxview.engine.tiers_saving import result_text
from ctxview.model import Message

__all__ = ["Scan", "scan_by_id", "scan_linear", "scan_messages"]


class Scan(NamedTuple):
    """What the analysis reads off every message, gathered in one pass (each pass over 100k
    messages costs about as much in memory reads as in work)."""
    by_role: dict[str, int]    # tokens by role
    results: list[int]         # the indices of the tool results
    calls: list[Any]           # the call each result answers (the last call with its id), or None
    reminded: list[str]        # the texts of the other messages that hold a reminder block
    units: list[Sequence[int]]  # grouping.unit_runs(messages)


def scan_messages(messages: Sequence[Message], per: Sequence[int]) -> Scan:
    """The scan of the messages: scan_linear's in the usual case, else scan_by_id's."""
    found = scan_linear(messages, per)
    return found if found is not None else scan_by_id(messages, per)


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


def scan_linear(messages: Sequence[Message], per: Sequence[int]) -> Scan | None:
    """scan_by_id's scan in one pass, with no table of the calls by id, for the usual shape: each
    tool result answers a call of the last message with calls before it, and no call id is used
    twice. None when a result answers no call there (its call is elsewhere, or there is none) or a
    call id repeats: then scan_by_id. The units are found on the way (unit_runs': a result joins
    its call's unit; all of them runs when each result follows its call's message or another
    result of it; tests/test_bloat_fastpath.py holds the two scans equal)."""
    by_role: dict[str, int] = defaultdict(int)
    results = []
    answered = []
    reminded = []
    ids = []  # every call id, to see that none repeats
    heads = []  # the first message of each unit
    last_calls: Sequence[Any] = ()
    caller = -1  # the last message with calls
    previous = -1  # the first message of message i - 1's unit
    runs = True
    opening = reminders.OPEN
    for i, m in enumerate(messages):
        role = m.role
        by_role[role] += per[i]
        call = None
        if role == "tool":
            results.append(i)
            call_id = m.tool_call_id
            if call_id:
                for c in last_calls:
                    if c.id == call_id:
                        call = c
                if call is None:
                    return None
            answered.append(call)
        else:
            text = m.content
            if type(text) is not str:
                text = m.text
            if opening in text:
                reminded.append(text)
        if call is None:
            heads.append(i)
            previous = i
        elif previous != caller:
            runs = False  # joins a unit that another one interrupted (previous stays the caller's)
        if m.tool_calls:
            last_calls, caller = m.tool_calls, i
            for c in last_calls:
                if c.id:
                    ids.append(c.id)
    if len(set(ids)) != len(ids):
        return None
    if runs:
        heads.append(len(messages))
        found = list(map(range, heads, islice(heads, 1, None)))
    else:
        found = units(messages)  # (what unit_runs gives when the units are not all runs)
    return Scan(by_role, results, answered, reminded, found)
