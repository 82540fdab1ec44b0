"""Gemini CLI chats: the session files under ~/.gemini/tmp/<project>/chats/ and the checkpoints.

Shapes from google-gemini/gemini-cli (packages/core/src/services/chatRecordingService.ts,
chatRecordingTypes.ts, utils/sessionUtils.ts, core/logger.ts, utils/checkpointUtils.ts):

- **session-*.jsonl** (since April 2026): a metadata line {sessionId, projectHash, startTime,
  ...}, then one MessageRecord a line. A record whose id was seen before replaces it in place
  (tokens and tool calls are added that way); {"$rewindTo": id} drops that message and all after;
  {"$set": {...}} updates the metadata, and with "messages" replaces the whole history (/compress).
  What is read is the history as Gemini CLI itself reloads it.
- **session-*.json** (before): one ConversationRecord {sessionId, projectHash, startTime,
  lastUpdated, messages: [...]}.
- **checkpoints** (`/chat save`: checkpoint-<tag>.json; `/restore`'s tool checkpoints): Gemini API
  Content[] ({role: user|model, parts}), bare or under "history" / "clientHistory".

A MessageRecord is {id, timestamp, type, content, displayContent?}; type "gemini" adds toolCalls
[{id, name, args, result, status}], thoughts [{subject, description}], tokens and model. Content
is a string or Gemini parts (text, thought, functionCall, functionResponse, inlineData, ...).
"info", "error" and "warning" records, and user lines Gemini CLI does not send (slash commands,
"?"), are the CLI's own notes: never part of a request, so they are kept as events and warnings,
not as messages. A session of notes alone (useHistoryManager.ts records them whether or not a
prompt was sent) opens as a conversation with no messages and those events.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import orjson

from ctxview.model import ContextEvent, Conversation, Message, Session, Usage
from ctxview.formats.parsing.blocks import base64_size, binary_placeholder, join_texts
from ctxview.formats.parsing.builders import message, tool_call_from, usage
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import Input, LineReader, load_document
from ctxview.formats.parsing.linking import last_model, link_tool_results, unlinked_warning

FORMAT = "gemini"
EXPECTED = "Gemini CLI session or checkpoint"

_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_NOTES = frozenset({"info", "error", "warning"})
_CONTENT_ROLES = frozenset({"user", "model", "function"})
_NOTES_SHOWN = 5  # notes quoted in the warnings; the events keep all of them


# --- sniffing ------------------------------------------------------------------------------

def _is_str(d: Mapping, key: str) -> bool:
    return type(d.get(key)) is str


def sniff_record(rec: Any) -> bool:
    if type(rec) is not dict:
        return False
    if _is_str(rec, "sessionId") and _is_str(rec, "projectHash"):
        return True
    if _is_str(rec, "$rewindTo") or type(rec.get("$set")) is dict:
        return True
    kind = rec.get("type")
    return (_is_str(rec, "id") and type(kind) is str and kind in _TYPES and "content" in rec
            and "timestamp" in rec and "message" not in rec)


def _is_content(c: Any) -> bool:
    return type(c) is dict and type(c.get("role")) is str and c["role"] in _CONTENT_ROLES \
        and type(c.get("parts")) is list


def _content_list(value: Any) -> bool:
    return type(value) is list and bool(value) and all(_is_content(c) for c in value[:20])


def _checkpoint_history(doc: Any) -> list | None:
    if _content_list(doc):
        return doc
    if type(doc) is dict:
        for key in ("history", "clientHistory"):
            if _content_list(doc.get(key)):
                return doc[key]
    return None


def sniff_document(doc: Any) -> bool:
    if type(doc) is dict and _is_str(doc, "sessionId") and _is_str(doc, "projectHash") \
            and (type(doc.get("messages")) is list or _is_str(doc, "startTime")):
        return True  # (a session just started is its metadata line alone)
    return _checkpoint_history(doc) is not None


# --- parts ---------------------------------------------------------------------------------

def _parts(content: Any) -> list:
    """A PartListUnion as a list of parts (a string is one text part)."""
    if type(content) is str:
        return [{"text": content}] if content else []
    if type(content) is list:
        return [{"text": p} if type(p) is str else p for p in content if type(p) in (str, dict)]
    return [content] if type(content) is dict else []


def _response_text(response: Any) -> tuple[str, bool]:
    """A functionResponse's response as text, and whether it reports an error."""
    if type(response) is dict:
        if type(response.get("output")) is str and len(response) == 1:
            return response["output"], False
        if "error" in response and "output" not in response:
            err = response["error"]
            return (err if type(err) is str else orjson.dumps(err).decode()), True
    if type(response) is str:
        return response, False
    return orjson.dumps(response, default=str).decode(), False


def _media_placeholder(part: dict) -> str | None:
    inline, file = part.get("inlineData"), part.get("fileData")
    if type(inline) is dict:
        mime = inline.get("mimeType") if type(inline.get("mimeType")) is str else None
        data = inline.get("data")
        return binary_placeholder((mime or "data").split("/")[0], mime, base64_size(data))
    if type(file) is dict:
        mime = file.get("mimeType") if type(file.get("mimeType")) is str else None
        uri = file.get("fileUri")
        return binary_placeholder("file", mime, None, str(uri)[:200] if uri else None)
    code = part.get("executableCode")
    if type(code) is dict and type(code.get("code")) is str:
        return code["code"]
    result = part.get("codeExecutionResult")
    if type(result) is dict and type(result.get("output")) is str:
        return result["output"]
    return None


class _Parts:
    """A content's parts sorted by what they become: text, thinking, calls, results."""

    def __init__(self, content: Any) -> None:
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list = []
        self.results: list[tuple[str, str, str, bool]] = []  # (call id, name, text, is_error)
        for part in _parts(content):
            text = part.get("text")
            if type(text) is str:
                (self.thoughts if part.get("thought") is True else self.texts).append(text)
                continue
            call, response = part.get("functionCall"), part.get("functionResponse")
            if type(call) is dict:
                self.calls.append(tool_call_from(call.get("id"), call.get("name"), call.get("args")))
            elif type(response) is dict:
                body, is_error = _response_text(response.get("response"))
                self.results.append((str(response.get("id") or ""), str(response.get("name") or ""), body, is_error))
            else:
                shown = _media_placeholder(part)
                if shown is not None:
                    self.texts.append(shown)


def _thoughts_text(thoughts: Any) -> str | None:
    """The recorded thought summaries, as Gemini CLI sends them back on resume: **subject** description."""
    if type(thoughts) is not list:
        return None
    out = []
    for t in thoughts:
        if type(t) is dict:
            subject, description = t.get("subject"), t.get("description")
            description = description if type(description) is str else ""
            out.append(f"**{subject}** {description}" if type(subject) is str and subject else description)
    return "\n\n".join(o for o in out if o) or None


def gemini_usage(tokens: Any) -> Usage | None:
    """Usage from a record's tokens (Gemini's usageMetadata): promptTokenCount counts the cached
    tokens too, so fresh input is input - cached, plus the tool-use prompt (counted apart from the
    prompt); output is the candidates plus the thoughts (both billed as output). Fresh + cached +
    output is then the record's total."""
    if type(tokens) is not dict:
        return None

    def n(key: str) -> int:
        v = tokens.get(key)
        return v if type(v) is int and v > 0 else 0

    cached = n("cached")
    return usage(input_tokens=max(0, n("input") - cached) + n("tool"), output_tokens=n("output") + n("thoughts"),
                 cache_read_tokens=cached)


# --- one conversation ----------------------------------------------------------------------

class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.notes: list[ContextEvent] = []

    def note(self, kind: str, text: str, origin: str, timestamp: Any) -> None:
        meta = {"timestamp": timestamp} if type(timestamp) is str else {}
        self.notes.append(ContextEvent(kind=f"gemini_{kind}", index=len(self.messages), summary=text,
                                       origin=origin, meta=meta))

    def results(self, parts: _Parts, origin: str, meta: dict) -> None:
        for cid, name, text, is_error in parts.results:
            self.messages.append(message(role="tool", content=text, tool_call_id=cid, tool_name=name or None,
                                         origin=origin, meta={**meta, "is_error": True} if is_error else meta))

    def user(self, rec: dict, origin: str, meta: dict) -> None:
        parts = _Parts(rec.get("content"))
        self.results(parts, origin, meta)
        text = join_texts(parts.texts)
        if parts.results and not text:
            return
        stripped = (text or "").strip()
        if not parts.results and (not stripped or stripped[0] in "/?"):
            # Gemini CLI never sends these (isIgnoredUserContent): a command, not a prompt
            self.note("command", text or "", origin, rec.get("timestamp"))
            return
        shown = join_texts(_Parts(rec.get("displayContent")).texts)
        if shown is not None and shown != text:
            meta = {**meta, "display": shown}
        injected = stripped.startswith(("<session_context>", "<hook_context>"))
        self.messages.append(message(role="user", content=text or "", injected=injected, origin=origin,
                                     id=rec.get("id") if _is_str(rec, "id") else None, meta=meta))

    def gemini(self, rec: dict, origin: str, meta: dict, answered: set[str]) -> None:
        parts = _Parts(rec.get("content"))
        records = [c for c in rec.get("toolCalls") or () if type(c) is dict] \
            if type(rec.get("toolCalls")) is list else []
        calls = parts.calls or [tool_call_from(c.get("id"), c.get("name"), c.get("args")) for c in records]
        thinking = join_texts(parts.thoughts) if parts.thoughts else _thoughts_text(rec.get("thoughts"))
        model = rec.get("model") if _is_str(rec, "model") else None
        tokens = rec.get("tokens")
        if type(tokens) is dict:
            meta = {**meta, "gemini_tokens": tokens}
        self.messages.append(message(role="assistant", content=join_texts(parts.texts) or "", tool_calls=tuple(calls),
                                     thinking=thinking, model_id=model, usage=gemini_usage(tokens), origin=origin,
                                     id=rec.get("id") if _is_str(rec, "id") else None, meta=meta))
        # Older files keep each result only on its call; newer ones also store it as the user turn
        # that sent it (handled by user()), which is then what counts.
        for k, c in enumerate(records):
            cid = str(c.get("id") or "")
            if cid in answered or not c.get("result"):
                continue
            result = _Parts(c.get("result"))
            texts = [t for *_, t, _e in result.results] + result.texts
            if type(c.get("result")) is str:
                texts = [c["result"]]
            status = c.get("status") if _is_str(c, "status") else None
            is_error = status == "error" or any(e for *_, e in result.results)
            tmeta: dict[str, Any] = {"timestamp": c["timestamp"]} if _is_str(c, "timestamp") else {}
            if status not in (None, "success"):
                tmeta["status"] = status
            if is_error:
                tmeta["is_error"] = True
            self.messages.append(message(role="tool", content="\n".join(texts), tool_call_id=cid,
                                         origin=f"{origin}/toolCalls/{k}", meta=tmeta))

    def record(self, origin: str, rec: dict, answered: set[str]) -> None:
        kind = rec.get("type")
        ts = rec.get("timestamp")
        meta = {"timestamp": ts} if type(ts) is str else {}
        if kind == "gemini":
            self.gemini(rec, origin, meta, answered)
        elif kind == "user":
            self.user(rec, origin, meta)
        elif type(kind) is str and kind in _NOTES:
            self.note(kind, join_texts(_Parts(rec.get("content")).texts) or "", origin, ts)
        else:
            self.note("unknown", f"record of type {kind!r}", origin, ts)


def _answered(records: Iterable[tuple[str, dict]]) -> set[str]:
    """Call ids whose result a user record holds as a functionResponse part."""
    ids: set[str] = set()
    for _origin, rec in records:
        if rec.get("type") == "user":
            ids.update(cid for cid, *_ in _Parts(rec.get("content")).results if cid)
    return ids


# --- the file ------------------------------------------------------------------------------

class _Replay:
    """The records of a session file replayed as Gemini CLI's loadConversationRecord does."""

    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.records: dict[str, tuple[str, dict]] = {}   # id -> (origin, record); first position kept
        # the ids in order and where each is: a rewind drops a suffix, found without a scan (a file
        # of many rewinds stays linear)
        self.order: list[str] = []
        self.at: dict[str, int] = {}
        self.rewinds = self.rewrites = self.unknown = 0

    def put(self, mid: str, origin: str, rec: dict) -> None:
        if mid not in self.records:
            self.at[mid] = len(self.order)
            self.order.append(mid)
        self.records[mid] = (origin, rec)

    def drop_from(self, at: int) -> None:
        for mid in self.order[at:]:
            del self.records[mid], self.at[mid]
        del self.order[at:]

    def messages(self, origin: str, items: Any) -> None:
        for k, m in enumerate(items):
            if type(m) is dict and _is_str(m, "id"):
                self.put(m["id"], f"{origin}/{k}", m)

    def add(self, origin: str, rec: Any) -> None:
        if type(rec) is not dict:
            self.unknown += 1
        elif _is_str(rec, "$rewindTo"):
            self.drop_from(self.at.get(rec["$rewindTo"], 0))  # an unknown id: Gemini CLI clears all
            self.rewinds += 1
        elif _is_str(rec, "id"):
            self.put(rec["id"], origin, rec)
        elif type(rec.get("$set")) is dict:
            update = rec["$set"]
            if type(update.get("messages")) is list:
                self.drop_from(0)
                self.messages(f"{origin}/$set/messages", update["messages"])
                self.rewrites += 1
            self.metadata.update((k, v) for k, v in update.items() if k != "messages")
        elif _is_str(rec, "sessionId") and _is_str(rec, "projectHash"):
            self.metadata.update((k, v) for k, v in rec.items() if k != "messages")
            if type(rec.get("messages")) is list:
                self.messages(f"{origin}/messages", rec["messages"])
        else:
            self.unknown += 1


_METADATA = (("sessionId", "session_id"), ("projectHash", "project_hash"), ("startTime", "started_at"),
             ("lastUpdated", "updated_at"), ("summary", "summary"), ("kind", "kind"))


def _notes_warnings(notes: list[ContextEvent]) -> list[str]:
    if not notes:
        return []
    shown = "; ".join(f"{e.kind.removeprefix('gemini_')} before message {e.index}: {(e.summary or '')[:120]}"
                      for e in notes[:_NOTES_SHOWN])
    more = f" (and {len(notes) - _NOTES_SHOWN} more)" if len(notes) > _NOTES_SHOWN else ""
    return [f"{len(notes)} Gemini CLI note(s) not sent to the model (info, error, warning, commands): {shown}{more}"]


def _finish(inp: Input, b: _Builder, name: str, metadata: dict, warnings: list[str], skipped: int,
            variant: str) -> Session:
    if not b.messages and not (b.notes and variant == "session"):
        # (a session of the CLI's notes alone -- an error before the first prompt went out, say -- opens:
        # its notes are events of a conversation with no messages)
        raise LoadError(inp.name, "no messages found (no user or gemini records)" if variant == "session" else
                        "the checkpoint holds no messages", expected=EXPECTED)
    messages, unlinked = link_tool_results(b.messages)
    warnings = [w for w in (unlinked_warning(name, unlinked),) if w] + warnings + _notes_warnings(b.notes)
    summary = metadata.get("summary")
    conv = Conversation(name=name, messages=tuple(messages), model=last_model(messages), events=tuple(b.notes),
                        metadata={"label": summary[:200]} if type(summary) is str and summary else {})
    meta = {dst: metadata[src] for src, dst in _METADATA if type(metadata.get(src)) is str}
    meta["variant"] = variant
    return Session(format=FORMAT, source=inp.name, conversations=(conv,), metadata=meta, skipped=skipped,
                   warnings=tuple(warnings))


def _load_checkpoint(inp: Input, doc: Any, history: list) -> Session:
    b = _Builder()
    base = "" if history is doc else ("/history" if doc.get("history") is history else "/clientHistory")
    for i, content in enumerate(history):
        origin = f"{base}/{i}"
        if not _is_content(content):
            raise LoadError(inp.name, f"{origin}: expected a Content object with a role and parts", expected=EXPECTED)
        if content["role"] == "model":
            b.gemini({"content": content["parts"]}, origin, {}, set())
        else:
            parts = _Parts(content["parts"])
            b.results(parts, origin, {})
            text = join_texts(parts.texts)
            if text is not None or not parts.results:
                b.messages.append(message(role="user", content=text or "", origin=origin))
    return _finish(inp, b, "main", {}, [], 0, "checkpoint")


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    r = _Replay()
    if layout == "jsonl":
        reader = LineReader(inp, EXPECTED, lenient)
        for lineno, rec in reader:
            r.add(f"line {lineno}", rec)
        return _replayed(inp, r, reader.skipped, [reader.skipped_warning()] if reader.skipped else [])
    doc = load_document(inp, EXPECTED) if doc is None else doc
    history = _checkpoint_history(doc)
    if history is not None:
        return _load_checkpoint(inp, doc, history)
    if not sniff_document(doc):
        raise LoadError(inp.name, "expected a session object with \"sessionId\", \"projectHash\" and "
                                  "\"messages\", or a list of Content objects", expected=EXPECTED)
    r.add("", doc)
    return _replayed(inp, r, 0, [])


def _replayed(inp: Input, r: _Replay, skipped: int, warnings: list[str]) -> Session:
    if r.unknown:
        warnings.append(f"skipped {r.unknown} record(s) that are neither metadata nor messages")
    if r.rewinds or r.rewrites:
        warnings.append(f"the history was rewound {r.rewinds} time(s) and replaced {r.rewrites} time(s) "
                        "($rewindTo, $set messages: /rewind, /compress): shown as Gemini CLI reloads it, "
                        "the final history")
    records = [r.records[mid] for mid in r.order]
    answered = _answered(records)
    b = _Builder()
    for origin, rec in records:
        b.record(origin, rec, answered)
    name = "subagent" if r.metadata.get("kind") == "subagent" else "main"
    return _finish(inp, b, name, r.metadata, warnings, skipped + r.unknown, "session")


SESSION_FORMAT = ModuleFormat(FORMAT, "Gemini CLI session (JSONL or JSON) or checkpoint", EXPECTED, 32, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
