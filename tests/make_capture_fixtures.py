"""Writes tests/fixtures/captures/ (hand-written for ctxview; run it to rebuild them).

The claude-trace fixture's session (tests/fixtures/claude_trace/trace.jsonl: a side call, three main
requests, a sub-agent, a count_tokens call, a 529 and an orphaned request) as each other capture
tool records it, shaped after the writers' own code (no code or data of theirs copied):

    claude-tap.jsonl        liaohch3/claude-tap, claude_tap/proxy.py `_build_record` (its trace files,
                            `.traces/<date>/trace_<time>.jsonl`): the response body is the message its
                            SSEReassembler rebuilds; line 3 also keeps `sse_events`
                            (--tap-store-stream-events). No orphan: claude-tap writes a record once the
                            response is in.
    claude-tap.ctap.json    the same records as claude-tap's compact bundle (claude_tap/compact_trace.py):
                            the tools and each message of at least BLOB_BYTES of JSON as blob references.
                            claude-tap's threshold is 512 bytes; this fixture's records are small, so it
                            uses 64 to hold references (the reader does not depend on the threshold).
    claude-tap.export.json  the same records as `claude-tap export --format json` writes them
                            (claude_tap/export.py `_export_json`): no path, status or reply id.
    context-lens.lhar       larsderidder/context-lens, src/lhar/record.ts `buildLharRecord` at privacy
                            "full" (raw bodies kept): a session line, then one entry per call
                            (the response body: the SSE text of a streamed call, else the JSON).
    context-lens.lhar.json  the same entries as its export (src/lhar/export.ts `toLharJson`).
    anthropic.har           HAR 1.2 as mitmproxy's save.har writes it (mitmproxy/addons/savehar.py):
                            postData.text the body, content.text the response; the sub-agent's reply
                            base64-encoded, the orphan with status 0, and a GET /v1/models.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).parent / "fixtures"
OUT = HERE / "captures"
TRACE = HERE / "claude_trace" / "trace.jsonl"
BLOB_BYTES = 64


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat()


def sse_data(raw: str) -> list[tuple[str, dict]]:
    events, name = [], None
    for line in raw.splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            events.append((name, json.loads(line[5:])))
    return events


def reassemble(raw: str) -> dict:
    """The message claude-tap's SSEReassembler keeps for a stream (its `_accumulate`, Anthropic events)."""
    snap: dict = {}
    for name, data in sse_data(raw):
        if name == "message_start":
            snap = copy.deepcopy(data["message"])
        elif name == "content_block_start":
            snap.setdefault("content", []).append(copy.deepcopy(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = snap["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "input_json_delta":
                block["_partial_json"] = block.get("_partial_json", "") + delta["partial_json"]
        elif name == "content_block_stop":
            block = snap["content"][data["index"]]
            if "_partial_json" in block:
                block["input"] = json.loads(block.pop("_partial_json"))
        elif name == "message_delta":
            snap.update(data["delta"])
            snap.setdefault("usage", {}).update(data["usage"])
    return snap


def tap_records(pairs: list[dict]) -> list[dict]:
    out = []
    for n, p in enumerate(pairs, 1):
        req, resp = p["request"], p["response"]
        if resp is None:
            continue
        url = urlsplit(req["url"])
        streamed = "body_raw" in resp
        rec = {"timestamp": iso(req["timestamp"]), "request_id": f"req_{n:04d}", "turn": len(out) + 1,
               "duration_ms": int((resp["timestamp"] - req["timestamp"]) * 1000),
               "request": {"method": req["method"], "path": url.path + (f"?{url.query}" if url.query else ""),
                           "headers": {"Content-Type": "application/json", "x-api-key": "sk-ant-api03..."},
                           "body": req["body"]},
               "response": {"status": resp["status_code"],
                            "headers": {"Content-Type": resp["headers"]["content-type"]},
                            "body": reassemble(resp["body_raw"]) if streamed else resp["body"]},
               "upstream_base_url": "https://api.anthropic.com",
               "capture": {"client": "claude", "proxy_mode": "reverse"}}
        if streamed and n == 3:
            rec["response"]["sse_events"] = [{"event": name, "data": data} for name, data in sse_data(resp["body_raw"])]
        out.append(rec)
    return out


def json_export(records: list[dict]) -> list[dict]:
    out = []
    for r in records:
        body, reply = r["request"]["body"], r["response"]["body"]
        item = {"turn": r["turn"], "timestamp": r["timestamp"], "duration_ms": r["duration_ms"],
                "model": body.get("model"),
                "messages": body["messages"] if isinstance(body.get("messages"), list) else [],
                "response": {"content": reply["content"] if isinstance(reply.get("content"), list) else [],
                             "usage": reply.get("usage") or {}, "stop_reason": reply.get("stop_reason")}}
        for key in ("system", "tools"):
            if body.get(key):
                item[key] = body[key]
        out.append(item)
    return out


def blob_ref(value, blobs: dict) -> dict | None:
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if len(raw) < BLOB_BYTES:
        return None
    key = "sha256:" + hashlib.sha256(raw).hexdigest()
    blobs.setdefault(key, {"kind": "json", "bytes": len(raw), "payload": value})
    return {"__claude_tap_blob_ref__": {"version": 1, "kind": "json", "hash": key, "bytes": len(raw)}}


def compact(records: list[dict]) -> dict:
    blobs: dict = {}
    out = []
    for rec in records:
        rec, refs = copy.deepcopy(rec), []
        body = rec["request"]["body"]
        if "tools" in body and (ref := blob_ref(body["tools"], blobs)):
            body["tools"] = ref
            refs.append({"path": "/request/body/tools", "hash": ref["__claude_tap_blob_ref__"]["hash"]})
        for i, m in enumerate(body.get("messages", [])):
            if ref := blob_ref(m, blobs):
                body["messages"][i] = ref
                refs.append({"path": f"/request/body/messages/{i}", "hash": ref["__claude_tap_blob_ref__"]["hash"]})
        out.append({"__claude_tap_compact_record__": {"version": 1, "encoding": "json-blob-ref", "refs": refs},
                    "record": rec} if refs else rec)
    return {"__claude_tap_compact_trace__": {"version": 1, "encoding": "json-blob-ref", "record_count": len(out),
                                             "blob_count": len(blobs)},
            "records": out, "blobs": blobs}


def usage_of(msg: dict | None) -> dict:
    return (msg or {}).get("usage") or {}


def lhar_entries(pairs: list[dict]) -> list[dict]:
    out = []
    for n, p in enumerate(pairs, 1):
        req, resp = p["request"], p["response"]
        if resp is None:
            continue
        streamed = "body_raw" in resp
        msg = reassemble(resp["body_raw"]) if streamed else resp["body"]
        u = usage_of(msg)
        body = req["body"]
        out.append({
            "type": "entry", "id": f"0000{n:04d}-12b6-4abe-b503-510e09a32559", "trace_id": "6590f363c1bc200989bd4ed1956b00bc",
            "span_id": f"{n:016x}", "parent_span_id": None, "timestamp": iso(req["timestamp"]).replace("+00:00", "Z"),
            "sequence": len(out) + 1,
            "source": {"tool": "claude", "tool_version": None, "agent_role": "main", "collector": "context-lens",
                       "collector_version": "0.9.0"},
            "gen_ai": {"system": "anthropic",
                       "request": {"model": body["model"], "max_tokens": body.get("max_tokens"), "temperature": None,
                                   "top_p": None, "stop_sequences": []},
                       "response": {"model": msg.get("model"), "finish_reasons": [msg["stop_reason"]] if msg.get("stop_reason") else []},
                       "usage": {"input_tokens": u.get("input_tokens", 0), "output_tokens": u.get("output_tokens", 0),
                                 "total_tokens": u.get("input_tokens", 0) + u.get("output_tokens", 0)}},
            "usage_ext": {"cache_read_tokens": u.get("cache_read_input_tokens", 0),
                          "cache_write_tokens": u.get("cache_creation_input_tokens", 0), "thinking_tokens": 0,
                          "cost_usd": None},
            "http": {"method": "POST", "url": req["url"], "status_code": resp["status_code"],
                     "api_format": "anthropic-messages", "stream": streamed,
                     "request_headers": {"content-type": "application/json", "user-agent": "claude-cli/2.1.37 (external, cli)"},
                     "response_headers": {"content-type": resp["headers"]["content-type"]}},
            "timings": {"send_ms": 3, "wait_ms": 800, "receive_ms": 400, "total_ms": 1203, "tokens_per_second": None},
            "transfer": {"request_bytes": len(json.dumps(body)), "response_bytes": 900, "compressed": False},
            "context_lens": {"window_size": 200000, "utilization": 0.01, "system_tokens": 40, "tools_tokens": 80,
                             "messages_tokens": 100, "composition": [],
                             "growth": {"tokens_added_this_turn": None, "cumulative_tokens": 220,
                                        "compaction_detected": False},
                             "security": {"alerts": [], "summary": {"high": 0, "medium": 0, "info": 0}}},
            "raw": {"request_body": body, "response_body": resp["body_raw"] if streamed else resp["body"]},
        })
    return out


def har(pairs: list[dict]) -> dict:
    entries = []
    for n, p in enumerate(pairs, 1):
        req, resp = p["request"], p["response"]
        entry = {"startedDateTime": iso(req["timestamp"]), "time": 1200.0,
                 "request": {"method": "POST", "url": req["url"], "httpVersion": "HTTP/1.1", "cookies": [],
                             "headers": [{"name": "content-type", "value": "application/json"},
                                         {"name": "x-api-key", "value": "sk-ant-api03..."}],
                             "queryString": [], "headersSize": 120, "bodySize": len(json.dumps(req["body"])),
                             "postData": {"mimeType": "application/json", "text": json.dumps(req["body"]), "params": []}},
                 "cache": {}, "timings": {"connect": -1.0, "ssl": -1.0, "send": 2.0, "receive": 400.0, "wait": 800.0}}
        if resp is None:
            entry["response"] = {"status": 0, "statusText": "", "httpVersion": "", "headers": [], "cookies": [],
                                 "content": {}, "redirectURL": "", "headersSize": -1, "bodySize": -1,
                                 "_transferSize": 0, "_error": "Client disconnected."}
        else:
            mime = resp["headers"]["content-type"]
            text = resp["body_raw"] if "body_raw" in resp else json.dumps(resp["body"])
            content = {"size": len(text), "compression": 0, "mimeType": mime, "text": text}
            if n == 5:  # what mitmproxy does with a body it takes for binary (and other writers with any)
                content.update(text=base64.b64encode(text.encode()).decode(), encoding="base64")
            entry["response"] = {"status": resp["status_code"], "statusText": "OK", "httpVersion": "HTTP/1.1",
                                 "cookies": [], "headers": [{"name": "content-type", "value": mime}],
                                 "content": content, "redirectURL": "", "headersSize": 90, "bodySize": len(text)}
        entries.append(entry)
    entries.append({"startedDateTime": iso(pairs[-1]["request"]["timestamp"] + 1), "time": 50.0,
                    "request": {"method": "GET", "url": "https://api.anthropic.com/v1/models", "httpVersion": "HTTP/1.1",
                                "cookies": [], "headers": [], "queryString": [], "headersSize": 60, "bodySize": 0},
                    "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                                 "headers": [], "content": {"size": 11, "mimeType": "application/json",
                                                            "text": "{\"data\":[]}"},
                                 "redirectURL": "", "headersSize": 50, "bodySize": 11},
                    "cache": {}, "timings": {"send": 1.0, "receive": 1.0, "wait": 48.0}})
    return {"log": {"version": "1.2", "creator": {"name": "mitmproxy exporthar", "version": "0.1",
                                                  "comment": "mitmproxy version 11.0.0"},
                    "pages": [], "entries": entries}}


def main() -> None:
    pairs = [json.loads(x) for x in TRACE.read_text().splitlines()]
    OUT.mkdir(exist_ok=True)
    records = tap_records(pairs)
    (OUT / "claude-tap.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    (OUT / "claude-tap.export.json").write_text(json.dumps(json_export(records), indent=2, ensure_ascii=False))
    (OUT / "claude-tap.ctap.json").write_text(json.dumps(compact(records), separators=(",", ":")) + "\n")
    entries = lhar_entries(pairs)
    session = {"type": "session", "trace_id": entries[0]["trace_id"], "started_at": entries[0]["timestamp"],
               "tool": "claude", "model": "claude-sonnet-4-5-20250929"}
    (OUT / "context-lens.lhar").write_text("".join(json.dumps(r) + "\n" for r in [session, *entries]))
    wrapped = {"lhar": {"version": "0.1.0", "creator": {"name": "context-lens", "version": "0.9.0"},
                        "sessions": [{k: v for k, v in session.items() if k != "type"}], "entries": entries}}
    (OUT / "context-lens.lhar.json").write_text(json.dumps(wrapped, indent=2) + "\n")
    (OUT / "anthropic.har").write_text(json.dumps(har(pairs), indent=4) + "\n")


if __name__ == "__main__":
    main()
