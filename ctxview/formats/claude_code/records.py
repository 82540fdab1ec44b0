"""Claude Code records: which types there are, and what one user or assistant line holds (its entry's data).

An entry is a tuple (speed: ~100k of them): key, parent, origin, kind, side,
agent, data; origin is the JSONL line number (int) or a JSON pointer (str).
The data of a USER entry is (tool results, text, flags, uuid); of an
ASSISTANT entry (message id, model, texts, thinking blocks, tool calls, raw
usage, uuid, api error); of compaction boundaries see compaction.py.
"""

from __future__ import annotations

from sys import intern as _intern
from typing import Any

from ctxview.formats.parsing.blocks import (
    anthropic_assistant,
    anthropic_user,
    result_text,
    thinking_block,
)
from ctxview.formats.parsing.builders import tool_call, tool_call_from

# Record types that hold no message for the model; recognised, not counted as unknown.
QUIET_TYPES = frozenset({
    "summary", "file-history-snapshot", "progress", "queue-operation", "custom-title",
    "agent-name", "tag", "last-prompt", "pr-link", "attachment", "x-meta", "worktree-state",
    "content-replacement",  # (what a persisted tool result was sent as: persisted.py)
})
MESSAGE_TYPES = frozenset({"user", "assistant"})
SNIFF_TYPES = MESSAGE_TYPES | QUIET_TYPES | {"system"}


def str_or_none(v: Any) -> str | None:
    return v if type(v) is str else None  # JSON can put a list where a name belongs: unhashable


def key_of(v: Any) -> str | None:
    return v if v is None or type(v) is str else str(v)


# An entry is a tuple (speed: ~100k of them): key, parent, origin, kind, side, agent, data.
# origin is the JSONL line number (int) or a JSON pointer (str).
K, P, O, KIND, SIDE, AGENT, DATA = range(7)
USER, ASSISTANT, BOUNDARY, NODE, MICRO = range(5)


def is_usage_record(rec: dict) -> bool:
    msg = rec.get("message")
    return type(msg) is dict and type(msg.get("usage")) is dict and msg.get("content") is None and (
        "timestamp" in rec or "requestId" in rec or "costUSD" in rec)


def origin_text(origin: Any) -> str:
    return origin if type(origin) is str else f"line {origin}"


def user_data(rec: dict, msg: dict, uuid: str | None):
    return user_fields(msg.get("content"), rec.get("isMeta"), rec.get("isCompactSummary"), uuid)


def user_fields(content: Any, is_meta: Any, is_summary: Any, uuid: str | None):
    """user_data of a line whose fields were read already (linear.py reads them from a LineFields)."""
    flags = (1 if is_meta is True else 0) | (2 if is_summary is True else 0)
    if type(content) is str:
        return (_NONE, content, flags, uuid)
    if type(content) is not list:
        return None
    results = []
    text = None
    texts = None
    for b in content:
        if type(b) is dict:
            bt = b.get("type")
            if bt == "tool_result":
                c = b.get("content")
                tid = b.get("tool_use_id")
                results.append((tid if type(tid) is str else str(tid or ""),
                                c if type(c) is str else result_text(c), b.get("is_error") is True))
                continue
            if bt == "text":
                t = b.get("text")
                if type(t) is str:
                    if text is None:
                        text = t
                    else:
                        texts = texts or [text]
                        texts.append(t)
                    continue
        r, ts = anthropic_user([b])
        results.extend(r)
        for t in ts:
            if text is None:
                text = t
            else:
                texts = texts or [text]
                texts.append(t)
    if texts is not None:
        text = "\n".join(texts)
    if not results and text is None and content:
        return None
    return (results, text, flags, uuid)


_NONE: tuple = ()


def assistant_data(rec: dict, msg: dict, uuid: str | None):
    return assistant_fields(msg.get("content"), msg.get("id"), msg.get("model"), msg.get("usage"),
                            rec.get("costUSD"), rec.get("isApiErrorMessage"), rec.get("timestamp"), uuid)


def assistant_fields(content: Any, mid: Any, model: Any, usage: Any, cost: Any, api_error: Any, timestamp: Any,
                     uuid: str | None):
    """assistant_data of a line whose fields were read already (linear.py reads them from a LineFields)."""
    texts: Any = _NONE
    thinking: Any = _NONE
    calls: Any = _NONE
    if type(content) is list and len(content) == 1 and type(content[0]) is dict:
        # The common case: Claude Code writes one content block per line.
        b = content[0]
        bt = b.get("type")
        t = b.get("text") if bt == "text" else None
        if type(t) is str:
            texts = (t,) if t else _NONE
        elif bt == "tool_use":
            cid, name, args = b.get("id"), b.get("name"), b.get("input")
            calls = ((tool_call(cid, name, args) if type(cid) is str and type(name) is str and type(args) is dict
                      else tool_call_from(cid, name, args)),)  # (tool_call_from's common case, without its call)
        elif bt == "thinking" and type(b.get("thinking")) is str:
            thinking = (thinking_block(b),)
        else:
            texts, thinking, calls = anthropic_assistant(content)
    elif content is not None:
        texts, thinking, calls = anthropic_assistant(content)
    if cost is not None and type(usage) is dict:
        # older Claude Code wrote the call's cost beside the message: kept with its usage, to show
        usage = {**usage, "costUSD": cost}
    # The model name is shared (every line repeats it); the usage becomes a Usage only for
    # the last line of a response, the one that counts.
    return (mid if type(mid) is str else None, _intern(model) if type(model) is str else None, texts, thinking,
            calls, usage if type(usage) is dict else None, uuid, api_error is True, timestamp)
