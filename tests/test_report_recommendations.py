"""The report's recommendations against the current settings, and calibration only with enough
recorded requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.cli import commands as cli
from ctxview.engine.bloat import analyze_context_bloat
from ctxview.formats import load_session
from ctxview.analysis.report import (
    MIN_CALIBRATION_REQUESTS,
    build_report,
    recommendation_applied,
    split_recommendations,
)
from ctxview.settings import ClearSettings, Settings

ROOT = Path(__file__).parents[1]
CLAUDE = ROOT / "sample_sessions" / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"
ONE_REQUEST = ROOT / "tests" / "fixtures" / "samples" / "claude-code" / "spotter-short.jsonl"


def report_json(capsys, *args: str) -> dict:
    assert cli.main(["report", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def settings_of(conv: dict) -> list[str]:
    """Every recommendation not applied yet: those that save and those that raise the bill (advice)."""
    return [r["setting"] for r in conv["bloat"]["recommendations"] + conv["bloat"]["raises_bill"]]


@pytest.mark.parametrize("setting, settings, applied", [
    ("--tiers default --keep-recent 10", Settings(tiers="default", keep_recent=10), True),
    ("--tiers default --keep-recent 10", Settings(tiers="10:full,20:1000,40:500,60:200,*:100"), True),  # written out
    ("--tiers default --keep-recent 10", Settings(tiers="default", keep_recent=5), False),
    ("--tiers default --keep-recent 10", Settings(tiers="default", compression=False), False),
    ("--tiers default --keep-recent 10", Settings(tiers="aggressive"), False),
    ("--tiers default --keep-recent 10", Settings(), False),  # as sent
    ("--clear-keep 3", Settings(clear=ClearSettings(keep=3)), True),
    ("--clear-keep 3", Settings(clear=ClearSettings(keep=1)), True),  # clears more already
    ("--clear-keep 3", Settings(clear=ClearSettings(keep=5)), False),
    ("--clear-keep 3", Settings(), False),
    ("--old-messages llm", Settings(old_messages="llm"), True),
    ("--old-messages llm", Settings(old_messages="remove"), False),
    ("--budget 140000", Settings(budget=100_000), True),
    ("--budget 140000", Settings(budget=150_000), False),
    ("--budget 140000", Settings(), False),
    ("--something-new 3", Settings(), False),  # an option not known here is recommended
])
def test_recommendation_applied(setting, settings, applied):
    assert recommendation_applied(setting, settings) is applied


def test_every_recommendation_the_analysis_makes_is_understood():
    conv = load_session(str(CLAUDE)).conversations[0]
    report = analyze_context_bloat(conv.messages, threshold=0.0001, context_window=200_000, keep_recent=10)
    kinds = {r.setting.split()[0] for r in report.recommendations}
    assert kinds == {"--tiers", "--clear-keep", "--old-messages", "--budget"}  # all four kinds made here
    everything = Settings(tiers="default", keep_recent=10, clear=ClearSettings(keep=3), old_messages="llm",
                          budget=1)
    todo, applied = split_recommendations(report.recommendations, everything)
    assert todo == [] and len(applied) == len(report.recommendations)
    todo, applied = split_recommendations(report.recommendations, Settings())
    assert applied == [] and len(todo) == len(report.recommendations)


def test_report_does_not_recommend_what_is_applied(capsys):
    plain = report_json(capsys, CLAUDE)["conversations"][0]
    assert "--tiers default --keep-recent 10" in settings_of(plain) and "--clear-keep 3" in settings_of(plain)
    assert plain["bloat"]["applied"] == []
    applied = report_json(capsys, CLAUDE, "--tiers", "default", "--keep-recent", "10")["conversations"][0]
    assert "--tiers default --keep-recent 10" not in settings_of(applied)
    assert "--clear-keep 3" in settings_of(applied)
    assert [r["setting"] for r in applied["bloat"]["applied"]] == ["--tiers default --keep-recent 10"]
    # another keep_recent: the recommendation is made for it, and it is what is applied
    five = report_json(capsys, CLAUDE, "--tiers", "default", "--keep-recent", "5")["conversations"][0]
    assert not any(s.startswith("--tiers") for s in settings_of(five))
    assert cli.main(["report", str(CLAUDE), "--tiers", "default", "--keep-recent", "10", "--clear-keep", "3"]) == 0
    text = capsys.readouterr().out
    assert "already applied: --tiers default --keep-recent 10" in text
    assert "already applied: --clear-keep 3" in text


def test_a_factor_needs_enough_recorded_requests(capsys):
    one = report_json(capsys, ONE_REQUEST)["conversations"][0]["calibration"]
    assert one["requests"] == 1 < MIN_CALIBRATION_REQUESTS
    assert one["factor"] is None and one["factor_note"] == (
        f"too few recorded requests (1) to fit a factor (at least {MIN_CALIBRATION_REQUESTS})")
    assert cli.main(["report", str(ONE_REQUEST)]) == 0
    text = capsys.readouterr().out
    assert "too few recorded requests (1) to fit a factor" in text and "correction factor ×" not in text
    many = report_json(capsys, CLAUDE)["conversations"][0]["calibration"]
    assert many["requests"] >= MIN_CALIBRATION_REQUESTS and many["factor"] > 0 and "factor_note" not in many
    assert cli.main(["report", str(CLAUDE)]) == 0
    assert f"correction factor ×{many['factor']:.3f}" in capsys.readouterr().out


def test_a_fit_from_a_few_requests_is_not_printed(capsys):
    four = ROOT / "tests" / "fixtures" / "samples" / "claude-code" / "spotter-tool-heavy.jsonl"
    cal = report_json(capsys, four)["conversations"][0]["calibration"]
    assert cal["requests"] == 4 and cal["slope"] is not None  # fitted (the cache replay uses it) ...
    assert cal["factor"] is None and cal["fit_note"] == cal["factor_note"]
    assert cli.main(["report", str(four)]) == 0
    text = capsys.readouterr().out
    assert "too few recorded requests (4)" in text and "fit (as-sent" not in text  # ... but not printed
