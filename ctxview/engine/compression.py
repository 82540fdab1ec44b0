"""Age-tiered compression of old tool results, with tiers and policies as data.

The default policy is SwarmSDK's ContextManager exactly: a tool result more
than `keep_recent` messages from the end is cut by age (ages 0-10 kept,
11-20 → 1000 chars, 21-40 → 500, 41-60 → 200, older → 100), gets the marker
`\\n...[N chars truncated for context management]`, and, when the tool that
produced it can simply be run again, a re-run hint.

Deliberate improvement over the original: a compressed message keeps every
field (tool_calls, model_id, usage, ids, ...). Role, content and tool_call_id
are computed as the original does (the role becomes "tool", the content a
plain string).

The tiers and policies are data (tiers.py); which tool produced a result is
tool_names.py. This module is the rule; ctxview._fast.compression computes
the same results with memo tables, for the pipeline's repeated runs.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ctxview.engine.tool_names import detect_tool_name, is_rerunnable, tool_names_by_call_id
from ctxview.model import Content, Message
# (the tiers have a module of their own; their names are served from here too)
from ctxview.tiers import (DEFAULT_HINT, DEFAULT_MARKER, DEFAULT_POLICY, DEFAULT_RERUNNABLE_TOOLS, DEFAULT_TIERS,
                           PRESETS, CompressionPolicy, Tier, describe_tier, format_tiers, get_policy, parse_tiers,
                           tier_for_age)

__all__ = [
    "DEFAULT_HINT",
    "DEFAULT_MARKER",
    "DEFAULT_POLICY",
    "DEFAULT_RERUNNABLE_TOOLS",
    "DEFAULT_TIERS",
    "PRESETS",
    "CompressionPolicy",
    "Tier",
    "as_tool_result",
    "compress_text",
    "compress_tool_message",
    "compress_tool_results",
    "compress_tool_results_between",
    "describe_tier",
    "detect_tool_name",
    "format_tiers",
    "get_policy",
    "is_rerunnable",
    "parse_tiers",
    "text_of",
    "tier_for_age",
    "tool_names_by_call_id",
]


def text_of(content: str | Content | None) -> str:
    """Ruby's `msg.content.to_s`: "" for nil, the text of a Content."""
    if content is None:
        return ""
    if isinstance(content, Content):
        return content.text
    return content if isinstance(content, str) else str(content)


def compress_text(text: str, max_chars: int, tool_name: str | None, policy: CompressionPolicy = DEFAULT_POLICY) -> str:
    """`text` cut to `max_chars` code points plus the marker, and the hint for a re-runnable tool.

    Text already within the limit is returned as it is.
    """
    if len(text) <= max_chars:
        return text
    out = text[:max_chars] + policy.marker.replace("{n}", str(len(text) - max_chars))
    if is_rerunnable(tool_name, policy):
        out += policy.hint.replace("{tool}", tool_name)  # type: ignore[arg-type]
    return out


def as_tool_result(message: Message, text: str) -> Message:
    """The compressed message: role "tool", content the plain string `text`, every other field kept."""
    return dataclasses.replace(message, role="tool", content=text)


def compress_tool_message(
    message: Message,
    age: int,
    policy: CompressionPolicy = DEFAULT_POLICY,
    tool_name: str | None = None,
) -> Message:
    """One tool message compressed for its age (the original's compress_tool_message).

    The result's role is "tool" and its content a plain string, as the
    original rebuilds it; every other field is kept. The tool is named by the
    result's text (the default policy), else by message.tool_name, else by
    `tool_name` (the linked call's name).
    """
    if not policy.enabled:
        return message
    limit = tier_for_age(policy, age)[1].max_chars
    if limit is None:
        return message
    text = text_of(message.content)
    if len(text) <= limit:
        return message
    name = detect_tool_name(text) if policy.tool_name_from == "content" else (message.tool_name or tool_name)
    return as_tool_result(message, compress_text(text, limit, name, policy))


def compress_tool_results(
    messages: Sequence[Message],
    keep_recent: int = 10,
    policy: CompressionPolicy = DEFAULT_POLICY,
) -> list[Message]:
    """A new list with old tool results compressed by age (the original's compress_tool_results).

    The last `keep_recent` messages and every non-tool message are returned as
    they are; a tool result at index i has age len(messages) - i.
    """
    out = list(messages)
    if not policy.enabled:
        return out
    n = len(out)
    names = None
    for i in range(min(n - keep_recent, n)):
        msg = out[i]
        if msg.role != "tool":
            continue
        name = None
        if policy.tool_name_from != "content" and msg.tool_name is None and msg.tool_call_id:
            names = tool_names_by_call_id(messages) if names is None else names
            name = names.get(msg.tool_call_id)
        out[i] = compress_tool_message(msg, n - i, policy, name)
    return out


def compress_tool_results_between(
    messages: Sequence[Message],
    keep_recent: int,
    policy: CompressionPolicy,
    start: int,
    stop: int,
) -> list[Message]:
    """`compress_tool_results(messages, keep_recent, policy)[start:stop]`, `start` and `stop` being
    positions (one below 0 is 0, not counted from the end): ages still count from the end of
    `messages`."""
    return compress_tool_results(messages, keep_recent, policy)[max(start, 0):max(stop, 0)]
