"""Each price rule against a hand computation: cache writes by lifetime, fast mode, the long-context
tier, data residency, the harness's own costUSD, the cache's lifetime taken from the file, and a
compaction agent reading the main conversation's cache. (Sources: docs/notes/s21-cost.md.)"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.formats.parsing.builders import anthropic_usage
from ctxview.model import Usage
from ctxview.analysis.prices import Price, PriceTable, parse_price_override
from ctxview.analysis.report import build_report
from ctxview.analysis.report_render import render_report

SPOTTER = (Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
OPUS = "claude-opus-4-6"  # $5 in, $25 out, $0.50 cache read, $6.25 5-minute and $10 1-hour writes per MTok
M = Decimal(1_000_000)


def usd(text: str) -> Decimal:
    return Decimal(text)


# --- cache writes by lifetime ------------------------------------------------------------

def test_claude_codes_usage_object_keeps_the_1h_writes():
    u = anthropic_usage({"input_tokens": 3, "cache_creation_input_tokens": 8037, "cache_read_input_tokens": 17842,
                         "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 8037},
                         "output_tokens": 10, "service_tier": "standard", "inference_geo": "not_available"})
    # ("not_available": the parameter did not apply; kept as None, as "standard" speed is)
    assert (u.cache_write_tokens, u.cache_write_1h_tokens, u.inference_geo, u.speed) == (8037, 8037, None, None)


def test_1h_writes_at_2x_input_and_5m_writes_at_1_25x():
    # 3 x $5 + 10 x $25 + 17,842 x $0.50 + 8,037 x $10 (every write a 1-hour write)
    u = Usage(3, 10, 17_842, 8037, cache_write_1h_tokens=8037)
    assert PriceTable().cost(u, OPUS) == (3 * 5 + 10 * 25 + 17_842 * Decimal("0.5") + 8037 * 10) / M
    # a mixed request: 6,000 five-minute writes at $6.25, 4,000 one-hour writes at $10
    mixed = Usage(0, 0, 0, 10_000, cache_write_1h_tokens=4000)
    assert PriceTable().cost(mixed, OPUS) == (6000 * Decimal("6.25") + 4000 * 10) / M
    # without the split (older files, simulated requests) every write is a 5-minute one unless told
    plain = Usage(0, 0, 0, 10_000)
    assert PriceTable().cost(plain, OPUS) == 10_000 * Decimal("6.25") / M
    assert PriceTable().cost(plain, OPUS, ttl="1h") == 10_000 * 10 / M


def test_the_split_equals_genai_prices_own_calculation():
    u = Usage(1000, 2000, 50_000, 30_000, cache_write_1h_tokens=12_000)
    for model in (OPUS, "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"):
        table = PriceTable()
        assert table.cost(u, model, "2026-05-01T00:00:00Z") == table.genai_cost(u, model, "2026-05-01T00:00:00Z")


def test_a_price_override_takes_a_1h_write_price_or_uses_twice_the_input():
    _, four = parse_price_override("m=2,8,0.2,2.5")
    _, five = parse_price_override("m=2,8,0.2,2.5,3")
    u = Usage(0, 0, 0, 1_000_000, cache_write_1h_tokens=1_000_000)
    assert four.cost(u) == Decimal(4) and five.cost(u) == Decimal(3)
    assert five == Price(Decimal(2), Decimal(8), Decimal("0.2"), Decimal("2.5"), Decimal(3))


def test_a_real_file_whose_writes_were_1h_writes_is_priced_at_the_1h_price():
    doc = build_report(load_session(SPOTTER), agent="main")
    conv = doc["conversations"][0]
    assert conv["usage"]["cache_write"] == conv["usage"]["cache_write_1h"] == 349_474
    # 180 x $5 + 38,899 x $25 + 14,771,617 x $0.50 + 349,474 x $10
    hand = (180 * 5 + 38_899 * 25 + 14_771_617 * Decimal("0.5") + 349_474 * 10) / M
    assert Decimal(str(conv["cost"]["usd"])) == round(hand, 6)


# --- fast mode, the long-context tier, data residency --------------------------------------

def test_fast_mode_is_six_times_opus_4_6s_prices():
    u = Usage(1000, 1000, 10_000, 2000, speed="fast")
    hand = (1000 * 30 + 1000 * 150 + 10_000 * 3 + 2000 * Decimal("37.5")) / M  # $30/$150, caching on top
    assert PriceTable().cost(u, OPUS) == hand


def test_fast_mode_over_200k_is_six_times_the_long_context_prices():
    # before 2026-03-13 Opus 4.6 had a long-context tier ($10/$37.50 over 200k input tokens):
    # fast mode's $60/$225 is six times that
    u = Usage(250_000, 1000, speed="fast")
    assert PriceTable().cost(u, OPUS, "2026-02-20T12:00:00Z") == (250_000 * 60 + 1000 * 225) / M
    # the long-context tier alone: all of the prompt at $10, the output at $37.50
    assert PriceTable().cost(Usage(250_000, 1000), OPUS, "2026-02-20T12:00:00Z") == (
        250_000 * 10 + 1000 * Decimal("37.5")) / M


def test_fast_mode_on_a_model_without_a_fast_price_is_not_priced_as_standard():
    u = Usage(1000, 1000, speed="fast")
    table = PriceTable()
    assert table.cost(u, "claude-sonnet-4-5-20250929") is None
    doc = build_report(_one("claude-sonnet-4-5-20250929", u))
    assert doc["cost"]["usd"] is None
    assert doc["cost"]["unpriced_models"] == ["claude-sonnet-4-5-20250929 (speed fast)"]


def test_us_only_inference_is_1_1_times_every_category():
    u = Usage(1000, 1000, 1000, 1000, inference_geo="us")
    base = (1000 * 5 + 1000 * 25 + 1000 * Decimal("0.5") + 1000 * Decimal("6.25")) / M
    assert PriceTable().cost(u, OPUS) == base * Decimal("1.1")
    for free in ("global", "not_available", None):
        assert PriceTable().cost(Usage(1000, 1000, 1000, 1000, inference_geo=free), OPUS) == base
    assert PriceTable().cost(Usage(1000, 1000, inference_geo="eu"), OPUS) is None  # a geography not known here


def test_fast_mode_and_residency_stack():
    u = Usage(1000, 0, speed="fast", inference_geo="us")
    assert PriceTable().cost(u, OPUS) == 1000 * 30 * Decimal("1.1") / M


def test_speed_and_geo_are_read_from_the_usage_object():
    u = anthropic_usage({"input_tokens": 1, "output_tokens": 2, "speed": "fast", "inference_geo": "us"})
    assert (u.speed, u.inference_geo) == ("fast", "us")


# --- the harness's own cost ----------------------------------------------------------------

def _line(**extra) -> str:
    rec = {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2025-06-01T10:00:01Z",
           "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-20250514",
                       "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 0,
                                 "cache_creation_input_tokens": 0}}, **extra}
    user = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2025-06-01T10:00:00Z",
            "message": {"role": "user", "content": "hi"}}
    return json.dumps(user) + "\n" + json.dumps(rec) + "\n"


def test_costUSD_is_shown_beside_ctxviews_price(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(_line(costUSD=0.0123))
    doc = build_report(load_session(path))
    cost = doc["conversations"][0]["cost"]
    # ctxview's price stays its own: 1,000 x $3 + 100 x $15
    assert cost["usd"] == float((1000 * 3 + 100 * 15) / M)
    assert cost["recorded_usd"] == 0.0123 and cost["recorded_requests"] == 1
    assert doc["cost"]["recorded_usd"] == 0.0123
    rows = build_report(load_session(path), rows=True)["conversations"][0]["usage_by_request"]
    assert rows[0]["recorded_usd"] == 0.0123
    import io

    out = io.StringIO()
    render_report(doc, out)
    assert "the file recorded $0.0123 (costUSD, 1 requests)" in out.getvalue()


def test_no_costUSD_no_recorded_figure(tmp_path):
    path = tmp_path / "new.jsonl"
    path.write_text(_line())
    cost = build_report(load_session(path))["conversations"][0]["cost"]
    assert "recorded_usd" not in cost


# --- the simulated cache -------------------------------------------------------------------

def test_the_simulation_takes_its_ttl_from_the_files_writes():
    doc = build_report(load_session(SPOTTER), agent="main")
    cache = doc["conversations"][0]["cache"]
    assert (cache["ttl"], cache["ttl_source"]) == ("1h", "file")
    forced = build_report(load_session(SPOTTER), agent="main", cache_ttl="5m")["conversations"][0]["cache"]
    assert (forced["ttl"], forced["ttl_source"]) == ("5m", "option")


def test_a_file_without_the_split_keeps_the_5_minute_default(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(_line())
    cache = build_report(load_session(path))["conversations"][0]["cache"]
    assert cache["ttl"] == "5m" and cache["ttl_source"] == "default"


def test_a_compaction_agent_reads_the_main_conversations_cache():
    doc = build_report(load_session(SPOTTER), agent="agent-acompact-fffbd0")
    cache = doc["conversations"][0]["cache"]
    assert cache["reads_parent_cache"] is True
    sim = cache["simulated"]
    # its one request read 166,758 tokens of the main conversation from the cache (recorded)
    assert sim["cache_read"] == 166_758
    assert sim["read_share"] > 0.9 and cache["recorded_read_share"] > 0.9


def _one(model: str, usage: Usage):
    from ctxview.model import Conversation, Message, Session

    c = Conversation(name="main", model=model, messages=(Message(role="user", content="hi"),
                                                         Message(role="assistant", content="ok", usage=usage,
                                                                 model_id=model)))
    return Session(format="ctxview", source="x", conversations=(c,))


@pytest.mark.parametrize("speed", [None, "standard"])
def test_standard_speed_costs_the_standard_price(speed):
    assert PriceTable().cost(Usage(1000, 0, speed=speed), OPUS) == 1000 * 5 / M


def test_ctxviews_own_format_keeps_what_sets_the_price(tmp_path):
    from ctxview.formats.native_write import write_session

    u = Usage(1, 2, 3, 40, cache_write_1h_tokens=30, speed="fast", inference_geo="us", recorded_usd=0.5)
    path = tmp_path / "s.ctxview.json"
    write_session(_one(OPUS, u), path)
    back = load_session(path).conversations[0].messages[1].usage
    assert back == u
    doc = json.loads(path.read_text())
    doc["conversations"][0]["messages"][1]["usage"]["cache_write_1h_tokens"] = 41  # more than the writes
    path.write_text(json.dumps(doc))
    from ctxview.formats.errors import LoadError

    with pytest.raises(LoadError, match="cache_write_1h_tokens"):
        load_session(path)


def test_the_usage_screen_shows_costUSD_beside(tmp_path):
    from ctxview.pipeline import PipelineCache
    from ctxview.settings import Settings
    from ctxview.tui.screens.usage import usage_figures, usage_text

    path = tmp_path / "old.jsonl"
    path.write_text(_line(costUSD=0.0123))
    session = load_session(path)
    data = usage_figures(session, session.conversations[0], Settings(), PipelineCache())
    assert "the file recorded $0.0123" in usage_text("main", data, chart=False).plain


# --- a sum of costs, priced by groups --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# tiered (long context), flat, overridden; then what has no price
PRICED = ["claude-sonnet-4-5-20250929", OPUS, "gpt-4o", "mine"]
UNPRICED = [("no-such-model", None, None), (None, None, None), (OPUS, "slow", None), (OPUS, None, "mars")]


@st.composite
def priced_calls(draw):
    model = draw(st.sampled_from(PRICED))
    usage = Usage(draw(st.integers(0, 260_000)), draw(st.integers(0, 5000)), draw(st.integers(0, 150_000)),
                  draw(st.integers(0, 90_000)), draw(st.sampled_from([0, 0, 700])),
                  draw(st.sampled_from([None, "fast"] if model == OPUS else [None, "standard"])),
                  draw(st.sampled_from([None, None, "us"])))
    return usage, model, draw(st.sampled_from([None, "2025-06-01T10:00:00Z", "2026-02-01T10:00:00Z"]))


def priced_table():
    return PriceTable({"mine": Price(Decimal("1.5"), Decimal(7), Decimal("0.15"), Decimal("1.875"))})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(priced_calls(), max_size=12), ttl=st.sampled_from(["5m", "1h"]))
def test_a_sum_of_costs_priced_by_groups_equals_the_sum_call_by_call(calls, ttl):
    table = priced_table()
    each = [table.cost(u, m, t, ttl) for u, m, t in calls]
    assert None not in each and all(table.has_price(u, m) for u, m, _ in calls)
    assert table.cost_sum(calls, ttl) == sum(each, Decimal(0))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(priced_calls(), max_size=6), unpriced=st.sampled_from(UNPRICED), at=st.integers(0, 6))
def test_a_sum_with_a_call_without_a_price_has_none(calls, unpriced, at):
    model, speed, geo = unpriced
    calls.insert(at, (Usage(10, 10, speed=speed, inference_geo=geo), model, None))
    table = priced_table()
    assert [table.cost(*call) is not None for call in calls] == [table.has_price(u, m) for u, m, _ in calls]
    assert any(table.cost(*call) is None for call in calls)
    assert table.cost_sum(calls) is None


def test_a_sum_puts_each_call_in_the_tier_of_its_whole_prompt():
    # 180k fresh input alone is under the long-context tier's 200k; with the cache's 30k it is over
    table = priced_table()
    calls = [(Usage(180_000, 500, 0, 30_000), "claude-sonnet-4-5-20250929", None),
             (Usage(180_000, 500, 30_000, 0), "claude-sonnet-4-5-20250929", None),
             (Usage(150_000, 500, 20_000, 20_000), "claude-sonnet-4-5-20250929", None)]
    each = [table.cost(*c) for c in calls]
    assert table.cost_sum(calls) == sum(each, Decimal(0))
    long = table.cost(Usage(180_000, 500, 0, 30_000), "claude-sonnet-4-5-20250929")
    short = table.cost(Usage(180_000, 500, 0, 10_000), "claude-sonnet-4-5-20250929")
    assert long / short > Decimal("1.5")   # (the long-context tier's prices on all of it: the test means something)


def test_sonnet_4_over_200k_input_tokens_pays_the_long_context_prices_on_all_of_them():
    # Anthropic's pricing page: Sonnet 4 (as Sonnet 4.5) over 200k input tokens, $6 in and $22.50 out
    # per MTok on every token, cache reads $0.60, 5-minute writes $7.50; genai-prices 0.2.3 has the
    # tier for Sonnet 4.5 only.
    table = PriceTable()
    sonnet4 = "claude-sonnet-4-20250514"
    assert table.cost(Usage(200_000, 1_000), sonnet4) == usd("0.6") + usd("0.015")             # $3, $15
    assert table.cost(Usage(200_001, 1_000), sonnet4) == usd("1.200006") + usd("0.0225")       # $6, $22.50
    assert table.cost(Usage(10, 1_000, 200_000, 40_000), sonnet4) == (
        usd("0.00006") + usd("0.0225") + usd("0.12") + usd("0.3"))                             # $0.60, $7.50
