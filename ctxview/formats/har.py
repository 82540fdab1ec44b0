"""HAR (HTTP Archive 1.2) files of Messages API calls: what a proxy or a browser recorded.

A HAR is one JSON document (W3C HAR 1.2 as browsers and proxies write it,
mitmproxy's `save.har` and hardump among them):

    {"log": {"version": "1.2", "creator": {...}, "entries": [
        {"startedDateTime", "request": {"method", "url", "headers": [{"name", "value"}],
                                        "postData": {"mimeType", "text"}},
         "response": {"status", "headers", "content": {"mimeType", "text", "encoding"?}}, ...}]}}

Kept: POSTs to .../v1/messages answered 2xx whose postData.text is the JSON
request body and whose response content text is the reply: the JSON message,
or the SSE text of a streamed one (text/event-stream); content base64-encoded
(`"encoding": "base64"`, what mitmproxy writes for a body it takes for binary)
is decoded (and so is a postData that says the same, which some writers do).
Entries without a response (status 0), without the body's text or
the reply's, and every other call are counted in a warning. The "trace line"
of a request is its entry's number (1-based) in log.entries.
"""

from __future__ import annotations

import binascii
from typing import Any, Mapping

import orjson

from ctxview.model import Session
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.capture_reading import read_log, requests_of_file
from ctxview.formats.parsing.json_decode import loads
from ctxview.formats.parsing.jsonio import Input, document_only
from ctxview.formats.parsing.request_threads import requests_session
from ctxview.formats.sent_requests import Seen, TraceRequest, body_object, build_request, header, iso_text, message_from_events, \
    skip_reason, sse_events

__all__ = ["FORMAT", "read_requests", "trace_requests"]

FORMAT = "har"
EXPECTED = "HAR (HTTP Archive) file"


def sniff_document(doc: Any) -> bool:
    log = doc.get("log") if isinstance(doc, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list) and ("version" in log or "creator" in log)


def _text(name: str, where: str, content: Mapping[str, Any]) -> str | bytes | None:
    """The text of a postData or content object (`where`: its place), base64 decoded where it says so:
    bytes when those are not UTF-8 (a binary body); LoadError for text that is not base64."""
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") != "base64":
        return text
    try:
        raw = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (ValueError, binascii.Error, UnicodeError):
        raise LoadError(name, f"{where}.text: \"encoding\" says base64, but the text is not base64",
                        expected=EXPECTED) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _response_message(text: str, mime: str) -> tuple[dict | None, bool]:
    """(the message of a response's content text, whether it was streamed)."""
    if "event-stream" in mime or not text.lstrip().startswith("{"):
        return message_from_events(sse_events(text)), True
    try:
        msg = loads(text)
    except orjson.JSONDecodeError:
        return None, False
    return (msg, False) if isinstance(msg, dict) and isinstance(msg.get("content"), list) else (None, False)


def _request(name: str, number: int, entry: Any, seen: Seen) -> TraceRequest | str:
    where = f"log.entries[{number - 1}]"
    if type(entry) is not dict or type(entry.get("request")) is not dict:
        raise LoadError(name, f"{where}: expected a HAR entry with a \"request\" object", expected=EXPECTED)
    req, response = entry["request"], entry.get("response")
    status = response.get("status") if isinstance(response, dict) else None
    reason = skip_reason(req.get("method"), req.get("url"), status, isinstance(response, dict) and status != 0)
    if reason is not None:
        return reason
    post = req.get("postData")
    text = _text(name, f"{where}.request.postData", post) if isinstance(post, dict) else None
    if isinstance(text, bytes):
        raise LoadError(name, f"{where}.request.postData.text: the body is not UTF-8 text", expected=EXPECTED)
    if not text:
        return "no request body recorded (postData.text)"
    content = response.get("content")
    reply_text = _text(name, f"{where}.response.content", content) if isinstance(content, dict) else None
    if reply_text is None:
        return "no response body recorded (content.text)"
    if isinstance(reply_text, bytes):
        return "binary response (not JSON or SSE text: an AWS event stream?)"
    body = body_object(text)
    mime = header(response.get("headers"), "content-type") or (content.get("mimeType") or "")
    reply, streaming = _response_message(reply_text, mime if isinstance(mime, str) else "")
    if reply is None and isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return "response holds no message"
    return build_request(name, f"{where}.request.postData.text", None, number, body, reply or {}, streaming,
                         iso_text(entry.get("startedDateTime")), seen, EXPECTED)


def _entries(name: str, doc: Any) -> list[tuple[int | None, int, Any]]:
    if not sniff_document(doc):
        raise LoadError(name, "expected a HAR document: {\"log\": {\"version\", \"entries\": [...]}}",
                        expected=EXPECTED)
    return [(None, n, entry) for n, entry in enumerate(doc["log"]["entries"], 1)]


def read_requests(inp: Input, layout: str, lenient: bool = False, doc: Any = None,
                  warnings: list[str] | None = None) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in entry order, the skipped entries by reason, 0: a HAR has no lines to skip)."""
    doc = document_only(inp, layout, doc, "a HAR file", EXPECTED)
    return read_log(inp, "json", lenient, doc, warnings, EXPECTED,
                    lambda line, number, entry, seen: _request(inp.name, number, entry, seen),
                    lambda d: _entries(inp.name, d))


def trace_requests(path: Any) -> list[TraceRequest]:
    """The kept requests of the HAR file at `path` (LoadError for bad input)."""
    return requests_of_file(path, EXPECTED, sniff_document, "not a HAR file (expected {\"log\": {\"entries\": [...]}})",
                            read_requests)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    requests, skipped, _ = read_requests(inp, layout, lenient, doc)
    return requests_session(inp.name, FORMAT, EXPECTED, requests, skipped, what="HAR entr(ies)")


SESSION_FORMAT = ModuleFormat(FORMAT, "HAR (HTTP Archive 1.2) of Messages API calls", EXPECTED, 44, load,
                              sniff_document=sniff_document)
