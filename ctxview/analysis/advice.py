"""Advice that saves money: each recommendation replayed through the prompt-cache simulation, by dollars.

A setting that sends fewer tokens can cost more: cutting old tool results rewrites the prompt's
prefix, so the next request writes to the cache (1.25× or 2× the input price) what it would
have read (0.1×). The bloat analysis measures tokens of the stored messages; here each of its
recommendations, and each `--compare` setting, is replayed request by request
(prompt_cache.replay and simulate, through the report's replays) and priced, against the as-sent
view through the same simulation. What it does to the bill decides:

- `verdict(change)`: "saves $X", "raises the bill by $X", "costs the same", "no price";
- `rank_advice`: the recommendations that save, most dollars first (without a price: by tokens,
  after the priced ones), and apart from them the ones that raise the bill: never recommended.

Whether a recommendation is in effect already (`recommendation_applied`, `split_recommendations`)
is here too: the report and the inspector's `b` leave those out.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from ctxview.plain_number import plain_number
from ctxview.settings import ClearSettings, Settings

__all__ = ["MAX_NAIVE_REQUESTS", "money", "rank_advice", "recommendation_applied", "setting_overrides",
           "split_recommendations", "verdict"]

# A summary of old messages is replayed by preparing every request whole (n²: 2.5 s for 152
# requests of a real session); over this many requests it is not replayed, and says so.
MAX_NAIVE_REQUESTS = 300


def money(usd: Any) -> str:
    return "no price" if usd is None else f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def verdict(change: float | Decimal | None) -> str:
    """A setting's effect on the bill in words: a rise is never shown as a saving."""
    if change is None:
        return "no price"
    if change > 0:
        return f"raises the bill by {money(change)}"
    if change < 0:
        return f"saves {money(-change)}"
    return "costs the same"


def _tier_spec(tiers: str) -> str | None:
    from ctxview.engine.compression import format_tiers, get_policy

    try:
        return format_tiers(get_policy(tiers))
    except ValueError:
        return None


def setting_overrides(setting: str) -> dict[str, Any] | None:
    """A recommendation's options (`--tiers default --keep-recent 10`, `--clear-keep 3`,
    `--old-messages llm`, `--budget N`) as settings overrides; None when one is not known here."""
    words = setting.split()
    if not words or len(words) % 2:
        return None
    out: dict[str, Any] = {}
    for option, value in zip(words[::2], words[1::2]):
        if option == "--tiers":
            out["tiers"] = value
        elif option == "--old-messages":
            out["old_messages"] = value
        elif option in ("--keep-recent", "--clear-keep", "--budget") and (n := plain_number(value)) is not None:
            key = {"--keep-recent": "keep_recent", "--clear-keep": "clear", "--budget": "budget"}[option]
            out[key] = ClearSettings(keep=n) if key == "clear" else n
        else:
            return None
    return out


def recommendation_applied(setting: str, settings: Settings) -> bool:
    """Whether the options of a bloat recommendation (`--tiers default --keep-recent 10`,
    `--clear-keep 3`, `--old-messages llm`, `--budget N`) are already in effect in `settings`
    (clearing or a budget at least as strong counts). An option not known here is not applied."""
    words = setting.split()
    options = dict(zip(words[::2], words[1::2]))
    if not options or len(words) % 2:
        return False
    for option, value in options.items():
        n = plain_number(value)
        if option == "--tiers":
            ok = settings.compresses and _tier_spec(settings.tiers) == _tier_spec(value)
        elif option == "--keep-recent":
            ok = n is not None and settings.keep_recent == n
        elif option == "--clear-keep":
            ok = n is not None and settings.clear is not None and settings.clear.keep <= n
        elif option == "--old-messages":
            ok = settings.old_messages == value
        elif option == "--budget":
            ok = n is not None and settings.budget is not None and settings.budget <= n
        else:
            ok = False
        if not ok:
            return False
    return True


def split_recommendations(recommendations: Sequence[Any], settings: Settings) -> tuple[list[Any], list[Any]]:
    """(to recommend, already applied): a recommendation whose setting is in effect is not one."""
    todo, applied = [], []
    for r in recommendations:
        (applied if recommendation_applied(r.setting, settings) else todo).append(r)
    return todo, applied


def replayed(base: Any, outcome: Any) -> dict[str, Any]:
    """One setting's replay against the as-sent one (both prompt_cache.Outcome): tokens saved in all and
    per request, the cache-read share, dollars and the change in dollars, in words too."""
    d = outcome.to_dict()
    saved = base.tokens - outcome.tokens
    change = None if outcome.usd is None or base.usd is None else outcome.usd - base.usd
    d.update(tokens_saved=saved, tokens_saved_per_request=saved // max(outcome.requests, 1),
             as_sent_read_share=None if base.read_share is None else round(base.read_share, 4),
             usd_change=None if change is None else float(round(change, 6)) + 0.0, verdict=verdict(change))
    return d


def rank_advice(recommendations: Sequence[Mapping[str, Any]], base: Any, run: Callable[[Settings], Any],
                make: Callable[[Mapping[str, Any]], Settings], requests: int) -> tuple[list[dict], list[dict]]:
    """(recommended, raising the bill): each recommendation (a Recommendation.to_dict()) with its
    `"replay"` (`replayed`, or None with `"not_replayed"` saying why); `run` replays settings (an
    Outcome), `make` turns overrides into the settings to replay. Recommended: those that save, most
    dollars first, then the unpriced and unreplayed ones by the tokens of the stored messages."""
    keep, raise_ = [], []
    for rec in recommendations:
        entry = dict(rec)
        overrides = setting_overrides(rec["setting"])
        if overrides is None:
            entry.update(replay=None, not_replayed="a setting the replay does not know")
        elif overrides.get("old_messages", "keep") != "keep" and requests > MAX_NAIVE_REQUESTS:
            entry.update(replay=None, not_replayed=f"a summary is replayed request by request: {requests:,} requests "
                                                   f"are more than {MAX_NAIVE_REQUESTS:,}")
        else:
            entry["replay"] = replayed(base, run(make(overrides)))
        change = entry["replay"]["usd_change"] if entry["replay"] else None
        (raise_ if change is not None and change > 0 else keep).append(entry)

    def order(e: dict) -> tuple:
        change = e["replay"]["usd_change"] if e["replay"] else None
        return (change is None, change if change is not None else 0.0, -e["saves"])

    return sorted(keep, key=order), sorted(raise_, key=order)


def rank_compare(rows: list[dict]) -> list[dict]:
    """The `--compare` rows by dollars, cheapest first (without a price: last, in the order given),
    each with its change in dollars and in words."""
    return sorted(rows, key=lambda r: (r.get("usd_change") is None, r.get("usd_change") or 0.0))
