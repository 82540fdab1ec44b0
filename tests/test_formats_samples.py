"""The bundled demo, sample_sessions/, format detection, and the session generator."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import ctxview
from ctxview import Session, load_session
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
    assert FORMATS == ["swarm-snapshot", "swarm-events", "claude-code", "codex", "openai", "anthropic", "ctxview"]
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
