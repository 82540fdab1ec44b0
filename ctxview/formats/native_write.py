"""Writing ctxview's own session format (see native.py for the document's shape and its reading)."""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any, Mapping

import orjson

from ctxview.atomic import write_atomic
from ctxview.model import Content, Message, Session

__all__ = ["FORMAT", "VERSION", "dump_session", "write_session"]

FORMAT = "ctxview"
VERSION = 1


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    return str(value)


def _dump_message(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"role": m.role}
    c = m.content
    d["content"] = {"text": c.text, "attachments": _jsonable(c.attachments)} if isinstance(c, Content) else c
    if m.tool_calls:
        d["tool_calls"] = [{"id": t.id, "name": t.name, "arguments": _jsonable(t.arguments)} for t in m.tool_calls]
    for key in ("tool_call_id", "tool_name", "model_id", "thinking", "id"):
        v = getattr(m, key)
        if v is not None:
            d[key] = v
    if m.usage is not None:
        u = m.usage
        d["usage"] = {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                      "cache_read_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens}
        for key in ("cache_write_1h_tokens", "speed", "inference_geo", "recorded_usd"):  # what else sets the price
            v = getattr(u, key)
            if v:
                d["usage"][key] = v
    if m.injected:
        d["injected"] = True
    meta = dict(m.meta)
    if m.origin and not m.origin.startswith("/conversations/"):
        meta.setdefault("source_origin", m.origin)  # where it came from in the original file
    if meta:
        d["meta"] = _jsonable(meta)
    return d


def dump_session(session: Session, title: str | None = None) -> dict[str, Any]:
    """A Session as a ctxview-format document (plain JSON values)."""
    convs = []
    for c in session.conversations:
        d: dict[str, Any] = {"name": c.name}
        for key in ("model", "context_window", "system_prompt", "compression_applied"):
            v = getattr(c, key)
            if v is not None:
                d[key] = v
        if c.settings:
            d["settings"] = _jsonable(c.settings)
        if c.ephemeral:
            d["ephemeral"] = {str(k): list(v) for k, v in sorted(c.ephemeral.items())}
        d["messages"] = [_dump_message(m) for m in c.messages]
        if c.events:
            d["events"] = [
                {k: v for k, v in {
                    "kind": e.kind, "index": e.index, "trigger": e.trigger, "tokens_before": e.tokens_before,
                    "summary": e.summary, "replaced": [_dump_message(m) for m in e.replaced] or None,
                    "meta": _jsonable(e.meta) or None,
                }.items() if v is not None}
                for e in c.events
            ]
        if c.metadata:
            d["metadata"] = _jsonable(c.metadata)
        convs.append(d)
    doc: dict[str, Any] = {"format": "ctxview", "version": VERSION}
    t = title or session.metadata.get("title")
    if t:
        doc["title"] = t
    meta = {k: v for k, v in session.metadata.items() if k != "title"}
    if session.format != FORMAT:
        meta.setdefault("converted_from", session.format)
    if meta:
        doc["metadata"] = _jsonable(meta)
    doc["conversations"] = convs
    return doc


def write_session(session: Session, path: str | os.PathLike, title: str | None = None, indent: bool = True) -> None:
    """Write `session` in ctxview format atomically (temp file, then os.replace)."""
    doc = dump_session(session, title)
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:  # integers beyond 64 bits (from a lenient source): the stdlib writes them
        import json

        data = json.dumps(doc, ensure_ascii=False, indent=2 if indent else None).encode("utf-8", "surrogatepass")
    write_atomic(path, data + b"\n")
