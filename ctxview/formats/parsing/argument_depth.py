"""How deep a tool call's arguments may nest: the check every load ends with (registry.within_limits).

A file whose arguments nest past MAX_ARGUMENT_DEPTH is refused with one line rather than
overflowing the stack of whatever walks them (JSON allows 1,024 levels; the encoders stop
near 1,000). A loader that measures each call's arguments as it builds it, while they are in
the cache, checks only the messages it found too deep and says so (SessionFormat.checks_arguments;
the Codex, Claude Code and ctxview loaders): walking every message of a big session again after
the load cost ~5% of a Codex load, in cache misses.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ctxview.model import Message
from ctxview.formats.errors import LoadError

__all__ = ["MAX_ARGUMENT_DEPTH", "check_arguments", "deeper_than"]

MAX_ARGUMENT_DEPTH = 100

_CONTAINERS = frozenset((dict, list, tuple))  # what the loaders build from JSON (no subclasses)


def deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` (JSON-like) holds containers more than `limit` levels deep; no recursion, so a
    value nested to the parser's limit is measured, not a RecursionError. Flat arguments (the usual
    case) cost one pass over their values."""
    for v in (value.values() if isinstance(value, dict) else value):
        if type(v) in _CONTAINERS:
            break
    else:
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for v in (item.values() if isinstance(item, dict) else item):
            if type(v) in _CONTAINERS:
                stack.append((v, depth + 1))
    return False


def check_arguments(source: str, conversation: str, messages: Sequence[Message],
                    indices: Iterable[int] | None = None) -> None:
    """LoadError for the first message (of `indices`, in order; of all when None) holding a tool call
    whose arguments nest deeper than MAX_ARGUMENT_DEPTH."""
    for msg in messages if indices is None else (messages[i] for i in indices):
        if not msg.tool_calls:
            continue
        for call in msg.tool_calls:
            if deeper_than(call.arguments, MAX_ARGUMENT_DEPTH):
                index = messages.index(msg)  # (the first equal message's, as it always said)
                where = f" ({msg.origin})" if msg.origin else ""
                raise LoadError(source, f"conversation {conversation!r}, message {index}{where}: the "
                                        f"arguments of tool call {call.name!r} are nested deeper than "
                                        f"{MAX_ARGUMENT_DEPTH} levels")
