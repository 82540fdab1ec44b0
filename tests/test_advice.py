"""Advice ranked by dollars: every recommendation replayed through the prompt-cache simulation; one that
raises the bill is said as such, never recommended; a control that changes nothing says why."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.analysis.advice import rank_advice, setting_overrides, verdict
from ctxview.model import Conversation, Message, Session, ToolCall, Usage
from ctxview.pipeline import PipelineCache, prepare
from ctxview.analysis.report import build_report
from ctxview.analysis.report_render import render_report
from ctxview.settings import ClearSettings, Settings, keep_recent_note

SPOTTER = (Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


def test_a_rise_is_never_said_as_a_saving():
    assert verdict(9.76) == "raises the bill by $9.76"
    assert verdict(-0.5) == "saves $0.5000"
    assert verdict(0) == "costs the same" and verdict(None) == "no price"


def test_recommendation_options_become_settings():
    assert setting_overrides("--tiers default --keep-recent 10") == {"tiers": "default", "keep_recent": 10}
    assert setting_overrides("--clear-keep 3") == {"clear": ClearSettings(keep=3)}
    assert setting_overrides("--old-messages llm") == {"old_messages": "llm"}
    assert setting_overrides("--budget 140000") == {"budget": 140_000}
    assert setting_overrides("--frobnicate 3") is None


@dataclass
class Out:
    requests: int
    tokens: int
    read: int
    usd: float | None

    @property
    def read_share(self):
        return self.read / self.tokens

    def to_dict(self):
        return {"requests": self.requests, "tokens": self.tokens, "read_share": self.read_share, "usd": self.usd}


def test_ranked_by_dollars_and_a_rise_set_apart():
    base = Out(10, 1000, 900, 10.0)
    outcomes = {2: Out(10, 800, 700, 8.0), 5: Out(10, 900, 850, 5.0), 7: Out(10, 500, 100, 13.0),
                11: Out(10, 950, 900, None)}
    recs = [{"action": a, "setting": f"--budget {n}", "saves": n * 100} for a, n in
            (("two", 2), ("five", 5), ("seven", 7), ("eleven", 11))]
    keep, rise = rank_advice(recs, base, lambda s: outcomes[s.budget], lambda o: Settings(**o), 10)
    assert [r["action"] for r in keep] == ["five", "two", "eleven"]   # $5 saved, $2 saved, then no price
    assert [r["action"] for r in rise] == ["seven"]
    assert rise[0]["replay"]["verdict"] == "raises the bill by $3.00"
    assert keep[0]["replay"]["tokens_saved"] == 100 and keep[0]["replay"]["tokens_saved_per_request"] == 10


def test_on_a_real_session_every_recommendation_raises_the_bill_and_none_is_recommended():
    doc = build_report(load_session(SPOTTER), agent="main")
    b = doc["conversations"][0]["bloat"]
    assert b["recommendations"] == []
    assert {r["setting"] for r in b["raises_bill"]} == {"--tiers default --keep-recent 10", "--clear-keep 3",
                                                        "--old-messages llm"}
    base = doc["conversations"][0]["cache"]["simulated"]["usd"]
    for r in b["raises_bill"]:
        rep = r["replay"]
        assert rep["usd_change"] > 0 and rep["tokens_saved"] > 0   # fewer tokens, more dollars
        assert rep["usd_change"] == pytest.approx(rep["usd"] - base, abs=1e-5)
        assert rep["verdict"].startswith("raises the bill by $")
    out = io.StringIO()
    render_report(doc, out)
    text = out.getvalue()
    assert "not recommended: --tiers default --keep-recent 10 (compress old tool results by age) raises the bill by $" \
        in text
    assert "Recommendations" not in text


def test_the_compare_table_says_a_rise_as_a_rise():
    doc = build_report(load_session(SPOTTER), agent="main", compare=[("default", {"tiers": "default"}),
                                                                     ("aggressive", {"tiers": "aggressive"})])
    rows = doc["conversations"][0]["compare"]["settings"]
    assert all(r["usd_change"] > 0 and r["verdict"].startswith("raises the bill by $") for r in rows)
    assert [r["usd"] for r in rows] == sorted(r["usd"] for r in rows)
    out = io.StringIO()
    render_report(doc, out)
    assert "default: −53% tokens per request, cache reads 99% → 64%, raises the bill by $" in out.getvalue()


def _cold_session(rounds: int = 30) -> Session:
    """Requests two hours apart (the cache always expired): every request writes all of its prompt, so
    sending fewer tokens is cheaper."""
    msgs = [Message(role="user", content="read the files")]
    for k in range(rounds):
        ts = f"2026-05-{1 + k // 12:02d}T{(2 * k) % 24:02d}:00:00Z"
        context = 2000 + k * 2600
        msgs.append(Message(role="assistant", content="", tool_calls=(ToolCall(f"c{k}", "Read", {"path": f"f{k}"}),),
                            usage=Usage(0, 50, 0, context), model_id="claude-sonnet-4-5-20250929",
                            meta={"timestamp": ts}))
        msgs.append(Message(role="tool", content=f"line {k}\n" + "x" * 10_000, tool_call_id=f"c{k}", tool_name="Read"))
    conv = Conversation(name="main", model="claude-sonnet-4-5-20250929", messages=tuple(msgs))
    return Session(format="ctxview", source="cold", conversations=(conv,))


def test_a_recommendation_that_saves_is_recommended_with_its_dollars():
    doc = build_report(_cold_session())
    b = doc["conversations"][0]["bloat"]
    tiers = [r for r in b["recommendations"] if r["setting"].startswith("--tiers default")]
    assert tiers, b
    rep = tiers[0]["replay"]
    assert rep["usd_change"] < 0 and rep["verdict"].startswith("saves $") and rep["tokens_saved"] > 0
    changes = [r["replay"]["usd_change"] for r in b["recommendations"] if r["replay"]]
    assert changes == sorted(changes)                       # most dollars saved first
    assert all(r["replay"]["usd_change"] > 0 for r in b["raises_bill"])


# --- a control that changes nothing -----------------------------------------------------------

@pytest.mark.parametrize("k", range(0, 11))
def test_keep_recent_inside_the_first_full_tier_changes_nothing_and_says_why(k):
    note = keep_recent_note(Settings(tiers="default", keep_recent=k))
    assert "changes nothing" in note and "ages 0-10 whole" in note


def test_keep_recent_above_the_first_tier_or_read_elsewhere_has_no_note():
    assert keep_recent_note(Settings(tiers="default", keep_recent=11)) == ""
    assert keep_recent_note(Settings(tiers="default", keep_recent=5, budget=50_000)) == ""   # the budget reads it
    assert keep_recent_note(Settings(tiers="default", keep_recent=5, old_messages="llm")) == ""
    assert keep_recent_note(Settings(tiers="aggressive", keep_recent=5)) != ""              # 5:full
    assert keep_recent_note(Settings(tiers="aggressive", keep_recent=6)) == ""
    assert "no tiers" in keep_recent_note(Settings())


def test_the_note_is_true_on_a_real_session():
    conv = load_session(SPOTTER).conversations[0]
    cache = PipelineCache()
    views = [prepare(conv, Settings(tiers="default", keep_recent=k), cache=cache) for k in range(0, 11)]
    assert len({v.tokens_prepared for v in views}) == 1
    assert len({tuple(m.content for m in v.prepared) for v in views}) == 1


def test_the_status_bar_marks_a_keep_recent_that_changes_nothing():
    from ctxview.tui.widgets.chrome import StatusParts, status_line

    def line(settings: Settings) -> str:
        return status_line(StatusParts(settings, (1, 1), request="1/2", rows=4, cursor=1), 200).plain

    assert "keep_recent=5 (no effect)" in line(Settings(tiers="default", keep_recent=5))
    assert "keep_recent=12 ·" in line(Settings(tiers="default", keep_recent=12))
    assert "keep_recent=10 · tiers=off" in line(Settings())   # as sent: nothing marked (the keys say it)


def test_the_report_says_why_keep_recent_changes_nothing(capsys):
    from ctxview.cli import commands as cli

    assert cli.main(["report", str(SPOTTER), "--agent", "main", "--tiers", "default", "--keep-recent", "5"]) == 0
    assert "keep_recent 5 changes nothing: the tiers keep ages 0-10 whole already" in capsys.readouterr().out
    doc = build_report(load_session(SPOTTER), {"tiers": "default", "keep_recent": 12}, agent="main")
    assert doc["conversations"][0]["keep_recent_note"] is None
