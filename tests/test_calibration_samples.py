"""Recorded usage tracks the as-sent estimate on every bundled sample and real fixture.

Where a file recorded the input of each request, recorded ≈ overhead + slope × (the history the
harness sent, estimated) must fit with r² ≥ 0.9: a compaction shows as the same drop on both
sides. The bundled samples are generated (benchmarks/make_session.py), so this also keeps their
usage consistent with their own compactions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.formats import load_session
from ctxview.analysis.report import build_report

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "samples"
MIN_REQUESTS = 10  # fewer recorded requests fit any line too easily to prove anything
MIN_R2 = 0.9


def _files() -> list[Path]:
    bundled = [p for p in sorted((ROOT / "sample_sessions").rglob("*")) if p.is_file()]
    bundled += sorted((ROOT / "ctxview" / "samples").glob("*.json"))
    real = [p for fmt in ("claude-code", "codex") for p in sorted((FIXTURES / fmt).rglob("*"))
            if p.is_file() and p.suffix in (".jsonl", ".json")]
    return bundled + real


FILES = _files()


def _calibrated(path: Path) -> list[tuple[str, dict, list]]:
    """(conversation, its calibration, its compactions) for each conversation with enough requests."""
    report = build_report(load_session(path))
    return [(c["name"], c["calibration"], c["compactions"]) for c in report["conversations"]
            if c["calibration"]["requests"] >= MIN_REQUESTS]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_recorded_usage_fits_the_as_sent_estimate(path):
    for name, cal, _ in _calibrated(path):
        assert cal["view"] == "as-sent"
        assert cal["r2"] is not None and cal["r2"] >= MIN_R2, (
            f"{path.relative_to(ROOT)} [{name}]: as-sent r² {cal['r2']} over {cal['requests']} requests "
            f"(overhead {cal['overhead']}, slope {cal['slope']})")


# The files that make the check above worth having: each has a compaction and enough requests.
COMPACTED = [
    ("sample_sessions/claude-code/7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl", "main"),
    ("sample_sessions/codex/rollout-2026-03-02T09-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl", "main"),
    ("tests/fixtures/samples/claude-code/spotter-258c7280/258c7280-ae70-4798-800f-63464d01a85d.jsonl", "main"),
]


@pytest.mark.parametrize("rel,name", COMPACTED, ids=[r for r, _ in COMPACTED])
def test_compacted_files_are_checked_and_their_usage_drops_at_the_compaction(rel, name):
    path = ROOT / rel
    assert path in FILES
    (cal, events) = next((cal, ev) for n, cal, ev in _calibrated(path) if n == name)
    assert cal["r2"] >= MIN_R2
    assert any(e["kind"] == "compaction" for e in events)
    conv = next(c for c in load_session(path).conversations if c.name == name)
    for event in (e for e in conv.events if e.kind == "compaction"):
        recorded = [(i, m.usage.context_tokens) for i, m in enumerate(conv.messages)
                    if m.role == "assistant" and m.usage is not None and m.usage.context_tokens > 0]
        before = [t for i, t in recorded if i < event.index]
        after = [t for i, t in recorded if i >= event.index]
        assert before and after
        assert after[0] < before[-1] / 2, f"{rel}: recorded {before[-1]} before the compaction, {after[0]} after"
