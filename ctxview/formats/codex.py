"""Codex CLI rollouts: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl.

Each line is {"timestamp", "type", "payload"}: session_meta (ids, CLI
version, the base instructions = system prompt), turn_context (model),
response_item (Responses API items: what the model saw), event_msg (UI
events; token_count carries usage, the others repeat visible text and are
not shown twice), and compacted (a compaction: its summary and the history
that replaced everything before it).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import orjson

from ctxview.plain_number import plain_number
from ctxview.model import Conversation, Message, Session
from ctxview.formats.parsing.argument_depth import check_arguments
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import SKIP, Input, LineReader, load_document
from ctxview.formats.parsing.linking import compaction_events, unlinked_warning, usage_only_warning
from ctxview.formats.parsing.builders import message, openai_usage
from ctxview.formats.responses import ITEMS, ResponsesBuilder

FORMAT = "codex"
EXPECTED = "Codex CLI rollout"

_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


# The outputs Codex's ContextManager truncates by the turn's policy before the model sees them
# (process_item in codex-rs/core/src/context_manager/history.rs); the rollout keeps them whole.
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_EXIT_KEY = re.compile(r'"metadata"\s*:\s*\{\s*"exit_code"\s*:\s*(-?[0-9]+)')
_EXIT_LINES = ("Process exited with code ", "Exit code: ")


def _output_meta(output: Any, policy: dict | None) -> dict | None:
    """What the rollout states about an output item, for its tool message's meta: the turn's
    truncation_policy, exit_code where the output names one, and is_error when it says the call
    failed (success: false, or a non-zero exit code). None when there is nothing to say (no dict
    made: this runs for every output)."""
    success = None
    if type(output) is dict:
        success = output.get("success")
        output = output.get("content")
    code = _exit_code(output) if type(output) is str else None
    if code is None and success is not False and policy is None:
        return None
    meta: dict[str, Any] = {} if policy is None else {"truncation_policy": policy}
    if code is not None:
        meta["exit_code"] = code
        if code:
            meta["is_error"] = True
    if success is False:
        meta["is_error"] = True
    return meta or None


# The header Codex's exec tools write ("Chunk ID: 5f5f9d\nWall time: 0.5155 seconds\nProcess exited with
# code 0\nOriginal token count: 402\nOutput:\n..."), read in one match: no other line of it can hold the
# keys _exit_code_simple looks for after the code's line, so a match within 500 characters is its answer.
_EXEC_HEADER = re.compile(r"Chunk ID: .*\nWall time: .*\nProcess exited with code (-?[0-9]{1,18})\n"
                          r"Original token count: [0-9]*\nOutput:")


def _exit_code(output: str) -> int | None:
    """The exit code an output's text states, or None (_exit_code_simple, with Codex's own header
    read in one regex match: this runs for every output of a rollout)."""
    m = _EXEC_HEADER.match(output, 0, 500)  # (ending within 500 characters, as the simple rule reads)
    return int(m[1]) if m is not None else _exit_code_simple(output)


def _exit_code_simple(output: str) -> int | None:
    if output.startswith('{"output"'):
        # shell tools: {"output": ..., "metadata": {"exit_code": N, ...}}, metadata last; a quote
        # inside the output string is escaped, so the key is found only where it is a key
        at = output.rfind('"metadata"')
        m = _EXIT_KEY.search(output, at) if at > 0 else None
        return _code_of(m.group(1)) if m else None
    # exec tools' text form: header lines ("Exit code: N" or "Process exited with code N"),
    # then "Output:" and the output itself, which is not searched. str methods, not a regex:
    # this runs for every output of a rollout.
    end = output.find("\nOutput:", 0, 500)
    if end < 0:
        return None
    for key in _EXIT_LINES:
        i = output.rfind(key, 0, end)
        if i >= 0 and (i == 0 or output[i - 1] == "\n"):
            k = i + len(key)
            j = output.find("\n", k, end)
            return _code_of(output[k:end if j < 0 else j])
    return None


def _code_of(text: str) -> int | None:
    """An exit code written as an optional '-' and ASCII digits, or None: a header such as
    'Exit code: --5', or a number too long to be one (int() refuses over 4,300 digits), says none."""
    negative = text.startswith("-")
    number = plain_number(text[1:] if negative else text)
    return -number if negative and number is not None else number


def sniff_record(rec: Any) -> bool:
    return isinstance(rec, dict) and type(rec.get("type")) is str and rec["type"] in _TYPES and "payload" in rec


def sniff_document(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(sniff_record(r) for r in doc[:20])


class _Rollout:
    def __init__(self) -> None:
        self.b = ResponsesBuilder()
        self.system_prompt: str | None = None
        self.metadata: dict[str, Any] = {}
        self.context_window: int | None = None
        self.specs: list[dict] = []
        self.last_total: Any = None
        # fallback for rollouts without response items: (role, text, origin), made messages only then
        self.event_texts: list[tuple[str, str, str]] = []
        self.unknown: dict[str, int] = {}
        self.malformed = 0
        self.policy: dict | None = None        # this turn's turn_context.truncation_policy
        self.usage_only: list[Message] = []    # token counts no assistant item was there to take
        # each item type's handler, bound: what b.item would call, an output's with its meta
        self.items = {t: handler.__get__(self.b) for t, handler in ITEMS.items()}
        self.items.update(dict.fromkeys(_OUTPUTS, self._output_item))

    def add(self, origin: str, rec: Any) -> None:
        if not isinstance(rec, dict):
            self.unknown[type(rec).__name__] = self.unknown.get(type(rec).__name__, 0) + 1
            return
        rtype = rec.get("type")
        handler = _RECORDS.get(rtype) if type(rtype) is str else None
        if handler is None:
            self._bare(rec, rtype if type(rtype) is str else repr(rtype), origin)
            return
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            self.malformed += 1
            return
        handler(self, rec, payload, origin)

    def _bare(self, rec: dict, rtype: str, origin: str) -> None:
        """A line without an envelope: the first rollouts (2025) wrote bare items and a header line."""
        if "role" in rec or rec.get("type") in ("message", "function_call", "function_call_output", "reasoning"):
            self.b.item(rec, origin)
        elif "instructions" in rec and "id" in rec:
            self._meta(rec)
        elif "record_type" in rec:
            return
        else:
            self.unknown[rtype] = self.unknown.get(rtype, 0) + 1

    def _response_item(self, rec: dict, payload: dict, origin: str) -> None:
        itype = payload.get("type")
        handler = self.items.get(itype) if type(itype) is str else None
        if handler is None:
            self.b.item(payload, origin)  # (untyped, quiet and unknown items: the builder's own rules)
        else:
            handler(payload, origin, False)

    def _output_item(self, item: dict, origin: str, injected: bool) -> None:
        self.b.output(item, origin, _output_meta(item.get("output"), self.policy))

    def _turn_context(self, rec: dict, payload: dict, origin: str) -> None:
        model = payload.get("model")
        if isinstance(model, str):
            self.b.model = model
        policy = payload.get("truncation_policy")
        self.policy = policy if isinstance(policy, dict) else None

    def _session_meta(self, rec: dict, payload: dict, origin: str) -> None:
        self._meta(payload)

    def _compacted_record(self, rec: dict, payload: dict, origin: str) -> None:
        self._compacted(payload, origin)

    def _meta(self, p: dict) -> None:
        m = self.metadata
        for src, dst in (("id", "session_id"), ("timestamp", "started_at"), ("cwd", "cwd"),
                         ("originator", "originator"), ("cli_version", "cli_version"),
                         ("model_provider", "model_provider"), ("source", "source")):
            if isinstance(p.get(src), str):
                m.setdefault(dst, p[src])
        base = p.get("base_instructions")
        if isinstance(base, dict) and isinstance(base.get("text"), str):
            self.system_prompt = base["text"]
        elif isinstance(base, str):
            self.system_prompt = base
        elif isinstance(p.get("instructions"), str) and self.system_prompt is None:
            self.system_prompt = p["instructions"]

    def _event_msg(self, rec: dict, p: dict, origin: str | int) -> None:
        """(`origin`, or the number of the line it names: most events keep none, so _add_lines
        does not make one)"""
        etype = p.get("type")
        if etype == "token_count":
            info = p.get("info")
            if not isinstance(info, dict):
                return
            window = info.get("model_context_window")
            if type(window) is int:
                self.context_window = window
            total = info.get("total_token_usage")
            if total is not None and total == self.last_total:
                return  # Codex repeats the last count at each turn start
            self.last_total = total
            usage = openai_usage(info.get("last_token_usage"))
            if usage is None:
                return
            # (the count's time: just after the response, the prompt cache's clock)
            timestamp = rec.get("timestamp")
            if not self.b.attach_usage(usage, timestamp if type(timestamp) is str else None):
                # a model call whose items the file does not hold (usage-only rollouts)
                self.usage_only.append(message(role="assistant", content="", model_id=self.b.model, usage=usage,
                                               origin=_origin(origin)))
        elif self.b.messages:
            return  # the UI's copies of the text are needed only when there is no response item
        elif etype == "user_message" and isinstance(p.get("message"), str):
            self.event_texts.append(("user", p["message"], _origin(origin)))
        elif etype == "agent_message" and isinstance(p.get("message"), str):
            self.event_texts.append(("assistant", p["message"], _origin(origin)))

    def _compacted(self, p: dict, origin: str) -> None:
        b = self.b
        b.flush()
        index = len(b.messages)
        summary = p.get("message") if isinstance(p.get("message"), str) else None
        history = p.get("replacement_history")
        if isinstance(history, list):
            for k, item in enumerate(history):
                b.item(item, f"{origin}/replacement_history/{k}", injected=True)
            b.flush()
        elif summary:
            b.add_message(message(role="user", content=summary, injected=True, origin=origin,
                                  meta={"compact_summary": True}))
        self.specs.append({"index": index, "summary": summary, "origin": origin,
                           "trigger": p.get("trigger") if isinstance(p.get("trigger"), str) else None})



# What _Rollout.add does with each envelope type (_TYPES); a line with another type is a bare item.
_RECORDS = {
    "response_item": _Rollout._response_item,
    "event_msg": _Rollout._event_msg,
    "turn_context": _Rollout._turn_context,
    "session_meta": _Rollout._session_meta,
    "compacted": _Rollout._compacted_record,
}
assert _RECORDS.keys() == _TYPES


def _origin(origin: str | int) -> str:
    """A message's origin from what the handlers are given: the origin, or the number of its line."""
    return f"line {origin}" if type(origin) is int else origin


def _add_lines(r: _Rollout, reader: LineReader) -> None:
    """Every line of a JSONL rollout read into r, parsed here (no generator in between: one
    iteration per line of a 100 MB file). The two common lines, a response item of a known type or
    an event with its payload object, go straight to their handler (what r.add would call), an
    event with its line number (most keep no origin: none is made); any other line goes through r.add."""
    loads, decode_error, bad_line, add = orjson.loads, orjson.JSONDecodeError, reader.bad_line, r.add
    items, event_msg = r.items, r._event_msg
    lineno = reader.first_line - 1
    with reader.raw_lines() as lines:
        for raw in lines:
            lineno += 1
            try:
                rec = loads(raw)
            except decode_error:
                rec = bad_line(raw, lineno)
                if rec is SKIP:
                    continue
            if type(rec) is dict:
                rtype, payload = rec.get("type"), rec.get("payload")
                if type(payload) is dict:
                    if rtype == "response_item":
                        itype = payload.get("type")
                        handler = items.get(itype) if type(itype) is str else None
                        if handler is not None:
                            handler(payload, f"line {lineno}", False)
                            continue
                    if rtype == "event_msg":
                        event_msg(rec, payload, lineno)
                        continue
            add(f"line {lineno}", rec)
    reader.read_to(lineno)


def _primed(r: _Rollout, prelude: Sequence[Any]) -> None:
    """Read into r the state a rollout's tail needs from before it (codex_tail.py): the session's
    `session_meta` and the turn's `turn_context` as the file has them, and of the last token count
    only what the next one is compared with (its usage went to a message before the tail)."""
    for rec in prelude:
        if type(rec) is not dict:
            continue
        payload = rec.get("payload")
        if rec.get("type") == "event_msg" and type(payload) is dict and type(payload.get("info")) is dict:
            info = payload["info"]
            window = info.get("model_context_window")
            if type(window) is int:
                r.context_window = window
            r.last_total = info.get("total_token_usage")
        elif rec.get("type") in ("session_meta", "turn_context"):
            r.add("prelude", rec)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None, prelude: Sequence[Any] = ()) -> Session:
    """The rollout in `inp`; `prelude`: records read first for their state alone (a tail's)."""
    r = _Rollout()
    _primed(r, prelude)
    skipped = 0
    warnings: list[str] = []
    if layout == "jsonl":
        reader = LineReader(inp, EXPECTED, lenient)
        _add_lines(r, reader)
        skipped = reader.skipped
        reader.warn_skipped(warnings)
    else:
        if doc is None:
            doc = load_document(inp, EXPECTED)
        if not isinstance(doc, list):
            raise LoadError(inp.name, "expected one record per line", expected=EXPECTED)
        for i, rec in enumerate(doc):
            r.add(f"/{i}", rec)
    r.b.flush()
    messages = r.b.messages
    if not messages and r.event_texts:
        messages = [message(role=role, content=text, origin=origin) for role, text, origin in r.event_texts]
        warnings.append("no response items: messages rebuilt from UI events (tool calls not recorded)")
    if not messages and r.usage_only:
        messages = r.usage_only
        warnings.append(usage_only_warning("main", messages) or "main: the file holds usage records only")
    if not messages:
        raise LoadError(inp.name, "no messages found (no response_item records)", expected=EXPECTED)
    # (the builder named the tool results: the event and usage-only fallbacks hold none)
    w = unlinked_warning("main", r.b.unlinked)
    if w:
        warnings.append(w)
    unknown = dict(r.unknown)
    for k, v in r.b.unknown.items():
        unknown[f"item {k}"] = v
    if unknown:
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(unknown.items()))
        warnings.append(f"skipped {sum(unknown.values())} record(s) of unknown type ({kinds})")
    if r.malformed:
        warnings.append(f"skipped {r.malformed} record(s) without a payload object")
    conv = Conversation(
        name="main", messages=tuple(messages), system_prompt=r.system_prompt, model=r.b.model,
        context_window=r.context_window, events=tuple(compaction_events(messages, r.specs)),
    )
    session = Session(format=FORMAT, source=inp.name, conversations=(conv,), metadata=r.metadata,
                      skipped=skipped + sum(unknown.values()) + r.malformed, warnings=tuple(warnings))
    # (the builder noted the messages with a call nested too deep; the fallbacks' messages hold no calls)
    check_arguments(inp.name, conv.name, conv.messages, r.b.too_deep if messages is r.b.messages else ())
    return session


SESSION_FORMAT = ModuleFormat(FORMAT, "Codex CLI rollout (JSONL)", EXPECTED, 30, load,
                              sniff_record=sniff_record, sniff_document=sniff_document, checks_arguments=True)
