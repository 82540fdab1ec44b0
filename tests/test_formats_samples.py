"""The bundled demo, sample_sessions/, format detection, and the session generator."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import ctxview
from ctxview import Conversation, Session, load_session
from ctxview.formats import DEMO_PATH, FORMATS, LoadError, detect_format

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_sessions"
sys.path.insert(0, str(ROOT / "benchmarks"))
import make_session  # noqa: E402

EXPECTED_FORMAT = {
    "swarm-demo.ctxview.json": "ctxview",
    "swarm-demo.snapshot.json": "swarm-snapshot",
    "swarm-demo.events.jsonl": "swarm-events",
    "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl": "claude-code",
    "agent-a3f9c1e.jsonl": "claude-code",
    "openai-chat.json": "openai",
    "openai-responses.json": "openai",
    "anthropic-request.json": "anthropic",
}


def sample_files():
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file())


def test_public_names():
    assert ctxview.load_session is load_session
    assert ctxview.LoadError is LoadError
    assert FORMATS == ["swarm-snapshot", "swarm-events", "claude-code", "claude-trace", "claude-tap", "context-lens",
                       "har", "codex", "gemini", "inspect-ai", "openai", "anthropic", "ctxview"]
    assert isinstance(load_session(DEMO_PATH), Session)


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_every_sample_is_detected_and_loads_linked(path):
    expected = EXPECTED_FORMAT.get(path.name, "codex" if path.name.startswith("rollout-") else None)
    assert expected is not None, f"add {path.name} to EXPECTED_FORMAT"
    assert detect_format(path) == expected
    s = load_session(path)
    assert s.format == expected and not s.warnings and s.skipped == 0
    for conv in s.conversations:
        calls = {c.id: c.name for m in conv.messages for c in m.tool_calls}
        results = [m for m in conv.messages if m.role == "tool"]
        assert {m.tool_call_id for m in results} == set(calls)
        assert all(m.tool_name == calls[m.tool_call_id] for m in results)


def test_the_demo_link_in_sample_sessions_is_the_packaged_file():
    link = SAMPLES / "swarm-demo.ctxview.json"
    assert link.is_symlink() and link.resolve() == DEMO_PATH.resolve()


def test_demo_is_a_realistic_swarm_session():
    s = load_session(DEMO_PATH)
    assert s.format == "ctxview"
    assert [c.name for c in s.conversations] == ["lead", "backend", "backend@lead"]
    lead = s.conversations[0]
    assert len(lead.messages) >= 150
    assert lead.system_prompt and lead.model and lead.context_window == 200_000
    assert {"keep_recent", "tiers"} <= set(lead.settings)
    assert lead.ephemeral and all(0 <= i < len(lead.messages) for i in lead.ephemeral)
    texts = [m.text for m in lead.messages]
    assert any(re.search(r"^\s*\d+\u2192", t, re.M) for t in texts)               # Read
    assert any(re.search(r"matches in \d+ files?", t) for t in texts)             # Grep
    assert any(re.match(r"Found \d+ files? matching", t) for t in texts)          # Glob
    assert any("<system-reminder>" in t for t in texts)                           # stored reminders
    assert any(m.tool_name.startswith("DelegateTask") for m in lead.messages if m.role == "tool")
    assert all(m.usage for m in lead.messages if m.role == "assistant")


def test_demo_shows_every_compression_tier():
    # The seed's tiers by age (len - index): 11-20 → 1000 chars, 21-40 → 500, 41-60 → 200, older → 100.
    lead = load_session(DEMO_PATH).conversations[0]
    n = len(lead.messages)
    tiers = {(11, 20, 1000), (21, 40, 500), (41, 60, 200), (61, 10 ** 9, 100)}
    for lo, hi, cap in tiers:
        assert any(m.role == "tool" and lo <= n - i <= hi and len(m.text) > cap
                   for i, m in enumerate(lead.messages)), (lo, hi)


def test_claude_code_sample_has_a_compaction_and_a_subagent():
    s = load_session(SAMPLES / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl")
    main, sub = s.conversations
    (ev,) = main.events
    assert ev.kind == "compaction" and ev.trigger == "auto" and ev.tokens_before
    assert ev.summary.startswith("This session is being continued")
    assert len(ev.replaced) == ev.index > 50
    assert sub.name == "agent-a3f9c1e" and sub.messages


def test_codex_sample_has_a_compaction_with_replacement_history():
    (path,) = (SAMPLES / "codex").glob("rollout-*.jsonl")
    conv = load_session(path).conversations[0]
    (ev,) = conv.events
    assert ev.summary and ev.replaced
    assert conv.messages[ev.index].injected and conv.messages[ev.index + 1].text == ev.summary


def test_samples_are_generated_by_make_session(tmp_path):
    written = make_session.write_samples(0, root=tmp_path)
    assert written
    for p in written:
        committed = ROOT / p.relative_to(tmp_path)
        assert committed.read_bytes() == p.read_bytes(), f"{committed} differs: run benchmarks/make_session.py --samples"


SIZES = {"codex": 2}  # Codex adds its developer and environment messages


@pytest.mark.parametrize("fmt", make_session.FORMATS)
def test_make_session_writes_every_format(tmp_path, fmt):
    path = make_session.write(tmp_path / f"s.{fmt}", 300, fmt, seed=3)
    s = load_session(path)
    assert s.format == {"openai-responses": "openai"}.get(fmt, fmt)
    (conv,) = s.conversations
    assert len(conv.messages) == 300 + SIZES.get(fmt, 0)
    assert not s.warnings
    again = make_session.write(tmp_path / f"t.{fmt}", 300, fmt, seed=3)
    assert again.read_bytes() == path.read_bytes()


def test_make_session_cli(tmp_path):
    assert make_session.main(["50", "--format", "claude-code", "-o", str(tmp_path / "x.jsonl")]) == 0
    assert len(load_session(tmp_path / "x.jsonl").conversations[0].messages) == 50


def test_loaded_messages_are_plain_values():
    # dataclasses.asdict and json must work on what the loaders build (no read-only proxies)
    import dataclasses
    import json

    for path in [DEMO_PATH, *sample_files()]:
        for conv in load_session(path).conversations:
            for m in conv.messages[:40]:
                json.dumps(dataclasses.asdict(m), default=str)
                assert type(m.meta) is dict


# --- the demo reads like a real session: its tool results are true to one fictional repository ----

import shop_api  # noqa: E402  (benchmarks/, on sys.path above)

from ctxview.engine.compression import detect_tool_name  # noqa: E402

_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>", re.S)


def _calls(conv):
    return {c.id: c for m in conv.messages for c in m.tool_calls}


def _check_read(call, text):
    path = call.arguments["file_path"].removeprefix(shop_api.ROOT + "/")
    lines = _REMINDER.sub("", text).split("\n")
    numbers = []
    for line in lines:
        m = re.fullmatch(r" {0,5}(\d{1,6})\u2192(.*)", line)
        assert m and len(line.split("\u2192")[0]) == 6, line
        numbers.append(int(m.group(1)))
        assert shop_api.LINES[path][int(m.group(1)) - 1] == m.group(2), (path, line)
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert numbers[0] == call.arguments.get("offset", 1)
    assert len(numbers) == call.arguments.get("limit", len(shop_api.LINES[path]))


def _check_grep(call, text):
    if text == "No matches found":
        return
    head, body = text.split("\n\n", 1)
    hits = body.split("\n")
    files = {h.split(":", 1)[0] for h in hits}
    m = re.fullmatch(r"Found (\d+) matches in (\d+) files? for /(.+)/:", head)
    assert m and int(m.group(1)) == len(hits) and int(m.group(2)) == len(files) and m.group(3) == call.arguments["pattern"]
    rx = re.compile(call.arguments["pattern"])
    for h in hits:
        path, no, line = h.split(":", 2)
        assert shop_api.LINES[path][int(no) - 1] == line and rx.search(line)


def _check_glob(call, text):
    head, *paths = text.split("\n")
    assert head == f"Found {len(paths)} file{'s' if len(paths) != 1 else ''} matching {call.arguments['pattern']}:"
    assert paths and all(p.removeprefix(shop_api.ROOT + "/") in shop_api.FILES for p in paths)


CHECKS = {"Read": _check_read, "Grep": _check_grep, "Glob": _check_glob}


def test_demo_tool_results_are_true_to_the_repository():
    seen = set()
    for conv in load_session(DEMO_PATH).conversations:
        calls = _calls(conv)
        for m in conv.messages:
            if m.role == "tool" and m.tool_name in CHECKS:
                CHECKS[m.tool_name](calls[m.tool_call_id], m.text)
                assert detect_tool_name(m.text) == m.tool_name or m.text == "No matches found"
                seen.add(m.tool_name)
    assert seen == set(CHECKS)


def test_synthetic_sessions_are_true_to_the_repository_too():
    agent = make_session.generate(600, 5, big_reads=True)
    calls = _calls(Conversation(name="x", messages=tuple(agent.messages)))
    kinds = {m.tool_name for m in agent.messages if m.role == "tool"}
    assert {"Read", "Grep", "Glob", "Bash", "Edit", "TodoWrite", "Write"} <= kinds
    for m in agent.messages:
        if m.role == "tool" and m.tool_name in CHECKS:
            CHECKS[m.tool_name](calls[m.tool_call_id], m.text)
        if m.role == "tool" and m.tool_name == "Edit" and "cat -n" in m.text:
            call = calls[m.tool_call_id]
            assert call.arguments["old_string"] in shop_api.FILES[call.arguments["file_path"].removeprefix(shop_api.ROOT + "/")]


def test_demo_tells_a_task_with_a_failing_run_fixed_and_delegated():
    lead = load_session(DEMO_PATH).conversations[0]
    assert "rate limiting" in lead.messages[0].text
    runs = [m.text for m in lead.messages if m.role == "tool" and m.tool_name == "Bash" and "examples, " in m.text]
    first_fail = next(i for i, t in enumerate(runs) if ", 1 failure" in t)
    assert "Failures:" in runs[first_fail] and "0 failures" in runs[first_fail + 1]
    assert lead.messages[-1].role == "assistant" and lead.messages[-1].text.startswith("Done.")
    # the delegate's report is the delegation instance's own final answer
    instance = load_session(DEMO_PATH).conversations[2]
    report = next(m.text for m in lead.messages if m.role == "tool" and m.tool_name.startswith("DelegateTask"))
    assert report == instance.messages[-1].text


def test_demo_has_a_turn_with_a_stored_and_an_ephemeral_reminder():
    # what the README's reminders screenshot shows
    lead = load_session(DEMO_PATH).conversations[0]
    assert any(m.role == "user" and "<system-reminder>" in m.text and i in lead.ephemeral
               for i, m in enumerate(lead.messages))
