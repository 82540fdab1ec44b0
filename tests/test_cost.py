"""Cost from genai-prices' bundled table: offline, lazily imported, "no price" for unknown models."""

from __future__ import annotations

import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.model import Conversation, Message, Session, Usage
from ctxview.analysis.prices import PRICES_VERSION, Price, PriceTable, parse_price_override
from ctxview.analysis.report import build_report
from ctxview.analysis.usage import recorded_requests

ROOT = Path(__file__).parent.parent
SAMPLES = sorted(p for p in (ROOT / "sample_sessions").rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))


def one(model: str, usage: Usage) -> Session:
    c = Conversation(name="main", model=model, messages=(Message(role="user", content="hi"),
                                                         Message(role="assistant", content="ok", usage=usage,
                                                                 model_id=model)))
    return Session(format="ctxview", source="x", conversations=(c,))


def test_the_pinned_release_is_installed():
    from importlib.metadata import version

    assert version("genai-prices") == PRICES_VERSION   # PRICES_AS_OF is that release's date


def test_hand_computed_cost_for_sonnet_4_5():
    # $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens
    cost = PriceTable().cost(Usage(1000, 2000, 100_000, 10_000), "claude-sonnet-4-5-20250929")
    assert cost == Decimal("0.003") + Decimal("0.03") + Decimal("0.03") + Decimal("0.0375")


def test_every_priced_model_in_the_bundled_samples_has_a_price_and_cost_is_tokens_times_prices():
    table = PriceTable()
    seen = 0
    for path in SAMPLES + [ROOT / "ctxview" / "samples" / "swarm-demo.ctxview.json"]:
        for conv in load_session(path).conversations:
            for r in recorded_requests(conv):
                price = table.price(r.model, r.timestamp)
                assert price is not None, f"{path.name}: {r.model} has no price"
                u = r.usage
                expected = (u.input_tokens * price.input + u.output_tokens * price.output
                            + u.cache_read_tokens * price.cache_read + u.cache_write_tokens * price.cache_write) / 10**6
                assert table.cost(u, r.model, r.timestamp) == expected
                seen += 1
    assert seen > 100


def test_unknown_model_is_no_price_never_zero():
    doc = build_report(one("my-own-model-7", Usage(10, 10, 0, 0)))
    assert doc["conversations"][0]["cost"]["usd"] is None
    assert doc["conversations"][0]["cost"]["priced"] is False
    assert doc["cost"]["unpriced_models"] == ["my-own-model-7"]


def test_price_override_wins_and_prices_an_unknown_model():
    model, price = parse_price_override("my-own-model-7=1,2,0.5,1.5")
    assert (model, price) == ("my-own-model-7", Price(Decimal(1), Decimal(2), Decimal("0.5"), Decimal("1.5")))
    doc = build_report(one("my-own-model-7", Usage(1_000_000, 1_000_000, 2_000_000, 0)),
                       prices=PriceTable({model: price}))
    assert doc["conversations"][0]["cost"] == {"usd": 4.0, "priced": True, "prices_as_of": "2026-11-10"}
    assert doc["cost"]["usd"] == 4.0


@pytest.mark.parametrize("bad", ["x=1,2,3", "=1,2,3,4", "x=1,2,3,y", "x=1,2,3,-1", "x=1,2,3,nan", "x"])
def test_bad_price_override(bad):
    with pytest.raises(ValueError, match="--price"):
        parse_price_override(bad)


def test_bad_price_on_the_command_line_is_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "ctxview", "report", "nofile.json", "--price", "x=1,2"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "MODEL=IN,OUT,CACHE_READ,CACHE_WRITE" in out.stderr


def test_costs_never_touch_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    doc = build_report(one("claude-opus-4-6", Usage(100, 100, 1000, 1000)))
    assert doc["cost"]["priced"] is True and doc["cost"]["usd"] > 0


def test_pydantic_is_not_imported_by_the_inspector_or_a_report_module_import():
    probe = ("import ctxview.tui.app, ctxview.analysis.report, ctxview.analysis.prices, ctxview.cli.commands, sys\n"
             "print(' '.join(m for m in ('pydantic', 'genai_prices') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


@pytest.mark.parametrize("model", ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "gpt-5.2-codex", "gemini-2.5-pro"])
@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_the_flat_fast_path_equals_genai_prices_own_calculation(model, ttl):
    import random

    rnd = random.Random(model + ttl)
    table = PriceTable()
    for _ in range(100):  # prompts up to 600k tokens: past Sonnet's and Gemini's 200k tiers too
        u = Usage(*(rnd.randrange(0, 150_000) for _ in range(4)))
        assert table.cost(u, model, "2026-01-05T10:00:00Z", ttl) == table.genai_cost(u, model,
                                                                                      "2026-01-05T10:00:00Z", ttl)


def test_a_tiered_price_applies_to_the_whole_long_prompt():
    table = PriceTable()
    short, long = Usage(100_000, 0, 0, 0), Usage(250_000, 0, 0, 0)
    per_token_short = table.cost(short, "claude-sonnet-4-5-20250929") / short.input_tokens
    per_token_long = table.cost(long, "claude-sonnet-4-5-20250929") / long.input_tokens
    assert per_token_long > per_token_short   # Sonnet 4.5's over-200k price, on all of it


@pytest.mark.parametrize("tokens", [199_999, 200_000, 200_001])
def test_the_tier_boundary_matches_genai_prices(tokens):
    table = PriceTable()
    u = Usage(tokens, 10, 0, 0)
    assert table.cost(u, "claude-sonnet-4-5-20250929") == table.genai_cost(u, "claude-sonnet-4-5-20250929")
