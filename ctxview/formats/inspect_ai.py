"""Inspect AI eval logs: the `.json` log, the `.eval` zip (inspect_eval_zip.py) and a lone sample file.

Shapes from UKGovernmentBEIS/inspect_ai (src/inspect_ai/log/_log.py, _recorders/eval.py and
json.py, model/_chat_message.py, model/_model_output.py, _util/content.py, event/_model.py):

    EvalLog   {version, status, eval: {task, model, ...}, plan, results, stats, error,
               samples: [EvalSample], reductions}
    EvalSample {id, epoch, input, target, messages: [ChatMessage], output, model_usage,
               events: [{event: "model", output: {usage, choices: [{message}]}}, ...], attachments}
    ChatMessage {role: system|user|assistant|tool, content: str | [parts], tool_calls:
               [{id, function, arguments}], tool_call_id, function, error, model}

Each sample is a conversation named sample-<id>-epoch-<epoch>. A sample's model_usage is a
total over the sample (kept in the conversation's metadata); usage per request comes from the
model events, matched to the assistant message each produced (by message id), where the log
kept its events. A big `.json` log is read one piece of its samples list at a time
(json_pieces), each sample turned into its conversation and dropped, events included.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

import orjson

from ctxview.model import Conversation, Message, Session, Usage
from ctxview.formats.parsing.blocks import data_url_placeholder, binary_placeholder, join_texts
from ctxview.formats.parsing.builders import message, tool_call_from, usage
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, document_only, parse_in_pieces
from ctxview.formats.parsing.linking import last_model, link_tool_results, unlinked_warning

__all__ = ["EXPECTED", "FORMAT", "LogBuilder", "SESSION_FORMAT", "inspect_usage", "load", "load_in_pieces",
           "sample_conversation", "sniff_document"]

FORMAT = "inspect-ai"
EXPECTED = "Inspect AI eval log (.json or .eval)"

PIECES_ABOVE = 8 << 20   # a .json log this big is read a piece of its samples at a time
_SAMPLES_DEPTH = 1       # the samples list sits in the log object
# Where one sample ends and the next begins: Inspect writes a sample's "id" then its "epoch" first
# (its messages and events, which hold objects by the thousand, do not start so).
_SAMPLE_SEPARATOR = re.compile(rb'\}\s*(,)\s*\{\s*"id"\s*:\s*(?:-?\d+|"(?:[^"\\]|\\.)*")\s*,\s*"epoch"\s*:')
_ATTACHMENT = "attachment://"
_LABEL_CHARS = 120


# --- sniffing ------------------------------------------------------------------------------

def _is_header(doc: Any) -> bool:
    spec = doc.get("eval") if type(doc) is dict else None
    return type(spec) is dict and type(spec.get("task")) is str and type(spec.get("model")) is str \
        and ("samples" in doc or "status" in doc or "version" in doc)


def _is_sample(doc: Any) -> bool:
    return type(doc) is dict and type(doc.get("messages")) is list and type(doc.get("epoch")) is int \
        and "id" in doc and "input" in doc and "target" in doc


def sniff_document(doc: Any) -> bool:
    return _is_header(doc) or _is_sample(doc)


# --- content -------------------------------------------------------------------------------

def _resolve(value: Any, attachments: Mapping[str, Any]) -> Any:
    """An `attachment://<hash>` reference replaced by the sample's attachment it names."""
    if type(value) is str and value.startswith(_ATTACHMENT):
        return attachments.get(value[len(_ATTACHMENT):], value)
    return value


def _media(kind: str, value: Any, extra: str | None = None) -> str:
    if type(value) is str and not value.startswith(_ATTACHMENT):
        return data_url_placeholder(kind, value)  # a data: URL (type and size) or a URL
    return binary_placeholder(kind, None, None, extra)


def _content(content: Any, attachments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(texts, reasoning) of a message's content: a string or a list of content parts."""
    content = _resolve(content, attachments)
    if type(content) is str:
        return [content], []
    texts: list[str] = []
    reasoning: list[str] = []
    for part in content if type(content) is list else ():
        if type(part) is not dict:
            continue
        kind = part.get("type")
        if kind == "text":
            text = _resolve(part.get("text"), attachments)
            if type(text) is str:
                texts.append(text)
        elif kind == "reasoning":
            text = _resolve(part.get("reasoning"), attachments)
            if part.get("redacted") is True:
                summary = part.get("summary")
                reasoning.append(summary if type(summary) is str and summary else "[redacted reasoning]")
            elif type(text) is str and text:
                reasoning.append(text)
        elif kind in ("image", "audio", "video"):
            texts.append(_media(kind, _resolve(part.get(kind), attachments),
                                part.get("format") if type(part.get("format")) is str else None))
        elif kind == "document":
            name = part.get("filename") if type(part.get("filename")) is str else None
            texts.append(binary_placeholder("document", part.get("mime_type") or None, None, name))
        elif kind == "tool_use":
            texts.append(f"[{part.get('tool_type') or 'tool'} {part.get('name') or ''}: "
                         f"{str(_resolve(part.get('result'), attachments) or '')[:2000]}]")
        elif kind == "data":
            texts.append(orjson.dumps(part.get("data"), default=str).decode())
        elif type(kind) is str:
            texts.append(f"[{kind}]")
    return texts, reasoning


def inspect_usage(u: Any) -> Usage | None:
    """Usage from an Inspect ModelUsage: its input_tokens exclude the cache reads and writes
    (model/_model_output.py), as ctxview's Usage counts them."""
    if type(u) is not dict:
        return None

    def n(key: str) -> int:
        v = u.get(key)
        return v if type(v) is int and v > 0 else 0

    return usage(input_tokens=n("input_tokens"), output_tokens=n("output_tokens"),
                 cache_read_tokens=n("input_tokens_cache_read"), cache_write_tokens=n("input_tokens_cache_write"))


# --- one sample ----------------------------------------------------------------------------

def _event_usage(events: Any) -> list[tuple[str | None, Usage, str | None]]:
    """(the id of the message produced, usage, model) of each model event that recorded usage."""
    out = []
    for ev in events if type(events) is list else ():
        if type(ev) is not dict or ev.get("event") != "model" or type(ev.get("output")) is not dict:
            continue
        output = ev["output"]
        u = inspect_usage(output.get("usage"))
        if u is None:
            continue
        choices = output.get("choices")
        first = choices[0] if type(choices) is list and choices and type(choices[0]) is dict else {}
        msg = first.get("message") if type(first.get("message")) is dict else {}
        model = output.get("model") if type(output.get("model")) is str else ev.get("model")
        out.append((msg.get("id") if type(msg.get("id")) is str else None, u, model if type(model) is str else None))
    return out


def _with_usage(messages: list[Message], events: Any) -> tuple[list[Message], int]:
    """Messages with each model event's usage on the assistant message it produced: by id, or in
    order when no id matches and the counts agree. Returns how many events found no message."""
    recorded = _event_usage(events)
    if not recorded:
        return messages, 0
    by_id = {mid: (u, model) for mid, u, model in recorded if mid}
    replies = [i for i, m in enumerate(messages) if m.role == "assistant"]
    matched = {i: by_id[messages[i].id] for i in replies if messages[i].id in by_id}
    if not matched and len(recorded) == len(replies):
        matched = {i: (u, model) for i, (_mid, u, model) in zip(replies, recorded)}
    out = list(messages)
    for i, (u, model) in matched.items():
        out[i] = out[i].replace(usage=u, model_id=out[i].model_id or model)
    return out, len(recorded) - len(matched)


def _label(sample: dict) -> str:
    inp, target = sample.get("input"), sample.get("target")
    if type(inp) is list:  # a list of ChatMessages: the last user message's text
        users = [m for m in inp if type(m) is dict and m.get("role") == "user"]
        inp = join_texts(_content(users[-1].get("content"), {})[0]) if users else ""
    text = " ".join(str(inp or "").split())[:_LABEL_CHARS]
    if type(target) is list:
        target = ", ".join(map(str, target))
    if type(target) is str and target:
        text += f" → target {' '.join(target.split())[:40]}"
    return text


def _message(m: dict, origin: str, attachments: Mapping[str, Any]) -> Message:
    role = m["role"]
    texts, reasoning = _content(m.get("content"), attachments)
    text = join_texts(texts) or ""
    mid = m.get("id") if type(m.get("id")) is str else None
    meta: dict[str, Any] = {}
    if role == "assistant":
        calls = [tool_call_from(c.get("id"), c.get("function"), c.get("arguments"))
                 for c in m.get("tool_calls") or () if type(c) is dict] if type(m.get("tool_calls")) is list else []
        return message(role="assistant", content=text, tool_calls=tuple(calls),
                       thinking="\n\n".join(reasoning) if reasoning else None,
                       model_id=m.get("model") if type(m.get("model")) is str else None, origin=origin, id=mid)
    if role == "tool":
        error = m.get("error")
        if type(error) is dict:
            meta["is_error"] = True
            if type(error.get("type")) is str:
                meta["error_type"] = error["type"]
            if not text and type(error.get("message")) is str:
                text = f"Error: {error['message']}"
        function = m.get("function") if type(m.get("function")) is str else None
        cid = m.get("tool_call_id")
        return message(role="tool", content=text, tool_call_id=str(cid) if cid is not None else None,
                       tool_name=function, origin=origin, id=mid, meta=meta)
    return message(role=role, content=text, origin=origin, id=mid)


def sample_conversation(sample: dict, where: str, spec_model: str | None) -> tuple[Conversation, list[str]]:
    """One sample as a conversation, and what to warn of."""
    sid, epoch = sample.get("id"), sample.get("epoch")
    name = f"sample-{sid}-epoch-{epoch}"
    attachments = sample.get("attachments") if type(sample.get("attachments")) is dict else {}
    system: list[str] = []
    messages: list[Message] = []
    items = sample.get("messages")
    if type(items) is not list:
        raise _Bad(f"{where}/messages", "expected a list of messages")
    for i, m in enumerate(items):
        origin = f"{where}/messages/{i}"
        if type(m) is not dict or type(m.get("role")) is not str:
            raise _Bad(origin, "expected a message object with a role")
        if m["role"] == "system" and not messages:
            system.append(join_texts(_content(m.get("content"), attachments)[0]) or "")
            continue
        messages.append(_message(m, origin, attachments))
    messages, unmatched = _with_usage(messages, sample.get("events"))
    messages, unlinked = link_tool_results(messages)
    warnings = [w for w in (unlinked_warning(name, unlinked),) if w]
    if unmatched:
        warnings.append(f"{name}: {unmatched} model call(s) with recorded usage match no message "
                        "(a scorer's or another role's calls)")
    error = sample.get("error")
    if type(error) is dict and type(error.get("message")) is str:
        warnings.append(f"{name}: the sample ended in an error: {error['message'][:200]}")
    meta: dict[str, Any] = {"label": _label(sample)}
    if type(sample.get("model_usage")) is dict and sample["model_usage"]:
        meta["model_usage"] = sample["model_usage"]  # the sample's total, by model
    output = sample.get("output") if type(sample.get("output")) is dict else {}
    model = output.get("model") if type(output.get("model")) is str and output.get("model") else None
    conv = Conversation(name=name, messages=tuple(messages), system_prompt="\n\n".join(system) if system else None,
                        model=model or last_model(messages) or spec_model, metadata=meta)
    return conv, warnings


class _Bad(Exception):
    def __init__(self, where: str, what: str) -> None:
        super().__init__(where, what)
        self.where, self.what = where, what


# --- the log -------------------------------------------------------------------------------

class LogBuilder:
    """The conversations of a log's samples, built one sample at a time (from a whole document,
    a piece of one, or a zip's members)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.conversations: list[Conversation] = []
        self.warnings: list[str] = []
        self.spec_model: str | None = None

    def sample(self, sample: Any, where: str) -> None:
        if type(sample) is not dict:
            raise LoadError(self.name, f"{where}: expected a sample object", expected=EXPECTED)
        try:
            conv, warnings = sample_conversation(sample, where, self.spec_model)
        except _Bad as bad:
            raise LoadError(self.name, f"{bad.where}: {bad.what}", expected=EXPECTED) from None
        self.conversations.append(conv)
        self.warnings += warnings

    def session(self, header: Any, variant: str) -> Session:
        meta: dict[str, Any] = {"variant": variant}
        warnings = list(self.warnings)
        if type(header) is dict:
            spec = header.get("eval") if type(header.get("eval")) is dict else {}
            for src, dst in (("task", "task"), ("model", "model"), ("eval_id", "eval_id"), ("run_id", "run_id"),
                             ("created", "started_at")):
                if type(spec.get(src)) is str:
                    meta[dst] = spec[src]
            for key in ("status", "version"):
                if type(header.get(key)) in (str, int):
                    meta[key] = header[key]
            if header.get("status") not in (None, "success"):
                warnings.insert(0, f"the eval's status is {header.get('status')!r}: it did not finish")
        if not self.conversations:
            raise LoadError(self.name, "the log holds no samples (was it written with --no-log-samples, or "
                                       "is the eval still starting?)", expected=EXPECTED)
        return Session(format=FORMAT, source=self.name, conversations=tuple(self.conversations), metadata=meta,
                       warnings=tuple(warnings))

    def spec(self, header: Any) -> None:
        spec = header.get("eval") if type(header) is dict else None
        if type(spec) is dict and type(spec.get("model")) is str:
            self.spec_model = spec["model"]


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    doc = document_only(inp, layout, doc, "an Inspect AI log", EXPECTED)
    b = LogBuilder(inp.name)
    if _is_sample(doc) and not _is_header(doc):
        b.sample(doc, "")
        return b.session(None, "sample")
    if not _is_header(doc):
        raise LoadError(inp.name, "expected an eval log object with \"eval\" {task, model} and \"samples\"",
                        expected=EXPECTED)
    b.spec(doc)
    samples = doc.get("samples")
    if samples is not None and type(samples) is not list:
        raise LoadError(inp.name, "/samples: expected a list of samples", expected=EXPECTED)
    for i, s in enumerate(samples or ()):
        b.sample(s, f"/samples/{i}")
    return b.session(doc, "json")


def load_in_pieces(inp: Input) -> Session | None:
    """A big `.json` log read one piece of its samples at a time: each piece's samples become
    conversations and their parsed objects (events, the model inputs they repeat) are dropped.
    None when the file is not such a log: then it is parsed whole, as load() does."""
    if inp.size < PIECES_ABOVE or b'"eval"' not in inp.head(1 << 16):
        return None
    lists: list[list[Any]] = []   # per list found: its conversations, or None once an item is not a sample
    probe = LogBuilder(inp.name)

    def take(k: int, first: int, items: list) -> None:
        while len(lists) <= k:
            lists.append([])
        if lists[k] is None:
            return
        for j, item in enumerate(items):
            if not _is_sample(item):
                lists[k] = None  # type: ignore[call-overload]
                return
            probe.conversations = []
            try:
                probe.sample(item, f"/samples/{first + j}")
            except LoadError:
                lists[k] = None  # type: ignore[call-overload]
                return
            lists[k].append(probe.conversations[0])

    split = parse_in_pieces(inp, "samples", _SAMPLES_DEPTH, take, _SAMPLE_SEPARATOR)
    if split is None:
        return None
    doc, markers = split
    if not _is_header(doc) or doc.get("samples") != [markers[0]] or lists[0] is None:
        return None
    # The samples were built before the header was read: the log's model is their fallback.
    spec_model = doc["eval"]["model"]
    b = LogBuilder(inp.name)
    b.conversations = [c if c.model else replace(c, model=spec_model) for c in lists[0]]
    b.warnings = probe.warnings
    return b.session(doc, "json")


SESSION_FORMAT = ModuleFormat(FORMAT, "Inspect AI eval log (.json, .eval zip, or one sample's JSON)", EXPECTED, 34,
                              load, sniff_document=sniff_document, load_in_pieces=load_in_pieces)
