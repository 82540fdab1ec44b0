"""Recorded Messages API requests: what a capture log says one request sent, and the reply it got.

Every request-capture format (claude-trace, claude-tap, context-lens LHAR, a
HAR of the Messages API) records, per call, the request body as sent and the
response (a JSON message, or the SSE text of a streamed one). This module turns
one such pair into a `TraceRequest`; request_threads.py makes conversations of
them, and trace_compare.py holds a transcript's reconstruction against them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

import orjson

from ctxview.model import Message
from ctxview.formats.anthropic import request_messages
from ctxview.formats.parsing.blocks import (
    anthropic_assistant,
    join_texts,
    result_text,
    thinking_text,
)
from ctxview.formats.parsing.builders import anthropic_usage, message, recorded_tools
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.json_decode import loads

__all__ = ["Seen", "TraceRequest", "body_object", "build_request", "header", "iso_seconds", "iso_text",
           "message_from_events", "message_key", "reply_message", "skip_reason", "sse_events"]


@dataclass(frozen=True, slots=True)
class TraceRequest:
    """One kept request of a capture log: what its body sent, and the reply its response holds."""

    line: int                       # the record: its log line (1-based), or for a JSON document its number
    messages: tuple[Message, ...]   # the body's messages as ctxview reads them (anthropic.request_messages)
    reply: Message                  # the assistant message of the response: id, usage, timestamp
    system: str | None              # the system prompt's text (blocks joined)
    system_raw: Any                 # as the body holds it: a string or text blocks
    tools: tuple[Mapping[str, Any], ...]
    model: str | None
    streaming: bool                 # the response was SSE text (or its events)
    keys: tuple[tuple, ...] = ()    # message_key of each message (computed once: grouping compares them)


def message_key(m: Message) -> tuple:
    """What makes two messages the same message sent: role, text, the result's call id, the calls.
    (Not thinking: it is compared apart; not origin, ids or usage: bookkeeping.)"""
    calls = tuple((c.id, c.name, orjson.dumps(c.arguments, option=orjson.OPT_SORT_KEYS, default=str))
                  for c in m.tool_calls)
    return (m.role, m.text, m.tool_call_id or "", calls)


def iso_seconds(seconds: Any) -> str | None:
    """An epoch time in seconds as ISO 8601 UTC, or None for anything that is not a plausible one."""
    if type(seconds) not in (int, float) or not 0 < seconds < 1e11:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


def iso_text(value: Any) -> str | None:
    """An ISO 8601 time as recorded ("...Z" or "+00:00"), normalised to "...Z" in UTC, or None."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def header(headers: Any, name: str) -> str:
    """A header's value ("" when absent), from a {name: value} object or HAR's [{"name", "value"}] list;
    names compared without case."""
    name = name.lower()
    if isinstance(headers, Mapping):
        pairs: Iterable = headers.items()
    elif isinstance(headers, list):
        pairs = ((h.get("name"), h.get("value")) for h in headers if isinstance(h, Mapping))
    else:
        return ""
    for k, v in pairs:
        if isinstance(k, str) and k.lower() == name and isinstance(v, str):
            return v
    return ""


def body_object(body: Any) -> Any:
    """A request body as recorded: an object, or JSON text of one (a capture that kept the text, or a
    client that serialised its body twice) parsed; anything else as it is (build_request refuses it)."""
    for _ in range(2):  # the text, then the text it held
        if not isinstance(body, (str, bytes)):
            break
        try:
            body = loads(body)
        except orjson.JSONDecodeError:
            break
    return body


# --- responses -----------------------------------------------------------------------------

def sse_events(raw: str) -> list[dict]:
    """The JSON `data:` payloads of an SSE stream; a line that is not JSON (a stream cut short) is skipped."""
    out = []
    for line in raw.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            ev = loads(data)
        except orjson.JSONDecodeError:
            continue
        if type(ev) is dict:
            out.append(ev)
    return out


def _merge_usage(into: dict, usage: Any) -> None:
    if isinstance(usage, Mapping):
        into.update({k: v for k, v in usage.items() if v is not None})


def message_from_events(events: Iterable[Mapping[str, Any]]) -> dict | None:
    """The response message a stream of Messages API events builds (as claude-trace's
    shared-conversation-processor does), or None when no message_start came."""
    msg: dict | None = None
    blocks: dict[int, dict] = {}
    usage: dict = {}
    for ev in events:
        etype = ev.get("type")
        if etype == "message_start" and isinstance(ev.get("message"), Mapping):
            msg = dict(ev["message"])
            _merge_usage(usage, msg.get("usage"))
        elif etype == "content_block_start" and type(ev.get("index")) is int and isinstance(ev.get("content_block"), Mapping):
            blocks[ev["index"]] = dict(ev["content_block"])
        elif etype == "content_block_delta" and isinstance(ev.get("delta"), Mapping):
            index, delta = ev.get("index"), ev["delta"]
            block = blocks.get(index) if type(index) is int else None
            if block is None:
                continue
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
            elif dtype == "input_json_delta":
                block["_json"] = block.get("_json", "") + str(delta.get("partial_json") or "")
            elif dtype == "thinking_delta":
                block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
            elif dtype == "signature_delta":
                block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
        elif etype == "message_delta":
            _merge_usage(usage, ev.get("usage"))
            if msg is not None and isinstance(ev.get("delta"), Mapping) and ev["delta"].get("stop_reason"):
                msg["stop_reason"] = ev["delta"]["stop_reason"]
    if msg is None:
        return None
    content = []
    for _, block in sorted(blocks.items()):
        if "_json" in block:
            raw = block.pop("_json")
            try:
                block["input"] = loads(raw) if raw else {}
            except orjson.JSONDecodeError:
                block["input"] = {"input": raw}
        content.append(block)
    msg["content"], msg["usage"] = content, usage
    return msg


def reply_message(msg: Mapping[str, Any], line: int, timestamp: str | None) -> Message:
    """The assistant message of a response message ({id, model, content, usage})."""
    texts, thinking, calls = anthropic_assistant(msg.get("content"))
    meta: dict[str, Any] = {"trace_line": line}
    if timestamp:
        meta["timestamp"] = timestamp
    if thinking:
        meta["thinking_blocks"] = tuple(thinking)
    model = msg.get("model") if isinstance(msg.get("model"), str) else None
    mid = msg.get("id") if isinstance(msg.get("id"), str) else None
    usage = msg.get("usage")
    return message(role="assistant", content=join_texts(texts) or "", tool_calls=tuple(calls),
                   thinking=thinking_text(thinking), model_id=model,
                   usage=anthropic_usage(usage) if isinstance(usage, dict) else None,
                   origin=f"line {line}: response", id=mid, meta=meta)


# Claude on Amazon Bedrock and Google Vertex AI: the same Messages request body (model in the path,
# "anthropic_version" in the body), the same reply (claude-tap's bedrock.py and proxy.py name these routes)
_BEDROCK = re.compile(r"/model/[^/]+(?:/[^/]+)*?/(?:invoke|invoke-with-response-stream)$")
_VERTEX = re.compile(r"/publishers/anthropic/models/[^/:]+:(?:rawPredict|streamRawPredict)$")


def skip_reason(method: Any, url: Any, status: Any, answered: bool) -> str | None:
    """Why a recorded call is not a request of a conversation, or None: it is one (a POST to
    /v1/messages, or Bedrock's and Vertex AI's routes to it, answered 2xx). `url` may be a path;
    `status` None: not recorded."""
    if not isinstance(url, str) or len(url) > 65536:  # (no API route is that long)
        return "not /v1/messages"
    path = url.split("?")[0].split("#")[0]
    if "/v1/messages" not in path and not (_BEDROCK.search(path) or _VERTEX.search(path)):
        return "not /v1/messages"
    if "/v1/messages/" in path:
        return path.rstrip("/").rsplit("/", 1)[-1] or "messages/"  # count_tokens, batches
    if str(method or "").upper() != "POST":
        return f"{str(method)[:20]} request"
    if not answered:
        return "no response (orphaned)"
    if type(status) is int and not 200 <= status < 300:
        return f"status {status}"
    return None


# --- one request ---------------------------------------------------------------------------

class Seen:
    """What the requests of one log share: the messages each repeats (anthropic.request_messages' memo)
    and their keys."""

    def __init__(self) -> None:
        self.messages: dict = {}
        self._keys: dict[int, tuple] = {}   # id(Message) -> message_key (the memo keeps them alive)

    def keys(self, msgs: Sequence[Message]) -> tuple[tuple, ...]:
        get, out = self._keys.get, []
        for m in msgs:
            k = get(id(m))
            if k is None:
                k = self._keys[id(m)] = message_key(m)
            out.append(k)
        return tuple(out)


def build_request(name: str, where: str, line: int | None, number: int, body: Any, reply: Mapping[str, Any],
                  streaming: bool, timestamp: str | None, seen: Seen, expected: str) -> TraceRequest:
    """The TraceRequest of a recorded body and its response message; LoadError (naming `name`, the
    log `line` where there is one, and `where`, the body's place: "request.body") for a body that is
    not a Messages API request. `number` is the record's number (TraceRequest.line)."""
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise LoadError(name, f"{where}: expected a Messages API body with a \"messages\" list",
                        line=line, expected=expected)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    base = f"line {line}: /{where.replace('.', '/')}/messages" if line is not None else f"{where}.messages"
    msgs = request_messages(name, body["messages"], base, model, line=line, expected=expected, memo=seen.messages)
    if not msgs:
        raise LoadError(name, f"{where}.messages is empty", line=line, expected=expected)
    try:
        keys = seen.keys(msgs)
    except (TypeError, RecursionError):  # orjson's encoder stops at 255 levels (its TypeError)
        raise LoadError(name, f"{where}.messages: tool call arguments nested too deep (over 255 levels)",
                        line=line, expected=expected) from None
    system = body.get("system")
    return TraceRequest(line=number, messages=tuple(msgs), reply=reply_message(reply, number, timestamp),
                        system=system if system is None or isinstance(system, str) else result_text(system),
                        system_raw=system, tools=recorded_tools(body).get("tools", ()), model=model,
                        streaming=streaming, keys=keys)
