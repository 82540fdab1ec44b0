"""SwarmSDK snapshots (`swarm.snapshot.write_to_file`), versions 1.x and 2.x.

{"version", "type", "snapshot_at", "swarm_sdk_version", "metadata" (2.x) or
"swarm" (1.x), "agents": {name: {conversation, context_state, system_prompt}},
"delegation_instances": {"delegate@delegator": {...}}, ...}. Every agent
and delegation instance becomes a conversation, agents first, in file order.
A message is {role, content, tool_calls?, tool_call_id?, input_tokens?,
output_tokens?, model_id?}; content is a string, null, or {text, attachments}.
"""

from __future__ import annotations

from typing import Any, Mapping

from ctxview.model import Content, Conversation, Message, Session
from ctxview.formats.parsing.blocks import binary_placeholder
from ctxview.formats.parsing.builders import message, swarm_message_usage, tool_call_from
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, document_only, parse_in_pieces
from ctxview.formats.parsing.linking import last_model, link_tool_results, unlinked_warning

FORMAT = "swarm-snapshot"
EXPECTED = "SwarmSDK snapshot"


def _agents_like(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, dict) and ("conversation" in v or "messages" in v) for v in list(value.values())[:20]
    )


def sniff_document(doc: Any) -> bool:
    if not isinstance(doc, dict) or doc.get("format") == "ctxview":
        return False
    agents = doc.get("agents")
    return (isinstance(agents, dict) and bool(agents) and _agents_like(agents)) or (
        "delegation_instances" in doc and _agents_like(doc.get("delegation_instances"))
    )


def pointer(*parts: Any) -> str:
    """A JSON pointer (RFC 6901) from path parts."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _attachment(a: Any) -> Any:
    # Attachments stay opaque, but base64 payloads are replaced by their size.
    if isinstance(a, Mapping):
        out = {}
        for k, v in a.items():
            if isinstance(v, str) and len(v) > 1024:
                out[k] = binary_placeholder("data", a.get("mime_type") or a.get("media_type"), len(v) * 3 // 4)
            else:
                out[k] = v
        return out
    if isinstance(a, str) and len(a) > 1024:
        return binary_placeholder("attachment", None, len(a) * 3 // 4)
    return a


def swarm_message(d: Any, origin: str, name: str, expected: str = EXPECTED) -> Message:
    """One RubyLLM message hash as SwarmSDK serialises it."""
    if not isinstance(d, Mapping):
        raise LoadError(name, f"{origin}: expected a message object, found {type(d).__name__}", expected=expected)
    role = d.get("role")
    if not isinstance(role, str) or not role:
        raise LoadError(name, f"{origin}: message has no role", expected=expected)
    raw = d.get("content")
    if isinstance(raw, Mapping):
        text = raw.get("text")
        atts = raw.get("attachments") or ()
        content: Any = Content(text if isinstance(text, str) else "", tuple(_attachment(a) for a in atts)
                               if isinstance(atts, list) else ())
    elif raw is None or isinstance(raw, str):
        content = raw
    else:
        raise LoadError(name, f"{origin}/content: expected a string, null or {{text, attachments}}",
                        expected=expected)
    calls = []
    tcs = d.get("tool_calls")
    if tcs is None:
        tcs = []
    elif isinstance(tcs, Mapping):  # RubyLLM keeps them keyed by id
        tcs = list(tcs.values())
    elif not isinstance(tcs, list):
        raise LoadError(name, f"{origin}/tool_calls: expected a list of tool calls, found {type(tcs).__name__}",
                        expected=expected)
    for k, tc in enumerate(tcs):
        if not isinstance(tc, Mapping):
            raise LoadError(name, f"{origin}/tool_calls/{k}: expected {{id, name, arguments}}", expected=expected)
        calls.append(tool_call_from(tc.get("id"), tc.get("name"), tc.get("arguments")))
    tcid = d.get("tool_call_id")
    model = d.get("model_id")
    return message(role=role, content=content, tool_call_id=str(tcid) if tcid is not None else None,
                   tool_calls=tuple(calls), model_id=model if isinstance(model, str) else None,
                   usage=swarm_message_usage(d), origin=origin)


def _conversation(name: str, data: Any, base: str, file: str, warnings: list[str],
                  built: dict[str, list[Message]] | None = None) -> Conversation:
    """`built`: messages read a piece at a time (load_in_pieces), by the marker standing in their place."""
    if not isinstance(data, Mapping):
        raise LoadError(file, f"{base}: expected an object with a conversation", expected=EXPECTED)
    key = "conversation" if "conversation" in data else "messages"
    raw = data.get(key)
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise LoadError(file, f"{base}/{key}: expected a list of messages", expected=EXPECTED)
    if built and key == "conversation" and len(raw) == 1 and type(raw[0]) is str and raw[0] in built:
        messages = built.pop(raw[0])
        for i, m in enumerate(messages):  # (made a moment ago and held by nothing else: named in place)
            object.__setattr__(m, "origin", f"{base}/{key}/{i}")
    else:
        messages = [swarm_message(m, f"{base}/{key}/{i}", file) for i, m in enumerate(raw)]
    messages, unlinked = link_tool_results(messages)
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    state = data.get("context_state") if isinstance(data.get("context_state"), Mapping) else {}
    meta = {k: state[k] for k in ("warning_thresholds_hit", "last_todowrite_message_index", "active_skill_path")
            if state.get(k) is not None}
    system = data.get("system_prompt")
    applied = state.get("compression_applied")
    return Conversation(
        name=name, messages=tuple(messages), system_prompt=system if isinstance(system, str) else None,
        model=last_model(messages), compression_applied=applied if isinstance(applied, bool) else None,
        metadata=meta,
    )


# Snapshots from this size on are read a piece at a time (load_in_pieces).
PIECES_ABOVE = 8 << 20
_CONVERSATION_DEPTH = 3  # /agents/<name>/conversation: inside the document, "agents", an agent


def load_in_pieces(inp: Input) -> Session | None:
    """A big snapshot, read one piece of its conversation lists at a time (json_pieces, as
    ctxview's own files are): each piece's parsed objects become Messages and are dropped,
    so the file's bytes, the whole parsed document and the Messages never coexist. None
    when the file is not a snapshot shaped so (or a message in it is bad): then it is read
    whole, which gives the same session or names the error."""
    if inp.size < PIECES_ABOVE:
        return None
    pieces: list[list[Message]] = []

    def take(k: int, first: int, items: list) -> None:
        while len(pieces) <= k:  # (an empty list gives no piece)
            pieces.append([])
        # (origins are given once the agent's name is known, in _conversation)
        pieces[k].extend(swarm_message(m, "", inp.name) for m in items)

    try:
        split = parse_in_pieces(inp, "conversation", _CONVERSATION_DEPTH, take)
    except LoadError:
        return None
    if split is None:
        return None
    doc, markers = split
    if not sniff_document(doc):
        return None
    pieces += [[] for _ in range(len(markers) - len(pieces))]
    # Every marker must stand where an agent's or a delegation instance's conversation belongs.
    found = 0
    for group in ("agents", "delegation_instances"):
        items = doc.get(group)
        for data in (items.values() if type(items) is dict else ()):
            raw = data.get("conversation") if type(data) is dict else None
            if type(raw) is list and len(raw) == 1 and raw[0] in markers[found:found + 1]:
                found += 1
    if found != len(markers):
        return None
    return load(inp, "json", doc=doc, built=dict(zip(markers, pieces)))


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
         built: dict[str, list[Message]] | None = None) -> Session:
    doc = document_only(inp, layout, doc, "a SwarmSDK snapshot", EXPECTED)
    if not isinstance(doc, dict) or not isinstance(doc.get("agents", {}), dict):
        raise LoadError(inp.name, "expected an object with \"agents\"", expected=EXPECTED)
    warnings: list[str] = []
    convs = []
    for group in ("agents", "delegation_instances"):
        items = doc.get(group) or {}
        if not isinstance(items, dict):
            raise LoadError(inp.name, f"/{group}: expected an object keyed by agent name", expected=EXPECTED)
        for name, data in items.items():
            convs.append(_conversation(str(name), data, pointer(group, name), inp.name, warnings, built))
    if not convs:
        raise LoadError(inp.name, "the snapshot holds no agents", expected=EXPECTED)
    meta: dict[str, Any] = {}
    for k in ("version", "type", "snapshot_at", "swarm_sdk_version"):
        if k in doc:
            meta[k] = doc[k]
    swarm_meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else doc.get("swarm")
    if isinstance(swarm_meta, Mapping):
        for k in ("id", "parent_id", "name", "first_message_sent"):
            if k in swarm_meta:
                meta[f"swarm_{k}" if not k.startswith("swarm") else k] = swarm_meta[k]
    version = str(doc.get("version") or "")
    if version and version.split(".")[0] not in ("1", "2"):
        warnings.append(f"snapshot version {version} is newer than ctxview knows (1.x, 2.x); loaded as 2.x")
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta, warnings=tuple(warnings))


SESSION_FORMAT = ModuleFormat(FORMAT, "SwarmSDK snapshot JSON (1.x, 2.x)", EXPECTED, 60, load,
                              sniff_document=sniff_document, load_in_pieces=load_in_pieces)
