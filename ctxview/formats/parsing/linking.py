"""Pieces every loader shares: linking tool results to their calls, and
wrapping up a conversation."""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from ctxview._slots import slot_builder
from ctxview.model import Message
from ctxview.formats.parsing.builders import message

__all__ = ["compaction_events", "last_model", "link_tool_results", "new_message", "unlinked_warning",
           "usage_only_warning"]


def link_tool_results(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """Set `tool_name` on each tool message from the call it answers.

    Returns the messages (new objects only where something changed) and how
    many tool results name a call id that no earlier assistant message made.
    """
    names: dict[str, str] = {}
    out: list[Message] = []
    unlinked = 0
    for msg in messages:
        if msg.tool_calls:
            for call in msg.tool_calls:
                if call.id:
                    names[call.id] = call.name
        if msg.role == "tool":
            name = names.get(msg.tool_call_id or "")
            if name is None:
                unlinked += 1
            elif msg.tool_name != name:
                msg = _with_tool_name(msg, name)
        out.append(msg)
    return out, unlinked


def unlinked_warning(conversation: str, count: int) -> str | None:
    if not count:
        return None
    noun = "result names" if count == 1 else "results name"
    return f"{conversation}: {count} tool {noun} a call the file does not hold"


def usage_only_warning(conversation: str, messages: Sequence[Message]) -> str | None:
    """The warning for a conversation whose file held only usage records (what ccusage reads):
    every message an assistant turn with a recorded usage and nothing else."""
    if not messages:
        return None
    for m in messages:
        if m.role != "assistant" or m.usage is None or m.text or m.tool_calls or m.thinking:
            return None
    return (f"{conversation}: the file holds usage records only (no message content): "
            f"{len(messages)} request(s) with their recorded usage")


def last_model(messages: Sequence[Message]) -> str | None:
    """The model the last assistant message names (not a placeholder such as "<synthetic>")."""
    for msg in reversed(messages):   # (from the end: a big file's answer is near it)
        if msg.role == "assistant" and msg.model_id and not msg.model_id.startswith("<"):
            return msg.model_id
    return None


def compaction_events(messages: Sequence[Message], specs: Iterable[dict]) -> list:
    """ContextEvents for compactions recorded at message indexes.

    Each spec holds `index` (the first message after the compaction) and any
    of trigger, tokens_before, summary, origin, meta. `replaced` is taken
    from `messages` (already linked): everything since the previous
    compaction, which the model no longer saw from `index` on.
    """
    from ctxview.model import ContextEvent

    events = []
    prev = 0
    for spec in specs:
        index = spec["index"]
        events.append(ContextEvent(
            kind="compaction",
            index=index,
            trigger=spec.get("trigger"),
            tokens_before=spec.get("tokens_before"),
            summary=spec.get("summary"),
            replaced=tuple(messages[prev:index]),
            origin=spec.get("origin"),
            meta=spec.get("meta") or {},
        ))
        prev = index
    return events


# The positional name benchmarks/bench_load.py builds its reference messages with.
new_message = message
# A copy of a message with its tool_name set: link_tool_results names every tool result.
_with_tool_name = slot_builder(Message, "with_tool_name", extra=("src",), fixed={
    f.name: f"src.{f.name}" for f in dataclasses.fields(Message) if f.name != "tool_name"})
