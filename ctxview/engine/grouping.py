"""Which messages belong together: an assistant's tool calls and their results.

Budgeting, summarising and clearing must never leave a tool result without
the call that asked for it, or a call without its result: providers reject
such requests. A *unit* is one message, or an assistant message with tool
calls together with every tool result answering one of those calls.
"""

from __future__ import annotations

from itertools import filterfalse, islice
from typing import Sequence

from ctxview.model import Message

__all__ = ["call_owner", "unit_of", "unit_runs", "units"]


def call_owner(messages: Sequence[Message]) -> dict[str, int]:
    """tool_call_id -> index of the assistant message that made the call."""
    owner: dict[str, int] = {}
    for i, msg in enumerate(messages):
        if msg.tool_calls:
            for call in msg.tool_calls:
                if call.id:
                    owner[call.id] = i
    return owner


def unit_of(messages: Sequence[Message]) -> list[int]:
    """For each message, the index of the first message of its unit."""
    owner = call_owner(messages)
    out = list(range(len(messages)))
    for i, msg in enumerate(messages):
        if msg.role == "tool" and msg.tool_call_id:
            j = owner.get(msg.tool_call_id)
            if j is not None and j < i:
                out[i] = out[j]
    return out


def units(messages: Sequence[Message]) -> list[list[int]]:
    """Units in order of their first message; each a sorted list of indices."""
    # A unit's head is its first index and the head of itself (unit_of points a
    # result at its call's head, which comes before it), so the units come out in
    # order of their heads in one pass.
    out: list[list[int]] = []
    unit: list[list[int] | None] = [None] * len(messages)
    for i, head in enumerate(unit_of(messages)):
        if head == i:
            group = unit[i] = [i]
            out.append(group)
        else:
            unit[head].append(i)  # type: ignore[union-attr]
    return out


def unit_runs(messages: Sequence[Message], owner: dict[str, int] | None = None,
              results: Sequence[int] | None = None) -> list[Sequence[int]]:
    """units(messages) with each unit as a range, when every unit is a run of consecutive
    indices (the usual case: a call followed by its results); otherwise units() itself.
    For the 100k-message callers: ranges are cheaper to build than lists and are not
    tracked by the cyclic GC. `owner` (call_owner(messages)) and `results` (the indices of
    the tool results, in order: only they can join an earlier unit) when the caller has them."""
    if owner is None:
        owner = call_owner(messages)
    n = len(messages)
    joined: dict[int, int] = {}  # message -> its unit's head, for messages that join an earlier unit
    for i in range(n) if results is None else results:
        msg = messages[i]
        if msg.role == "tool" and msg.tool_call_id:  # (unit_of's test, inlined)
            j = owner.get(msg.tool_call_id)
            if j is not None and j < i:
                head = joined.get(j, j)
                if head != joined.get(i - 1, i - 1):  # joins a unit that another one interrupted: not a run
                    return units(messages)
                joined[i] = head
    starts = list(filterfalse(joined.__contains__, range(n)))  # (in C: the heads, then the runs)
    starts.append(n)
    return list(map(range, starts, islice(starts, 1, None)))
