"""Gemini CLI sessions (JSONL and the older JSON) and checkpoints."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxview.formats import LoadError, detect_format, load_session
from ctxview.formats.gemini import gemini_usage
from ctxview.analysis.usage import conversation_usage

FIX = Path(__file__).parent / "fixtures" / "gemini"
JSONL = FIX / "session-2026-08-20T10-00-5a1c9e0b.jsonl"
LEGACY = FIX / "session-2025-11-02T09-14-legacy01.json"
CHECKPOINT = FIX / "checkpoint-files.json"

META = {"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": "2026-01-01T00:00:00Z", "kind": "main"}


def jsonl(tmp_path, *records, name="session.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return p


def user(mid, content, **extra):
    return {"id": mid, "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": content, **extra}


def gemini(mid, content, **extra):
    return {"id": mid, "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": content, **extra}


@pytest.mark.parametrize("path", [JSONL, LEGACY, CHECKPOINT, FIX / "session-2026-08-21T08-30-notesonly.jsonl"])
def test_every_fixture_is_detected_from_content(path, tmp_path):
    renamed = tmp_path / "renamed.txt"  # the name says nothing
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == "gemini"
    assert load_session(renamed).format == "gemini"


def test_jsonl_session_replays_as_gemini_cli_reloads_it():
    s = load_session(JSONL)
    (conv,) = s.conversations
    assert s.metadata["session_id"] == "5a1c9e0b-2f4d-4c61-9d0e-7b3f6a2c8e11"
    assert s.metadata["summary"] == "Explain the project and try to delete build"  # from a later $set
    assert conv.metadata["label"] == "Explain the project and try to delete build"
    roles = [m.role for m in conv.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    prompt = conv.messages[0]
    assert prompt.text.startswith("Read README.md") and prompt.meta["display"].endswith("@README.md")
    # g1 was written twice (tokens added later): one message, in its first place, with the tokens
    first = conv.messages[1]
    assert first.id == "g1" and first.tool_calls[0].name == "read_file"
    assert first.tool_calls[0].arguments == {"absolute_path": "/home/dev/proj/README.md"}
    assert first.thinking == "**Reading the file** I will read README.md first."
    assert first.usage.input_tokens == 5210 - 4096 and first.usage.cache_read_tokens == 4096
    assert first.usage.output_tokens == 31 + 18
    # the result is the user turn that sent it (u3), not also the copy on the call
    result = conv.messages[2]
    assert result.tool_call_id == "read_file-1724148012-0" and result.tool_name == "read_file"
    assert result.text == "# proj\nA tool that prints the weather." and not result.meta.get("is_error")
    denied = conv.messages[6]
    assert denied.meta["is_error"] is True and denied.text == "Tool execution denied by policy."
    last = conv.messages[7]
    assert last.text == "I cannot delete it: the shell tool was denied."
    assert last.thinking == "**Checking policy** The shell tool is blocked here."
    assert last.model_id == "gemini-2.5-flash" and conv.model == "gemini-2.5-flash"
    assert conversation_usage(conv).requests == 4


def test_notes_and_commands_are_kept_but_never_sent():
    s = load_session(JSONL)
    (conv,) = s.conversations
    notes = [(e.kind, e.index, e.summary) for e in conv.events]
    assert notes == [("gemini_command", 0, "/model"), ("gemini_info", 0, "Model set to gemini-2.5-pro"),
                     ("gemini_error", 7, "[API Error: 429 Resource exhausted. Please try again later.]"),
                     ("gemini_warning", 7, "Switched to fallback model gemini-2.5-flash")]
    texts = " ".join(m.text for m in conv.messages)
    assert "/model" not in texts and "429" not in texts and "fallback" not in texts
    assert any("4 Gemini CLI note(s) not sent to the model" in w for w in s.warnings)


NOTES_ONLY = FIX / "session-2026-08-21T08-30-notesonly.jsonl"


def test_a_session_of_notes_alone_opens_with_them_as_events():
    # Gemini CLI records its info, warning and error items (useHistoryManager.ts) whether or not a prompt
    # was ever sent: a session whose only request failed before it was recorded holds nothing else.
    s = load_session(NOTES_ONLY)
    (conv,) = s.conversations
    assert conv.messages == ()
    assert [(e.kind, e.index, e.origin) for e in conv.events] == [
        ("gemini_info", 0, "line 2"), ("gemini_warning", 0, "line 4"), ("gemini_error", 0, "line 6")]
    assert conv.events[2].summary.startswith("[API Error: 403 PERMISSION_DENIED")
    assert conv.events[0].meta == {"timestamp": "2026-08-21T08:30:02.000Z"}
    assert s.metadata["session_id"] == "9c2e4f10-7a3b-4d5e-8f60-1b2c3d4e5f60"
    (warning,) = s.warnings
    assert warning.startswith("3 Gemini CLI note(s) not sent to the model") and "Memory refreshed" in warning


def test_a_session_of_notes_alone_reports_them(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "ctxview", "report", str(NOTES_ONLY)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "PERMISSION_DENIED" in proc.stdout + proc.stderr and "Skipping unreadable directory" in proc.stdout + proc.stderr


def test_legacy_json_takes_results_from_the_calls():
    s = load_session(LEGACY)
    (conv,) = s.conversations
    assert s.metadata["variant"] == "session" and s.metadata["started_at"] == "2025-11-02T09:14:00.000Z"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    call = conv.messages[1]
    assert [c.id for c in call.tool_calls] == ["list_directory-1-0", "read_file-1-1"]
    assert call.thinking == "**Listing** The user wants the files in src."
    ok, failed = conv.messages[2], conv.messages[3]
    assert ok.tool_name == "list_directory" and ok.text.endswith("main.py\nutil.py")
    assert failed.tool_name == "read_file" and failed.meta["is_error"] is True and failed.meta["status"] == "error"
    assert failed.text == "File not found: /work/app/src/missing.py"
    assert [e.kind for e in conv.events] == ["gemini_info"]
    assert not any("call the file does not hold" in w for w in s.warnings)


def test_checkpoint_is_the_content_list_sent():
    s = load_session(CHECKPOINT)
    (conv,) = s.conversations
    assert s.metadata["variant"] == "checkpoint"
    assert [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    call = conv.messages[3]
    assert call.tool_calls[0].id == "list_directory-1-0" and call.thinking.startswith("**Listing**")
    assert conv.messages[4].tool_name == "list_directory"


@pytest.mark.parametrize("wrap", [lambda h: h, lambda h: {"clientHistory": h, "toolCall": {"name": "x", "args": {}}}])
def test_bare_and_tool_checkpoints(tmp_path, wrap):
    history = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}]
    p = tmp_path / "c.json"
    p.write_bytes(orjson.dumps(wrap(history)))
    (conv,) = load_session(p).conversations
    assert [(m.role, m.text) for m in conv.messages] == [("user", "hi"), ("assistant", "hello")]


def test_rewind_drops_the_message_and_all_after(tmp_path):
    p = jsonl(tmp_path, META, user("u1", "one"), gemini("g1", "first"), user("u2", "two"), gemini("g2", "second"),
              {"$rewindTo": "u2"}, user("u3", "three"), gemini("g3", "third"))
    s = load_session(p)
    assert [m.text for m in s.conversations[0].messages] == ["one", "first", "three", "third"]
    assert any("rewound 1 time(s)" in w for w in s.warnings)


def test_rewind_to_an_unknown_id_clears_all_and_updates_keep_their_place(tmp_path):
    p = jsonl(tmp_path, META, user("u1", "one"), gemini("g1", "first"), user("u2", "two"), {"$rewindTo": "nope"},
              user("u3", "three"), gemini("g3", "draft"), user("u4", "four"), gemini("g3", "final"),
              {"$rewindTo": "u4"}, user("u5", "five"))
    assert [m.text for m in load_session(p).conversations[0].messages] == ["three", "final", "five"]


def test_set_messages_replaces_the_history(tmp_path):
    p = jsonl(tmp_path, META, user("u1", "one"), gemini("g1", "long answer"),
              {"$set": {"messages": [user("s1", "summary of before"), gemini("s2", "ok")]}},
              user("u2", "next"))
    s = load_session(p)
    assert [m.text for m in s.conversations[0].messages] == ["summary of before", "ok", "next"]
    assert any("replaced 1 time(s)" in w for w in s.warnings)


def test_modern_content_parts_are_the_source_of_truth(tmp_path):
    parts = [{"text": "thinking hard", "thought": True}, {"text": "Running it."},
             {"functionCall": {"id": "c1", "name": "run", "args": {"x": 1}}}]
    p = jsonl(tmp_path, META, user("u1", [{"text": "go"}]),
              gemini("g1", parts, toolCalls=[{"id": "c1", "name": "run", "args": {"x": 1}, "status": "cancelled"}]),
              user("u2", [{"functionResponse": {"id": "c1", "name": "run", "response": {"output": "done"}}},
                          {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]))
    (conv,) = load_session(p).conversations
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "user"]
    a = conv.messages[1]
    assert a.text == "Running it." and a.thinking == "thinking hard" and a.tool_calls[0].arguments == {"x": 1}
    assert conv.messages[2].text == "done" and conv.messages[3].text == "[image: image/png, 3 bytes]"


def test_session_context_is_injected_and_a_subagent_is_named(tmp_path):
    p = jsonl(tmp_path, {**META, "kind": "subagent"}, user("u1", "<session_context>cwd: /x</session_context>"),
              user("u2", "question"), gemini("g1", "answer"))
    (conv,) = load_session(p).conversations
    assert conv.name == "subagent"
    assert [m.injected for m in conv.messages] == [True, False, False]


def test_usage_counts_cached_once_and_thoughts_as_output():
    u = gemini_usage({"input": 1000, "output": 10, "cached": 600, "thoughts": 5, "tool": 7, "total": 1022})
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens) == (407, 600, 15)
    assert u.input_tokens + u.cache_read_tokens + u.output_tokens == 1022  # the record's total
    assert gemini_usage(None) is None
    assert gemini_usage({"input": "many", "cached": -3}).context_tokens == 0


@pytest.mark.parametrize("records, message", [
    ([META], "no messages found"),
    ([META, {"$set": {"lastUpdated": "2026-01-01T00:00:09Z"}}], "no messages found"),
])
def test_a_session_without_messages_is_one_line(tmp_path, records, message):
    p = jsonl(tmp_path, *records)
    with pytest.raises(LoadError) as exc:
        load_session(p, format="gemini")
    text = str(exc.value)
    assert "\n" not in text and text.startswith(str(p)) and message in text
    assert "Gemini CLI session or checkpoint expected" in text


def test_malformed_line_is_located_and_lenient_skips_it(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(orjson.dumps(META) + b"\n" + orjson.dumps(user("u1", "hi")) + b"\n{oops\n"
                  + orjson.dumps(gemini("g1", "yo")) + b"\n")
    with pytest.raises(LoadError) as exc:
        load_session(p)
    assert exc.value.line == 3
    s = load_session(p, lenient=True)
    assert s.skipped == 1 and [m.text for m in s.conversations[0].messages] == ["hi", "yo"]


@pytest.mark.parametrize("doc", [
    {"sessionId": "s", "projectHash": "p", "messages": [{"id": "x", "type": "gemini", "content": 7,
                                                          "toolCalls": "nope", "tokens": [1], "thoughts": 3},
                                                         {"id": "y", "type": "user", "content": {"text": 5}}, 42]},
    [{"role": "user", "parts": [{"functionResponse": "bad"}, 3, {"text": "ok"}]}, {"role": "model", "parts": []}],
])
def test_wrong_types_inside_records_never_crash(tmp_path, doc):
    p = tmp_path / "odd.json"
    p.write_bytes(orjson.dumps(doc))
    try:
        s = load_session(p, format="gemini")
    except LoadError as err:
        assert "\n" not in str(err)
    else:
        assert s.conversations[0].messages


def test_a_bad_checkpoint_entry_is_named(tmp_path):
    p = tmp_path / "c.json"
    p.write_bytes(orjson.dumps({"history": [{"role": "user", "parts": []}] * 20 + [{"role": "user"}]}))
    with pytest.raises(LoadError, match=r"/history/20: expected a Content object"):
        load_session(p, format="gemini")


def test_other_formats_are_not_taken_for_gemini(tmp_path):
    claude = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "t",
              "message": {"role": "user", "content": "hi"}}
    p = jsonl(tmp_path, claude)
    assert detect_format(p) == "claude-code"


def test_the_command_line_says_one_line_and_exits_1(tmp_path):
    import subprocess
    import sys

    p = jsonl(tmp_path, META)  # (a file just started: its metadata line alone)
    proc = subprocess.run([sys.executable, "-m", "ctxview", "report", str(p)], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line == f"ctxview: error: {p}: no messages found (no user or gemini records) " \
                   "(Gemini CLI session or checkpoint expected)"
