"""Pieces every loader shares: linking tool results to their calls, and
wrapping up a conversation."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..model import Message, ToolCall, Usage

__all__ = ["compaction_events", "last_model", "link_tool_results", "make_message",
           "make_tool_call", "make_usage", "unlinked_warning"]


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
                msg = msg.replace(tool_name=name)
        out.append(msg)
    return out, unlinked


def unlinked_warning(conversation: str, count: int) -> str | None:
    if not count:
        return None
    noun = "result names" if count == 1 else "results name"
    return f"{conversation}: {count} tool {noun} a call the file does not hold"


def last_model(messages: Iterable[Message]) -> str | None:
    model = None
    for msg in messages:
        if msg.role == "assistant" and msg.model_id and not msg.model_id.startswith("<"):
            model = msg.model_id
    return model


def compaction_events(messages: Sequence[Message], specs: Iterable[dict]) -> list:
    """ContextEvents for compactions recorded at message indexes.

    Each spec holds `index` (the first message after the compaction) and any
    of trigger, tokens_before, summary, origin, meta. `replaced` is taken
    from `messages` (already linked): everything since the previous
    compaction, which the model no longer saw from `index` on.
    """
    from ..model import ContextEvent

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


# Loaders build hundreds of thousands of messages; the dataclass __init__ (with its
# validation) costs twice as much as setting the slots. The loaders pass values of
# the right types, so they build through these.
_set = object.__setattr__
_new = object.__new__


def make_message(role: str, content: Any, tool_call_id: str | None = None, tool_calls: tuple = (),
                 model_id: str | None = None, tool_name: str | None = None, usage: Any = None,
                 thinking: str | None = None, injected: bool = False, origin: str | None = None,
                 id: str | None = None, meta: Mapping[str, Any] | None = None) -> Message:
    m = _new(Message)
    _set(m, "role", role)
    _set(m, "content", content)
    _set(m, "tool_call_id", tool_call_id)
    _set(m, "tool_calls", tool_calls)
    _set(m, "model_id", model_id)
    _set(m, "tool_name", tool_name)
    _set(m, "usage", usage)
    _set(m, "thinking", thinking)
    _set(m, "injected", injected)
    _set(m, "origin", origin)
    _set(m, "id", id)
    _set(m, "meta", {} if meta is None else meta)  # a dict of its own, as Message's default
    return m


def make_tool_call(id: str, name: str, arguments: Mapping[str, Any]) -> ToolCall:
    c = _new(ToolCall)
    _set(c, "id", id)
    _set(c, "name", name)
    _set(c, "arguments", arguments)
    return c


def make_usage(input_tokens: int, output_tokens: int, cache_read_tokens: int, cache_write_tokens: int) -> Usage:
    u = _new(Usage)
    _set(u, "input_tokens", input_tokens)
    _set(u, "output_tokens", output_tokens)
    _set(u, "cache_read_tokens", cache_read_tokens)
    _set(u, "cache_write_tokens", cache_write_tokens)
    return u
