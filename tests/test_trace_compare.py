"""A transcript's as-sent reconstruction against a claude-trace log of the same session
(ctxview/analysis/trace_compare.py), in the report (text and --json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.formats import load_session
from ctxview.formats.claude_trace import message_key, trace_requests
from ctxview.model import Message, request_indices
from ctxview.analysis.report import build_report
from ctxview.analysis.trace_compare import compare, differences, match, short_diff

FIXTURES = Path(__file__).parent / "fixtures" / "claude_trace"
TRACE = FIXTURES / "trace.jsonl"
TRANSCRIPT = FIXTURES / "transcript.jsonl"


@pytest.fixture(scope="module")
def result():
    return compare(load_session(TRANSCRIPT), trace_requests(TRACE), "trace.jsonl")


def test_each_transcript_request_is_matched_by_the_reply_id(result):
    assert [(r.number, r.index, r.trace_line, r.matched_by) for r in result.requests] == \
        [(1, 1, 3, "id"), (2, 3, 4, "id"), (3, 5, 7, "id")]
    # the side call and the sub-agent are in the trace only
    assert result.unmatched_trace_lines == (2, 5) and result.unmatched_requests == ()


def test_the_first_request_is_reconstructed_exactly(result):
    first = result.requests[0]
    assert first.matches and first.first_difference is None
    assert first.summary() == "✓ matches trace (line 3)"


def test_a_reminder_the_transcript_does_not_store_is_named_as_one(result):
    second = result.requests[1]
    assert not second.matches
    (d,) = second.differences
    assert (d.kind, d.sent_index, d.stored_index, d.role) == ("reminder", 3, None, "user")
    assert "TodoWrite" in d.detail
    assert (second.sent_messages, second.reconstructed_messages) == (4, 3)
    assert second.summary() == ("✗ differs from trace (line 4) at message #3 as sent: reminder injected by the "
                                "harness")


def test_a_microcompaction_the_transcript_did_not_record_is_a_text_difference_with_its_diff(result):
    third = result.requests[2]
    first, second = third.differences
    assert (first.kind, first.sent_index, first.stored_index, first.role) == ("text", 2, 2, "tool")
    assert "'[Old tool result content cleared]' (sent)" in first.detail
    assert "microcompaction placeholder" in first.detail
    assert second.kind == "reminder"
    assert third.summary().startswith("✗ differs from trace (line 7) at message #2: text differs, 1 more")


def test_system_prompt_and_tools_are_said_once_not_per_request(result):
    assert result.not_in_transcript == (
        "system prompt: the transcript stores none; the trace's requests sent one of 139 characters",
        "tool definitions: the transcript stores none; the trace's requests sent 2 tool definition(s)")
    assert all("system prompt" not in d.detail and "tool definition" not in d.detail
               for r in result.requests for d in r.differences)


def test_the_trace_compared_with_itself_matches_everywhere():
    # the trace loaded as a session is its own transcript: every request as sent equals its body
    got = compare(load_session(TRACE), trace_requests(TRACE))
    assert len(got.requests) == 5 and all(r.matches for r in got.requests)
    assert got.unmatched_trace_lines == () and got.not_in_transcript == ()


def test_without_ids_requests_are_matched_by_order_within_the_same_prompt(tmp_path):
    lines = TRANSCRIPT.read_text().splitlines()
    stripped = []
    for line in lines:
        rec = json.loads(line)
        rec["message"].pop("id", None)
        stripped.append(json.dumps(rec))
    p = tmp_path / "no-ids.jsonl"
    p.write_text("\n".join(stripped) + "\n")
    session = load_session(p)
    m = match(session, trace_requests(TRACE))
    (conv,) = session.conversations
    # (without message.id the transcript's lines of one reply are not merged: other indices)
    assert sorted((idx, req.line, how) for (_, idx), (req, how) in m.pairs.items()) == \
        list(zip(request_indices(conv.messages), (3, 4, 7), ("order",) * 3))


def test_differences_name_missing_extra_and_changed_messages():
    a = [Message("user", "hi"), Message("assistant", "x"), Message("user", "old text here")]
    b = [Message("user", "hi"), Message("user", "new"), Message("assistant", "x"), Message("user", "old text there")]
    got = differences(a, b, start=10)
    assert [(d.kind, d.sent_index, d.stored_index) for d in got] == [("missing", 1, None), ("text", 3, 12)]
    extra = differences(b, a, start=0)
    assert [(d.kind, d.sent_index, d.stored_index) for d in extra][0] == ("extra", 1, 1)
    assert differences(a, a, 0) == []
    thought = [a[0], a[1].replace(thinking="plan"), a[2]]
    (d,) = differences(thought, a, 0)
    assert (d.kind, d.sent_index, d.stored_index, d.detail) == ("thinking", 1, 1, "thinking in the transcript, not sent")


def test_only_reminder_blocks_differing_is_a_reminder_difference():
    a = [Message("user", "fix it")]
    b = [Message("user", "<system-reminder>ctx</system-reminder>\nfix it")]
    (d,) = differences(a, b, 0)
    assert d.kind == "reminder"
    assert message_key(a[0]) != message_key(b[0])


def test_short_diff_shows_where_texts_part():
    text = short_diff("the quick brown fox", "the quick red fox")
    assert text.startswith("at char 10:") and "'brown'" in text and "'red'" in text


def test_the_report_has_a_trace_section_and_json_key():
    data = build_report(load_session(TRANSCRIPT), trace=("trace.jsonl", trace_requests(TRACE)))
    t = data["trace"]
    assert (t["requests_compared"], t["requests_matching"]) == (3, 1)
    assert [r["matches"] for r in t["requests"]] == [True, False, False]
    assert [r["first_difference"] for r in t["requests"]] == [None, 3, 2]
    assert "trace" not in build_report(load_session(TRANSCRIPT))


def run(*args):
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120)


def test_report_trace_on_the_command_line_text_and_json():
    out = run("report", str(TRANSCRIPT), "--trace", str(TRACE))
    assert out.returncode == 0, out.stderr
    assert "1 of 3 requests reconstructed exactly as sent (view: as sent)" in out.stdout
    assert "request 2 (main), message #3 as sent, reminder:" in out.stdout
    doc = json.loads(run("report", str(TRANSCRIPT), "--trace", str(TRACE), "--json").stdout)
    assert doc["trace"]["requests_matching"] == 1


def test_a_bad_trace_is_one_line_naming_the_option_and_file(tmp_path):
    out = run("report", str(TRANSCRIPT), "--trace", str(TRANSCRIPT))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (f"ctxview: error: --trace {TRANSCRIPT}: this is a Claude Code transcript (JSONL, "
                                  "or web export {\"loglines\": [...]}), not a log of the requests sent (a request "
                                  "capture: claude-trace, claude-tap, context-lens LHAR or HAR expected)")
    out = run("report", str(TRANSCRIPT), "--trace", str(tmp_path / "none.jsonl"))
    assert out.returncode == 1 and out.stderr.startswith("ctxview: error: --trace ") and "no such file" in out.stderr


def test_the_inspector_refuses_a_bad_trace_before_it_takes_the_screen(tmp_path):
    bad = tmp_path / "log.jsonl"
    bad.write_text('{"request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "body": {}},'
                   ' "response": {}, "logged_at": "t"}\n')
    out = run(str(TRANSCRIPT), "--trace", str(bad))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (f"ctxview: error: --trace {bad}:1: request.body: expected a Messages API body "
                                  "with a \"messages\" list (claude-trace log expected)")


def test_the_inspector_gets_the_trace_requests(monkeypatch):
    import ctxview.tui.launch as launch
    from ctxview.cli import commands as cli

    seen = {}

    def fake_run_app(path, settings, agent, fmt, lenient, overrides=None, **extra):
        seen.update(path=path, **extra)
        return 0

    monkeypatch.setattr(launch, "run_app", fake_run_app)
    assert cli.main([str(TRANSCRIPT), "--trace", str(TRACE)]) == 0
    name, requests = seen["trace"]
    assert name == str(TRACE) and [r.line for r in requests] == [r.line for r in trace_requests(TRACE)]


def test_escape_sequences_in_the_texts_never_reach_the_terminal_raw(tmp_path):
    # the trace sent a message the transcript lacks, holding terminal controls (its preview is raw text)
    evil = "\x1b]52;c;aGk=\x07\x1b[2J\x9b31m"
    lines = [json.loads(x) for x in TRACE.read_text().splitlines()]
    lines[6]["request"]["body"]["messages"][-1]["content"].append({"type": "text", "text": "note" + evil})
    p = tmp_path / "evil.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = run("report", str(TRANSCRIPT), "--trace", str(p))
    assert out.returncode == 0, out.stderr
    assert "request 3 (main), message #6 as sent, missing: user message sent but not in the reconstruction" \
        in out.stdout
    assert not any(c in out.stdout for c in "\x1b\x07\x9b")


def test_trace_needs_a_session_file_not_a_directory():
    out = run(str(FIXTURES), "--trace", str(TRACE))
    assert out.returncode == 2 and out.stderr.strip() == (
        "ctxview: error: --trace compares one session file with its log: give it FILE")
