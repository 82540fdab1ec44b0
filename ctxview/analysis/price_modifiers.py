"""What Anthropic charges on top of a model's prices, from what the usage object recorded.

genai-prices (prices.py) holds each model's input, output, cache-read and 5-minute and 1-hour
cache-write prices, with the long-context tier (over 200k input tokens) where a model had one.
It has no fast mode and no data residency; those are multipliers on all of a request's prices
(input, output, cache reads and both cache writes), and they stack with each other and with the
long-context tier:

- fast mode (`usage.speed == "fast"`): a multiplier per model (FAST_MODE below);
  Anthropic's fast-mode pages: Opus 4.6 at 6× the standard rates ($30/$150 per MTok, and
  $60/$225 over 200k input tokens, i.e. 6× the long-context rates); Claude Code's fast-mode page:
  "$10/$50 MTok on Opus 4.8 and $30/$150 MTok on Opus 4.7 and Opus 4.6"; Opus 5 and Opus 5.5 at
  2× ($10/$50 and $8/$40 per MTok, as their fast variants are listed). A model not in the table
  has no fast-mode price: the request is not priced (never priced as standard speed);
- data residency (`usage.inference_geo == "us"`): 1.1× on every token category (Anthropic's
  data-residency and pricing pages; the parameter exists from Opus 4.6 on). "global", and what
  Claude Code writes where the field does not apply ("", "not_available"), cost nothing more; a
  geography not known here leaves the request unpriced.

Sources and dates are in docs/notes/s21-cost.md.
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["FAST_MODE", "RESIDENCY", "modifier", "modifier_note"]

# model id part -> multiplier on all of the request's prices in fast mode (first match wins)
FAST_MODE: tuple[tuple[str, Decimal], ...] = (
    ("opus-4-6", Decimal(6)), ("opus-4-7", Decimal(6)), ("opus-4-8", Decimal(2)),
    ("opus-5-5", Decimal(2)), ("opus-5", Decimal(2)),
)
# usage.inference_geo -> multiplier; None, "" and "not_available" (Claude Code's) cost nothing more
RESIDENCY: dict[str, Decimal] = {"global": Decimal(1), "us": Decimal("1.1"), "not_available": Decimal(1)}
_ONE = Decimal(1)


def _fast(model: str) -> Decimal | None:
    name = model.lower()
    for part, times in FAST_MODE:
        if part in name:
            return times
    return None


def modifier(model: str | None, speed: str | None, geo: str | None) -> Decimal | None:
    """The multiplier on all of a request's prices (1 when nothing applies); None when the
    request ran in a mode or geography whose price is not known here."""
    times = _ONE
    if speed is not None and speed != "standard":
        fast = _fast(model or "") if speed == "fast" else None
        if fast is None:
            return None
        times *= fast
    if geo:
        residency = RESIDENCY.get(geo)
        if residency is None:
            return None
        times *= residency
    return times


def modifier_note(model: str | None, speed: str | None, geo: str | None) -> str:
    """Why a request has no price although its model has one ("" when it has)."""
    if speed is not None and speed != "standard" and (speed != "fast" or _fast(model or "") is None):
        return f"speed {speed}"
    if geo and geo not in RESIDENCY:
        return f"inference_geo {geo}"
    return ""
