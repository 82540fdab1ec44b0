"""Every reference case gives what the original Ruby ContextManager returned.

Replays tests/fixtures/parity (copies of the reference files) with the same
comparison as the reference's check_parity.py: role, content (text and
attachment count) and tool_call_id of every message; the other fields are
kept by ctxview on purpose and not compared.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ctxview import Content, ContextManager, Message

FIXTURES = Path(__file__).parent / "fixtures" / "parity"
CASES = json.loads((FIXTURES / "parity_cases.json").read_text(encoding="utf-8"))
EXPECTED = json.loads((FIXTURES / "parity_expected.json").read_text(encoding="utf-8"))


def to_msg(h):
    c = h.get("content")
    if isinstance(c, dict):
        c = Content(c["text"], list(c["attachments"]))
    kw = {k: h[k] for k in ("tool_call_id", "tool_calls", "model_id") if h.get(k) is not None}
    return Message(role=h["role"], content=c, **kw)


def from_msg(m):
    c = m.content
    if isinstance(c, Content):
        c = {"text": c.text, "attachments": len(c.attachments)}
    h = {"role": m.role, "content": c}
    if m.tool_call_id:
        h["tool_call_id"] = m.tool_call_id
    return h


def norm_expected(x):
    if isinstance(x, dict) and "role" in x:
        c = x.get("content")
        if isinstance(c, dict):
            c = {"text": c["text"], "attachments": len(c["attachments"])}
        h = {"role": x["role"], "content": c}
        if x.get("tool_call_id"):
            h["tool_call_id"] = x["tool_call_id"]
        return h
    if isinstance(x, list):
        return [norm_expected(v) for v in x]
    if isinstance(x, dict):
        return {k: norm_expected(v) for k, v in x.items()}
    return x


def run(c):
    cm = ContextManager()
    op = c["op"]
    if op == "compress_tool_results":
        msgs = [to_msg(h) for h in c["messages"]]
        before = list(msgs)
        out = cm.compress_tool_results(msgs, keep_recent=c["keep_recent"])
        assert msgs == before, "input mutated"
        return [from_msg(m) for m in out]
    if op == "compress_tool_message":
        return from_msg(cm.compress_tool_message(to_msg(c["message"]), age=c["age"]))
    if op == "prepare_for_llm":
        msgs = [to_msg(h) for h in c["messages"]]
        before = list(msgs)
        for idx, txt in c.get("ephemeral", []):
            cm.add_ephemeral_content_for_message(idx, txt)
        for txt in c.get("reminders", []):
            cm.add_ephemeral_reminder(txt, messages_array=msgs)
        out = cm.prepare_for_llm(msgs)
        assert msgs == before, "input mutated"
        assert out is not msgs
        return {
            "messages": [from_msg(m) for m in out],
            "ephemeral_count": cm.ephemeral_count(),
            "has_ephemeral": cm.has_ephemeral(),
        }
    if op == "detect_tool_name":
        return cm.detect_tool_name(c["content"])
    if op == "rerunnable_tool":
        return cm.is_rerunnable_tool(c["name"])
    if op == "extract_system_reminders":
        return cm.extract_system_reminders(c["content"])
    if op == "strip_system_reminders":
        return cm.strip_system_reminders(c["content"])
    if op == "has_system_reminders":
        return cm.has_system_reminders(c["content"])
    if op == "auto_compress_twice":
        msgs = [to_msg(h) for h in c["messages"]]
        before = cm.compression_applied
        r1 = cm.auto_compress_on_threshold(msgs, keep_recent=c["keep_recent"])
        r2 = cm.auto_compress_on_threshold(msgs, keep_recent=c["keep_recent"])
        cm.reset_compression()
        return {
            "before": before,
            "first": [from_msg(m) for m in r1],
            "second": [from_msg(m) for m in r2],
            "after_reset": cm.compression_applied,
        }
    raise AssertionError(f"unknown op {op}")


def test_fixture_files_pair_up():
    assert len(CASES) == len(EXPECTED) >= 150
    assert all("ok" in e for e in EXPECTED)  # the reference raised on no case


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{i}-{c['op']}" for i, c in enumerate(CASES)])
def test_case_matches_reference(index):
    case, expected = CASES[index], EXPECTED[index]
    got = run(copy.deepcopy(case))
    want = norm_expected(expected["ok"])
    # `is` checks too: None, True and False must not stand in for each other.
    assert got == want
    if case["op"] == "auto_compress_twice":
        assert got["before"] is want["before"] and got["after_reset"] is want["after_reset"]
