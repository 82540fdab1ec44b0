"""Prepared messages in the shapes model APIs take.

`to_openai(view)` gives an OpenAI chat-completions request body
(`{"model", "messages"}`, tool calls as `function` calls with JSON-string
arguments); `to_anthropic(view)` a Messages API body (`{"model", "system",
"messages"}`, tool calls as `tool_use` blocks, tool results as `tool_result`
blocks in user turns, consecutive same-role turns merged since the API wants
them alternating). Attachments are not exported; their count is noted under
`"ctxview"` so nothing is lost silently.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .atomic import write_atomic
from .model import Content, Message
from .view import PreparedView

__all__ = ["SHAPES", "dumps", "to_anthropic", "to_openai", "to_shape", "write_atomic"]

SHAPES = ("openai", "anthropic")


def _attachments(messages: Sequence[Message]) -> int:
    return sum(len(m.content.attachments) for m in messages if isinstance(m.content, Content))


def _meta(view: PreparedView, model: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "tokens_prepared": view.tokens_prepared,
        "counter": view.counter_name,
        "messages": len(view.prepared),
    }
    dropped = _attachments(view.prepared)
    if dropped:
        meta["attachments_not_exported"] = dropped
    return meta


def to_openai(view: PreparedView, model: str | None = None) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    if view.system_prompt:
        out.append({"role": "system", "content": view.system_prompt})
    for msg in view.prepared:
        if msg.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": msg.text or None}
            if msg.tool_calls:
                item["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name,
                                  "arguments": json.dumps(dict(c.arguments), ensure_ascii=False, default=str)}}
                    for c in msg.tool_calls
                ]
            out.append(item)
        elif msg.role == "tool":
            out.append({"role": "tool", "tool_call_id": msg.tool_call_id or "", "content": msg.text})
        else:
            out.append({"role": msg.role, "content": msg.text})
    body: dict[str, Any] = {"model": model, "messages": out, "ctxview": _meta(view, model)}
    return body


def to_anthropic(view: PreparedView, model: str | None = None) -> dict[str, Any]:
    system_parts = [view.system_prompt] if view.system_prompt else []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for msg in view.prepared:
        text = msg.text
        if msg.role == "system":
            if text:
                system_parts.append(text)
        elif msg.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                          for c in msg.tool_calls)
            add("assistant", blocks)
        elif msg.role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": msg.tool_call_id or "", "content": text}])
        else:
            add("user", [{"type": "text", "text": text}] if text else [])
    body: dict[str, Any] = {"model": model, "system": "\n\n".join(system_parts), "messages": turns,
                            "ctxview": _meta(view, model)}
    return body


def to_shape(view: PreparedView, shape: str = "openai", model: str | None = None) -> dict[str, Any]:
    if shape == "openai":
        return to_openai(view, model)
    if shape == "anthropic":
        return to_anthropic(view, model)
    raise ValueError(f"unknown shape {shape!r} (choices: {', '.join(SHAPES)})")


# Characters json.dumps(ensure_ascii=False) leaves raw that a terminal may act
# on or that reorder text: DEL and C1 controls, bidi marks/overrides/isolates,
# zero-width and separator characters. They can only occur inside JSON
# strings, where a \uXXXX escape means the same thing.
_TERMINAL_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def dumps(data: Any) -> str:
    """Indented JSON, UTF-8 text kept readable, terminal-active characters escaped."""
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


