"""OpenAI message lists: Chat Completions messages and Responses API items.

Chat: a list of {role, content, tool_calls?, tool_call_id?} (or an object
with "messages"); tool-call arguments are JSON strings. Responses: a list of
items (message, reasoning, function_call, function_call_output), or a
request {"instructions", "input"} or response {"output"} object. JSONL with
one message or item per line is read too.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ctxview.model import Conversation, Message, Session
from ctxview.formats.parsing.blocks import openai_parts_text
from ctxview.formats.parsing.builders import message, openai_usage, recorded_tools, tool_call_from
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, LineReader, load_document
from ctxview.formats.parsing.linking import last_model, link_tool_results, unlinked_warning
from ctxview.formats.responses import ResponsesBuilder

FORMAT = "openai"
EXPECTED = "OpenAI chat messages or Responses items"

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_ITEM_TYPES = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "web_search_call",
})


def sniff_record(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    rtype, role = rec.get("type"), rec.get("role")
    if type(rtype) is str and rtype in _ITEM_TYPES and "payload" not in rec:
        return True
    return type(role) is str and role in _ROLES and ("content" in rec or "tool_calls" in rec)


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict):
        if isinstance(doc.get("messages"), list):
            return all(sniff_record(m) for m in doc["messages"][:20])
        for key in ("input", "output"):
            if isinstance(doc.get(key), list) and doc[key] and all(sniff_record(m) for m in doc[key][:20]):
                return True
        return False
    return isinstance(doc, list) and bool(doc) and all(sniff_record(m) for m in doc[:20])


def _is_responses(items: list) -> bool:
    for it in items[:200]:
        if isinstance(it, Mapping):
            if type(it.get("type")) is str and it["type"] in _ITEM_TYPES:
                return True
            content = it.get("content")
            if isinstance(content, list) and any(
                isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text") for p in content
            ):
                return True
    return False


def _chat(items: Iterable[tuple[str, Any]], name: str) -> tuple[str | None, list[Message]]:
    system_parts: list[str] = []
    messages: list[Message] = []
    for origin, m in items:
        if not isinstance(m, Mapping):
            raise LoadError(name, f"{origin}: expected a message object, found {type(m).__name__}", expected=EXPECTED)
        role = m.get("role")
        if not isinstance(role, str):
            raise LoadError(name, f"{origin}: message has no role", expected=EXPECTED)
        text = openai_parts_text(m.get("content"))
        if role in ("system", "developer") and not messages:
            system_parts.append(text or "")
            continue
        calls = []
        listed = m.get("tool_calls")
        if listed is not None and not isinstance(listed, list):
            raise LoadError(name, f"{origin}/tool_calls: expected a list of tool calls, found {type(listed).__name__}",
                            expected=EXPECTED)
        for c in listed or ():
            if not isinstance(c, Mapping):
                continue
            fn = c.get("function") if isinstance(c.get("function"), Mapping) else c
            calls.append(tool_call_from(c.get("id"), fn.get("name"), fn.get("arguments")))
        fc = m.get("function_call")
        if isinstance(fc, Mapping):  # the legacy single function call
            calls.append(tool_call_from(fc.get("id"), fc.get("name"), fc.get("arguments")))
        thinking = m.get("reasoning_content") or m.get("reasoning")
        tool_name = None
        tool_call_id = m.get("tool_call_id")
        if role == "function":  # legacy function result: linked by name, not id
            role, tool_name = "tool", str(m.get("name") or "") or None
        messages.append(message(
            role=role, content=text if text is not None else ("" if role != "assistant" else None),
            tool_calls=tuple(calls), tool_call_id=str(tool_call_id) if tool_call_id is not None else None,
            tool_name=tool_name, thinking=thinking if isinstance(thinking, str) else None,
            usage=openai_usage(m.get("usage")), model_id=m.get("model") if isinstance(m.get("model"), str) else None,
            origin=origin, id=m.get("id") if isinstance(m.get("id"), str) else None,
        ))
    return ("\n\n".join(system_parts) if system_parts else None), messages


def _responses(items: Iterable[tuple[str, Any]]) -> tuple[list[Message], dict[str, int], int]:
    """The messages (tool results named after their calls as built), the unknown item types, and
    how many results name a call no earlier item made (as link_tool_results counts them)."""
    b = ResponsesBuilder()
    for origin, it in items:
        b.item(it, origin)
    b.flush()
    return b.messages, b.unknown, b.unlinked


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    warnings: list[str] = []
    skipped = 0
    system_prompt = None
    model = None
    if layout == "jsonl":
        reader = LineReader(inp, EXPECTED, lenient)
        pairs = [(f"line {n}", rec) for n, rec in reader]
        skipped = reader.skipped
        reader.warn_skipped(warnings)
        items = pairs
    else:
        if doc is None:
            doc = load_document(inp, EXPECTED)
        if isinstance(doc, list):
            items = [(f"/{i}", m) for i, m in enumerate(doc)]
        elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            items = [(f"/messages/{i}", m) for i, m in enumerate(doc["messages"])]
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
        elif isinstance(doc, dict) and isinstance(doc.get("input"), (list, str)):
            inp_items = doc["input"]
            if isinstance(inp_items, str):
                inp_items = [{"role": "user", "content": inp_items}]
            items = [(f"/input/{i}", m) for i, m in enumerate(inp_items)]
            if isinstance(doc.get("output"), list):
                items += [(f"/output/{i}", m) for i, m in enumerate(doc["output"])]
            if isinstance(doc.get("instructions"), str):
                system_prompt = doc["instructions"]
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
        elif isinstance(doc, dict) and isinstance(doc.get("output"), list):
            items = [(f"/output/{i}", m) for i, m in enumerate(doc["output"])]
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
        else:
            raise LoadError(inp.name, "expected a list of messages, or an object with \"messages\", \"input\" or \"output\"",
                            expected=EXPECTED)
    if not items:
        raise LoadError(inp.name, "the message list is empty", expected=EXPECTED)
    if _is_responses([m for _o, m in items]):
        messages, unknown, unlinked = _responses(items)
        if unknown:
            kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(unknown.items()))
            warnings.append(f"skipped {sum(unknown.values())} item(s) of unknown type ({kinds})")
            skipped += sum(unknown.values())
        variant = "responses"
    else:
        sp, messages = _chat(items, inp.name)
        system_prompt = system_prompt or sp
        variant = "chat"
        messages, unlinked = link_tool_results(messages)
    w = unlinked_warning("main", unlinked)
    if w:
        warnings.append(w)
    conv = Conversation(name="main", messages=tuple(messages), system_prompt=system_prompt,
                        model=model or last_model(messages), metadata=recorded_tools(doc))
    return Session(format=FORMAT, source=inp.name, conversations=(conv,), metadata={"variant": variant},
                   skipped=skipped, warnings=tuple(warnings))


SESSION_FORMAT = ModuleFormat(FORMAT, "OpenAI Chat Completions messages or Responses items", EXPECTED, 10, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
