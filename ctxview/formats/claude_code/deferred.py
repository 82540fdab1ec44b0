"""Deferred tools: what a Claude Code transcript shows of the tools it sent by name only.

With tool search on (the default for MCP tools since Claude Code 2.1.7), a deferred tool's definition
is not in the request's tool list for the model to read: the model is told its name, and loads its
schema by calling ToolSearch ({"query": "select:mcp__github__create_issue", "max_results": 5}); the
result is a list of tool_reference blocks, [{"type": "tool_reference", "tool_name": "..."}], each of
which the API expands into that tool's full definition in the context, where the result stands.

The transcript records:

- the names announced, as `attachment` records of type `deferred_tools_delta` ({"addedNames": [...],
  "removedNames": [...], "addedLines": [...]}), in newer versions (older ones sent an
  <available-deferred-tools> list in a message that is not written to the transcript);
- every ToolSearch call and its result's tool_reference blocks (blocks.py shows each as
  "[tool reference: NAME]").

The conversation gets metadata["deferred_tools"] = {"announced": [names]} and, for each result that
loads tools, meta["tool_references"] on the tool message and a "tools_loaded" event at the request
after it (meta {"names", "tool_call_id"}); system_block.deferred_tools reads them.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable

from ctxview.model import ContextEvent, Conversation

_REFERENCE = re.compile(r"\[tool reference: ([^\]\n]+)\]")


def delta_of(attachment: dict) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(names added, names removed) of a deferred_tools_delta attachment; None for another attachment."""
    if attachment.get("type") != "deferred_tools_delta":
        return None
    added, removed = attachment.get("addedNames"), attachment.get("removedNames")
    return (tuple(n for n in added if type(n) is str) if type(added) is list else (),
            tuple(n for n in removed if type(n) is str) if type(removed) is list else ())


def announced(deltas: list) -> list[str]:
    """The names announced and not withdrawn, in the order first announced."""
    names: dict[str, None] = {}
    for added, removed in deltas:
        for n in removed:
            names.pop(n, None)
        for n in added:
            names.setdefault(n, None)
    return list(names)


def with_deferred(conv: Conversation, deltas: list, at: Iterable[int] | None = None) -> Conversation:
    """`conv` with what its file shows of deferred tools; itself when it shows nothing. `at`: the
    positions of the only messages that can load tools, in order (linear.py's marks); None: any."""
    messages = list(conv.messages)
    events: list[ContextEvent] = []
    for i in range(len(messages)) if at is None else at:
        m = messages[i]
        # (only ToolSearch answers with references: the other results' text is not searched, a big file's bulk)
        if m.tool_name != "ToolSearch" or m.role != "tool" or "[tool reference: " not in m.text:
            continue
        names = tuple(dict.fromkeys(_REFERENCE.findall(m.text)))
        messages[i] = m.replace(meta={**m.meta, "tool_references": names})
        events.append(ContextEvent("tools_loaded", i + 1, origin=m.origin,
                                   meta={"names": names, "tool_call_id": m.tool_call_id}))
    names = announced(deltas)
    if not events and not names:
        return conv
    metadata = {**conv.metadata, "deferred_tools": {"announced": names}} if names else conv.metadata
    merged = (*conv.events, *events)
    if all(type(e.index) is int for e in merged):  # (in index order, as the other events are)
        merged = tuple(sorted(merged, key=lambda e: e.index))
    return dataclasses.replace(conv, messages=tuple(messages), events=merged, metadata=metadata)
