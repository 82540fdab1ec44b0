"""Recorded usage summed per request, per conversation and for the whole session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ctxview import load_session
from ctxview.model import Conversation, Message, Session, Usage
from ctxview.analysis.report import build_report
from ctxview.analysis.usage import UsageTotals, conversation_usage, recorded_requests, session_usage

FIXTURES = Path(__file__).parent / "fixtures" / "samples"
SPOTTER = FIXTURES / "claude-code" / "spotter-258c7280" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def conv(name: str, usages: list[Usage | None], model: str = "claude-sonnet-4-5") -> Conversation:
    msgs = []
    for u in usages:
        msgs.append(Message(role="user", content="go"))
        msgs.append(Message(role="assistant", content="ok", usage=u, model_id=model))
    return Conversation(name=name, messages=tuple(msgs), model=model)


def test_totals_sum_each_recorded_request_once():
    c = conv("main", [Usage(10, 20, 300, 40), None, Usage(1, 2, 3, 4)])
    assert [r.index for r in recorded_requests(c)] == [1, 5]
    assert conversation_usage(c) == UsageTotals(requests=2, input=11, output=22, cache_read=303, cache_write=44)
    assert conversation_usage(c).read_share == 303 / (11 + 303 + 44)


def test_session_totals_include_every_conversation():
    main = conv("main", [Usage(10, 20, 300, 40)])
    sub = conv("agent-1", [Usage(5, 6, 7, 8), Usage(1, 1, 1, 1)])
    s = Session(format="ctxview", source="x", conversations=(main, sub))
    assert session_usage(s) == UsageTotals(3, 16, 27, 308, 49)
    doc = build_report(s, agent="main")  # the session's figures do not depend on the conversation shown
    assert [c["name"] for c in doc["conversations"]] == ["main"]
    assert doc["conversations"][0]["usage"] == {"requests": 1, "input": 10, "output": 20, "cache_read": 300,
                                                "cache_write": 40, "cache_write_1h": 0}
    assert doc["usage"] == {"requests": 3, "input": 16, "output": 27, "cache_read": 308, "cache_write": 49,
                            "cache_write_1h": 0}


def test_real_session_with_subagents_matches_the_raw_file_sums():
    session = load_session(SPOTTER)
    doc = build_report(session)
    # the main file's own usage lines, summed once per message.id (its lines repeat a response's usage)
    seen: dict[str, dict] = {}
    for line in SPOTTER.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        msg = rec.get("message")
        if rec.get("type") == "assistant" and isinstance(msg, dict) and msg.get("usage") and not rec.get("isSidechain"):
            seen[msg["id"]] = msg["usage"]
    main = doc["conversations"][0]
    assert main["usage"]["requests"] == len(seen)
    assert main["usage"]["output"] == sum(u["output_tokens"] for u in seen.values())
    assert main["usage"]["cache_read"] == sum(u.get("cache_read_input_tokens", 0) for u in seen.values())
    total = {k: sum(c["usage"][k] for c in doc["conversations"]) for k in main["usage"]}
    assert len(doc["conversations"]) == 3 and doc["usage"] == total
    assert doc["usage"]["requests"] > main["usage"]["requests"]


def test_per_request_usage_with_messages(tmp_path):
    c = conv("main", [Usage(10, 20, 300, 40), Usage(1, 2, 3, 4)])
    doc = build_report(Session(format="ctxview", source="x", conversations=(c,)), rows=True)
    per = doc["conversations"][0]["usage_by_request"]
    assert [(r["index"], r["input"], r["cache_write"]) for r in per] == [(1, 10, 40), (3, 1, 4)]


def test_text_report_has_a_usage_section():
    out = subprocess.run([sys.executable, "-m", "ctxview", "report", str(SPOTTER)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Recorded usage:" in out.stdout
    assert "session: every conversation, sub-agents included" in out.stdout
    assert "14,972,534" in out.stdout   # the session's cache reads, main file and both sub-agents
