"""analyze_context_bloat."""

from __future__ import annotations

import pytest

from ctxview.engine.bloat import analyze_context_bloat
from ctxview.engine.compression import DEFAULT_POLICY, compress_tool_results
from ctxview.model import Message, ToolCall
from ctxview.engine.tokens import CharsCounter

C4 = CharsCounter()


def conversation(steps: int = 30, size: int = 4000) -> list[Message]:
    msgs = [Message("system", "be brief"), Message("user", "read everything <system-reminder>" + "r" * 76
                                                    + "</system-reminder>")]
    for i in range(steps):
        path = f"/src/f{i % 5}.py"   # every file read several times: repeated calls
        msgs.append(Message("assistant", "", tool_calls=(ToolCall(f"c{i}", "Read", {"file_path": path}),)))
        body = "\n".join(f"{n:6d}→line {n} of {path}" for n in range(1, size // 25))
        msgs.append(Message("tool", body, tool_call_id=f"c{i}"))
    msgs.append(Message("user", "thanks"))
    return msgs


def test_report_numbers_add_up():
    msgs = conversation()
    report = analyze_context_bloat(msgs, counter=C4, ephemeral={len(msgs) - 1: ("e" * 40,)})
    per = [C4.count_message(m) for m in msgs]
    assert report.total_tokens == sum(per) + 10
    assert sum(report.by_role.values()) == sum(per)
    assert report.by_tool == {"Read": report.tool_result_tokens}
    assert report.tool_result_tokens == sum(p for p, m in zip(per, msgs) if m.role == "tool")
    assert report.reminder_tokens_stored == C4.count("<system-reminder>" + "r" * 76 + "</system-reminder>")
    assert report.reminder_tokens_ephemeral == 10
    assert report.largest[0]["tokens"] == max(per)
    d = report.to_dict()
    assert d["bloated"] is report.bloated and report["bloated"] is report.bloated
    assert isinstance(d["recommendations"], list)


def test_no_verdict_without_a_window_and_the_rule_says_so():
    # tool results are nearly all of it: no other rule silently calls it bloated
    msgs = conversation()
    report = analyze_context_bloat(msgs, 0.7, counter=C4)
    assert not report.bloated and report.rule.startswith("no verdict: the context window is unknown")
    assert report.to_dict()["rule"] == report.rule


def test_no_verdict_on_a_few_hundred_tokens_even_over_the_threshold():
    msgs = [Message("user", "u" * 400), *conversation(steps=1, size=200)]
    report = analyze_context_bloat(msgs, 0.7, context_window=250, counter=C4)
    assert report.total_tokens < 1000 and report.total_tokens >= 0.7 * 250
    assert not report.bloated and report.rule.startswith("no verdict on")


def test_the_verdict_states_its_rule():
    msgs = conversation()
    total = analyze_context_bloat(msgs, counter=C4).total_tokens
    report = analyze_context_bloat(msgs, 0.5, context_window=2 * total, counter=C4)
    assert report.bloated and report.rule == f"context {total:,} ≥ 50% of the {2 * total:,}-token window ({total:,})"


def test_savings_in_the_models_tokens_never_exceed_what_the_request_holds():
    msgs = conversation()
    plain = analyze_context_bloat(msgs, 0.7, context_window=200_000, counter=C4)
    assert plain.recommendations
    # the request held 3x the counted tokens (e.g. a calibrated figure): savings scale by the fit's slope
    total = plain.total_tokens
    scaled = analyze_context_bloat(msgs, 0.7, context_window=200_000, counter=C4, figure=(3 * total, "calibrated", 3.0))
    assert scaled.total_tokens == 3 * total and scaled.basis == "calibrated"
    for a, b in zip(plain.recommendations, scaled.recommendations):
        assert b.saves == min(3 * total, round(3.0 * a.saves))
    # a slope that would make a saving exceed the request: capped at what the messages hold
    capped = analyze_context_bloat(msgs, 0.7, context_window=200_000, counter=C4, figure=(total, "recorded", 50.0))
    assert all(r.saves <= capped.total_tokens for r in capped.recommendations)
    assert any(r.saves == capped.total_tokens for r in capped.recommendations)


def test_bloated_with_window_uses_threshold_of_window():
    msgs = conversation()
    total = analyze_context_bloat(msgs, counter=C4).total_tokens
    assert analyze_context_bloat(msgs, 0.5, context_window=2 * total, counter=C4).bloated
    assert not analyze_context_bloat(msgs, 0.5, context_window=2 * total + 2, counter=C4).bloated
    assert analyze_context_bloat(msgs, 0.5, context_window=2 * total + 2, counter=C4).share == pytest.approx(
        total / (2 * total + 2))


def test_repeated_and_stale_results():
    msgs = conversation(steps=30)
    report = analyze_context_bloat(msgs, counter=C4)
    same_call = [r for r in report.repeated if r["kind"] == "same call"]
    assert len(same_call) == 5                        # five files, each read six times
    assert all(len(r["indices"]) == 6 for r in same_call)
    one = same_call[0]
    assert one["wasted_tokens"] == sum(C4.count_message(msgs[i]) for i in one["indices"][:-1])
    # every content is distinct per file path only, so "same content" groups coincide and are not repeated
    assert all(tuple(r["indices"]) != tuple(one["indices"]) for r in report.repeated if r is not one)
    assert report.stale and all(s["age"] > 20 and s["tokens"] >= 1000 for s in report.stale)


def test_recommendations_carry_setting_and_measured_saving():
    msgs = conversation()
    report = analyze_context_bloat(msgs, 0.7, context_window=20_000, counter=C4)
    by_setting = {r.setting: r for r in report.recommendations}
    comp = by_setting["--tiers default --keep-recent 10"]
    compressed = compress_tool_results(msgs, 10, DEFAULT_POLICY)
    expected = sum(C4.count_message(a) - C4.count_message(b) for a, b in zip(msgs, compressed))
    assert comp.saves == expected > 0
    assert by_setting["--clear-keep 3"].saves > 0
    assert by_setting["--old-messages llm"].saves > 0
    assert any(s.startswith("--budget ") for s in by_setting)
    saves = [r.saves for r in report.recommendations]
    assert saves == sorted(saves, reverse=True)


def test_empty_and_bad_threshold():
    report = analyze_context_bloat([])
    assert report.total_tokens == 0 and not report.bloated and report.recommendations == ()
    with pytest.raises(ValueError):
        analyze_context_bloat([], threshold=0)


def test_summary_recommendation_matches_what_the_setting_does():
    from ctxview.engine.budget import summarize_old_messages

    msgs = conversation()
    report = analyze_context_bloat(msgs, counter=C4, keep_recent=10)
    rec = {r.setting: r for r in report.recommendations}["--old-messages llm"]
    after = summarize_old_messages(msgs, len(msgs) - 10, "llm")
    assert rec.saves == sum(map(C4.count_message, msgs)) - sum(map(C4.count_message, after))
