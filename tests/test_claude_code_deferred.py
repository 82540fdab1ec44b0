"""Deferred tools in Claude Code transcripts: the names announced (deferred_tools_delta attachments) and
the tools ToolSearch loaded (tool_reference blocks) reach the hidden prefix's account (system_block),
the #sys row's note and the report.

The records follow Claude Code 2.1.x: attachment records {"type": "attachment", "attachment":
{"type": "deferred_tools_delta", "addedNames", "addedLines", "removedNames"}} in the parent chain; a
ToolSearch call {"query": "select:...", "max_results": N} answered by tool_reference blocks, with
toolUseResult {"matches", "query", "total_deferred_tools"} (see docs/notes/s21-claude.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

import ctxview.formats.claude_code as claude_code
from ctxview.formats import load_session
from ctxview.pipeline import PipelineCache
from ctxview.engine.system_block import deferred_note, deferred_tools, loaded_definition_tokens
from ctxview.engine.tokens import CharsCounter

C4 = CharsCounter()

SESSION = "8e2f41c7-0b6d-4a9e-b3c5-71d2e9f0a6b4"
LOADED_CONTEXT = 1_120  # what the context grew by between the ToolSearch call and the reply after its result
ANNOUNCED = ["mcp__github__create_issue", "mcp__github__search_issues", "mcp__supabase__execute_sql"]


def write_session(tmp_path: Path) -> Path:
    recs: list[dict] = []
    prev = [None]

    def add(rec: dict, uuid: str) -> None:
        recs.append({"parentUuid": prev[0], "isSidechain": False, "userType": "external", "cwd": "/home/dev/proj",
                     "sessionId": SESSION, "version": "2.1.70", "gitBranch": "main", **rec, "uuid": uuid,
                     "timestamp": f"2026-04-02T09:00:{len(recs):02d}.000Z"})
        prev[0] = uuid

    def assistant(mid: str, block: dict, uuid: str, written: int = 0) -> None:
        add({"type": "assistant", "requestId": "req_" + mid, "message": {
            "model": "claude-opus-4-6", "id": mid, "type": "message", "role": "assistant", "content": [block],
            "usage": {"input_tokens": 3, "output_tokens": 25, "cache_read_input_tokens": 14000,
                      "cache_creation_input_tokens": written}}}, uuid)

    add({"type": "attachment", "attachment": {
        "type": "deferred_tools_delta", "addedNames": [*ANNOUNCED, "mcp__old__gone"],
        "addedLines": [*ANNOUNCED, "mcp__old__gone"], "removedNames": []}}, "d1")
    add({"type": "attachment", "attachment": {
        "type": "deferred_tools_delta", "addedNames": [], "addedLines": [], "removedNames": ["mcp__old__gone"]}}, "d2")
    add({"type": "user", "message": {"role": "user", "content": "open an issue: the build is red"}}, "u1")
    assistant("msg_01S", {"type": "tool_use", "id": "toolu_01Search0000000000000000", "name": "ToolSearch",
                          "input": {"query": "select:mcp__github__create_issue", "max_results": 1},
                          "caller": {"type": "direct"}}, "a1")
    add({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01Search0000000000000000", "type": "tool_result",
         "content": [{"type": "tool_reference", "tool_name": "mcp__github__create_issue"}]}]},
        "toolUseResult": {"matches": ["mcp__github__create_issue"], "query": "select:mcp__github__create_issue",
                          "total_deferred_tools": 3}, "sourceToolAssistantUUID": "a1"}, "u2")
    assistant("msg_01I", {"type": "tool_use", "id": "toolu_01Issue00000000000000000", "name": "mcp__github__create_issue",
                          "input": {"owner": "dev", "repo": "proj", "title": "Build is red"}}, "a2",
              written=LOADED_CONTEXT)  # the request after the load read the definition too
    add({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01Issue00000000000000000", "type": "tool_result",
         "content": [{"type": "text", "text": '{"number": 42, "url": "https://github.com/dev/proj/issues/42"}'}]}]},
        "sourceToolAssistantUUID": "a2"}, "u3")
    assistant("msg_01D", {"type": "text", "text": "Opened issue #42."}, "a3")
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return path


def test_the_file_shows_the_names_sent_and_the_tools_loaded(tmp_path):
    s = load_session(write_session(tmp_path))
    conv = s.conversations[0]
    assert not any("unknown" in w for w in s.warnings)
    assert conv.metadata["deferred_tools"] == {"announced": ANNOUNCED}  # the withdrawn one is gone
    (search,) = [m for m in conv.messages if m.tool_name == "ToolSearch"]
    at = conv.messages.index(search)
    assert search.meta["tool_references"] == ("mcp__github__create_issue",)
    (event,) = [e for e in conv.events if e.kind == "tools_loaded"]
    assert event.index == at + 1 and event.meta["names"] == ("mcp__github__create_issue",)
    assert event.meta["tool_call_id"] == "toolu_01Search0000000000000000"


def test_the_hidden_prefix_knows_which_tools_a_request_had_loaded(tmp_path):
    conv = load_session(write_session(tmp_path)).conversations[0]
    (search,) = [m for m in conv.messages if m.tool_name == "ToolSearch"]
    at = conv.messages.index(search)
    before, after = deferred_tools(conv, at), deferred_tools(conv, at + 1)
    assert before.announced == after.announced == tuple(ANNOUNCED)
    assert before.loaded_names == () and after.loaded_names == ("mcp__github__create_issue",)
    note = deferred_note(conv)
    assert note.startswith("3 deferred tool(s) sent by name only; 1 loaded by ToolSearch (mcp__github__create_issue)")
    assert deferred_note(conv, at) == "3 deferred tool(s) sent by name only"


def test_the_loaded_definitions_tokens_are_estimated_from_the_recorded_usage(tmp_path):
    conv = load_session(write_session(tmp_path)).conversations[0]
    (search,) = [m for m in conv.messages if m.tool_name == "ToolSearch"]
    at = conv.messages.index(search)
    call = conv.messages[at - 1]
    between = C4.count_message(call) + C4.count_message(search)
    assert loaded_definition_tokens(conv, None, C4.count_message) == LOADED_CONTEXT - between > 0
    assert loaded_definition_tokens(conv, at, C4.count_message) == 0  # nothing loaded yet
    note = deferred_note(conv, None, C4.count_message)
    assert f"(≈ {LOADED_CONTEXT - between:,} tokens, from the recorded usage)" in note


def test_the_sys_row_note_and_the_report_say_it(tmp_path):
    from ctxview.tui.workers import system_note

    path = write_session(tmp_path)
    conv = load_session(path).conversations[0]
    text, _ = system_note(conv, "chars4", PipelineCache())
    assert text.startswith("not in file:") and "3 deferred tool(s) sent by name only" in text
    proc = subprocess.run([sys.executable, "-m", "ctxview", "report", str(path), "--json"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(proc.stdout)["conversations"][0]["deferred_tools"]
    assert entry["announced"] == ANNOUNCED and entry["loaded"][0]["names"] == ["mcp__github__create_issue"]
    assert 0 < entry["loaded_tokens"] < LOADED_CONTEXT and "tokens, from the recorded usage" in entry["note"]
    proc = subprocess.run([sys.executable, "-m", "ctxview", "report", str(path)], capture_output=True, text=True)
    assert "deferred tools: 3 deferred tool(s) sent by name only; 1 loaded by ToolSearch" in proc.stdout


def test_the_one_pass_and_the_general_path_agree(tmp_path, monkeypatch):
    path = write_session(tmp_path)
    fast = load_session(path)
    monkeypatch.setattr(claude_code, "read_linear", lambda *a: None)
    assert repr(load_session(path)) == repr(fast)


def test_a_file_without_deferred_tools_is_unchanged():
    sample = Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-short.jsonl"
    conv = load_session(sample).conversations[0]
    assert "deferred_tools" not in conv.metadata and deferred_note(conv) == ""
    assert not any(e.kind == "tools_loaded" for e in conv.events)
