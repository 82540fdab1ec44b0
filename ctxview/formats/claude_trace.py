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

Each kept pair becomes a sent_requests.TraceRequest; request_threads.py
makes conversations of them (shared history, compactions, microcompactions),
as it does for the other capture logs (claude_tap.py, context_lens.py, har.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from ctxview.model import Session
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.capture_reading import read_log, requests_of_file
from ctxview.formats.parsing.jsonio import Input
from ctxview.formats.parsing.request_threads import (
    COMPACTION_OPENING,
    group_requests,
    requests_session,
)
from ctxview.formats.sent_requests import (Seen, TraceRequest, build_request, iso_seconds, message_from_events, message_key,
                            skip_reason, sse_events)

__all__ = ["COMPACTION_OPENING", "FORMAT", "TraceRequest", "group_requests", "message_from_events", "message_key",
           "read_requests", "trace_requests"]

FORMAT = "claude-trace"
EXPECTED = "claude-trace log"


# --- sniffing ------------------------------------------------------------------------------

def sniff_record(rec: Any) -> bool:
    if type(rec) is not dict or "logged_at" not in rec:
        return False
    req = rec.get("request")
    return type(req) is dict and "url" in req and "body" in req and "response" in rec


def sniff_document(doc: Any) -> bool:
    return sniff_record(doc)  # a log of one line parses as one document


# --- one line ------------------------------------------------------------------------------

def _response_message(response: Mapping[str, Any]) -> tuple[dict | None, bool]:
    """(the response's message, whether it was streamed)."""
    raw = response.get("body_raw")
    if isinstance(raw, str):
        return message_from_events(sse_events(raw)), True
    events = response.get("events")
    if isinstance(events, list):  # claude-trace's parsed form: [{"event", "data", "timestamp"}]
        return message_from_events(e["data"] for e in events if isinstance(e, Mapping) and isinstance(e.get("data"), Mapping)), True
    body = response.get("body")
    if isinstance(body, Mapping) and isinstance(body.get("content"), list):
        return dict(body), False
    return None, False


def _skip_reason(rec: Mapping[str, Any]) -> str | None:
    """Why a well-formed pair is not a request of a conversation, or None: it is one."""
    req, response = rec["request"], rec.get("response")
    reason = skip_reason(req.get("method"), req.get("url"), None, response is not None)
    if reason is not None:
        return reason
    if not isinstance(response, Mapping):
        return "response not an object"
    return skip_reason(req.get("method"), req.get("url"), response.get("status_code"), True)


def _request(name: str, line: int, rec: Any, seen: Seen) -> TraceRequest | str:
    """The TraceRequest of one log line, or why it is skipped; LoadError for a line that is not a pair."""
    if type(rec) is not dict or type(rec.get("request")) is not dict:
        raise LoadError(name, "expected a request/response pair: an object with a \"request\" object",
                        line=line, expected=EXPECTED)
    reason = _skip_reason(rec)
    if reason is not None:
        return reason
    body = rec["request"]["body"]
    reply, streaming = _response_message(rec["response"])
    if reply is None and isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return "response holds no message"  # (a body that is no Messages request is refused first)
    ts = iso_seconds(rec["response"].get("timestamp")) or iso_seconds(rec["request"].get("timestamp"))
    return build_request(name, "request.body", line, line, body, reply or {}, streaming, ts, seen, EXPECTED)


def read_requests(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
                  warnings: list[str] | None = None) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in log order, the skipped pairs by reason, malformed lines skipped (lenient:
    their warning goes to `warnings`))."""
    return read_log(inp, layout, lenient, doc, warnings, EXPECTED,
                    lambda line, number, rec, seen: _request(inp.name, number, rec, seen))


def trace_requests(path: Any) -> list[TraceRequest]:
    """The kept requests of the claude-trace log at `path`, in log order (LoadError for bad input)."""
    return requests_of_file(path, EXPECTED, sniff_document, "not a claude-trace log (expected request/response pairs)",
                            read_requests)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    warnings: list[str] = []
    requests, skipped, malformed = read_requests(inp, layout, lenient, doc, warnings)
    return requests_session(inp.name, FORMAT, EXPECTED, requests, skipped, malformed, warnings)


SESSION_FORMAT = ModuleFormat(FORMAT, "claude-trace log (JSONL)", EXPECTED, 45, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
