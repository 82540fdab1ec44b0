"""claude-trace logs (ctxview/formats/claude_trace.py): the log's shape, conversations, and each
request's as-sent view held equal to the body it recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.formats import LoadError, detect_format, load_session
from ctxview.formats.claude_trace import COMPACTION_OPENING, message_from_events, message_key, trace_requests
from ctxview.engine.harness import MICROCOMPACT_PLACEHOLDER
from ctxview.model import request_indices
from ctxview.pipeline import prepare
from ctxview.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "claude_trace"
TRACE = FIXTURES / "trace.jsonl"
URL = "https://api.anthropic.com/v1/messages?beta=true"
SYSTEM = [{"type": "text", "text": "You are Claude Code."}]


def pair(messages, reply_id, text="ok", *, system=SYSTEM, line_extra=None, url=URL, status=200, usage=None):
    body = {"model": "claude-x", "max_tokens": 100, "system": system, "messages": messages}
    resp = {"timestamp": 1767225601.0, "status_code": status, "headers": {"content-type": "application/json"},
            "body": {"id": reply_id, "type": "message", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": text}],
                     "usage": usage or {"input_tokens": 10, "output_tokens": 2}}}
    rec = {"request": {"timestamp": 1767225600.0, "method": "POST", "url": url, "headers": {}, "body": body},
           "response": resp, "logged_at": "2026-01-01T00:00:01.000Z"}
    rec.update(line_extra or {})
    return rec


def write(tmp_path, records, name="log-2026-01-01-00-00-00.jsonl"):
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return p


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def assert_as_sent_is_the_body(path):
    """Every request of every conversation: the pipeline's default view equals the recorded body."""
    session = load_session(path)
    by_line = {r.line: r for r in trace_requests(path)}
    checked = 0
    for conv in session.conversations:
        for idx in request_indices(conv.messages):
            view = prepare(conv, Settings(request=idx))
            assert view.view_label == "as sent"
            body = by_line[conv.messages[idx].meta["trace_line"]]
            assert [message_key(m) for m in view.prepared] == list(body.keys), (conv.name, idx)
            assert [m.thinking for m in view.prepared] == [m.thinking for m in body.messages], (conv.name, idx)
            checked += 1
    assert checked == len(by_line)
    return session


# --- the fixture -----------------------------------------------------------------------------

def test_the_fixture_is_sniffed_as_a_trace_and_its_transcript_as_claude_code():
    assert detect_format(TRACE) == "claude-trace"
    assert detect_format(FIXTURES / "transcript.jsonl") == "claude-code"


def test_the_fixture_groups_main_side_call_and_sub_agent():
    s = load_session(TRACE)
    assert s.format == "claude-trace"
    assert [c.name for c in s.conversations] == ["main", "line-2", "line-5"]
    main, side, agent = s.conversations
    assert main.metadata["trace_lines"] == (3, 4, 7)
    assert len(request_indices(main.messages)) == 3
    assert side.model == "claude-haiku-4-5-20251001" and "1 request" in side.metadata["label"]
    assert agent.messages[0].text == "Find where tokens are sliced."
    # skipped, and said so: count_tokens, the 529 that line 7 retried, the orphaned request
    assert s.warnings == ("skipped 3 logged pair(s) that are no request of a conversation "
                          "(count_tokens ×1, no response (orphaned) ×1, status 529 ×1)",)
    assert s.metadata["skipped_pairs"] == {"count_tokens": 1, "status 529": 1, "no response (orphaned)": 1}


def test_system_prompt_blocks_and_tools_are_kept_as_recorded():
    main = load_session(TRACE).conversations[0]
    assert main.system_prompt.startswith("You are Claude Code, Anthropic's official CLI for Claude.\nYou are an")
    assert [b["type"] for b in main.metadata["system_blocks"]] == ["text", "text"]
    assert [t["name"] for t in main.metadata["tools"]] == ["Read", "Bash"]


def test_streamed_and_json_replies_give_text_calls_usage_and_ids():
    main = load_session(TRACE).conversations[0]
    r1, r2, r3 = (main.messages[i] for i in request_indices(main.messages))
    # streamed: text and the tool_use's input from input_json_delta pieces; usage from message_start
    # (input, cache) and message_delta (output)
    assert r1.id == "msg_01Main" and r1.text == "Let me read the parser."
    assert [(c.id, c.name, dict(c.arguments)) for c in r1.tool_calls] == [("toolu_01Read", "Read", {"file_path": "parser.py"})]
    assert (r1.usage.input_tokens, r1.usage.output_tokens, r1.usage.cache_read_tokens, r1.usage.cache_write_tokens) == (3, 61, 0, 2950)
    assert r2.text == "" and r2.tool_calls[0].arguments == {"command": "pytest -q"}
    # JSON body
    assert r3.id == "msg_03Main" and r3.usage.cache_read_tokens == 3070 and r3.usage.output_tokens == 25
    assert r3.meta["timestamp"] == "2026-01-01T00:00:14Z" and r3.meta["trace_line"] == 7


def test_every_request_of_the_fixture_is_shown_as_its_body_sent_it():
    main = assert_as_sent_is_the_body(TRACE).conversations[0]
    # the tool result Read returned was sent whole at request 2, then as the placeholder: a
    # microcompaction from request 3 (index 6) on, which the view names
    (event,) = main.events
    assert (event.kind, event.index, event.meta["tool_ids"]) == ("microcompaction", 6, ["toolu_01Read"])
    view = prepare(main, Settings(request=6))
    assert view.stats["microcompacted"] == 1
    assert view.prepared[2].text == MICROCOMPACT_PLACEHOLDER
    assert main.messages[2].text.startswith("def parse(tokens):")
    before = prepare(main, Settings(request=4))
    assert before.prepared[2].text == main.messages[2].text


def test_a_reminder_appended_to_a_tool_result_turn_is_an_injected_message():
    main = load_session(TRACE).conversations[0]
    assert main.messages[3].role == "user" and main.messages[3].injected
    assert main.messages[3].text.startswith("<system-reminder>")


# --- shapes written here ------------------------------------------------------------------------

def test_a_compaction_summary_continues_the_conversation_it_replaced(tmp_path):
    summary = COMPACTION_OPENING + " that ran out of context. Summary: the user asked for a fix."
    p = write(tmp_path, [
        pair([user("fix it")], "m1", "looking"),
        pair([user("fix it"), assistant("looking"), user("go on")], "m2", "done"),
        pair([user(summary), user("and the tests?")], "m3", "running"),
        pair([user(summary), user("and the tests?"), assistant("running"), user("thanks")], "m4", "bye"),
    ])
    s = assert_as_sent_is_the_body(p)
    (main,) = s.conversations
    (event,) = main.events
    assert event.kind == "compaction" and event.index == 4 and event.summary == summary
    assert len(event.replaced) == 4
    assert [m.text for m in prepare(main).prepared][:2] == [summary, "and the tests?"]


def test_a_retry_of_an_earlier_body_and_another_system_prompt_are_conversations_of_their_own(tmp_path):
    p = write(tmp_path, [
        pair([user("a")], "m1", "b"),
        pair([user("a"), assistant("b"), user("c")], "m2", "d"),
        pair([user("a")], "m3", "b again"),                           # re-sent: not the next request
        pair([user("a")], "m4", "title", system=[{"type": "text", "text": "Write a title."}]),
    ])
    s = assert_as_sent_is_the_body(p)
    assert [c.name for c in s.conversations] == ["main", "line-3", "line-4"]
    assert len(request_indices(s.conversations[0].messages)) == 2


def test_a_message_re_sent_otherwise_is_a_resent_rewrite_from_that_request_on(tmp_path):
    # the response said "looking", the next requests send it back as "looking…": the harness's doing
    p = write(tmp_path, [
        pair([user("fix it")], "m1", "looking"),
        pair([user("fix it"), assistant("looking…"), user("go on")], "m2", "done"),
        pair([user("fix it"), assistant("looking…"), user("go on"), assistant("done"), user("ok")], "m3", "bye"),
    ])
    (main,) = assert_as_sent_is_the_body(p).conversations
    assert main.messages[1].text == "looking" and main.messages[1].id == "m1"
    (event,) = main.events
    assert (event.kind, event.index) == ("resent", 3)
    row = prepare(main, Settings(request=3)).rows[1]
    assert row.prepared.text == "looking…"
    assert [(c.action, c.rule) for c in row.changes] == [("resent", "harness")]
    assert prepare(main, Settings(request=1)).prepared[0].text == "fix it"


def test_thinking_dropped_from_a_re_sent_reply_is_a_resent_rewrite(tmp_path):
    first = pair([user("q")], "m1", "a")
    first["response"]["body"]["content"].insert(0, {"type": "thinking", "thinking": "let me see", "signature": "s"})
    p = write(tmp_path, [first, pair([user("q"), assistant("a"), user("more")], "m2", "b")])
    (main,) = assert_as_sent_is_the_body(p).conversations
    assert main.messages[1].thinking == "let me see"
    assert [e.kind for e in main.events] == ["resent"]
    resent = prepare(main, Settings(request=3)).prepared[1]
    assert resent.thinking is None and "thinking_blocks" not in resent.meta


def test_sse_events_build_thinking_and_merge_usage():
    msg = message_from_events([
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 7, "cache_read_input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "N", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
    ])
    assert msg["content"] == [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                              {"type": "tool_use", "id": "t", "name": "N", "input": {}}]
    assert msg["usage"] == {"input_tokens": 7, "cache_read_input_tokens": 3, "output_tokens": 9}
    assert msg["stop_reason"] == "tool_use"
    assert message_from_events([{"type": "content_block_start", "index": 0}]) is None


def test_a_stream_cut_before_message_start_is_skipped_and_counted(tmp_path):
    rec = pair([user("a")], "m1")
    cut = dict(rec, response={"timestamp": 1.0, "status_code": 200, "headers": {}, "body_raw": "event: ping\ndata: {\"type\""})
    s = load_session(write(tmp_path, [rec, cut]))
    assert "response holds no message ×1" in s.warnings[0]


def test_odd_stream_events_are_ignored_not_a_crash(tmp_path):
    events = [{"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": "x"}}},
              {"type": "content_block_start", "index": [0], "content_block": {"type": "text"}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "ok"}},
              {"type": "content_block_delta", "index": [0], "delta": {"type": "text_delta", "text": "!"}},
              {"type": "content_block_delta", "index": 0, "delta": "not an object"},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}},
              {"type": "message_delta", "usage": ["no"]}, "a string", 7]
    raw = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: {broken\n\n"
    rec = pair([user("a")], "m1")
    rec["response"] = {"timestamp": "soon", "status_code": 200, "headers": {}, "body_raw": raw}
    (conv,) = load_session(write(tmp_path, [rec])).conversations
    reply = conv.messages[1]
    assert (reply.id, reply.text, reply.usage.input_tokens) == ("m1", "ok5", 0)


def test_a_log_of_one_line_is_read_as_one_document(tmp_path):
    p = tmp_path / "one.json"
    p.write_text(json.dumps(pair([user("a")], "m1", "b")))
    assert detect_format(p) == "claude-trace"
    (conv,) = load_session(p).conversations
    assert [m.text for m in conv.messages] == ["a", "b"]


# --- bad input: one line naming the file and the line, the file left alone -------------------

@pytest.mark.parametrize("records, words, line", [
    ([pair([user("a")], "m1"), "[1, 2]"], "expected a request/response pair", 2),
    ([pair([user("a")], "m1"), {"request": {"method": "POST", "url": URL, "body": {"model": "x"}}, "response": {}, "logged_at": "t"}],
     "request.body: expected a Messages API body", 2),
    ([pair([user("a")], "m1"), pair([42], "m2")], "/request/body/messages/0: expected a message object", 2),
    ([pair([user("a")], "m1"), pair([], "m2")], "request.body.messages is empty", 2),
    ([pair([user("a")], "m1"), '{"request": {"url": '], "invalid JSON", 2),
])
def test_bad_lines_are_one_error_naming_file_and_line(tmp_path, records, words, line):
    p = write(tmp_path, records)
    with pytest.raises(LoadError) as exc:
        load_session(p, format="claude-trace")
    assert exc.value.line == line and words in str(exc.value)
    assert str(exc.value).startswith(f"{p}:{line}") and "\n" not in str(exc.value)


def test_tool_arguments_nested_past_the_encoder_are_one_error(tmp_path):
    deep: dict = {}
    cur = deep
    for _ in range(600):
        cur["a"] = cur = {}
    calls = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "N", "input": deep}]}
    p = write(tmp_path, [pair([user("q"), calls, {"role": "user", "content": "r"}], "m")])
    with pytest.raises(LoadError, match="nested too deep") as exc:
        load_session(p)
    assert exc.value.line == 1
    with pytest.raises(LoadError, match="nested too deep"):
        trace_requests(p)


def test_a_log_with_no_request_to_keep_says_what_it_held(tmp_path):
    p = write(tmp_path, [pair([user("a")], "m1", status=500), pair([user("a")], "m1", line_extra={"response": None})])
    with pytest.raises(LoadError, match=r"no /v1/messages request with a response \(no response \(orphaned\) ×1, status 500 ×1\)"):
        load_session(p)


def test_lenient_skips_a_malformed_line_and_says_so(tmp_path):
    p = write(tmp_path, [pair([user("a")], "m1"), "{not json", pair([user("a"), assistant("ok"), user("b")], "m2")])
    s = load_session(p, lenient=True)
    assert s.skipped == 1 and any("skipped 1" in w for w in s.warnings)
    assert len(request_indices(s.conversations[0].messages)) == 2


def test_the_command_fails_with_one_line_and_leaves_the_file_alone(tmp_path):
    p = write(tmp_path, [pair([user("a")], "m1"), pair([user("a")], "m2", line_extra={"request": "x"})])
    before = p.read_bytes()
    out = subprocess.run([sys.executable, "-m", "ctxview", "report", str(p)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith(f"ctxview: error: {p}:2: expected a request/response pair")
    assert p.read_bytes() == before
