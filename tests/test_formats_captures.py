"""The request captures other than claude-trace (claude_tap.py, context_lens.py, har.py): the
claude-trace fixture's session as each tool records it (tests/make_capture_fixtures.py) loads to the
same conversations, each request's as-sent view is its recorded body, and trace_compare holds a
transcript against them as against the claude-trace log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.formats import LoadError, detect_format, load_session
from ctxview.formats.captures import capture_requests
from ctxview.formats.claude_trace import trace_requests
from ctxview.formats.sent_requests import message_key
from ctxview.model import request_indices
from ctxview.pipeline import prepare
from ctxview.settings import Settings
from ctxview.analysis.trace_compare import compare

HERE = Path(__file__).parent / "fixtures"
CAPTURES = HERE / "captures"
TRACE = HERE / "claude_trace" / "trace.jsonl"
TRANSCRIPT = HERE / "claude_trace" / "transcript.jsonl"

# file -> (format, the record numbers of the kept requests: the line, or the entry's number)
FIXTURES = {
    "claude-tap.jsonl": ("claude-tap", [2, 3, 4, 5, 7]),
    "claude-tap.ctap.json": ("claude-tap", [2, 3, 4, 5, 7]),
    "context-lens.lhar": ("context-lens", [3, 4, 5, 6, 8]),    # after its session line
    "context-lens.lhar.json": ("context-lens", [2, 3, 4, 5, 7]),
    "anthropic.har": ("har", [2, 3, 4, 5, 7]),
}
SKIPPED = {  # what each tool recorded that is no request of a conversation
    "claude-tap": {"count_tokens": 1, "status 529": 1},          # no orphan: written once answered
    "context-lens": {"count_tokens": 1, "status 529": 1},
    "har": {"count_tokens": 1, "status 529": 1, "no response (orphaned)": 1, "not /v1/messages": 1},
}
NAMES = list(FIXTURES)


def path(name: str) -> Path:
    return CAPTURES / name


def assert_as_sent_is_the_body(p: Path):
    """Every request of every conversation: the pipeline's default view equals the recorded body."""
    session = load_session(p)
    by_line = {r.line: r for r in capture_requests(p)}
    checked = 0
    for conv in session.conversations:
        for idx in request_indices(conv.messages):
            view = prepare(conv, Settings(request=idx))
            assert view.view_label == "as sent"
            body = by_line[conv.messages[idx].meta["trace_line"]]
            assert [message_key(m) for m in view.prepared] == list(body.keys), (conv.name, idx)
            assert [m.thinking for m in view.prepared] == [m.thinking for m in body.messages], (conv.name, idx)
            checked += 1
    assert checked == len(by_line) == 5
    return session


@pytest.mark.parametrize("name", NAMES)
def test_each_capture_is_detected_and_kept_as_the_claude_trace_log_is(name):
    fmt, lines = FIXTURES[name]
    assert detect_format(path(name)) == fmt
    got = capture_requests(path(name))
    assert [r.line for r in got] == lines
    # the same bodies and replies as the claude-trace log of the session
    want = trace_requests(TRACE)
    assert [r.keys for r in got] == [r.keys for r in want]
    assert [(r.reply.id, r.reply.usage, message_key(r.reply)) for r in got] == \
        [(r.reply.id, r.reply.usage, message_key(r.reply)) for r in want]
    assert [(r.system, r.model, r.tools) for r in got] == [(r.system, r.model, r.tools) for r in want]
    assert [r.streaming for r in got] == [r.streaming for r in want] == [False, True, True, False, False]


@pytest.mark.parametrize("name", NAMES)
def test_each_capture_loads_to_the_sessions_conversations(name):
    fmt, lines = FIXTURES[name]
    s = assert_as_sent_is_the_body(path(name))
    assert s.format == fmt and s.metadata["skipped_pairs"] == SKIPPED[fmt]
    main, side, agent = s.conversations
    assert [c.name for c in s.conversations] == ["main", f"line-{lines[0]}", f"line-{lines[3]}"]
    assert main.metadata["trace_lines"] == (lines[1], lines[2], lines[4])
    assert [t["name"] for t in main.metadata["tools"]] == ["Read", "Bash"]
    assert side.model == "claude-haiku-4-5-20251001" and agent.messages[0].text == "Find where tokens are sliced."
    (event,) = main.events  # Read's result sent as the placeholder from request 3 on
    assert (event.kind, event.index, event.meta["from"]) == ("microcompaction", 6, fmt)
    r1 = main.messages[request_indices(main.messages)[0]]
    assert r1.meta["timestamp"].startswith("2026-01-01T00:00:0") and r1.meta["timestamp"].endswith("Z")
    assert s.warnings[-1].startswith(f"skipped {sum(SKIPPED[fmt].values())} ")


@pytest.mark.parametrize("name", NAMES)
def test_a_transcript_compared_with_each_capture_says_what_it_says_against_claude_trace(name):
    want = compare(load_session(TRANSCRIPT), trace_requests(TRACE))
    got = compare(load_session(TRANSCRIPT), capture_requests(path(name)))
    lines = FIXTURES[name][1]
    assert [r.trace_line for r in got.requests] == [lines[1], lines[2], lines[4]]
    assert [(r.number, r.index, r.matched_by, r.matches, r.differences) for r in got.requests] == \
        [(r.number, r.index, r.matched_by, r.matches, r.differences) for r in want.requests]
    assert [r.matches for r in got.requests] == [True, False, False]
    assert got.not_in_transcript == want.not_in_transcript
    assert got.unmatched_trace_lines == (lines[0], lines[3])


def test_the_compact_bundle_held_blob_references_for_tools_and_messages():
    doc = json.loads(path("claude-tap.ctap.json").read_text())
    refs = [ref["path"] for rec in doc["records"] if "__claude_tap_compact_record__" in rec
            for ref in rec["__claude_tap_compact_record__"]["refs"]]
    assert "/request/body/tools" in refs and "/request/body/messages/1" in refs and len(doc["blobs"]) >= 3


def run(*args):
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", ["anthropic.har", "context-lens.lhar"])
def test_report_trace_reads_a_capture(name):
    out = run("report", str(TRANSCRIPT), "--trace", str(path(name)))
    assert out.returncode == 0, out.stderr
    assert "1 of 3 requests reconstructed exactly as sent (view: as sent)" in out.stdout
    assert "request 2 (main), message #3 as sent, reminder:" in out.stdout


def test_a_file_that_is_no_capture_is_named_for_what_it_is():
    with pytest.raises(LoadError) as err:
        capture_requests(TRANSCRIPT)
    assert str(err.value) == (f"{TRANSCRIPT}: this is a Claude Code transcript (JSONL, or web export "
                              "{\"loglines\": [...]}), not a log of the requests sent (a request capture: "
                              "claude-trace, claude-tap, context-lens LHAR or HAR expected)")


def test_a_file_of_no_known_format_says_a_capture_was_expected(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    with pytest.raises(LoadError, match=r"not a recognised session format .* \(a request capture: claude-trace, "):
        capture_requests(p)


def test_claude_taps_json_export_loses_the_reply_ids_so_a_transcript_is_matched_by_order():
    p = path("claude-tap.export.json")
    assert detect_format(p) == "claude-tap"
    s = assert_as_sent_is_the_body(p)
    assert [c.name for c in s.conversations] == ["main", "line-2", "line-5"]
    # count_tokens and the 529: the export keeps no status, only a reply without content
    assert s.metadata["skipped_pairs"] == {"response holds no message": 2}
    got = [r for r in capture_requests(p)]
    assert [r.reply.id for r in got] == [None] * 5
    assert [r.reply.usage for r in got] == [r.reply.usage for r in trace_requests(TRACE)]
    want = compare(load_session(TRANSCRIPT), trace_requests(TRACE))
    cmp = compare(load_session(TRANSCRIPT), got)
    assert [r.matched_by for r in cmp.requests] == ["order"] * 3
    assert [(r.index, r.matches, r.differences) for r in cmp.requests] == \
        [(r.index, r.matches, r.differences) for r in want.requests]
