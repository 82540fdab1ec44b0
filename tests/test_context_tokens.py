"""The context in the model's tokens, with its basis: recorded, calibrated, counted.

The real Claude Code session (spotter-258c7280, MIT, marot/spotter, see
tests/fixtures/samples) is cut before recorded requests, as a file, and the next
request's figure compared with what the file recorded for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.analysis.cache_losses import LOSS_MIN, cache_events, cache_losses, cache_ttl_of
from ctxview.engine.context_tokens import ContextTokens
from ctxview.formats import load_session
from ctxview.pipeline import PipelineCache, prepare
from ctxview.analysis.prices import PriceTable
from ctxview.analysis.report import build_report
from ctxview.analysis.request_table import CATEGORIES, request_rows
from ctxview.settings import Settings

SAMPLES = Path(__file__).parent / "fixtures" / "samples" / "claude-code"
SPOTTER = SAMPLES / "spotter-258c7280" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.fixture(scope="module")
def spotter():
    return load_session(str(SPOTTER)).conversations[0]


def _line(message) -> int:
    origin = message.origin
    assert origin.startswith("line ")
    return int(origin.split()[1])


def test_the_next_request_is_within_ten_percent_out_of_sample(spotter, tmp_path):
    """Cut the file just before a recorded request's line; the cut file's next request, predicted
    from the requests before it alone, is within 10% of what the full file recorded for it."""
    lines = SPOTTER.read_text(encoding="utf-8").splitlines(keepends=True)
    recorded = [i for i, m in enumerate(spotter.messages)
                if m.role == "assistant" and m.usage is not None and m.usage.context_tokens > 0]
    # every 10th, the requests around the compaction, and the last: ~20 cut files
    chosen = sorted({*recorded[2::10], *[k for k in recorded if 225 <= k <= 240], recorded[-1]})
    errors = {}
    for k in chosen:
        cut = tmp_path / f"cut{k}.jsonl"
        cut.write_text("".join(lines[:_line(spotter.messages[k]) - 1]), encoding="utf-8")
        conv = load_session(str(cut)).conversations[0]
        assert all(m.usage is None or i < k for i, m in enumerate(conv.messages))  # nothing of request k
        view = prepare(conv, Settings())
        assert view.context.basis == "calibrated"
        want = spotter.messages[k].usage.context_tokens
        errors[k] = (view.context.tokens - want) / want
    within = [k for k, e in errors.items() if abs(e) <= 0.10]
    assert abs(errors[recorded[-1]]) <= 0.10
    assert len(within) == len(errors), {k: round(e, 3) for k, e in errors.items() if abs(e) > 0.10}
    # the character heuristic alone is 50-70% low on this file: the fit is what makes the figure
    raw = prepare(load_session(str(SPOTTER)).conversations[0], Settings()).tokens_prepared
    assert raw < 0.5 * spotter.messages[recorded[-1]].usage.context_tokens


def test_every_out_of_sample_prediction_on_the_real_session(spotter):
    """The same prediction for all 150 recorded requests after the first two (the fit from the
    earlier ones only): at most one beyond 10%, the median under 1%."""
    cache = PipelineCache()
    from ctxview.pipeline.context import context_tokens

    figures = context_tokens(cache, spotter, cache.counter(spotter, "auto"))
    errors = []
    for j, k in enumerate(figures.indices[2:], 2):
        # the fit at k reads only the recorded requests before k (the cut file's own would see the same)
        fit = figures.fit(k)
        assert fit.requests_fitted == j and fit.recorded == figures.recorded[j]
        estimate = fit.anchor_tokens + fit.slope * (fit.estimate - fit.anchor_estimate)
        errors.append(abs(estimate - figures.recorded[j]) / figures.recorded[j])
    errors.sort()
    assert sum(e > 0.10 for e in errors) <= 1
    assert errors[len(errors) // 2] < 0.01


def test_bases_recorded_calibrated_counted(spotter):
    cache = PipelineCache()
    recorded_at = next(i for i, m in enumerate(spotter.messages) if m.usage is not None and i > 100)
    shown = prepare(spotter, Settings(request=recorded_at), cache=cache)
    assert shown.context.to_dict() == {"tokens": spotter.messages[recorded_at].usage.context_tokens,
                                       "basis": "recorded"}
    what_if = prepare(spotter, Settings(request=recorded_at, tiers="default"), cache=cache)
    assert what_if.context.basis == "calibrated"
    assert what_if.context.tokens < shown.context.tokens
    # the saving in the model's tokens is the fit's slope times the counted saving
    saved = shown.tokens_prepared - what_if.tokens_prepared
    assert shown.context.tokens - what_if.context.tokens == pytest.approx(shown.context_fit.scale * saved, abs=1)
    # nothing recorded before the first request: counted
    first = next(i for i, m in enumerate(spotter.messages) if m.role == "assistant")
    assert prepare(spotter, Settings(request=first), cache=cache).context.basis == "recorded"
    no_usage = load_session(str(SAMPLES / "claude-code-transcripts-sample.jsonl")).conversations[0]
    assert all(m.usage is None for m in no_usage.messages)
    view = prepare(no_usage, Settings())
    assert view.context.to_dict() == {"tokens": view.tokens_prepared, "basis": "counted"}


def test_the_gauge_is_of_the_figure_not_the_heuristic(spotter):
    view = prepare(spotter, Settings())
    assert view.window_share == view.context.tokens / view.context_window
    assert view.context.tokens > 3 * view.tokens_prepared


def test_every_recorded_requests_composition_adds_up_to_its_recorded_input():
    for path in (SPOTTER, SAMPLES / "spotter-short.jsonl", SAMPLES / "spotter-tool-heavy.jsonl",
                 SAMPLES / "agentlogs-crud.jsonl"):
        for conv in load_session(str(path)).conversations:
            cache = PipelineCache()
            rows, _ = request_rows(conv, cache.counter(conv, "auto"), cache, None)
            assert rows
            for r in rows:
                assert set(r["composition"]) == set(CATEGORIES)
                assert all(v >= 0 for v in r["composition"].values())
                assert sum(r["composition"].values()) == r["context"]["tokens"]
                if r["recorded"] is not None:
                    u = r["recorded"]
                    assert r["context"] == {"tokens": u["input"] + u["cache_read"] + u["cache_write"],
                                            "basis": "recorded"}


def test_the_compaction_summary_and_the_hidden_prefix_are_categories(spotter):
    cache = PipelineCache()
    rows, _ = request_rows(spotter, cache.counter(spotter, "auto"), cache, None)
    after = next(r for r in rows if r["index"] > 229)
    assert after["composition"]["compaction_summary"] > 0
    assert after["composition"]["tool_results"] == 0  # the history before the compaction is not sent
    # the hidden prefix (system prompt, tools: not in the file) is most of the first request
    assert rows[0]["composition"]["system_and_tools"] > 0.9 * rows[0]["context"]["tokens"]


# --- cache forensics -------------------------------------------------------------------

def test_the_real_sessions_cache_losses_are_named(spotter):
    assert cache_ttl_of(spotter) == "1h"  # the file records hour-long writes
    events = {e.index: e for e in cache_events(spotter, PriceTable())}
    lost = {k: e for k, e in events.items() if e.lost}
    assert set(lost) == {79, 230, 339}
    assert lost[230].cause == "compaction" and lost[230].lost == 145_298
    assert lost[339].cause == "system_or_tools" and lost[339].lost == 55_080
    assert "4 s after" in lost[339].detail
    assert lost[79].cause == "system_or_tools" and "158 s after" in lost[79].detail  # within the hour
    # the loss's price: Opus's cache write (1h) less its read, per lost token the request sent again
    # (each system_or_tools loss was written again whole: 89,928 and 55,541 written); none after the
    # compaction, which replaced the 145,298 tokens by its summary (12,497 written, all new)
    assert lost[79].usd == pytest.approx(89_607 * (10.0 - 0.5) / 1e6, rel=1e-6)
    assert lost[339].usd == pytest.approx(55_080 * (10.0 - 0.5) / 1e6, rel=1e-6)
    assert lost[230].usd == 0.0 and "not sent again" in lost[230].detail
    first = events[min(events)]
    assert first.cause == "first" and first.lost == 0
    # the report's summary reads the losses alone: the same events, without the others made
    assert cache_losses(spotter, PriceTable()) == [e for e in events.values() if e.lost]


def _cc_line(kind: str, n: int, ts: str, text: str, usage: dict | None = None, model: str = "claude-sonnet-4-5",
             extra: list | None = None) -> str:
    msg: dict = {"role": kind, "content": [{"type": "text", "text": text}, *(extra or [])]}
    if kind == "assistant":
        msg.update(id=f"msg_{n}", type="message", model=model, usage=usage)
    return json.dumps({"type": kind, "timestamp": ts, "parentUuid": f"u{n - 1}" if n else None, "isSidechain": False,
                       "sessionId": "s", "uuid": f"u{n}", "message": msg})


def _usage(read: int, write: int, hour: bool = False) -> dict:
    u = {"input_tokens": 3, "output_tokens": 50, "cache_read_input_tokens": read,
         "cache_creation_input_tokens": write}
    if hour:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": write}
    return u


def test_a_gap_past_the_ttl_a_model_switch_and_unknown(tmp_path):
    """A file written for these causes: 5-minute writes, a 7-minute gap (ttl), a model switch."""
    big = "x" * 400
    lines = [
        _cc_line("user", 0, "2026-01-01T10:00:00Z", big),
        _cc_line("assistant", 1, "2026-01-01T10:00:05Z", "a", _usage(0, 20_000)),
        _cc_line("user", 2, "2026-01-01T10:00:30Z", big),
        _cc_line("assistant", 3, "2026-01-01T10:00:35Z", "b", _usage(20_000, 500)),
        _cc_line("user", 4, "2026-01-01T10:07:35Z", big),  # 7 minutes later: past 5 minutes
        _cc_line("assistant", 5, "2026-01-01T10:07:40Z", "c", _usage(0, 21_000)),
        _cc_line("user", 6, "2026-01-01T10:08:00Z", big),
        _cc_line("assistant", 7, "2026-01-01T10:08:05Z", "d", _usage(0, 21_500), model="claude-opus-4-5"),
    ]
    path = tmp_path / "gap.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = load_session(str(path)).conversations[0]
    assert cache_ttl_of(conv) == "5m"
    events = [e for e in cache_events(conv, PriceTable()) if e.lost]
    assert [(e.cause, e.lost) for e in events] == [("ttl", 20_500), ("model", 21_000)]
    assert "425 s after the previous request (cache lifetime 5m)" in events[0].detail  # between the replies
    # the same gap under hour-long writes is no loss of lifetime: the file's own writes decide
    hour = [line.replace('"cache_creation_input_tokens": 20000}', '"cache_creation_input_tokens": 20000, '
                         '"cache_creation": {"ephemeral_1h_input_tokens": 20000}}') for line in lines[:6]]
    path.write_text("\n".join(hour) + "\n", encoding="utf-8")
    conv = load_session(str(path)).conversations[0]
    assert cache_ttl_of(conv) == "1h"
    (event,) = [e for e in cache_events(conv) if e.lost]
    assert event.cause == "system_or_tools" and event.usd is None
    # no timestamps: a loss with the messages unchanged cannot be put down to anything
    bare = [json.dumps({k: v for k, v in json.loads(line).items() if k != "timestamp"}) for line in lines[:6]]
    path.write_text("\n".join(bare) + "\n", encoding="utf-8")
    (event,) = [e for e in cache_events(load_session(str(path)).conversations[0]) if e.lost]
    assert event.cause == "unknown"


def test_an_edited_message_is_named(tmp_path):
    from dataclasses import replace

    from ctxview.model import ContextEvent

    lines = [
        _cc_line("user", 0, "2026-01-01T10:00:00Z", "hello"),
        _cc_line("assistant", 1, "2026-01-01T10:00:05Z", "a", _usage(0, 20_000)),
        _cc_line("user", 2, "2026-01-01T10:00:30Z", "again"),
        _cc_line("assistant", 3, "2026-01-01T10:00:35Z", "b", _usage(2_000, 18_500)),
    ]
    path = tmp_path / "edit.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = load_session(str(path)).conversations[0]
    # the harness re-sent message 0 differently before the second request (a `resent` record)
    edited = replace(conv.messages[0], content="hello, edited")
    conv = replace(conv, events=(*conv.events, ContextEvent("resent", 2, meta={"messages": {0: edited}})))
    (event,) = [e for e in cache_events(conv) if e.lost]
    assert event.cause == "edited" and event.lost == 18_000 >= LOSS_MIN
    assert event.detail.startswith("message #0 (user message)")


# --- the report -------------------------------------------------------------------------

def test_report_json_gives_each_conversation_its_context_and_requests():
    doc = build_report(load_session(str(SPOTTER)), requests=True)
    main = doc["conversations"][0]
    assert main["context"]["basis"] == "calibrated"
    assert main["window"]["share"] == round(main["context"]["tokens"] / 200_000, 4)
    rows = main["requests"]
    assert [r["number"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["recorded"]["cache_write_1h"] == rows[0]["recorded"]["cache_write"] > 0
    assert all(r["usd"] is not None and r["usd"] > 0 for r in rows if r["recorded"])
    assert rows[1]["added"] == rows[1]["context"]["tokens"] - rows[0]["context"]["tokens"]
    causes = {r["cache"]["cause"] for r in rows if r["cache"] and r["cache"]["lost"]}
    assert causes == {"compaction", "system_or_tools"}
    losses = main["cache_losses"]
    assert losses["requests"] == 3 and losses["tokens"] == 89_607 + 145_298 + 55_080
    # no recommendation saves more than the request holds
    for conv in doc["conversations"]:
        for rec in conv["bloat"]["recommendations"]:
            assert rec["saves"] <= conv["bloat"]["total_tokens"] == conv["context"]["tokens"]
    # without --requests: the losses stay, the table does not
    plain = build_report(load_session(str(SPOTTER)))["conversations"][0]
    assert "requests" not in plain and plain["cache_losses"] == losses


def test_contexttokens_without_any_record_is_counted():
    conv = load_session(str(SAMPLES / "claude-code-transcripts-sample.jsonl")).conversations[0]
    figures = ContextTokens(conv, lambda n: 10 * n)
    assert figures.at().to_dict() == {"tokens": 10 * len(conv.messages), "basis": "counted"}


def test_the_recommended_budget_brings_the_request_under_the_threshold(spotter):
    """The verdict and the budget are in the model's tokens: the recommended --budget is the
    threshold of the window, and applying it gives the saving it promised."""
    from ctxview.analysis.report import conversation_bloat

    cache = PipelineCache()
    report = conversation_bloat(spotter, Settings(context_window=100_000), 100_000, cache)
    assert report.bloated and report.basis == "calibrated"
    (drop,) = [r for r in report.recommendations if r.setting.startswith("--budget ")]
    budget = int(drop.setting.split()[1])
    assert budget == 70_000
    view = prepare(spotter, Settings(context_window=100_000, budget=budget), cache=cache)
    assert view.context.tokens == report.total_tokens - drop.saves
    assert view.context.tokens <= 0.7 * 100_000
    assert all(r.saves <= report.total_tokens for r in report.recommendations)


def test_the_exact_openai_counter_is_in_the_base_install():
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(d.replace(" ", "").startswith("quicktok-v1") for d in project["dependencies"])
    codex = load_session(str(Path(__file__).parent / "fixtures" / "samples" / "codex" / "agentlogs-crud.jsonl"))
    assert prepare(codex.conversations[0], Settings()).counter_name == "o200k_base"


# --- the what-ifs' thresholds are the model's tokens --------------------------------------------

@pytest.mark.parametrize("offset, scale", [(0.0, 1.0), (22_215.0, 1.87), (-500.0, 0.8), (3.5, 0.29)])
def test_token_units_counted_is_the_largest_prompt_within_the_figure(offset, scale):
    from ctxview.engine.context_tokens import TokenUnits

    units = TokenUnits(offset, scale)
    for model in (1, 999, 30_000, 76_350, 200_000):
        c = units.counted(model)
        assert units.model(c) <= model or c <= 0
        assert units.model(c + 1) > model


def test_a_budget_in_the_models_tokens_bounds_the_figure_shown(spotter):
    """--budget is the whole request in the model's tokens: the calibrated figure of the view is
    within it, while the counter's tokens of the same view are far below it (the fit's slope is
    about 1.9 and the harness's prefix is not in the file)."""
    from ctxview.pipeline import prepare_reference

    cache = PipelineCache()
    as_sent = prepare(spotter, Settings(), cache=cache)
    budget = as_sent.context.tokens * 3 // 4
    assert as_sent.tokens_prepared < budget   # in the counter's tokens the whole request would fit
    view = prepare(spotter, Settings(budget=budget), cache=cache)
    assert view.context.basis == "calibrated" and view.budget_shortfall == 0
    assert view.stats["dropped"] > 0 and view.context.tokens <= budget
    assert view == prepare_reference(spotter, Settings(budget=budget))
    # under the harness's own prefix nothing fits: the shortfall is in the model's tokens too
    tiny = prepare(spotter, Settings(budget=1_000), cache=cache)
    assert tiny.budget_shortfall == tiny.context.tokens - 1_000 > 0


def test_the_clearing_trigger_and_minimum_saving_are_the_models_tokens(spotter):
    from ctxview.settings import ClearSettings

    cache = PipelineCache()
    as_sent = prepare(spotter, Settings(), cache=cache)
    scale = as_sent.context_fit.scale
    messages = as_sent.tokens_prepared - as_sent.system_tokens   # counted
    assert scale > 1.5
    # a trigger between the messages' counted tokens and their model tokens: over it now
    trigger = round(messages * (1 + scale) / 2)
    over = prepare(spotter, Settings(clear=ClearSettings(keep=3, trigger=trigger)), cache=cache)
    assert over.stats["cleared"] > 0
    assert prepare(spotter, Settings(clear=ClearSettings(keep=3, trigger=round(messages * scale) + 10)),
                   cache=cache).stats["cleared"] == 0
    # the minimum saving: what clearing saves, counted, is less than the same in the model's tokens
    saved = sum(c.saved_tokens for r in over.rows for c in r.changes if c.action == "cleared")
    minimum = round(saved * (1 + scale) / 2)
    assert prepare(spotter, Settings(clear=ClearSettings(keep=3, min_saving=minimum)), cache=cache).stats["cleared"] > 0
    assert prepare(spotter, Settings(clear=ClearSettings(keep=3, min_saving=round(saved * scale) + 10)),
                   cache=cache).stats["cleared"] == 0


def test_a_loss_costs_no_more_than_the_request_paid_for_uncached_tokens(tmp_path):
    # 50,000 tokens lost, only 20,000 sent again (written): the rest of the old prompt was not sent
    lines = [_cc_line("user", 0, "2026-03-01T10:00:00Z", "go"),
             _cc_line("assistant", 1, "2026-03-01T10:00:05Z", "a", _usage(0, 60_000)),
             _cc_line("user", 2, "2026-03-01T10:00:10Z", "more"),
             _cc_line("assistant", 3, "2026-03-01T10:00:15Z", "b", _usage(10_000, 20_000))]
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = load_session(str(path)).conversations[0]
    (event,) = [e for e in cache_events(conv, PriceTable()) if e.lost]
    assert event.lost == 50_000
    assert event.usd == round((20_000 + 3) * (3.75 - 0.3) / 1e6, 6)   # Sonnet 4.5, 5-minute writes
