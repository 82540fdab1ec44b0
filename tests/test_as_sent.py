"""The default view is each request as its harness sent it (stage 0), and a what-if says it is one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ctxview.engine.compression import compress_tool_results
from ctxview.formats import load_session
from ctxview.engine.harness import MICROCOMPACT_PLACEHOLDER, history_as_sent, swarm_auto_event
from ctxview.model import ContextEvent, Conversation, Message, ToolCall
from ctxview.pipeline import prepare, request_indices
from ctxview.analysis.report import build_report
from ctxview.settings import ClearSettings, Settings
from ctxview.engine.tokens import CharsCounter

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / "sample_sessions/claude-code/7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
CODEX = next((ROOT / "sample_sessions/codex").glob("rollout-*.jsonl"))
C4 = CharsCounter()


def tool_conversation(steps: int, events=(), window=None) -> Conversation:
    msgs = [Message("user", "go")]
    for i in range(steps):
        msgs.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", "Read", {"i": i}),)))
        msgs.append(Message("tool", f"{i}→" + "x" * 3000, tool_call_id=f"c{i}", tool_name="Read"))
    msgs.append(Message("assistant", "done"))
    return Conversation("main", tuple(msgs), events=tuple(events), context_window=window)


def test_the_default_settings_are_as_sent_and_say_so():
    assert Settings().view == "as-sent" and Settings().label() == "as sent"
    what_if = Settings(tiers="default", budget=50_000, clear=ClearSettings(keep=3))
    assert what_if.view == "what-if"
    assert what_if.label() == "what-if: tiers=default, clearing (keep 3), budget 50,000"
    assert Settings(embed_ephemeral=False).view == "what-if"  # leaving the recorded reminders out is one too
    assert Settings(tiers="default", compression=False).view == "as-sent"


def test_claude_code_after_its_compaction_sends_the_summary_and_what_follows():
    conv = load_session(CLAUDE).conversations[0]
    (event,) = [e for e in conv.events if e.kind == "compaction"]
    view = prepare(conv)
    assert view.stats["compacted"] == event.index > 0
    assert view.prepared == conv.messages[event.index:]
    assert conv.messages[event.index].meta.get("compact_summary")
    ghosts = view.rows[:event.index]
    assert all(r.prepared is None and r.changes[0].action == "compacted" for r in ghosts)
    assert "auto" in ghosts[0].changes[0].detail and f"{event.tokens_before:,} tokens before" in ghosts[0].changes[0].detail
    # a request before the compaction sent the whole history up to it
    first = request_indices(conv.messages)[3]
    assert first < event.index
    assert prepare(conv, Settings(request=first)).prepared == conv.messages[:first]


def test_codex_after_its_compaction_sends_the_replacement_history_once():
    conv = load_session(CODEX).conversations[0]
    (event,) = [e for e in conv.events if e.kind == "compaction"]
    view = prepare(conv)
    assert view.prepared == conv.messages[event.index:]
    assert view.stats["compacted"] == event.index
    keys = [(m.role, m.text) for m in view.prepared if m.text]
    assert len(keys) == len(set(keys))  # nothing shown twice
    assert any(m.meta.get("compact_summary") or m.injected for m in view.prepared[:5])


def test_microcompaction_sends_the_placeholder_from_its_index_on():
    conv = tool_conversation(8, [ContextEvent("microcompaction", 10, meta={"tool_ids": ["c1", "c2"]})])
    before = prepare(conv, Settings(request=9), counter=C4)
    assert before.prepared == conv.messages[:9]
    view = prepare(conv, counter=C4)
    cleared = [r for r in view.rows if r.changes and r.changes[0].action == "microcompacted"]
    assert [r.index for r in cleared] == [4, 6]
    assert all(r.prepared.text == MICROCOMPACT_PLACEHOLDER and r.stored.text.startswith(("1→", "2→")) for r in cleared)
    assert all(r.tokens_stored == C4.count_message(r.stored) for r in cleared)


def test_a_recorded_swarm_compression_rewrites_the_history_once_for_the_requests_after_it():
    conv = tool_conversation(20, [ContextEvent("compression", 30, meta={"keep_recent": 10})])
    sent = history_as_sent(conv)
    expected = compress_tool_results(conv.messages[:30], 10)
    assert list(sent.messages[:30]) == expected and sent.messages[30:] == conv.messages[30:]
    assert prepare(conv, Settings(request=29), counter=C4).prepared == conv.messages[:29]
    view = prepare(conv, counter=C4)
    assert view.prepared == sent.messages
    assert view.stats["harness_compressed"] == sum(1 for a, b in zip(expected, conv.messages) if a is not b) > 0
    assert all(c.rule == "harness" for r in view.rows for c in r.changes)


def test_swarm_auto_compresses_once_when_a_request_first_reaches_60_percent():
    conv = tool_conversation(30, window=20_000)
    counts = [C4.count_message(m) for m in conv.messages]
    prefix = [0]
    for c in counts:
        prefix.append(prefix[-1] + c)
    event = swarm_auto_event(conv, lambda k: prefix[k], conv.context_window)
    k = event.index - 1
    assert conv.messages[k].role == "assistant" and prefix[k + 1] >= 12_000
    assert all(prefix[j + 1] < 12_000 for j in range(k) if conv.messages[j].role == "assistant")
    view = prepare(conv, Settings(tiers="swarm-auto"), counter=C4)
    assert view.settings.label() == "what-if: tiers=swarm-auto"
    compressed = [r.index for r in view.rows if any(c.rule == "swarm-auto" for c in r.changes)]
    assert compressed and max(compressed) < event.index - 10  # the last 10 of that history stay whole
    # the messages after it are sent uncut, and nothing else is compressed again
    assert view.prepared[event.index:] == conv.messages[event.index:]
    assert prepare(conv, Settings(tiers="swarm-auto", request=k), counter=C4).prepared == conv.messages[:k]


def test_report_json_names_the_view_the_request_and_the_compactions():
    data = build_report(load_session(CLAUDE))
    main = data["conversations"][0]
    assert main["view"] == "as-sent" and main["view_label"] == "as sent"
    assert main["request"] == {"number": main["request"]["of"] + 1, "index": None, "of": main["request"]["of"]}
    (c,) = main["compactions"]
    assert c["kind"] == "compaction" and c["index"] == 84 and c["trigger"] == "auto" and c["messages_replaced"] == 84
    assert main["calibration"]["view"] == "as-sent" and "r2" in main["calibration"]
    what_if = build_report(load_session(CLAUDE), {"tiers": "default", "request_number": 3})["conversations"][0]
    assert what_if["view"] == "what-if" and what_if["request"]["number"] == 3


def run(*args):
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_request_option_is_one_based_and_checked():
    conv = load_session(CLAUDE).conversations[0]
    out = run("prepare", str(CLAUDE), "--request", "2")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    second = request_indices(conv.messages)[1]
    assert len(body["messages"]) == len(prepare(conv, Settings(request=second)).prepared)
    text = run("report", str(CLAUDE), "--request", "2").stdout
    assert f"view: as sent · request 2 of 46 (#{second})" in text
    bad = run("report", str(CLAUDE), "--request", "99")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "no request 99" in bad.stderr
    assert run("report", str(CLAUDE), "--request", "0").returncode == 2


def test_codex_outputs_are_sent_cut_to_their_turns_truncation_policy():
    from ctxview.engine.codex_truncation import truncate_output

    policy = {"mode": "bytes", "limit": 400}
    msgs = [Message("user", "go"), Message("assistant", "", tool_calls=(ToolCall("c1", "shell", {}),)),
            Message("tool", "line\n" * 500, tool_call_id="c1", meta={"truncation_policy": policy}),
            Message("assistant", "", tool_calls=(ToolCall("c2", "shell", {}),)),
            Message("tool", "short", tool_call_id="c2", meta={"truncation_policy": policy}),
            Message("assistant", "done")]
    conv = Conversation("main", tuple(msgs))
    view = prepare(conv, counter=C4)
    assert view.prepared[2].text == truncate_output(msgs[2].text, policy) != msgs[2].text
    assert "chars truncated" in view.prepared[2].text
    assert view.prepared[4] is msgs[4] and view.stats["truncated"] == 1
    (change,) = view.rows[2].changes
    assert change.action == "truncated" and change.rule == "harness" and "bytes 400" in change.detail
