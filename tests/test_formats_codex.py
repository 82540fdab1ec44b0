"""Codex CLI rollouts."""

from __future__ import annotations

from pathlib import Path

import orjson

from ctxview.formats import load_session

FIX = Path(__file__).parent / "fixtures" / "samples" / "codex" / "agentlogs-crud.jsonl"


def rollout(tmp_path, records) -> Path:
    p = tmp_path / "rollout.jsonl"
    p.write_bytes(b"".join(orjson.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": t, "payload": pl}) + b"\n"
                           for t, pl in records))
    return p


def msg(role, text, kind="input_text"):
    return ("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def test_real_rollout_loads_with_every_call_linked():
    s = load_session(FIX)
    assert s.format == "codex"
    (conv,) = s.conversations
    assert conv.system_prompt.startswith("You are Codex")
    assert conv.model == "gpt-5.2-codex" and conv.context_window == 258400
    calls = {c.id: c.name for m in conv.messages for c in m.tool_calls}
    tools = [m for m in conv.messages if m.role == "tool"]
    assert len(calls) == 4 and len(tools) == 4
    assert {m.tool_call_id for m in tools} == set(calls)
    assert all(m.tool_name == calls[m.tool_call_id] for m in tools)
    assert {"exec_command", "apply_patch"} == set(calls.values())
    # developer and harness-written user messages are marked injected; the prompt is not
    roles = [(m.role, m.injected) for m in conv.messages[:4]]
    assert roles == [("developer", True), ("user", True), ("user", True), ("user", False)]
    # the event_msg copies of visible text are not shown twice
    final = "Created `JOKE.md`, read it, updated the footer line, and deleted the file."
    assert [m.text for m in conv.messages].count(final) == 1
    assert s.metadata["cli_version"] == "0.89.0"


def test_real_rollout_usage_is_attached_once_per_model_call():
    conv = load_session(FIX).conversations[0]
    assistants = [m for m in conv.messages if m.role == "assistant"]
    assert all(m.usage is not None for m in assistants)
    first = assistants[0].usage
    assert (first.input_tokens, first.cache_read_tokens, first.output_tokens) == (9162 - 6656, 6656, 144)
    # reasoning summaries are kept as thinking
    assert assistants[0].thinking == "**Planning file operations and command sequence**"


def test_consecutive_items_form_one_assistant_message(tmp_path):
    p = rollout(tmp_path, [
        ("session_meta", {"id": "s", "base_instructions": {"text": "SYS"}}),
        msg("user", "do it"),
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}),
        ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": '{"cmd": "ls"}', "call_id": "c1"}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": "not json", "call_id": "c2"}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a\nb"}),
        ("response_item", {"type": "function_call_output", "call_id": "c2", "output": {"content": "x", "success": True}}),
    ])
    conv = load_session(p).conversations[0]
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "tool"]
    a = conv.messages[1]
    assert (a.text, a.thinking) == ("ok", "think")
    assert [dict(c.arguments) for c in a.tool_calls] == [{"cmd": "ls"}, {"input": "not json"}]
    assert [m.text for m in conv.messages[2:]] == ["a\nb", "x"]
    assert conv.system_prompt == "SYS"


def test_compacted_record_is_an_event_with_its_replacement_history(tmp_path):
    p = rollout(tmp_path, [
        msg("user", "first"),
        msg("assistant", "answer 1", "output_text"),
        msg("user", "second"),
        msg("assistant", "answer 2", "output_text"),
        ("compacted", {"message": "SUMMARY", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUMMARY"}]}]}),
        msg("user", "third"),
        msg("assistant", "answer 3", "output_text"),
    ])
    conv = load_session(p).conversations[0]
    (ev,) = conv.events
    assert (ev.kind, ev.index, ev.summary) == ("compaction", 4, "SUMMARY")
    assert [m.text for m in ev.replaced] == ["first", "answer 1", "second", "answer 2"]
    after = conv.messages[ev.index:]
    assert [m.text for m in after] == ["first", "SUMMARY", "third", "answer 3"]
    assert after[0].injected and after[1].injected and not after[2].injected
    assert after[0].origin == "line 5/replacement_history/0"


def test_old_compacted_record_without_history_inserts_the_summary(tmp_path):
    p = rollout(tmp_path, [msg("user", "a"), msg("assistant", "b", "output_text"),
                           ("compacted", {"message": "S"}), msg("user", "c")])
    conv = load_session(p).conversations[0]
    assert [m.text for m in conv.messages] == ["a", "b", "S", "c"]
    assert conv.events[0].index == 2 and conv.messages[2].injected


def test_repeated_token_counts_are_not_applied_twice(tmp_path):
    info = {"total_token_usage": {"input_tokens": 10}, "last_token_usage": {"input_tokens": 10, "output_tokens": 2}}
    info2 = {"total_token_usage": {"input_tokens": 30}, "last_token_usage": {"input_tokens": 20, "output_tokens": 3}}
    p = rollout(tmp_path, [
        msg("user", "a"), msg("assistant", "b", "output_text"),
        ("event_msg", {"type": "token_count", "info": info}),
        ("event_msg", {"type": "token_count", "info": info}),
        msg("user", "c"), msg("assistant", "d", "output_text"),
        ("event_msg", {"type": "token_count", "info": info2}),
    ])
    conv = load_session(p).conversations[0]
    assert [m.usage.input_tokens if m.usage else None for m in conv.messages] == [None, 10, None, 20]


def test_unknown_records_are_counted(tmp_path):
    p = rollout(tmp_path, [msg("user", "a"), ("response_item", {"type": "brand_new_item"}), msg("assistant", "b", "output_text")])
    s = load_session(p)
    assert s.skipped == 1 and "brand_new_item" in s.warnings[0]


def _count(n_in, n_total, cached=0, out=5):
    return ("event_msg", {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": n_total}, "model_context_window": 258400,
        "last_token_usage": {"input_tokens": n_in, "cached_input_tokens": cached, "output_tokens": out}}})


def test_usage_only_rollout_loads_as_usage_only_requests(tmp_path):
    # what ccusage reads: turn_context and token_count events, no response items
    p = rollout(tmp_path, [
        ("session_meta", {"id": "s1", "cli_version": "0.50.0"}),
        ("turn_context", {"model": "gpt-5-codex", "truncation_policy": {"mode": "bytes", "limit": 10000}}),
        ("event_msg", {"type": "token_count", "info": None}),
        _count(100, 100, cached=40),
        _count(100, 100, cached=40),  # repeated at the next turn's start: one call, not two
        ("turn_context", {"model": "gpt-5.1-codex"}),
        _count(250, 350, out=9),
    ])
    s = load_session(p)
    (conv,) = s.conversations
    assert [(m.role, m.text, m.model_id, m.usage.input_tokens, m.usage.cache_read_tokens, m.usage.output_tokens)
            for m in conv.messages] == [("assistant", "", "gpt-5-codex", 60, 40, 5),
                                        ("assistant", "", "gpt-5.1-codex", 250, 0, 9)]
    assert conv.context_window == 258400
    assert any("usage records only" in w and "2 request" in w for w in s.warnings)


def test_a_rollout_of_nothing_at_all_is_still_an_error(tmp_path):
    import pytest

    from ctxview.formats import LoadError

    p = rollout(tmp_path, [("session_meta", {"id": "s1"}), ("turn_context", {"model": "m"})])
    with pytest.raises(LoadError, match="no messages found"):
        load_session(p)


def test_tool_outputs_carry_the_turn_policy_exit_code_and_is_error(tmp_path):
    def call(cid):
        return ("response_item", {"type": "function_call", "name": "shell", "call_id": cid, "arguments": "{}"})

    def out(cid, output, kind="function_call_output"):
        return ("response_item", {"type": kind, "call_id": cid, "output": output})

    p1 = {"mode": "tokens", "limit": 10000}
    p = rollout(tmp_path, [
        ("turn_context", {"model": "m", "truncation_policy": p1}),
        msg("user", "go"),
        call("c1"), out("c1", '{"output":"boom\\n","metadata":{"exit_code":2,"duration_seconds":0.1}}'),
        call("c2"), out("c2", "Chunk ID: ab\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nok"),
        call("c3"), out("c3", {"content": "denied", "success": False}),
        ("turn_context", {"model": "m"}),  # a turn without a recorded policy
        call("c4"), out("c4", "plain text, no code"),
        call("c5"), out("c5", "Process exited with code 1 (in a text, not the header line)", "custom_tool_call_output"),
        call("c6"), out("c6", "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail"),
        call("c7"), out("c7", "Wall time: 0.2 seconds\nOutput:\nProcess exited with code 3\n"),
        # spaced JSON; the key inside the output string is escaped, so not taken for the real one
        call("c8"), out("c8", '{"output": "\\"metadata\\": {\\"exit_code\\": 5}", "metadata": { "exit_code": 0}}'),
    ])
    tools = [m for m in load_session(p).conversations[0].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tools] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
    assert [dict(m.meta) for m in tools] == [
        {"truncation_policy": p1, "exit_code": 2, "is_error": True},
        {"truncation_policy": p1, "exit_code": 0},
        {"truncation_policy": p1, "is_error": True},
        {},
        {},
        {"exit_code": 1, "is_error": True},
        {},  # the code is in the output, not in the header
        {"exit_code": 0},
    ]
    assert tools[2].text == "denied"


def test_real_rollout_records_the_policy_on_every_output():
    conv = load_session(FIX).conversations[0]
    tools = [m for m in conv.messages if m.role == "tool"]
    assert all(m.meta["truncation_policy"] == {"mode": "tokens", "limit": 25000} for m in tools)
    assert [m.meta.get("exit_code") for m in tools] == [0, 0, 0, 0]
    assert not any(m.meta.get("is_error") for m in tools)
    # reasoning items with text are kept as thinking; Codex has no Anthropic thinking blocks
    assert any(m.thinking for m in conv.messages) and not any("thinking_blocks" in m.meta for m in conv.messages)


def test_an_exit_code_that_is_no_number_is_left_out_not_an_error(tmp_path):
    # 'Exit code: --5' once reached int() and raised a bare ValueError; a code of thousands of
    # digits would too (int() refuses over 4,300): both say no code, and the output still loads
    def call(cid):
        return ("response_item", {"type": "function_call", "name": "shell", "call_id": cid, "arguments": "{}"})

    def out(cid, output):
        return ("response_item", {"type": "function_call_output", "call_id": cid, "output": output})

    huge = "9" * 5000
    p = rollout(tmp_path, [
        ("turn_context", {"model": "m"}), msg("user", "go"),
        call("c1"), out("c1", "Exit code: --5\nOutput:\nx"),
        call("c2"), out("c2", "Exit code: -\nOutput:\nx"),
        call("c3"), out("c3", '{"output":"x","metadata":{"exit_code":' + huge + '}}'),
        call("c4"), out("c4", "Process exited with code " + "7" * 400 + "\nOutput:\nx"),
        call("c5"), out("c5", "Exit code: -3\nOutput:\nx"),
    ])
    tools = [m for m in load_session(p).conversations[0].messages if m.role == "tool"]
    assert [m.meta.get("exit_code") for m in tools] == [None, None, None, None, -3]
    assert [m.tool_call_id for m in tools] == ["c1", "c2", "c3", "c4", "c5"]
