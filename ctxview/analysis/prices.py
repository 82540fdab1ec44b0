"""Prices per million tokens, and what recorded or simulated usage cost in US dollars.

The table is genai-prices (Pydantic's package of provider prices), pinned in
pyproject.toml, read from the data inside its wheel: ctxview never asks it to
update (its UpdatePrices would fetch from GitHub). It brings pydantic, so it
is imported on the first price asked for, never at start-up. A model it does
not know has no price (None), never 0; `--price MODEL=IN,OUT,CACHE_READ,CACHE_WRITE[,CACHE_WRITE_1H]`
overrides it.

A request's cache writes are priced by their lifetime where the usage recorded it (Anthropic's
cache_creation.ephemeral_1h_input_tokens: 1-hour writes at the table's 1-hour price, 2× base
input; the rest at the 5-minute price, 1.25×); a prompt over a tier's start (the long-context
tier, over 200k input tokens) pays that tier's prices on all of its tokens; fast mode and data
residency multiply the whole (price_modifiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

from ctxview.model import Usage
from ctxview.analysis.price_modifiers import modifier, modifier_note

__all__ = ["MAX_PRICE", "PRICES_AS_OF", "PRICES_VERSION", "CostSum", "CostTotal", "Price", "PriceTable", "cost_of",
           "dollars", "parse_price_override"]

PRICES_VERSION = "0.2.3"       # the genai-prices release pinned in pyproject.toml
PRICES_AS_OF = "2026-11-10"    # its release date on PyPI: the newest prices the table can know
_AS_OF = datetime(2026, 11, 10, tzinfo=timezone.utc)
_MILLION = Decimal(1_000_000)
# The largest --price: with the most tokens a file can record (counts are 64-bit), any cost stays a
# finite float; a price this size is a typo, not a model.
MAX_PRICE = 10**15


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens; `cache_write` for 5-minute writes, `cache_write_1h` for 1-hour
    ones (None: Anthropic's rule, twice the input price)."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal | None = None

    def cost(self, usage: Usage, ttl: str = "5m") -> Decimal:
        """The usage's cost; its 1-hour writes where it recorded them, else all writes at `ttl`'s price."""
        hour = usage.cache_write_1h_tokens or (usage.cache_write_tokens if ttl == "1h" else 0)
        write_1h = self.cache_write_1h if self.cache_write_1h is not None else 2 * self.input
        return (usage.input_tokens * self.input + usage.output_tokens * self.output
                + usage.cache_read_tokens * self.cache_read + (usage.cache_write_tokens - hour) * self.cache_write
                + hour * write_1h) / _MILLION


def parse_price_override(text: str) -> tuple[str, Price]:
    """`MODEL=IN,OUT,CACHE_READ,CACHE_WRITE[,CACHE_WRITE_1H]` (dollars per million tokens) -> (model, Price);
    ValueError otherwise."""
    model, sep, values = text.partition("=")
    parts = [p.strip() for p in values.split(",")]
    if not sep or not model.strip() or len(parts) not in (4, 5):
        raise ValueError(f"--price expects MODEL=IN,OUT,CACHE_READ,CACHE_WRITE[,CACHE_WRITE_1H] (dollars per million "
                         f"tokens), not {text!r}")
    try:
        numbers = [Decimal(p) for p in parts]
    except InvalidOperation:
        raise ValueError(f"--price {text!r}: prices must be numbers") from None
    if any(not n.is_finite() or n < 0 for n in numbers):
        raise ValueError(f"--price {text!r}: prices must be finite and ≥ 0")
    if any(n > MAX_PRICE for n in numbers):
        raise ValueError(f"--price {text!r}: prices must be at most {MAX_PRICE:,} dollars per million tokens")
    return model.strip(), Price(*numbers)


def dollars(value: Decimal | None) -> float | None:
    """A cost as the reports give it: a float rounded to a millionth of a dollar. round() needs the
    Decimal context's 28 digits for the whole figure and six decimals (InvalidOperation past 10^22
    dollars); past that the float cannot hold the decimals anyway, and is the figure."""
    if value is None:
        return None
    try:
        return float(round(value, 6))
    except InvalidOperation:
        return float(value)


def _when(timestamp: str | None) -> datetime:
    """The request's time, for prices that changed over time; the table's date when unknown (deterministic,
    unlike genai-prices' default of now)."""
    if timestamp:
        try:
            t = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
            return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return _AS_OF


_UNSEEN = object()


# Long-context tiers genai-prices leaves out, taken from a model the table prices the same way.
# Anthropic's pricing page ("Long context pricing") gives Sonnet 4 and Sonnet 4.5 the same prices over
# 200k input tokens ($6 / $22.50 per MTok, the cache prices in the usual ratios), on all of a prompt's
# tokens; genai-prices 0.2.3 carries that tier for Sonnet 4.5 only.
_TIERS_AS = {"claude-sonnet-4-0": "claude-sonnet-4-5"}


def _tier(steps: list[tuple[int, Price]], prompt: int) -> int:
    """The price tier of a prompt of `prompt` tokens (PriceTable._flat_price's): the last whose
    start it passes."""
    k = 0
    while k + 1 < len(steps) and prompt > steps[k + 1][0]:
        k += 1
    return k


class PriceTable:
    """Prices by model: the overrides first, then genai-prices' bundled table."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._models: dict[str, Any] = {}   # model id -> genai-prices ModelInfo, or None when unknown
        self._prices: dict[tuple, Any] = {}  # (model, hour) -> its genai-prices ModelPrice
        self._flat: dict[tuple, tuple] = {}  # (model, hour) -> _price_tiers()
        self.used_table = False             # whether any price came from genai-prices

    def _model_info(self, model: str) -> Any:
        if model not in self._models:
            from genai_prices import data_snapshot  # pydantic comes with it: only when a cost is asked for

            try:
                _, info = data_snapshot.get_snapshot().find_provider_model(model, None, None, None)
            except LookupError:
                info = None
            self._models[model] = info
        return self._models[model]

    def known(self, model: str | None) -> bool:
        return model is not None and (model in self.overrides or self._model_info(model) is not None)

    def _model_price(self, model: str, timestamp: str | None) -> Any:
        # prices change at dates (and, for a few providers, at hours of the day): one lookup per hour
        key = (model, timestamp[:13] if timestamp else None)
        hit = self._prices.get(key)
        if hit is None:
            hit = self._prices[key] = self._model_info(model).get_prices(_when(timestamp))
        return hit

    def price(self, model: str | None, timestamp: str | None = None) -> Price | None:
        """The model's flat prices at that time (the first tier where a price is tiered); None: unknown."""
        steps = self.price_steps(model, timestamp)
        return None if steps is None else steps[0][0][1]

    def price_steps(self, model: str | None, timestamp: str | None) -> tuple[list[tuple[int, Price]], bool] | None:
        """(the model's prices by the prompt size each tier starts at, whether anything is charged per
        request) at that time: an override's one tier, or genai-prices' entry; None: no price."""
        if model is None:
            return None
        if model in self.overrides:
            return [(0, self.overrides[model])], False
        if self._model_info(model) is None:
            return None
        return self._tiers(model, timestamp)

    def _flat_price(self, model: str, timestamp: str | None, prompt: int = 0) -> tuple[Price, int | None, bool]:
        """(the prices for a prompt of `prompt` tokens, the size where the next tier starts (None: no
        more tiers), whether anything is charged per request), from genai-prices' entry. A tier's
        price applies to all of a prompt longer than its start."""
        steps, per_request = self._tiers(model, timestamp)
        k = _tier(steps, prompt)
        return steps[k][1], steps[k + 1][0] if k + 1 < len(steps) else None, per_request

    def _tiers(self, model: str, timestamp: str | None) -> tuple[list[tuple[int, Price]], bool]:
        """_price_tiers(), looked up once per model and hour."""
        key = (model, timestamp[:13] if timestamp else None)
        tiers = self._flat.get(key)
        if tiers is None:
            tiers = self._flat[key] = self._price_tiers(model, timestamp)
        return tiers

    def _price_tiers(self, model: str, timestamp: str | None) -> tuple[list[tuple[int, Price]], bool]:
        p = self._model_price(model, timestamp)
        self.used_table = True
        names = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")
        values = {n: getattr(p, n, None) for n in names}
        starts = sorted({t.start for v in values.values() if v is not None and hasattr(v, "tiers") for t in v.tiers})
        steps = []
        for start in (0, *starts):
            def at(name: str, missing: Decimal) -> Decimal:
                v = values[name]
                if v is None:
                    return missing
                if isinstance(v, Decimal):
                    return v
                out = v.base
                for t in v.tiers:
                    if start >= t.start:
                        out = t.price
                return out

            base = at("input_mtok", Decimal(0))
            # a cache price the table leaves out is charged as input, as genai-prices does
            write = at("cache_write_mtok", base)
            steps.append((start, Price(base, at("output_mtok", Decimal(0)), at("cache_read_mtok", base), write,
                                       at("cache_write_1h_mtok", write))))
        borrowed = _TIERS_AS.get(getattr(self._model_info(model), "id", None))
        if len(steps) == 1 and borrowed is not None:
            theirs, _ = self._tiers(borrowed, timestamp)
            if theirs[0][1] == steps[0][1]:   # (only while both are priced alike below the tier)
                steps.extend(theirs[1:])
        return steps, getattr(p, "requests_kcount", None) is not None

    def cost(self, usage: Usage, model: str | None, timestamp: str | None = None, ttl: str = "5m") -> Decimal | None:
        """What one call cost in dollars; None when the model has no price (or ran in a mode whose
        price is not known: price_modifiers). Cache writes are priced by the lifetime the usage
        recorded for them, else for the cache's lifetime `ttl` ("5m", "1h"); a long prompt pays its
        tier's prices on all of its tokens; fast mode and data residency multiply the whole; a model
        with a per-request price goes through genai-prices' own calculation (the tests hold this one
        equal to it)."""
        if not self.has_price(usage, model):
            return None
        times = modifier(model, usage.speed, usage.inference_geo)
        if model in self.overrides:
            return self.overrides[model].cost(usage, ttl) * times
        price, _, per_request = self._flat_price(model, timestamp, usage.context_tokens)
        if per_request:
            base = self.genai_cost(usage, model, timestamp, ttl)
            return None if base is None else base * times
        return price.cost(usage, ttl) * times

    def has_price(self, usage: Usage, model: str | None) -> bool:
        """Whether cost(usage, model, ...) is a figure, not None: a model, in a mode with a known
        price (price_modifiers), overridden or in the table."""
        return self.known(model) and modifier(model, usage.speed, usage.inference_geo) is not None

    def cost_sum(self, calls: Iterable[tuple[Usage, str | None, str | None]], ttl: str = "5m") -> Decimal | None:
        """The sum of cost(usage, model, timestamp, ttl) over the calls; None when one has no price
        (CostSum: calls alike in model, hour, mode and price tier priced as one)."""
        total = CostSum(self, ttl)
        for usage, model, timestamp in calls:
            total.add_usage(usage, model, timestamp)
        return total.usd()

    def unpriced_name(self, usage: Usage, model: str | None) -> str:
        """How a request without a price is named: its model, and the mode that has no price."""
        note = modifier_note(model, usage.speed, usage.inference_geo) if model is not None else ""
        return f"{model or 'unknown'} ({note})" if note else (model or "unknown")

    def genai_cost(self, usage: Usage, model: str, timestamp: str | None = None, ttl: str = "5m") -> Decimal | None:
        """The cost as genai-prices' calc_price gives it (None: unknown model)."""
        info = self._model_info(model)
        if info is None:
            return None
        from genai_prices import Usage as GUsage
        from genai_prices import data_snapshot

        self.used_table = True
        # genai-prices counts input_tokens as all of the prompt, cache included (Anthropic's API does not)
        hour = usage.cache_write_1h_tokens or (usage.cache_write_tokens if ttl == "1h" else 0)
        extra = {"cache_write_1h_tokens": hour} if hour else {}
        gu = GUsage(input_tokens=usage.context_tokens, output_tokens=usage.output_tokens,
                    cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens, **extra)
        provider, _ = data_snapshot.get_snapshot().find_provider_model(model, None, None, None)
        return info.calc_price(gu, provider, genai_request_timestamp=_when(timestamp),
                               auto_update_timestamp=None).total_price


class CostSum:
    """PriceTable.cost() summed over calls added one by one, as their token counts (no Usage made).

    A cost is linear in the tokens once the model, the hour, the mode and the prompt's price tier
    are fixed: calls alike in those are priced as one, their tokens summed (each call's 1-hour
    writes worked out first, as cost() does). A model with a per-request price is priced call by
    call. usd(): the sum, or None when a call had no price."""

    __slots__ = ("table", "ttl", "groups", "each", "priced", "tiers")

    def __init__(self, table: PriceTable, ttl: str = "5m") -> None:
        self.table, self.ttl = table, ttl
        self.groups: dict[tuple, list] = {}   # (id(price), speed, geo, model) -> [price, tokens summed...]
        self.each = Decimal(0)                # the calls priced one by one
        self.priced = True
        # (model, hour) -> the table's (price tiers, whether charged per request), None: no price
        self.tiers: dict[tuple, tuple | None] = {}

    def add(self, model: str | None, timestamp: str | None, input_tokens: int, output_tokens: int, read: int,
            write: int, write_1h: int = 0, speed: str | None = None, geo: str | None = None) -> None:
        tiers = self._priced_by(model, timestamp) if self.priced else None
        if tiers is None:
            return
        steps, per_request = tiers
        if per_request:
            c = self.table.cost(Usage(input_tokens, output_tokens, read, write, write_1h, speed, geo), model,
                                timestamp, self.ttl)
            if c is None:
                self.priced = False
            else:
                self.each += c
            return
        self._add_priced(steps[_tier(steps, input_tokens + read + write)][1], model, input_tokens, output_tokens,
                         read, write, write_1h, speed, geo)

    def _add_priced(self, price: Price, model: str | None, input_tokens: int, output_tokens: int, read: int,
                    write: int, write_1h: int = 0, speed: str | None = None, geo: str | None = None) -> None:
        key = (id(price), speed, geo, model)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = [price, 0, 0, 0, 0, 0]
        g[1] += input_tokens
        g[2] += output_tokens
        g[3] += read
        g[4] += write
        g[5] += write_1h or (write if self.ttl == "1h" else 0)

    def add_sums(self, model: str | None, timestamp: str | None, prompts: tuple[int, int], input_tokens: int,
                 output_tokens: int, read: int, write: int) -> bool:
        """add() of several calls of `model` in the hour of `timestamp` at once, given their tokens
        summed and their smallest and largest prompt (input + read + write), where those fall in
        one price tier and the model is not charged per request (a cost is then linear in the
        tokens). False, adding nothing, where that is not so: add them one by one."""
        tiers = self._priced_by(model, timestamp) if self.priced else None
        if tiers is None:
            return True
        steps, per_request = tiers
        if per_request:
            return False
        tier = _tier(steps, prompts[0])
        if tier != _tier(steps, prompts[1]):
            return False
        self._add_priced(steps[tier][1], model, input_tokens, output_tokens, read, write)
        return True

    def _priced_by(self, model: str | None, timestamp: str | None) -> tuple | None:
        """The table's (price tiers, whether charged per request) for `model` in the hour of
        `timestamp`; None where it has no price, and the sum has none from then on."""
        key = (model, timestamp[:13] if timestamp else None)
        tiers = self.tiers.get(key, _UNSEEN)
        if tiers is _UNSEEN:
            tiers = self.tiers[key] = self.table.price_steps(model, timestamp)
        if tiers is None:
            self.priced = False
        return tiers

    def add_usage(self, usage: Usage, model: str | None, timestamp: str | None) -> None:
        self.add(model, timestamp, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                 usage.cache_write_tokens, usage.cache_write_1h_tokens, usage.speed, usage.inference_geo)

    def usd(self) -> Decimal | None:
        if not self.priced:
            return None
        usd = self.each
        for (_, speed, geo, model), (price, i, o, r, w, hour) in self.groups.items():
            times = modifier(model, speed, geo)
            if times is None:
                return None
            usd += price.cost(Usage(i, o, r, w, hour)) * times   # (hour: as if each call had recorded its own)
        return usd


def _flat(value: Any, missing: Decimal) -> Decimal:
    if value is None:
        return missing
    if isinstance(value, Decimal):
        return value
    return Decimal(getattr(value, "base", 0))


@dataclass(frozen=True, slots=True)
class CostTotal:
    """Dollars over some requests; `usd` sums the priced ones, None when none was priced."""

    usd: Decimal | None
    requests: int
    unpriced: tuple[str, ...] = ()   # the models without a price ("unknown" for a request naming none)
    unpriced_requests: int = 0
    recorded_usd: Decimal | None = None  # the cost the file itself wrote (older Claude Code's costUSD), summed
    recorded_requests: int = 0           # how many requests it was written for

    @property
    def priced(self) -> bool:
        return self.requests > 0 and self.unpriced_requests == 0

    def __add__(self, other: CostTotal) -> CostTotal:
        usd = None if self.usd is None and other.usd is None else (self.usd or Decimal(0)) + (other.usd or Decimal(0))
        rec = (None if self.recorded_usd is None and other.recorded_usd is None
               else (self.recorded_usd or Decimal(0)) + (other.recorded_usd or Decimal(0)))
        return CostTotal(usd, self.requests + other.requests,
                         tuple(dict.fromkeys(self.unpriced + other.unpriced)),
                         self.unpriced_requests + other.unpriced_requests, rec,
                         self.recorded_requests + other.recorded_requests)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"usd": dollars(self.usd), "priced": self.priced,
                               "prices_as_of": PRICES_AS_OF}
        if self.unpriced_requests:
            out["unpriced_models"] = list(self.unpriced)
            out["unpriced_requests"] = self.unpriced_requests
        if self.recorded_usd is not None:
            # beside ctxview's price, never instead of it: the harness's own figure, where it wrote one
            out["recorded_usd"] = float(round(self.recorded_usd, 6))
            out["recorded_requests"] = self.recorded_requests
        return out


def cost_of(calls: Any, table: PriceTable) -> CostTotal:
    """The cost of (usage, model, timestamp) calls."""
    recorded: Decimal | None = None
    n = unpriced_n = recorded_n = 0
    unpriced: dict[str, None] = {}
    total = CostSum(table)
    for usage, model, timestamp in calls:
        n += 1
        if usage.recorded_usd is not None:
            recorded_n += 1
            recorded = (recorded or Decimal(0)) + Decimal(repr(usage.recorded_usd))
        if table.has_price(usage, model):
            total.add_usage(usage, model, timestamp)
        else:
            unpriced_n += 1
            unpriced[table.unpriced_name(usage, model)] = None
    usd = total.usd() if n > unpriced_n else None
    return CostTotal(usd, n, tuple(unpriced), unpriced_n, recorded, recorded_n)
