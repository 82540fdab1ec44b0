"""context-lens LHAR files (larsderidder/context-lens): the API calls its proxy captured.

LHAR, "LLM HTTP Archive" (its docs/LHAR.md and schema/lhar.schema.json,
version 0.1.0), comes in two packagings of one record:

- `.lhar`, JSON lines, what context-lens writes to ~/.context-lens/data/
  (<tool>-<conversation>.lhar): a {"type": "session", "trace_id", "started_at",
  "tool", "model"} line, then one {"type": "entry", ...} line per call;
- `.lhar.json`, its export: {"lhar": {"version", "creator", "sessions",
  "entries": [...]}}.

An entry holds `http` {method, url, status_code, api_format, stream, ...},
`gen_ai` and `usage_ext` (usage), `context_lens` (its own analysis) and
`raw` {request_body, response_body}: the request body as sent, and the
response (the message, or the SSE text of a streamed one). context-lens
fills `raw` only at privacy level "full" (`--privacy=full`); otherwise both
are null and there is nothing as sent to show, which the error says. Its
docs warn that the export (`.lhar.json`) may lack `raw` even then: the
`.lhar` files are the ones that keep it.

Kept: Anthropic Messages calls (api_format "anthropic-messages", POST
/v1/messages, 2xx) with both bodies; the rest is counted in a warning.
"""

from __future__ import annotations

from typing import Any, Mapping

from ctxview.model import Session
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.capture_reading import read_log, requests_of_file
from ctxview.formats.parsing.jsonio import Input
from ctxview.formats.parsing.request_threads import requests_session
from ctxview.formats.sent_requests import Seen, TraceRequest, body_object, build_request, iso_text, message_from_events, \
    skip_reason, sse_events

__all__ = ["FORMAT", "read_requests", "trace_requests"]

FORMAT = "context-lens"
EXPECTED = "context-lens LHAR file"
ANTHROPIC = "anthropic-messages"
NO_RAW = "no request body (context-lens records bodies only at --privacy=full)"


# --- sniffing ------------------------------------------------------------------------------

def sniff_record(rec: Any) -> bool:
    if type(rec) is not dict or not isinstance(rec.get("trace_id"), str):
        return False
    kind = rec.get("type")
    if kind == "entry":
        return isinstance(rec.get("gen_ai"), dict) or isinstance(rec.get("raw"), dict)
    return kind == "session" and "started_at" in rec and "tool" in rec


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict) and isinstance(doc.get("lhar"), dict):
        return isinstance(doc["lhar"].get("entries"), list)
    return sniff_record(doc)


# --- one entry -----------------------------------------------------------------------------

def _response_message(raw: Any) -> tuple[dict | None, bool]:
    """(the message of `raw.response_body`, whether it was streamed)."""
    if isinstance(raw, str):
        return message_from_events(sse_events(raw)), True
    if isinstance(raw, Mapping) and isinstance(raw.get("content"), list):
        return dict(raw), False
    return None, False


def _request(name: str, line: int | None, number: int, rec: Any, seen: Seen) -> TraceRequest | str | None:
    """The TraceRequest of one record, why it is skipped, or None for a session line."""
    where = "" if line is not None else f"lhar.entries[{number - 1}]."
    at = f"lhar.entries[{number - 1}]: " if where else ""  # (JSON lines: the line number says where)
    if type(rec) is not dict:
        raise LoadError(name, f"{at}expected an LHAR record (an object)", line=line, expected=EXPECTED)
    kind = rec.get("type")
    if kind == "session" and line is not None:
        return None
    if kind != "entry":
        return f"record type {str(kind)[:20]}"
    http, raw = rec.get("http"), rec.get("raw")
    if not isinstance(http, dict) or not isinstance(raw, dict):
        raise LoadError(name, f"{at}expected an LHAR entry with \"http\" and \"raw\" objects",
                        line=line, expected=EXPECTED)
    api = http.get("api_format")
    if isinstance(api, str) and api != ANTHROPIC:
        return f"api_format {api[:30]}"
    url = http.get("url") if isinstance(http.get("url"), str) else "/v1/messages" if api == ANTHROPIC else None
    reason = skip_reason(http.get("method"), url, http.get("status_code"), True)
    if reason is not None:
        return reason
    body = body_object(raw.get("request_body"))
    if body is None:
        return NO_RAW
    reply, streaming = _response_message(raw.get("response_body"))
    if reply is None and isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return "no response message recorded"
    return build_request(name, f"{where}raw.request_body", line, number, body, reply or {},
                         streaming or http.get("stream") is True, iso_text(rec.get("timestamp")), seen, EXPECTED)


def _entries(name: str, doc: Any) -> list[tuple[int | None, int, Any]]:
    lhar = doc.get("lhar") if isinstance(doc, dict) else None
    if not isinstance(lhar, dict):
        return [(1, 1, doc)]  # an .lhar of one line
    entries = lhar.get("entries")
    if not isinstance(entries, list):
        raise LoadError(name, "lhar.entries: expected a list", expected=EXPECTED)
    return [(None, n, rec) for n, rec in enumerate(entries, 1)]


def read_requests(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
                  warnings: list[str] | None = None) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in file order, the skipped entries by reason, malformed lines skipped)."""
    return read_log(inp, layout, lenient, doc, warnings, EXPECTED,
                    lambda line, number, rec, seen: _request(inp.name, line, number, rec, seen),
                    lambda d: _entries(inp.name, d))


def trace_requests(path: Any) -> list[TraceRequest]:
    """The kept requests of the LHAR file at `path` (LoadError for bad input)."""
    return requests_of_file(path, EXPECTED, sniff_document,
                            "not an LHAR file (expected LHAR lines or {\"lhar\": {...}})", read_requests)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    warnings: list[str] = []
    requests, skipped, malformed = read_requests(inp, layout, lenient, doc, warnings)
    return requests_session(inp.name, FORMAT, EXPECTED, requests, skipped, malformed, warnings,
                            what="LHAR entr(ies)")


SESSION_FORMAT = ModuleFormat(FORMAT, "context-lens LHAR (.lhar JSONL or .lhar.json)", EXPECTED, 47, load,
                              sniff_record=sniff_record, sniff_document=sniff_document)
