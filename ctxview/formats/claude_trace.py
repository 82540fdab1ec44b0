"""claude-trace logs (badlogic/lemmy, apps/claude-trace): the request bodies Claude Code really sent.

claude-trace wraps Claude Code's fetch and writes `.claude-trace/log-*.jsonl`,
one request/response pair a line (its interceptor.ts, types.ts RawPair):

    {"request": {"timestamp", "method", "url", "headers", "body"},
     "response": {"timestamp", "status_code", "headers", "body" | "body_raw" | "events"} | null,
     "logged_at", "note"?}

`body` is the Messages API request ({model, system, tools, messages, ...});
the response is the JSON message, or the SSE text of a streamed one
(`message_start`, `content_block_*`, `message_delta`). Kept: POSTs to
`/v1/messages` with a 2xx response; count_tokens and other endpoints, error
responses (retried with the same body) and orphaned requests (no response)
are counted in the warnings.

Requests become conversations by their shared history: a request joins the
conversation (same system prompt) whose latest request, reply included, is
the longest prefix of its messages; sub-agents (Task) and Claude Code's side
calls (titles, quota checks: another system prompt) are conversations of
their own. A request whose history starts with Claude Code's compaction
summary continues the conversation it summarises, after a compaction event.
Stored messages are each conversation's union; each request is the assistant
message it produced (model.request_indices). A tool result a later request
sends with other text (Claude Code's microcompaction) is a microcompaction
event from that request on, any other message sent other than before (a reply
re-sent otherwise than the response gave it) a "resent" event, so the harness
stage (harness.history_as_sent) shows each request as its body sent it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

import orjson

from ..model import ContextEvent, Conversation, Message, Session
from .anthropic import request_messages
from .blocks import anthropic_assistant, join_texts, result_text, thinking_text
from .builders import anthropic_usage, message, recorded_tools
from .contract import ModuleFormat
from .errors import LoadError
from .jsonio import Input, LineReader, load_document, open_input, detect_layout
from .linking import compaction_events, link_tool_results, unlinked_warning

__all__ = ["COMPACTION_OPENING", "FORMAT", "TraceRequest", "group_requests", "message_key", "read_requests",
           "trace_requests"]

FORMAT = "claude-trace"
EXPECTED = "claude-trace log"
# How Claude Code's compaction summary opens the history that replaces the conversation.
COMPACTION_OPENING = "This session is being continued from a previous conversation"


@dataclass(frozen=True, slots=True)
class TraceRequest:
    """One kept request of the log: what its body sent, and the reply its response holds."""

    line: int                       # the log line (1-based)
    messages: tuple[Message, ...]   # the body's messages as ctxview reads them (anthropic.request_messages)
    reply: Message                  # the assistant message of the response: id, usage, timestamp
    system: str | None              # the system prompt's text (blocks joined)
    system_raw: Any                 # as the body holds it: a string or text blocks
    tools: tuple[Mapping[str, Any], ...]
    model: str | None
    streaming: bool                 # the response was SSE text
    keys: tuple[tuple, ...] = ()    # message_key of each message (computed once: grouping compares them)


def message_key(m: Message) -> tuple:
    """What makes two messages the same message sent: role, text, the result's call id, the calls.
    (Not thinking: it is compared apart; not origin, ids or usage: bookkeeping.)"""
    calls = tuple((c.id, c.name, orjson.dumps(c.arguments, option=orjson.OPT_SORT_KEYS, default=str))
                  for c in m.tool_calls)
    return (m.role, m.text, m.tool_call_id or "", calls)


# --- sniffing ------------------------------------------------------------------------------

def sniff_record(rec: Any) -> bool:
    if type(rec) is not dict or "logged_at" not in rec:
        return False
    req = rec.get("request")
    return type(req) is dict and "url" in req and "body" in req and "response" in rec


def sniff_document(doc: Any) -> bool:
    return sniff_record(doc)  # a log of one line parses as one document


# --- one line ------------------------------------------------------------------------------

def _iso(seconds: Any) -> str | None:
    if type(seconds) not in (int, float) or not 0 < seconds < 1e11:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


def _sse_events(raw: str) -> list[dict]:
    """The JSON `data:` payloads of an SSE stream; a line that is not JSON (a stream cut short) is skipped."""
    out = []
    for line in raw.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            ev = orjson.loads(data)
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
                block["input"] = orjson.loads(raw) if raw else {}
            except orjson.JSONDecodeError:
                block["input"] = {"input": raw}
        content.append(block)
    msg["content"], msg["usage"] = content, usage
    return msg


def _response_message(response: Mapping[str, Any]) -> tuple[dict | None, bool]:
    """(the response's message, whether it was streamed)."""
    raw = response.get("body_raw")
    if isinstance(raw, str):
        return message_from_events(_sse_events(raw)), True
    events = response.get("events")
    if isinstance(events, list):  # claude-trace's parsed form: [{"event", "data", "timestamp"}]
        return message_from_events(e["data"] for e in events if isinstance(e, Mapping) and isinstance(e.get("data"), Mapping)), True
    body = response.get("body")
    if isinstance(body, Mapping) and isinstance(body.get("content"), list):
        return dict(body), False
    return None, False


def _reply(msg: Mapping[str, Any], line: int, timestamp: str | None) -> Message:
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


def _skip_reason(rec: Mapping[str, Any]) -> str | None:
    """Why a well-formed pair is not a request of a conversation, or None: it is one."""
    req = rec["request"]
    url = req.get("url")
    if not isinstance(url, str) or "/v1/messages" not in url:
        return "not /v1/messages"
    if "/v1/messages/" in url.split("?")[0]:
        return url.split("?")[0].rsplit("/", 1)[-1]  # count_tokens, batches
    if str(req.get("method") or "").upper() != "POST":
        return f"{req.get('method')} request"
    response = rec.get("response")
    if response is None:
        return "no response (orphaned)"
    if not isinstance(response, Mapping):
        return "response not an object"
    status = response.get("status_code")
    if type(status) is int and not 200 <= status < 300:
        return f"status {status}"
    return None


class _Seen:
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


def _keys(name: str, line: int, seen: _Seen, msgs: Sequence[Message]) -> tuple[tuple, ...]:
    try:
        return seen.keys(msgs)
    except (TypeError, RecursionError):  # orjson's encoder stops at 255 levels (its TypeError)
        raise LoadError(name, "request.body.messages: tool call arguments nested too deep (over 255 levels)",
                        line=line, expected=EXPECTED) from None


def _request(name: str, line: int, rec: Any, seen: _Seen) -> TraceRequest | str:
    """The TraceRequest of one log line, or why it is skipped; LoadError for a line that is not a pair."""
    if type(rec) is not dict or type(rec.get("request")) is not dict:
        raise LoadError(name, "expected a request/response pair: an object with a \"request\" object",
                        line=line, expected=EXPECTED)
    reason = _skip_reason(rec)
    if reason is not None:
        return reason
    body = rec["request"]["body"]
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise LoadError(name, "request.body: expected a Messages API body with a \"messages\" list",
                        line=line, expected=EXPECTED)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    msgs = request_messages(name, body["messages"], f"line {line}: /request/body/messages", model,
                            line=line, expected=EXPECTED, memo=seen.messages)
    if not msgs:
        raise LoadError(name, "request.body.messages is empty", line=line, expected=EXPECTED)
    reply, streaming = _response_message(rec["response"])
    if reply is None:
        return "response holds no message"
    system = body.get("system")
    ts = _iso(rec["response"].get("timestamp")) or _iso(rec["request"].get("timestamp"))
    return TraceRequest(line=line, messages=tuple(msgs), reply=_reply(reply, line, ts),
                        system=system if system is None or isinstance(system, str) else result_text(system),
                        system_raw=system, tools=recorded_tools(body).get("tools", ()), model=model,
                        streaming=streaming, keys=_keys(name, line, seen, msgs))


def read_requests(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
                  warnings: list[str] | None = None) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in log order, the skipped pairs by reason, malformed lines skipped (lenient:
    their warning goes to `warnings`))."""
    if layout == "jsonl":
        reader = LineReader(inp, EXPECTED, lenient)
        records: Iterable[tuple[int, Any]] = reader
    else:
        doc = load_document(inp, EXPECTED) if doc is None else doc
        reader, records = None, [(1, doc)]
    kept: list[TraceRequest] = []
    skipped: dict[str, int] = {}
    seen = _Seen()
    for line, rec in records:
        got = _request(inp.name, line, rec, seen)
        if isinstance(got, str):
            skipped[got] = skipped.get(got, 0) + 1
        else:
            kept.append(got)
    if reader is None:
        return kept, skipped, 0
    if warnings is not None:
        reader.warn_skipped(warnings)
    return kept, skipped, reader.skipped


def trace_requests(path: Any) -> list[TraceRequest]:
    """The kept requests of the claude-trace log at `path`, in log order (LoadError for bad input)."""
    inp = open_input(path)
    layout = detect_layout(inp)
    if layout == "jsonl":
        return read_requests(inp, layout)[0]
    doc = load_document(inp, EXPECTED)
    if not sniff_document(doc):
        raise LoadError(inp.name, "not a claude-trace log (expected request/response pairs)", expected=EXPECTED)
    return read_requests(inp, layout, doc=doc)[0]


# --- conversations -------------------------------------------------------------------------

def _shared_prefix(a: Sequence[tuple], b: Sequence[tuple]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _continues(req: TraceRequest) -> bool:
    first = req.messages[0]
    return first.role == "user" and first.text.lstrip().startswith(COMPACTION_OPENING)


class _Thread:
    """One conversation as it is built: stored messages, what is sent now, its requests' lines."""

    def __init__(self, req: TraceRequest) -> None:
        self.system, self.requests = req.system_raw, [req]
        self.stored: list[Message] = []
        self.start = 0                       # first stored index sent (after a compaction)
        self.compactions: list[dict] = []
        self.rewrites: list[ContextEvent] = []
        # the keys of what the next request would re-send (stored start.., as now sent; the last reply),
        # and their thinking (apart: grouping compares keys only)
        self.tip: list[tuple] = []
        self.thinking: list[str | None] = []
        self._add(req)

    def extends(self, req: TraceRequest) -> int:
        """How many messages of `req` repeat this conversation's history (0: not its next request)."""
        if req.system_raw != self.system or len(req.messages) < len(self.tip):
            return 0
        return _shared_prefix(self.tip, req.keys)

    def add(self, req: TraceRequest, compaction: bool = False) -> None:
        self.requests.append(req)
        if compaction:
            self.compactions.append({"index": len(self.stored), "summary": req.messages[0].text,
                                     "origin": f"line {req.line}", "meta": {"from": "claude-trace"}})
            self.start, self.tip, self.thinking = len(self.stored), [], []
        self._add(req)

    def _add(self, req: TraceRequest) -> None:
        start, stored = self.start, self.stored
        at = start + len(req.messages)          # the request's index: its reply goes there
        tip, thinking = self.tip, self.thinking
        for j, (m, key) in enumerate(zip(req.messages, req.keys)):
            i = start + j
            if i >= len(stored):
                stored.append(m)
                tip.append(key)
                thinking.append(m.thinking)
                continue
            if tip[j] == key and thinking[j] == m.thinking:
                continue
            tip[j], thinking[j] = key, m.thinking
            origin = f"line {req.line}"
            if m.role == "tool" and stored[i].role == "tool" and m.tool_call_id == stored[i].tool_call_id:
                # a tool result sent with other text: Claude Code's microcompaction
                self.rewrites.append(ContextEvent(kind="microcompaction", index=at, origin=origin,
                                                  replaced=(stored[i],),
                                                  meta={"placeholder": m.text, "tool_ids": [m.tool_call_id],
                                                        "from": "claude-trace"}))
            else:  # any other message sent other than before (harness.py: "resent")
                meta = {k: v for k, v in stored[i].meta.items() if k != "thinking_blocks"}
                if "thinking_blocks" in m.meta:  # (what an export sends back)
                    meta["thinking_blocks"] = m.meta["thinking_blocks"]
                sent = stored[i].replace(role=m.role, content=m.content, tool_calls=m.tool_calls,
                                         tool_call_id=m.tool_call_id, injected=m.injected, thinking=m.thinking,
                                         meta=meta)
                self.rewrites.append(ContextEvent(kind="resent", index=at, origin=origin, replaced=(stored[i],),
                                                  meta={"messages": {i: sent}, "from": "claude-trace"}))
        stored.append(req.reply)
        tip.append(message_key(req.reply))
        thinking.append(req.reply.thinking)


def group_requests(requests: Sequence[TraceRequest]) -> list[_Thread]:
    """The requests as conversations, in order of their first request (see the module's docstring)."""
    threads: list[_Thread] = []
    for req in requests:
        best, best_len = None, 0
        for t in threads:
            k = t.extends(req)
            if k >= best_len and k > 0:  # ties: the latest conversation
                best, best_len = t, k
        if best is not None:
            best.add(req)
            continue
        if _continues(req):
            same = [t for t in threads if t.system == req.system_raw]
            if same:
                same[-1].add(req, compaction=True)
                continue
        threads.append(_Thread(req))
    return threads


def _label(t: _Thread) -> str:
    first = next((m for m in t.requests[0].messages if m.role == "user" and m.text.strip()), None)
    head = " ".join(first.text.split())[:48] if first else ""
    n = len(t.requests)
    return f"{head!r}, {n} request{'s' if n != 1 else ''}" if head else f"{n} request{'s' if n != 1 else ''}"


def _conversation(name: str, t: _Thread, warnings: list[str]) -> Conversation:
    messages, unlinked = link_tool_results(t.stored)
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    events = compaction_events(messages, t.compactions) + t.rewrites
    events.sort(key=lambda e: e.index)
    last = t.requests[-1]
    meta: dict[str, Any] = {"trace_lines": tuple(r.line for r in t.requests)}
    if last.tools:
        meta["tools"] = last.tools
    if isinstance(last.system_raw, list):
        meta["system_blocks"] = tuple(last.system_raw)
    if name != "main":
        meta["label"] = _label(t)
    if any(r.tools != last.tools for r in t.requests):
        warnings.append(f"{name}: the tool definitions changed between requests (#sys shows the last request's)")
    return Conversation(name=name, messages=tuple(messages), system_prompt=last.system,
                        model=last.model or last.reply.model_id, events=tuple(events), metadata=meta)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    warnings: list[str] = []
    requests, skipped, malformed = read_requests(inp, layout, lenient, doc, warnings)
    if not requests:
        why = ", ".join(f"{k} ×{v}" for k, v in sorted(skipped.items())) or "no lines"
        raise LoadError(inp.name, f"no /v1/messages request with a response ({why})", expected=EXPECTED)
    threads = group_requests(requests)
    main = max(range(len(threads)), key=lambda k: (len(threads[k].requests), -k))
    convs = []
    for k, t in enumerate(threads):
        name = "main" if k == main else f"line-{t.requests[0].line}"  # where it starts in the log
        convs.append(_conversation(name, t, warnings))
    convs.sort(key=lambda c: c.name != "main")
    if skipped:
        warnings.append(f"skipped {sum(skipped.values())} logged pair(s) that are no request of a conversation ("
                        + ", ".join(f"{k} ×{v}" for k, v in sorted(skipped.items())) + ")")
    meta = {"requests": len(requests), "streaming": sum(r.streaming for r in requests),
            "skipped_pairs": dict(skipped)}
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta,
                   skipped=malformed, warnings=tuple(warnings))


SESSION_FORMAT = ModuleFormat(FORMAT, "claude-trace log (JSONL)", EXPECTED, 45, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
