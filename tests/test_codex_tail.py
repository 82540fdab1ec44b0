"""A Codex rollout from its last `compacted` record on (formats/codex_tail.py): the next request as
sent from the tail alone equals the whole file's, with the turn's state (instructions, model,
truncation policy, the last token count) read from before the compaction."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxview.formats import load_session
from ctxview.formats import codex_tail
from ctxview.formats.codex_tail import load_tail
from ctxview.formats.tails import load_tail as load_any_tail
from ctxview.pipeline import prepare
from ctxview.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = next((ROOT / "sample_sessions" / "codex").glob("rollout-*.jsonl"))


def _sent(conversation):
    view = prepare(conversation, Settings())
    return [(m.role, m.text, tuple((c.name, c.arguments) for c in m.tool_calls)) for m in view.prepared]


def _same_tail(path: Path) -> None:
    part, whole = load_tail(str(path), share=1.0), load_session(str(path))
    assert part is not None
    a, b = part.conversations[0], whole.conversations[0]
    assert _sent(a) == _sent(b)
    # the tail's messages are the whole file's last ones, with what the loader read into them
    tail = b.messages[len(b.messages) - len(a.messages):]
    assert [(m.role, m.text, m.meta, m.usage) for m in a.messages] == [(m.role, m.text, m.meta, m.usage) for m in tail]
    assert (a.system_prompt, a.model, a.context_window) == (b.system_prompt, b.model, b.context_window)


def test_the_samples_tail_sends_the_whole_files_next_request(tmp_path):
    path = tmp_path / SAMPLE.name
    path.write_bytes(SAMPLE.read_bytes())
    _same_tail(path)
    part = load_any_tail(str(path), "codex", share=1.0)
    assert part is not None and len(part.conversations[0].messages) < len(load_session(str(path)).conversations[0].messages)


def _turn(k: int, policy: dict, total: int) -> list[dict]:
    ts = f"2026-03-02T09:{k // 60:02d}:{k % 60:02d}.000Z"
    usage = {"input_tokens": 1000 + k, "cached_input_tokens": 500, "output_tokens": 50, "reasoning_output_tokens": 0,
             "total_tokens": 1050 + k}
    count = {"type": "token_count", "info": {"total_token_usage": {"total_tokens": total}, "last_token_usage": usage,
                                             "model_context_window": 200_000 + k}}
    return [
        # Codex repeats the last count at a turn's start: the loader keeps it once
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": total - 1}, "last_token_usage": usage,
            "model_context_window": 200_000 + k}}},
        {"timestamp": ts, "type": "turn_context", "payload": {"model": f"gpt-5.{k % 3}-codex",
                                                              "truncation_policy": policy}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"step {k}: read the log"}]}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                               "call_id": f"c{k}", "arguments": '{"cmd":"cat log"}'}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output", "call_id": f"c{k}",
                                                               "output": f"line {k}\n" * (40 + 30 * (k % 4))}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": f"done with step {k}"}]}},
        {"timestamp": ts, "type": "event_msg", "payload": count},
    ]


def _rollout(turns: int) -> list[dict]:
    lines = [{"timestamp": "2026-03-02T09:00:00.000Z", "type": "session_meta", "payload": {
        "id": "s1", "cwd": "/w", "cli_version": "0.89.0", "base_instructions": {"text": "You are Codex."}}}]
    for k in range(turns):
        policy = {"mode": "bytes", "limit": 120} if k % 2 else {"mode": "tokens", "limit": 40}
        lines += _turn(k, policy, total=10 * (k + 1))
    return lines


def _compacted(k: int) -> dict:
    return {"timestamp": "2026-03-02T10:00:00.000Z", "type": "compacted", "payload": {
        "message": f"summary {k}", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "step 0: read the log"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"summary {k}"}]}]}}


def test_a_compaction_anywhere_gives_the_tail_the_whole_files_next_request(tmp_path):
    """The compaction after each line of a rollout whose turns change the model, the truncation
    policy and the context window, and repeat their last token count."""
    lines = _rollout(6)
    path = tmp_path / "rollout.jsonl"
    for at in range(2, len(lines) + 1):
        records = lines[:at] + [_compacted(at)] + lines[at:]
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
        _same_tail(path)


def test_without_the_turns_state_near_it_the_rollout_is_read_whole(tmp_path, monkeypatch):
    lines = _rollout(2)
    path = tmp_path / "rollout.jsonl"
    no_meta = lines[1:3] + [_compacted(0)] + lines[3:]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in no_meta))
    assert load_tail(str(path), share=1.0) is None
    # no turn_context before it: none in the file (taken), or none near it (read whole)
    no_turn = lines[:1] + [_compacted(0)] + lines[1:]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in no_turn))
    assert load_tail(str(path), share=1.0) is not None
    far = lines[:4] + lines[3:4] * 40 + [_compacted(0)] + lines[4:]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in far))
    monkeypatch.setattr(codex_tail, "STATE_REACH", 500)
    assert load_tail(str(path), share=1.0) is None
    monkeypatch.setattr(codex_tail, "STATE_REACH", 64 << 20)
    _same_tail(path)


@pytest.mark.parametrize("share, found", [(0.05, False), (1.0, True)])
def test_only_a_compaction_in_the_share_looked_at_is_taken(tmp_path, share, found):
    lines = _rollout(8)
    records = lines[:10] + [_compacted(1)] + lines[10:]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert (load_tail(str(path), share=share) is not None) is found


def test_a_tails_warnings_say_where_their_lines_count_from(tmp_path):
    lines = _rollout(3)
    records = lines[:9] + [_compacted(1)] + lines[9:]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records) + b'{"timestamp": "x", "type": "resp'
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    part = load_tail(str(path), share=1.0)
    assert part is not None
    start = data.index(b'"type":"compacted"')
    start = data.rindex(b"\n", 0, start) + 1
    assert part.warnings and all(w.startswith(f"in the part after the last compaction (lines counted from byte {start:,})")
                                 for w in part.warnings)


def test_a_first_line_longer_than_the_first_read_is_still_read(tmp_path):
    lines = _rollout(2)
    lines[0]["payload"]["base_instructions"]["text"] = "You are Codex. " + "x" * 200_000
    records = lines[:9] + [_compacted(1)] + lines[9:]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    _same_tail(path)
