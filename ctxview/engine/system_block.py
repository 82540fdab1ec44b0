"""What a request carried before its messages: the system prompt and the tool definitions.

Files that record the request body (Anthropic and OpenAI request lists)
record the tool definitions too; the loaders keep them, as recorded, in
`Conversation.metadata["tools"]`. They are part of what the model read, so
they count in the system block's tokens, show in the inspector's `#sys` row
and go into exported request bodies.

Deferred tools (Claude Code's tool search, formats/claude_code/deferred.py) are in no request's
prefix as definitions: only their names are sent, and a tool's definition enters the context
where a ToolSearch result references it, from the next request on. `deferred_tools` says which
tools a request had by name only and which it had loaded; the file records neither their
definitions nor their tokens, so they are not counted here (the recorded usage includes them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ctxview.model import Conversation, Message

__all__ = ["DeferredTools", "deferred_note", "deferred_tools", "loaded_definition_tokens", "system_block_tokens",
           "tool_definitions", "tools_text"]


def tool_definitions(conversation: Conversation) -> tuple[Mapping[str, Any], ...]:
    """The tool definitions the file recorded for this conversation's requests, as recorded."""
    tools = conversation.metadata.get("tools") if isinstance(conversation.metadata, Mapping) else None
    if not isinstance(tools, (list, tuple)):
        return ()
    return tuple(t for t in tools if isinstance(t, Mapping))


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tool definitions as the text that is counted and shown: one JSON object a line."""
    return "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True, default=str) for t in tools)


def system_block_tokens(conversation: Conversation, counter: Any) -> int:
    """Tokens of the system prompt (as a system message) plus those of the tool definitions."""
    prompt = conversation.system_prompt
    tokens = counter.count_message(Message(role="system", content=prompt)) if prompt else 0
    tools = tool_definitions(conversation)
    return tokens + (counter.count(tools_text(tools)) if tools else 0)


@dataclass(frozen=True, slots=True)
class DeferredTools:
    """What the prefix of the request that sends messages[:n] held of the deferred tools."""

    announced: tuple[str, ...]             # sent by name only (as the file announced them)
    loaded: tuple[tuple[int, tuple[str, ...]], ...]  # (index from which they are loaded, names), before n

    @property
    def loaded_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for _, names in self.loaded for n in names))


def deferred_tools(conversation: Conversation, n: int | None = None) -> DeferredTools:
    """The deferred tools at the request that sends messages[:n] (None: the next request)."""
    n = len(conversation.messages) if n is None else n
    meta = conversation.metadata.get("deferred_tools") if isinstance(conversation.metadata, Mapping) else None
    names = meta.get("announced") if isinstance(meta, Mapping) else None
    announced = tuple(x for x in names if isinstance(x, str)) if isinstance(names, (list, tuple)) else ()
    loaded = tuple((e.index, tuple(e.meta.get("names") or ())) for e in conversation.events
                   if e.kind == "tools_loaded" and type(e.index) is int and e.index <= n
                   and isinstance(e.meta, Mapping))
    return DeferredTools(announced, loaded)


def loaded_definition_tokens(conversation: Conversation, n: int | None,
                             count_message: Callable[[Message], int]) -> int | None:
    """The tokens the definitions ToolSearch loaded before the request that sends messages[:n] added to
    the context, from the recorded usage: for each load, the context of the first reply after its
    result, less that of the reply that called ToolSearch and the tokens of the messages between (as
    `count_message` counts them). None where a load has no recorded reply on either side."""
    msgs = conversation.messages
    total = 0
    for at, _names in deferred_tools(conversation, n).loaded:
        before = next((j for j in range(at - 2, -1, -1) if msgs[j].role == "assistant" and msgs[j].usage), None)
        after = next((j for j in range(at, len(msgs)) if msgs[j].role == "assistant" and msgs[j].usage), None)
        if before is None or after is None:
            return None
        grew = msgs[after].usage.context_tokens - msgs[before].usage.context_tokens  # type: ignore[union-attr]
        total += max(0, grew - sum(count_message(m) for m in msgs[before:after]))
    return total


def deferred_note(conversation: Conversation, n: int | None = None,
                  count_message: Callable[[Message], int] | None = None) -> str:
    """One line on the deferred tools of a request ('' when the file shows none); with `count_message`,
    the tokens of the loaded definitions estimated from the recorded usage where it allows."""
    d = deferred_tools(conversation, n)
    loaded = d.loaded_names
    if not d.announced and not loaded:
        return ""
    parts = []
    if d.announced:
        parts.append(f"{len(d.announced):,} deferred tool(s) sent by name only")
    if loaded:
        shown = ", ".join(loaded[:5]) + (f" and {len(loaded) - 5} more" if len(loaded) > 5 else "")
        grown = None if count_message is None else loaded_definition_tokens(conversation, n, count_message)
        parts.append(f"{len(loaded):,} loaded by ToolSearch ({shown}): their definitions are not in the file "
                     "and not in the tokens counted here"
                     + (f" (≈ {grown:,} tokens, from the recorded usage)" if grown else
                        " (the recorded usage includes them)"))
    return "; ".join(parts)
