"""ctxview's own session format: one JSON document, the format for demos.

    {"format": "ctxview", "version": 1, "title": ..., "metadata": {...},
     "conversations": [{"name", "model", "context_window", "system_prompt",
        "compression_applied", "settings": {<ctxview.engine.view.Settings fields>},
        "ephemeral": {"<message index>": ["<reminder text>", ...]},
        "messages": [{"role", "content", "tool_calls", "tool_call_id", "tool_name",
                      "model_id", "usage", "thinking", "injected", "id", "meta"}],
        "events": [{"kind", "index", "trigger", "tokens_before", "summary", "replaced": [...]}],
        "metadata": {...}}]}

The JSON Schema ships as ctxview/schema/ctxview-session.schema.json.
`dump_session` / `write_session` (from native_write) write any Session in
this format (atomically: a temp file then os.replace).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ctxview.model import Content, ContextEvent, Conversation, Message, Session
from ctxview.formats.parsing.argument_depth import MAX_ARGUMENT_DEPTH, check_arguments
from ctxview.formats.parsing.builders import message, tool_call, usage as new_usage
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, document_only, parse_in_pieces
from ctxview.formats.parsing.linking import unlinked_warning
from ctxview.formats.native_write import FORMAT, VERSION, dump_session, write_session
from ctxview.plain_number import plain_number

EXPECTED = "ctxview session"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "ctxview-session.schema.json"

__all__ = ["SCHEMA_PATH", "VERSION", "dump_session", "load", "load_in_pieces", "pieces_told_to", "settings_keys",
           "write_session"]


def settings_keys() -> frozenset[str]:
    from ctxview.engine.view import Settings  # engine value type; no terminal imports

    return frozenset(f.name for f in fields(Settings))


def sniff_document(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == "ctxview"


class _Bad(Exception):
    def __init__(self, where: str, what: str) -> None:
        self.where, self.what = where, what


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise _Bad(where, what)


def _opt_str(d: Mapping, key: str, where: str) -> str | None:
    v = d.get(key)
    _need(v is None or isinstance(v, str), f"{where}/{key}", "expected a string or null")
    return v


def _opt_int(d: Mapping, key: str, where: str) -> int | None:
    v = d.get(key)
    _need(v is None or (type(v) is int and v >= 0), f"{where}/{key}", "expected a non-negative integer or null")
    return v


# Content strings up to this length are looked up among those seen before (hashing a
# longer one costs more than the copies it could save).
_SHARED_CONTENT_CHARS = 4096
_SHARED_ARG_CHARS = 256


def _share_strings(value: Any, shared: dict[str, str], depth: int = 1) -> bool:
    """Replace the short strings inside freshly parsed arguments (paths, patterns, statuses,
    repeated call after call) by one shared object each. Only our own parse output is changed:
    every call keeps its own dicts and lists. True when `value` (at `depth`) holds containers
    deeper than MAX_ARGUMENT_DEPTH: argument_depth.deeper_than's answer, found in this walk
    (the check every load ends with, without a walk of its own), which then stops there -- so
    a hostile file nested to the parser's limit never recurses past it."""
    setdefault = shared.setdefault
    for k, v in (value.items() if type(value) is dict else enumerate(value)):
        if type(v) is str:
            if len(v) <= _SHARED_ARG_CHARS:
                s = setdefault(v, v)
                if s is not v:
                    value[k] = s
        elif type(v) is dict or type(v) is list:
            if depth >= MAX_ARGUMENT_DEPTH:
                return True
            if v and _share_strings(v, shared, depth + 1):
                return True
    return False


_STR_FIELDS = ("tool_call_id", "model_id", "tool_name", "thinking", "id")
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _message(d: Any, where: str, shared: dict[str, str], link: _Built | None = None) -> Message:
    # Hot on 100k-message files: plain type checks, the slow path only to explain a failure.
    # `shared` (one per load) makes repeated short strings one object each: the parser gives
    # every role, model id, tool name and call id its own copy, and a tool result's call id
    # becomes the call's own string (~0.1x the file on a 100k-message session). With `link` (the
    # conversation's messages so far), a result is linked to its call as it is read: what
    # linking.link_tool_results does after, without another pass or a second object per result.
    if type(d) is not dict:
        raise _Bad(where, "expected a message object")
    get = d.get
    role = get("role")
    if type(role) is not str or not role:
        raise _Bad(f"{where}/role", "expected a non-empty string")
    role = shared.setdefault(role, role)
    raw = get("content")
    if raw is None:
        content: Any = None
    elif type(raw) is str:
        # the same tool output or note seen again (a file read twice) is kept once
        content = shared.setdefault(raw, raw) if len(raw) <= _SHARED_CONTENT_CHARS else raw
    elif type(raw) is dict:
        _need(type(raw.get("text")) is str, f"{where}/content/text", "expected a string")
        atts = raw.get("attachments", [])
        _need(type(atts) is list, f"{where}/content/attachments", "expected a list")
        content = Content(raw["text"], tuple(atts))
    else:
        raise _Bad(f"{where}/content", "expected a string, null or {text, attachments}")
    tcs = get("tool_calls")
    calls: tuple = ()
    if tcs:
        _need(type(tcs) is list, f"{where}/tool_calls", "expected a list")
        out = []
        for k, tc in enumerate(tcs):
            if type(tc) is not dict or type(tc.get("id")) is not str or type(tc.get("name")) is not str:
                raise _Bad(f"{where}/tool_calls/{k}", "expected {id: string, name: string, arguments: object}")
            args = tc.get("arguments")
            if args is None:
                args = {}
            elif type(args) is not dict:
                raise _Bad(f"{where}/tool_calls/{k}/arguments", "expected an object")
            cid, cname = tc["id"], tc["name"]
            if args and _share_strings(args, shared):
                if link is None:  # (a compaction's replaced message: no index to name)
                    raise _Bad(f"{where}/tool_calls/{k}/arguments", f"nested deeper than {MAX_ARGUMENT_DEPTH} levels")
                link.too_deep.append(len(link.messages))
            cid, cname = shared.setdefault(cid, cid), shared.setdefault(cname, cname)
            if link is not None and cid:
                link.names[cid] = cname
            out.append(tool_call(id=cid, name=cname, arguments=args))
        calls = tuple(out)
    elif tcs is not None and tcs != []:
        raise _Bad(f"{where}/tool_calls", "expected a list")
    # _STR_FIELDS, each read once; a wrong one is named by _check_strings
    tcid, model_id, tool_name, thinking, mid = (get("tool_call_id"), get("model_id"), get("tool_name"),
                                                get("thinking"), get("id"))
    if ((tcid is not None and type(tcid) is not str) or (model_id is not None and type(model_id) is not str)
            or (tool_name is not None and type(tool_name) is not str)
            or (thinking is not None and type(thinking) is not str) or (mid is not None and type(mid) is not str)):
        _check_strings(d, where)
    usage = None
    u = get("usage")
    if u is not None:
        _need(type(u) is dict, f"{where}/usage", "expected an object")
        ugot = u.get
        i, o, r, w = ugot("input_tokens") or 0, ugot("output_tokens") or 0, ugot("cache_read_tokens") or 0, \
            ugot("cache_write_tokens") or 0
        if not (type(i) is int and type(o) is int and type(r) is int and type(w) is int
                and i >= 0 and o >= 0 and r >= 0 and w >= 0):
            _check_usage(u, where)
        usage = new_usage(i, o, r, w)  # in _USAGE_FIELDS order
        if len(u) > 4:  # what else changes the price (written only where the source recorded it)
            usage = _usage_extras(usage, u, where)
    injected = get("injected", False)
    if type(injected) is not bool:
        raise _Bad(f"{where}/injected", "expected true or false")
    meta = get("meta")
    if meta is None:
        meta = {}
    elif type(meta) is not dict:
        raise _Bad(f"{where}/meta", "expected an object")
    elif "thinking_blocks" in meta:
        meta = {**meta, "thinking_blocks": _thinking_blocks(meta["thinking_blocks"], f"{where}/meta/thinking_blocks")}
    if type(get("origin")) is str:
        meta = {**meta, "source_origin": d["origin"]}
    if tcid is not None:
        tcid = shared.setdefault(tcid, tcid)
    if model_id is not None:
        model_id = shared.setdefault(model_id, model_id)
    if tool_name is not None:
        tool_name = shared.setdefault(tool_name, tool_name)
    if link is not None and role == "tool":
        name = link.names.get(tcid or "")
        if name is None:
            link.unlinked += 1
        else:
            tool_name = name
    return message(role=role, content=content, tool_call_id=tcid, tool_calls=calls, model_id=model_id,
                   tool_name=tool_name, usage=usage, thinking=thinking, injected=injected, origin=where, id=mid,
                   meta=meta)


def _check_strings(d: dict, where: str) -> None:
    """The first of _STR_FIELDS that is neither a string nor null, named."""
    for key in _STR_FIELDS:
        v = d.get(key)
        if v is not None and type(v) is not str:
            raise _Bad(f"{where}/{key}", "expected a string or null")


def _usage_extras(base: Any, u: dict, where: str) -> Any:
    """The usage with its 1-hour writes, speed, inference geography and recorded cost, each checked."""
    import dataclasses

    h, speed, geo, usd = (u.get("cache_write_1h_tokens") or 0, u.get("speed"), u.get("inference_geo"),
                          u.get("recorded_usd"))
    _need(type(h) is int and 0 <= h <= base.cache_write_tokens, f"{where}/usage/cache_write_1h_tokens",
          "expected a non-negative integer, at most cache_write_tokens")
    for key, v in (("speed", speed), ("inference_geo", geo)):
        _need(v is None or type(v) is str, f"{where}/usage/{key}", "expected a string or null")
    _need(usd is None or (type(usd) in (int, float) and 0 <= usd < float("inf")), f"{where}/usage/recorded_usd",
          "expected a non-negative number or null")
    return dataclasses.replace(base, cache_write_1h_tokens=h, speed=speed, inference_geo=geo,
                               recorded_usd=None if usd is None else float(usd))


def _check_usage(u: dict, where: str) -> None:
    """The first usage count that is not a non-negative integer, named."""
    for k in _USAGE_FIELDS:
        v = u.get(k) or 0
        _need(type(v) is int and v >= 0, f"{where}/usage/{k}", "expected a non-negative integer")


def _thinking_blocks(value: Any, where: str) -> tuple[dict, ...]:
    """meta["thinking_blocks"] as the loaders give it (a tuple of API-shape blocks) from its JSON list."""
    _need(type(value) is list, where, "expected a list of thinking blocks")
    for k, b in enumerate(value):
        ok = type(b) is dict and (
            (b.get("type") == "thinking" and type(b.get("thinking")) is str
             and type(b.get("signature", "")) is str)
            or (b.get("type") == "redacted_thinking" and type(b.get("data")) is str))
        _need(ok, f"{where}/{k}", 'expected {"type": "thinking", "thinking", "signature"} '
                                  'or {"type": "redacted_thinking", "data"}')
    return tuple(value)


def _conversation(c: Any, where: str, allowed: frozenset[str], warnings: list[str], too_deep: list,
                  built: _Built | None = None) -> Conversation:
    """`built`: its messages already read (see load_in_pieces). A conversation with a call nested too
    deep adds (its name, messages, their indices) to `too_deep`: refused once the whole file is read,
    as the check after a load would."""
    _need(isinstance(c, dict), where, "expected a conversation object")
    name = c.get("name")
    _need(isinstance(name, str) and name != "", f"{where}/name", "expected a non-empty string")
    if built is None:
        msgs = c.get("messages", [])
        _need(isinstance(msgs, list), f"{where}/messages", "expected a list")
        built = _Built()
        built.take(where, 0, msgs)
    messages, shared = built.messages, built.shared
    if built.too_deep:
        too_deep.append((name, messages, built.too_deep))
    w = unlinked_warning(name, built.unlinked)
    if w:
        warnings.append(w)
    eph_raw = c.get("ephemeral", {})
    _need(isinstance(eph_raw, dict), f"{where}/ephemeral", "expected an object {message index: [texts]}")
    ephemeral: dict[int, tuple[str, ...]] = {}
    for key, texts in eph_raw.items():
        w2 = f"{where}/ephemeral/{key}"
        index = plain_number(key) if isinstance(key, str) else None
        _need(index is not None, w2, "keys must be message indexes (\"0\", \"12\", ...)")
        _need(isinstance(texts, list) and all(isinstance(t, str) for t in texts), w2, "expected a list of strings")
        ephemeral[index] = tuple(texts)
    settings = c.get("settings", {})
    _need(isinstance(settings, dict), f"{where}/settings", "expected an object")
    unknown = sorted(set(settings) - allowed)
    if unknown:
        warnings.append(f"{name}: ignored unknown settings: {', '.join(unknown)}")
        settings = {k: v for k, v in settings.items() if k in allowed}
    events = []
    evs = c.get("events", [])
    _need(isinstance(evs, list), f"{where}/events", "expected a list")
    for i, e in enumerate(evs):
        w3 = f"{where}/events/{i}"
        _need(isinstance(e, dict) and isinstance(e.get("kind"), str), w3, "expected {kind: string, index: integer}")
        index = e.get("index")
        _need(type(index) is int and 0 <= index <= len(messages), f"{w3}/index",
              f"expected a message index from 0 to {len(messages)}")
        rep = e.get("replaced", [])
        _need(isinstance(rep, list), f"{w3}/replaced", "expected a list of messages")
        emeta = e.get("meta", {})
        _need(isinstance(emeta, dict), f"{w3}/meta", "expected an object")
        events.append(ContextEvent(
            kind=e["kind"], index=index, trigger=_opt_str(e, "trigger", w3), tokens_before=_opt_int(e, "tokens_before", w3),
            summary=_opt_str(e, "summary", w3), replaced=tuple(_message(m, f"{w3}/replaced/{k}", shared) for k, m in enumerate(rep)),
            origin=w3, meta=emeta,
        ))
    applied = c.get("compression_applied")
    _need(applied is None or isinstance(applied, bool), f"{where}/compression_applied", "expected true, false or null")
    cmeta = c.get("metadata", {})
    _need(isinstance(cmeta, dict), f"{where}/metadata", "expected an object")
    return Conversation(
        name=name, messages=tuple(messages), system_prompt=_opt_str(c, "system_prompt", where), ephemeral=ephemeral,
        model=_opt_str(c, "model", where), context_window=_opt_int(c, "context_window", where),
        compression_applied=applied, events=tuple(events), settings=settings, metadata=cmeta,
    )


class _Built:
    """One conversation's messages as read so far (linked to their calls), the strings they share,
    the tool each call id names, how many results name no earlier call and which messages (their
    indices) hold a call nested deeper than MAX_ARGUMENT_DEPTH (argument_depth.check_arguments
    names the first)."""

    __slots__ = ("messages", "shared", "names", "unlinked", "too_deep")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.shared: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.unlinked = 0
        self.too_deep: list[int] = []

    def take(self, where: str, first: int, items: list) -> None:
        shared, append = self.shared, self.messages.append
        for i, m in enumerate(items, first):
            append(_message(m, f"{where}/messages/{i}", shared, self))


# Documents from this size on are read a piece at a time (load_in_pieces); ctxview writes
# "format" first, so its own files are recognised from their first bytes.
PIECES_ABOVE = 8 << 20
_HEAD = re.compile(rb'(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"ctxview"')
_MESSAGES_DEPTH = 3  # /conversations/<i>/messages: inside the document, its list, a conversation
# Where one message may end and the next begin: ctxview writes "role" first (native_write), which
# the lists of objects in a call's arguments (a TodoWrite's todos) do not start with
_NEXT_MESSAGE = re.compile(rb'\}\s*(,)\s*\{\s*"role"\s*:')


# Told of each piece of a conversation's messages as load_in_pieces reads it: (the conversation's
# number in the file, its messages read so far: a list that grows, not a copy). The inspector shows
# the stored side from the first pieces while the rest is read (tui/workers.py). The messages are
# linked to their calls already (a result's tool_name), as the whole conversation's will be.
PieceListener = Callable[[int, Sequence[Message]], None]
_piece_listener: ContextVar[PieceListener | None] = ContextVar("ctxview_piece_listener", default=None)


@contextmanager
def pieces_told_to(listener: PieceListener) -> Iterator[None]:
    """Within the block (in this thread), `listener` is told of each piece of messages read."""
    token = _piece_listener.set(listener)
    try:
        yield
    finally:
        _piece_listener.reset(token)


def load_in_pieces(inp: Input) -> Session | None:
    """A big ctxview file, read one piece of its message lists at a time: each piece's
    parsed objects become Messages and are dropped, so the file's bytes, orjson's copy of
    them, the whole parsed document and the Messages never coexist (on a 99 MB file of
    100k messages: 4.5x the file at the peak and 2.4x left resident after a whole parse;
    1.4x both ways in pieces). None when the file is not one (or not shaped so): then
    load it whole, as load() does."""
    if inp.size < PIECES_ABOVE or not _HEAD.match(inp.head(256)):
        return None
    built: list[_Built] = []
    listener = _piece_listener.get()

    def take(k: int, first: int, items: list) -> None:
        if k == len(built):
            built.append(_Built())
        built[k].take(f"/conversations/{k}", first, items)
        if listener is not None:
            listener(k, built[k].messages)

    try:
        split = parse_in_pieces(inp, "messages", _MESSAGES_DEPTH, take, _NEXT_MESSAGE)
    except _Bad:
        return None  # a bad message: load() names it, with the checks that come before
    if split is None:
        return None
    doc, markers = split
    if not sniff_document(doc):
        return None  # e.g. a later "format" key: what this file is gets decided as for any other
    convs = doc.get("conversations")
    if type(convs) is not list or len(convs) < len(markers):
        return None
    for k, marker in enumerate(markers):
        c = convs[k]
        if type(c) is not dict or c.get("messages") != [marker]:
            return None  # that list was not a conversation's messages
    return load(inp, "json", doc=doc, built=built)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
         built: list[_Built] | None = None) -> Session:
    doc = document_only(inp, layout, doc, "a ctxview session", EXPECTED)
    warnings: list[str] = []
    try:
        _need(isinstance(doc, dict), "", "expected an object")
        _need(doc.get("format") == "ctxview", "/format", "expected \"ctxview\"")
        version = doc.get("version", VERSION)
        _need(type(version) is int and version >= 1, "/version", "expected a positive integer")
        if version > VERSION:
            warnings.append(f"format version {version} is newer than this ctxview reads ({VERSION}); unknown fields ignored")
        convs = doc.get("conversations")
        _need(isinstance(convs, list) and len(convs) > 0, "/conversations", "expected a non-empty list")
        allowed = settings_keys()
        built = built or []
        too_deep: list[tuple[str, list[Message], list[int]]] = []
        conversations = [_conversation(c, f"/conversations/{i}", allowed, warnings, too_deep,
                                       built[i] if i < len(built) else None)
                         for i, c in enumerate(convs)]
        names = [c.name for c in conversations]
        _need(len(set(names)) == len(names), "/conversations", "conversation names must be unique")
        meta = doc.get("metadata", {})
        _need(isinstance(meta, dict), "/metadata", "expected an object")
        title = _opt_str(doc, "title", "")
    except _Bad as bad:
        raise LoadError(inp.name, f"{bad.where or '/'}: {bad.what}", expected=EXPECTED) from None
    for name, messages, indices in too_deep:
        check_arguments(inp.name, name, messages, indices)
    meta = dict(meta)
    if title:
        meta["title"] = title
    return Session(format=FORMAT, source=inp.name, conversations=tuple(conversations), metadata=meta,
                   warnings=tuple(warnings))


SESSION_FORMAT = ModuleFormat(FORMAT, "ctxview session JSON", EXPECTED, 70, load,
                              sniff_document=sniff_document, load_in_pieces=load_in_pieces,
                              checks_arguments=True)
