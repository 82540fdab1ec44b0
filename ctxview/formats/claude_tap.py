"""claude-tap traces (liaohch3/claude-tap): the requests a local reverse proxy saw Claude Code send.

claude-tap starts a proxy, points Claude Code's ANTHROPIC_BASE_URL at it and
records each call (claude_tap/proxy.py `_build_record`) as

    {"timestamp": ISO, "request_id", "turn", "duration_ms",
     "request": {"method", "path", "headers", "body"},
     "response": {"status", "headers", "body", "sse_events"?},
     "upstream_base_url"?, "capture"?}

`request.body` is the parsed JSON body (older traces may hold its text);
`response.body` is the response message, for a streamed call the one its
SSEReassembler rebuilt from the events (`sse_events`, [{"event", "data"}],
kept only with --tap-store-stream-events). These files hold records:

- a trace file, one record a line: `.traces/<date>/trace_<time>.jsonl`, which
  claude-tap wrote before it kept traces in SQLite, and `claude-tap export`
  still reads;
- a compact bundle (`claude-tap export SESSION -o trace.ctap.json`, the
  default export): {"__claude_tap_compact_trace__": {"version": 1, ...},
  "records": [...], "blobs": {hash: {"kind": "json", "payload": ...}}}, where
  a record may be {"__claude_tap_compact_record__": {"refs": [{"path"}]},
  "record": ...} with large repeated values (the tools, each message) replaced
  by {"__claude_tap_blob_ref__": {"hash", ...}} (a record of an early bundle
  lists no "refs": its references are found where they stand).

Its other JSON export (`--format json`) is read too: a list of {turn,
timestamp, model, system?, tools?, messages, response: {content, usage,
stop_reason}}; it keeps neither path, status nor the reply's id, so a reply
without content (count_tokens, an error) is what is skipped, and a
transcript is matched to it by order only.

Kept: POSTs to /v1/messages answered 2xx; the rest is counted in a warning.
In capture-only mode (its prompt export) claude-tap answers every call itself
with a made-up reply (id "msg_claude_tap_capture", text "captured", usage 0):
the bodies are real, those replies are not, so their usage is left out and a
warning says so.
"""

from __future__ import annotations

from typing import Any, Mapping

from ctxview.model import Session
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.capture_reading import read_log, requests_of_file
from ctxview.formats.parsing.jsonio import Input
from ctxview.plain_number import plain_number
from ctxview.formats.parsing.request_threads import requests_session
from ctxview.formats.sent_requests import Seen, TraceRequest, body_object, build_request, header, iso_text, message_from_events, \
    skip_reason

__all__ = ["FORMAT", "read_requests", "trace_requests"]

FORMAT = "claude-tap"
EXPECTED = "claude-tap trace"
BUNDLE = "__claude_tap_compact_trace__"
COMPACT_RECORD = "__claude_tap_compact_record__"
BLOB_REF = "__claude_tap_blob_ref__"
CAPTURE_ONLY_ID = "msg_claude_tap_capture"  # proxy.py capture_only_response: a reply upstream never gave
_MAX_REF_DEPTH = 8   # claude-tap's refs are /request/body/messages/<i> and the like: four steps
_FOUND_DEPTH = 4     # where an early bundle's references (no "refs" list) are looked for


# --- sniffing ------------------------------------------------------------------------------

def sniff_record(rec: Any) -> bool:
    if type(rec) is not dict or "turn" not in rec or "response" not in rec:
        return False
    req = rec.get("request")
    return type(req) is dict and "path" in req and "method" in req and "url" not in req


def _export_item(item: Any) -> bool:
    return type(item) is dict and "turn" in item and "messages" in item and isinstance(item.get("response"), dict)


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, list):  # `claude-tap export --format json`
        return bool(doc) and all(_export_item(x) for x in doc[:50])
    return (isinstance(doc, dict) and isinstance(doc.get(BUNDLE), dict)) or sniff_record(doc)


def _from_export(item: Any) -> Any:
    """An item of `claude-tap export --format json` ({turn, timestamp, model, system?, tools?, messages,
    response: {content, usage, stop_reason}}) as the record it was made from. The export drops the
    path, the status and the reply's id: a call whose reply has no content (count_tokens, an error)
    is told by that alone."""
    if type(item) is not dict or type(item.get("response")) is not dict:
        return item
    body = {k: item[k] for k in ("model", "system", "tools", "messages") if k in item}
    reply = item["response"]
    content = reply.get("content")
    message = {"type": "message", "role": "assistant", "model": item.get("model"), "content": content,
               "usage": reply.get("usage"), "stop_reason": reply.get("stop_reason")} if content else None
    return {"timestamp": item.get("timestamp"), "turn": item.get("turn"),
            "request": {"method": "POST", "path": "/v1/messages", "body": body},
            "response": {"status": 200, "body": message}}


# --- the compact bundle --------------------------------------------------------------------

def _blob(name: str, where: str, ref: Any, blobs: Mapping[str, Any]) -> Any:
    info = ref.get(BLOB_REF) if isinstance(ref, dict) else None
    key = info.get("hash") if isinstance(info, dict) else None
    blob = blobs.get(key) if isinstance(key, str) else None
    if not isinstance(blob, dict) or "payload" not in blob:
        shown = key[:80] if isinstance(key, str) else "?"
        raise LoadError(name, f"{where}: blob {shown} is not in the bundle's \"blobs\"", expected=EXPECTED)
    return blob["payload"]


def _resolve(name: str, where: str, record: Any, path: Any, blobs: Mapping[str, Any]) -> Any:
    """`record` with the blob reference at `path` ("/request/body/messages/3") replaced by its value."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise LoadError(name, f"{where}: a blob reference's path must be a string starting with \"/\"", expected=EXPECTED)
    steps = [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]
    if len(steps) > _MAX_REF_DEPTH:
        raise LoadError(name, f"{where}: blob reference path {path[:80]!r} is deeper than {_MAX_REF_DEPTH} steps",
                        expected=EXPECTED)
    root = record
    parents: list[tuple[Any, Any]] = []
    node = root
    for step in steps:
        if isinstance(node, dict) and step in node:
            parents.append((node, step))
            node = node[step]
        elif isinstance(node, list) and (index := plain_number(step)) is not None and index < len(node):
            parents.append((node, index))
            node = node[index]
        else:
            return record  # (claude-tap's reader leaves a path that leads nowhere as it is)
    if not (isinstance(node, dict) and set(node) == {BLOB_REF}):
        return record
    value = _blob(name, f"{where} {path[:80]}", node, blobs)
    # copy the containers on the path: a blob's payload is shared between records
    for k in range(len(parents) - 1, -1, -1):
        container, key = parents[k]
        copy = dict(container) if isinstance(container, dict) else list(container)
        copy[key] = value
        value = copy
    return value


def _resolve_found(name: str, where: str, value: Any, blobs: Mapping[str, Any], depth: int) -> Any:
    """`value` with every blob reference in its first `depth` levels replaced by its value."""
    if isinstance(value, dict):
        if set(value) == {BLOB_REF}:
            return _blob(name, where, value, blobs)
        if depth > 0:
            return {k: _resolve_found(name, where, v, blobs, depth - 1) for k, v in value.items()}
    elif isinstance(value, list) and depth > 0:
        return [_resolve_found(name, where, v, blobs, depth - 1) for v in value]
    return value


def bundle_records(name: str, doc: Mapping[str, Any]) -> list[tuple[int, Any]]:
    """The records of a compact bundle, numbered from 1, their blob references resolved."""
    marker, records, blobs = doc.get(BUNDLE), doc.get("records"), doc.get("blobs", {})
    if not isinstance(marker, dict) or marker.get("version") != 1:
        version = marker.get("version") if isinstance(marker, dict) else None
        raise LoadError(name, f"compact trace bundle version {str(version)[:20]} (ctxview reads version 1)",
                        expected=EXPECTED)
    if not isinstance(records, list) or not isinstance(blobs, dict):
        raise LoadError(name, "a compact trace bundle must hold a \"records\" list and a \"blobs\" object",
                        expected=EXPECTED)
    out = []
    for n, payload in enumerate(records, 1):
        where = f"records[{n - 1}]"
        head = payload.get(COMPACT_RECORD) if isinstance(payload, dict) else None
        if head is None:
            out.append((n, payload))
            continue
        record, refs = payload.get("record"), head.get("refs") if isinstance(head, dict) else None
        if isinstance(refs, list):
            for ref in refs:
                record = _resolve(name, where, record, ref.get("path") if isinstance(ref, dict) else None, blobs)
        else:  # an early bundle: no list of references, they are found where they stand
            record = _resolve_found(name, where, record, blobs, _FOUND_DEPTH)
        out.append((n, record))
    return out


# --- one record ----------------------------------------------------------------------------

def _response_message(response: Mapping[str, Any]) -> tuple[dict | None, bool]:
    """(the response's message, whether it was streamed)."""
    events = response.get("sse_events")
    streaming = isinstance(events, list) or "text/event-stream" in header(response.get("headers"), "content-type")
    body = response.get("body")
    if isinstance(body, Mapping) and isinstance(body.get("content"), list):
        msg = dict(body)
        msg["content"] = [_finished(b) for b in body["content"]]
        if msg.get("id") == CAPTURE_ONLY_ID:
            msg.pop("usage", None)  # claude-tap's zeros, not what a model counted
        return msg, streaming
    if isinstance(events, list):
        return message_from_events(e["data"] for e in events
                                   if isinstance(e, Mapping) and isinstance(e.get("data"), Mapping)), True
    return None, streaming


def _finished(block: Any) -> Any:
    """A tool_use block as the reassembler left it when the stream stopped before content_block_stop:
    its input still the JSON text it had gathered."""
    if isinstance(block, Mapping) and isinstance(block.get("_partial_json"), str):
        done = {k: v for k, v in block.items() if k != "_partial_json"}
        done["input"] = block["_partial_json"]  # (builders.arguments_from decodes the text)
        return done
    return block


def _request(name: str, line: int | None, number: int, rec: Any, seen: Seen) -> TraceRequest | str:
    where = "" if line is not None else f"records[{number - 1}]."
    at = f"records[{number - 1}]: " if where else ""  # (JSON lines: the line number says where)
    if type(rec) is not dict or type(rec.get("request")) is not dict:
        raise LoadError(name, f"{at}expected a claude-tap record: an object with a \"request\" object",
                        line=line, expected=EXPECTED)
    req, response = rec["request"], rec.get("response")
    reason = skip_reason(req.get("method"), req.get("path"), None, isinstance(response, Mapping))
    if reason is None:
        reason = skip_reason(req.get("method"), req.get("path"), response.get("status"), True)
    if reason is not None:
        return reason
    body = body_object(req.get("body"))
    reply, streaming = _response_message(response)
    if reply is None and isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return "response holds no message"
    return build_request(name, f"{where}request.body", line, number, body, reply or {}, streaming,
                         iso_text(rec.get("timestamp")), seen, EXPECTED)


def _records(name: str, doc: Any) -> list[tuple[int | None, int, Any]]:
    if isinstance(doc, dict) and BUNDLE in doc:
        return [(None, n, rec) for n, rec in bundle_records(name, doc)]
    if isinstance(doc, list):
        return [(None, n, _from_export(item)) for n, item in enumerate(doc, 1)]
    return [(1, 1, doc)]  # a trace of one line


def read_requests(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
                  warnings: list[str] | None = None) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in trace order, the skipped records by reason, malformed lines skipped)."""
    return read_log(inp, layout, lenient, doc, warnings, EXPECTED,
                    lambda line, number, rec, seen: _request(inp.name, line, number, rec, seen),
                    lambda d: _records(inp.name, d))


def trace_requests(path: Any) -> list[TraceRequest]:
    """The kept requests of the claude-tap trace or bundle at `path` (LoadError for bad input)."""
    return requests_of_file(path, EXPECTED, sniff_document,
                            "not a claude-tap trace (expected records or a compact trace bundle)", read_requests)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    warnings: list[str] = []
    requests, skipped, malformed = read_requests(inp, layout, lenient, doc, warnings)
    made_up = sum(r.reply.id == CAPTURE_ONLY_ID for r in requests)
    if made_up:
        warnings.append(f"{made_up} repl(ies) made up by claude-tap's capture-only mode ({CAPTURE_ONLY_ID}): "
                        "the request bodies are real, those replies and their usage are not")
    return requests_session(inp.name, FORMAT, EXPECTED, requests, skipped, malformed, warnings,
                            what="recorded call(s)")


SESSION_FORMAT = ModuleFormat(FORMAT, "claude-tap trace (JSONL) or compact bundle (.ctap.json)", EXPECTED, 46, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
