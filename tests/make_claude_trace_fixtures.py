"""Writes tests/fixtures/claude_trace/ (hand-written for ctxview; run it to rebuild them).

trace.jsonl: a claude-trace log (badlogic/lemmy apps/claude-trace's RawPair lines) of one short
Claude Code session, and transcript.jsonl: the Claude Code transcript of the same session.

    line 1  count_tokens call                          (skipped: not a conversation's request)
    line 2  haiku topic check, tiny system prompt      (a side conversation; JSON response)
    line 3  main request 1: the user's prompt          (SSE; the transcript reconstructs it exactly)
    line 4  main request 2: + Read's result and a <system-reminder> block Claude Code appended to the
            user turn (SSE; the transcript does not store the reminder)
    line 5  a Task sub-agent's request                 (its own system prompt; JSON response)
    line 6  main request 3, answered 529               (skipped: an error; line 7 retries it)
    line 7  main request 3: + Bash's result; Read's result microcompacted to Claude Code's
            placeholder (JSON response; the transcript records no microcompact_boundary)
    line 8  an orphaned request (no response)         (skipped)
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent / "fixtures" / "claude_trace"
URL = "https://api.anthropic.com/v1/messages?beta=true"
MODEL = "claude-sonnet-4-5-20250929"
SYSTEM = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.",
           "cache_control": {"type": "ephemeral"}},
          {"type": "text", "text": "You are an interactive CLI tool that helps users with software engineering tasks."}]
TOOLS = [{"name": "Read", "description": "Reads a file.", "input_schema": {
              "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}},
         {"name": "Bash", "description": "Runs a command.", "input_schema": {
              "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
T0 = 1767225600.0  # 2026-01-01T00:00:00Z
SESSION = "7f1c2a9e-0000-4000-8000-00000000c7ace"
PROMPT = "The parser drops the last token. Fix it."
READ_OUT = "def parse(tokens):\n    return tokens[:-1]\n"
BASH_OUT = "1 failed, 4 passed"
REMINDER = ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. Consider using it to track "
            "progress.\n</system-reminder>")
PLACEHOLDER = "[Old tool result content cleared]"


def sse(message: dict, blocks: list[dict], usage_out: int) -> str:
    """The SSE text of a streamed response building `blocks` (text and tool_use, in pieces)."""
    events = [("message_start", {"type": "message_start", "message": {**message, "content": []}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            half = len(b["text"]) // 2
            for piece in (b["text"][:half], b["text"][half:]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            raw = json.dumps(b["input"])
            for piece in (raw[:5], raw[5:]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                     "usage": {"output_tokens": usage_out}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def pair(t: float, body: dict, response: dict | None, url: str = URL) -> dict:
    rec = {"request": {"timestamp": t, "method": "POST", "url": url,
                       "headers": {"content-type": "application/json", "x-api-key": "sk-ant-...REDACTED"},
                       "body": body},
           "response": response, "logged_at": f"2026-01-01T00:00:{int(t - T0) + 1:02d}.000Z"}
    if response is None:
        rec["note"] = "ORPHANED_REQUEST - No matching response received"
    return rec


def streamed(t: float, message: dict, blocks: list[dict], out: int) -> dict:
    return {"timestamp": t, "status_code": 200, "headers": {"content-type": "text/event-stream"},
            "body_raw": sse(message, blocks, out)}


def json_response(t: float, body: dict) -> dict:
    return {"timestamp": t, "status_code": 200, "headers": {"content-type": "application/json"}, "body": body}


def usage(inp: int, read: int, write: int, out: int = 0) -> dict:
    return {"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
            "output_tokens": out}


def main() -> None:
    reply1 = [{"type": "text", "text": "Let me read the parser."},
              {"type": "tool_use", "id": "toolu_01Read", "name": "Read", "input": {"file_path": "parser.py"}}]
    reply2 = [{"type": "tool_use", "id": "toolu_02Bash", "name": "Bash", "input": {"command": "pytest -q"}}]
    reply3 = [{"type": "text", "text": "The slice drops the last token; it should return tokens whole."}]
    user1 = {"role": "user", "content": [{"type": "text", "text": PROMPT, "cache_control": {"type": "ephemeral"}}]}
    msgs1 = [user1]
    msgs2 = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]},
             {"role": "assistant", "content": reply1},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Read", "content": READ_OUT},
                                          {"type": "text", "text": REMINDER, "cache_control": {"type": "ephemeral"}}]}]
    msgs3 = [msgs2[0], msgs2[1],
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Read", "content": PLACEHOLDER},
                                          {"type": "text", "text": REMINDER}]},
             {"role": "assistant", "content": reply2},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02Bash", "content": BASH_OUT,
                                           "cache_control": {"type": "ephemeral"}}]}]
    body = {"model": MODEL, "max_tokens": 32000, "system": SYSTEM, "tools": TOOLS, "stream": True}
    side_body = {"model": "claude-haiku-4-5-20251001", "max_tokens": 512,
                 "system": [{"type": "text", "text": "Analyze if this message indicates a new conversation topic."}],
                 "messages": [{"role": "user", "content": PROMPT}]}
    agent_body = {"model": MODEL, "max_tokens": 32000, "tools": TOOLS[:1],
                  "system": [{"type": "text", "text": "You are an agent for Claude Code. Search the code base."}],
                  "messages": [{"role": "user", "content": "Find where tokens are sliced."}]}
    lines = [
        pair(T0, {"model": MODEL, "messages": msgs1, "tools": TOOLS},
             json_response(T0 + 0.2, {"input_tokens": 2911}), url="https://api.anthropic.com/v1/messages/count_tokens"),
        pair(T0 + 1, side_body, json_response(T0 + 1.5, {
            "id": "msg_01Side", "type": "message", "role": "assistant", "model": side_body["model"],
            "content": [{"type": "text", "text": '{"isNewTopic": true, "title": "Parser fix"}'}],
            "stop_reason": "end_turn", "usage": usage(40, 0, 0, 18)})),
        pair(T0 + 2, {**body, "messages": msgs1}, streamed(T0 + 4, {
            "id": "msg_01Main", "type": "message", "role": "assistant", "model": MODEL,
            "usage": usage(3, 0, 2950, 1)}, reply1, 61)),
        pair(T0 + 6, {**body, "messages": msgs2}, streamed(T0 + 8, {
            "id": "msg_02Main", "type": "message", "role": "assistant", "model": MODEL,
            "usage": usage(5, 2950, 120, 1)}, reply2, 44)),
        pair(T0 + 9, agent_body, json_response(T0 + 10, {
            "id": "msg_01Agent", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": "parser.py line 2 slices tokens[:-1]."}],
            "stop_reason": "end_turn", "usage": usage(300, 0, 0, 12)})),
        pair(T0 + 11, {**body, "messages": msgs3}, {"timestamp": T0 + 11.5, "status_code": 529,
                                                    "headers": {"content-type": "application/json"},
                                                    "body": {"type": "error", "error": {"type": "overloaded_error"}}}),
        pair(T0 + 12, {**body, "stream": False, "messages": msgs3}, json_response(T0 + 14, {
            "id": "msg_03Main", "type": "message", "role": "assistant", "model": MODEL, "content": reply3,
            "stop_reason": "end_turn", "usage": usage(4, 3070, 60, 25)})),
        pair(T0 + 20, {**body, "messages": msgs1}, None),
    ]
    with open(HERE / "trace.jsonl", "w") as f:
        for rec in lines:
            f.write(json.dumps(rec) + "\n")

    # The transcript Claude Code wrote for the same session: one line per block, no reminder, no
    # microcompact_boundary.
    out = []
    parent = None

    def add(rec: dict, t: float) -> None:
        nonlocal parent
        uuid = f"{len(out) + 1:08d}-0000-4000-8000-000000000000"
        out.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/parser",
                    "sessionId": SESSION, "version": "2.0.30", "uuid": uuid,
                    "timestamp": f"2026-01-01T00:00:{int(t - T0):02d}.000Z", **rec})
        parent = uuid

    def assistant(mid: str, blocks: list[dict], u: dict, t: float) -> None:
        for b in blocks:
            add({"type": "assistant", "message": {"id": mid, "type": "message", "role": "assistant", "model": MODEL,
                                                  "content": [b], "usage": u}}, t)

    add({"type": "user", "message": {"role": "user", "content": PROMPT}}, T0 + 2)
    assistant("msg_01Main", reply1, usage(3, 0, 2950, 61), T0 + 4)
    add({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01Read", "content": READ_OUT}]}}, T0 + 5)
    assistant("msg_02Main", reply2, usage(5, 2950, 120, 44), T0 + 8)
    add({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_02Bash", "content": BASH_OUT}]}}, T0 + 11)
    assistant("msg_03Main", reply3, usage(4, 3070, 60, 25), T0 + 14)
    with open(HERE / "transcript.jsonl", "w") as f:
        for rec in out:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
