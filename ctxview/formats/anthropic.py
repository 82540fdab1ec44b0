"""Anthropic Messages API requests: {"system", "messages": [...], "model", ...}.

`system` (a string or text blocks) is the system prompt; user messages'
tool_result blocks become tool messages, assistant tool_use blocks become
tool calls, thinking blocks are kept apart. A bare list of such messages is
read too.
"""

from __future__ import annotations

from typing import Any, Mapping

import orjson

from ctxview.model import Conversation, Message, Session
from ctxview.formats.parsing.builders import message, recorded_tools
from ctxview.formats.parsing.blocks import (
    anthropic_assistant,
    anthropic_user,
    is_reminder_only,
    join_texts,
    result_text,
    thinking_text,
)
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, document_only
from ctxview.formats.parsing.linking import last_model, link_tool_results, unlinked_warning

FORMAT = "anthropic"
EXPECTED = "Anthropic Messages request"

_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def _has_anthropic_blocks(messages: list) -> bool:
    for m in messages[:200]:
        if isinstance(m, Mapping) and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, Mapping) and (b.get("type") in tuple(_BLOCKS) or isinstance(b.get("source"), Mapping)):
                    return True
    return False


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        msgs = doc["messages"]
        if not all(isinstance(m, Mapping) and m.get("role") in ("user", "assistant") for m in msgs[:50]):
            return False
        model = doc.get("model")
        return "system" in doc or _has_anthropic_blocks(msgs) or (isinstance(model, str) and model.startswith("claude"))
    if isinstance(doc, list) and doc:
        return all(isinstance(m, Mapping) and m.get("role") in ("user", "assistant") for m in doc[:50]) and \
            _has_anthropic_blocks(doc)
    return False


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    doc = document_only(inp, layout, doc, "an Anthropic request", EXPECTED)
    if isinstance(doc, list):
        msgs, base, system, model = doc, "", None, None
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        msgs, base = doc["messages"], "/messages"
        system = doc.get("system")
        model = doc.get("model") if isinstance(doc.get("model"), str) else None
    else:
        raise LoadError(inp.name, "expected an object with a \"messages\" list", expected=EXPECTED)
    if system is not None and not isinstance(system, str):
        system = result_text(system)
    out = request_messages(inp.name, msgs, base, model)
    if not out:
        raise LoadError(inp.name, "the message list is empty", expected=EXPECTED)
    out, unlinked = link_tool_results(out)
    warnings = [w for w in (unlinked_warning("main", unlinked),) if w]
    conv = Conversation(name="main", messages=tuple(out), system_prompt=system, model=model or last_model(out),
                        metadata=recorded_tools(doc))
    meta = {k: doc[k] for k in ("model", "max_tokens") if isinstance(doc, dict) and k in doc}
    return Session(format=FORMAT, source=inp.name, conversations=(conv,), metadata=meta, warnings=tuple(warnings))


def request_messages(name: str, msgs: list, base: str, model: str | None, *, line: int | None = None,
                     expected: str = EXPECTED, memo: dict | None = None) -> list[Message]:
    """A request body's `messages` as ctxview's messages (tool results split out of their user
    turns, origins `base/i`); LoadError naming `name` (and `line`) for an item that is not a message.
    `memo` (a dict kept across calls) gives a message seen before (same JSON, same model) the same
    Message objects, where it was first seen: a log of request bodies repeats the history in each."""
    out: list[Message] = []
    for i, m in enumerate(msgs):
        origin = f"{base}/{i}"
        if (type(m) is not dict and not isinstance(m, Mapping)) or type(m.get("role")) is not str:  # (dict: fast)
            raise LoadError(name, f"{origin}: expected a message object with a role", line=line, expected=expected)
        seen = None
        if memo is not None:
            try:
                seen = (model, orjson.dumps(m))
            except TypeError:  # nested past orjson's 255 levels: converted, not remembered
                pass
            hit = memo.get(seen) if seen is not None else None
            if hit is not None:
                out.extend(hit)
                continue
            first = len(out)
        role, content = m["role"], m.get("content")
        if role == "assistant":
            texts, thinking, calls = anthropic_assistant(content)
            # the recorded blocks too (signatures included): an export sends them back as they were
            out.append(message(role="assistant", content=join_texts(texts) or "", tool_calls=tuple(calls),
                               thinking=thinking_text(thinking), origin=origin, model_id=model,
                               meta={"thinking_blocks": tuple(thinking)} if thinking else {}))
        else:
            results, texts = anthropic_user(content)
            for tid, text, is_error in results:
                out.append(message(role="tool", content=text, tool_call_id=tid, origin=origin,
                                   meta={"is_error": True} if is_error else {}))
            text = join_texts(texts)
            if text is not None or not results:
                text = text or ""
                out.append(message(role=role, content=text, origin=origin, injected=is_reminder_only(text)))
        if seen is not None:
            memo[seen] = tuple(out[first:])  # type: ignore[index]
    return out


SESSION_FORMAT = ModuleFormat(FORMAT, "Anthropic Messages request", EXPECTED, 20, load,
                              sniff_document=sniff_document)
