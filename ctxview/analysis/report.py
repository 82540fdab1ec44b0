"""The data behind `ctxview report`: per conversation, stored versus prepared.

`build_report(session, overrides)` returns plain dicts and lists (the `--json`
document); the CLI renders the same data as tables. No terminal code here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from ctxview.analysis.advice import (
    rank_advice,
    rank_compare,
    recommendation_applied,
    replayed,
    split_recommendations,
)  # noqa: F401
from ctxview.analysis.bloat_as_sent import conversation_bloat
from ctxview.gcpause import paused_gc
from ctxview.model import Conversation, Session
from ctxview.engine.harness import rewrite_events
from ctxview.pipeline import PipelineCache, prepare
from ctxview.pipeline.context import sent_estimate
from ctxview.analysis.prices import CostTotal, PriceTable, cost_of, dollars
from ctxview.analysis.cache_losses import cache_losses, loss_summary
from ctxview.analysis.request_table import request_rows
from ctxview.analysis.prompt_cache import (
    TTL_SECONDS,
    CacheRules,
    RequestRuns,
    min_cacheable_tokens,
    outcome,
    replay_fields,
    request_runs,
    simulate,
)
from ctxview.engine.tokens import calibrate
from ctxview.analysis.trace_compare import compare as compare_with_trace
from ctxview.formats.claude_trace import TraceRequest
from ctxview.engine.system_block import deferred_note, deferred_tools, loaded_definition_tokens
from ctxview.settings import Settings, keep_recent_note, request_index, settings_for, settings_from  # noqa: F401 (settings_for: its old home)
from ctxview.analysis.usage import UsageTotals, recorded_requests
from ctxview.engine.view import PreparedView, Row, row_columns, row_tokens
from ctxview.engine.windows import WARNING_MARKS, gauge_level

__all__ = ["MIN_CALIBRATION_REQUESTS", "build_report", "calibration_section", "conversation_bloat",
           "conversation_report", "recommendation_applied", "settings_for", "split_recommendations"]

# Below this many recorded requests a correction factor (or a fitted line) says more about the
# few requests than about the estimate: one request gave ×156 on a real file.
MIN_CALIBRATION_REQUESTS = 5


def calibration_section(calibration: Any) -> dict[str, Any]:
    """The calibration's `--json` entry: with fewer than MIN_CALIBRATION_REQUESTS recorded requests
    the factor is null and `factor_note` says why (the fit stays, marked by `fit_note`: the
    prompt-cache replay uses it, and says when it does)."""
    out = calibration.to_dict()
    n = out["requests"]
    out["min_requests"] = MIN_CALIBRATION_REQUESTS
    if 0 < n < MIN_CALIBRATION_REQUESTS:
        note = f"too few recorded requests ({n}) to fit a factor (at least {MIN_CALIBRATION_REQUESTS})"
        out["factor"] = None
        out["factor_note"] = note
        if out.get("slope") is not None:
            out["fit_note"] = note
    return out


def _bloat_section(bloat: Any, settings: Settings) -> dict[str, Any]:
    """The bloat analysis' `--json` entry, its recommendations against the current settings."""
    out = bloat.to_dict()
    todo, applied = split_recommendations(bloat.recommendations, settings)
    out["recommendations"] = [r.to_dict() for r in todo]
    out["applied"] = [r.to_dict() for r in applied]
    return out

def compactions(conversation: Conversation) -> list[dict[str, Any]]:
    """The rewrites the harness recorded (compactions, microcompactions, SwarmSDK compressions)."""
    out = []
    for e in rewrite_events(conversation):
        entry = {"kind": e.kind, "index": e.index, "trigger": e.trigger, "tokens_before": e.tokens_before}
        if e.kind == "compaction":
            entry["messages_replaced"] = len(e.replaced)
        elif e.kind == "microcompaction":
            entry["results_cleared"] = len(e.replaced)
        out.append(entry)
    return out


def _deferred(conversation: Conversation, n: int | None, count_message: Any) -> dict[str, Any]:
    """The deferred tools at the request shown (system_block.deferred_tools) and the line that says so."""
    d = deferred_tools(conversation, n)
    return {"announced": list(d.announced), "loaded": [{"index": i, "names": list(names)} for i, names in d.loaded],
            "loaded_tokens": loaded_definition_tokens(conversation, n, count_message) if d.loaded else 0,
            "note": deferred_note(conversation, n, count_message)}


def _by_role(view: PreparedView) -> dict[str, dict[str, int]]:
    """Messages and tokens by role, stored and prepared (read from the rows' columns: no row is made)."""
    sums: dict[str, list[int]] = {}   # role -> [stored, prepared, tokens_stored, tokens_prepared]
    _, stored_col, prepared_col = row_columns(view.rows)
    for stored, prepared, (tokens_stored, tokens_prepared) in zip(stored_col, prepared_col, row_tokens(view.rows)):
        role = (stored or prepared).role  # type: ignore[union-attr]
        entry = sums.get(role)
        if entry is None:
            entry = sums[role] = [0, 0, 0, 0]
        if stored is not None:
            entry[0] += 1
            entry[2] += tokens_stored
        if prepared is not None:
            entry[1] += 1
            entry[3] += tokens_prepared
    return {role: dict(zip(("stored", "prepared", "tokens_stored", "tokens_prepared"), entry))
            for role, entry in sums.items()}


def conversation_report(
    conversation: Conversation,
    settings: Settings,
    *,
    cache: PipelineCache | None = None,
    threshold: float = 0.7,
    rows: bool = False,
    prices: PriceTable | None = None,
    cache_ttl: str | None = None,
    compare: Sequence[tuple[str, Settings]] = (),
    series: bool = False,
    usage_memo: dict | None = None,
    requests: bool = False,
) -> dict[str, Any]:
    """One conversation's entry of the report document; `rows`: add one entry per message (and per
    recorded request); `prices`: the price table for its cost (None: genai-prices' own);
    `cache_ttl`: the prompt cache's lifetime ("5m", "1h"; None: the file's, see _CacheReplays); `compare`:
    (label, settings) to replay every request under; `series`: add `"context_series"` (the usage chart's
    data); `usage_memo`: see _usage_cost; `requests`: add `"requests"`, one entry per request (request_table)."""
    cache = cache or PipelineCache()
    view = prepare(conversation, settings, cache=cache)
    bloat = conversation_bloat(conversation, settings, view.context_window, cache, threshold)
    calibration = as_sent_calibration(conversation, settings, cache)
    share = view.window_share
    shown = settings.request
    counter = cache.counter(conversation, settings.counter)
    out = {
        "name": conversation.name,
        "model": conversation.model,
        "counter": view.counter_name,
        "view": settings.view,
        "view_label": settings.label(),
        # why --keep-recent changes nothing here, where it does not (settings.keep_recent_note)
        "keep_recent_note": (keep_recent_note(settings) if settings.compresses else "") or None,
        "request": {"number": (view.requests.index(shown) + 1) if shown in view.requests
                    else len(view.requests) + 1, "index": shown, "of": len(view.requests)},
        "context": view.context.to_dict(),
        "compactions": compactions(conversation),
        "deferred_tools": _deferred(conversation, shown, lambda m: cache.count(counter, m)),
        "settings": dataclasses.asdict(settings),
        "messages": {"stored": sum(1 for m in row_columns(view.rows)[1] if m is not None),
                     "prepared": len(view.prepared)},
        "tokens": {"stored": view.tokens_stored, "prepared": view.tokens_prepared, "system": view.system_tokens},
        "by_role": _by_role(view),
        "reminders": {"stored": bloat.reminder_tokens_stored, "ephemeral": bloat.reminder_tokens_ephemeral},
        "tool_results": {"total": view.stats.get("tool_results", 0), "compressed": view.stats.get("compressed", 0),
                         "cleared": view.stats.get("cleared", 0)},
        "changes": {k: v for k, v in view.stats.items() if k != "tool_results"},
        "context_window": view.context_window,
        "window": {
            "size": view.context_window,
            "share": None if share is None else round(share, 4),
            "marks": list(WARNING_MARKS),
            "marks_reached": gauge_level(share),
        },
        # the budget is the model's tokens, read through the request's fit: its basis is the figure's
        "budget": {"tokens": settings.budget, "shortfall": view.budget_shortfall,
                   "basis": None if settings.budget is None or view.context_fit is None else view.context_fit.basis},
        "calibration": calibration_section(calibration),
        "bloat": _bloat_section(bloat, settings),
    }
    prices = prices or PriceTable()
    out.update(usage_and_cost(conversation, prices, per_request=rows, memo=usage_memo))
    replays = _CacheReplays(conversation, settings, calibration, prices, cache, cache_ttl, usage_memo)
    out["cache"] = replays.cache_section()
    # each recommendation replayed and priced: ranked by dollars, and one that raises the bill apart
    out["bloat"]["recommendations"], out["bloat"]["raises_bill"] = replays.advise(out["bloat"]["recommendations"])
    if compare:
        out["compare"] = replays.compare(compare, release=True)
    if series:
        out["context_series"] = context_series(conversation, settings, cache)
    if rows:
        out["rows"] = [_row_dict(r) for r in view.rows]
    if requests:
        out["requests"], out["cache_losses"] = request_rows(conversation, cache.counter(conversation, settings.counter),
                                                            cache, prices)
    else:
        out["cache_losses"] = loss_summary(cache_losses(conversation, prices))
    return out


# --- usage and cost ---------------------------------------------------------------

def _usage_cost(conversation: Conversation, prices: PriceTable,
                memo: dict | None = None) -> tuple[UsageTotals, CostTotal, list]:
    """The recorded usage, its cost and the recorded requests. `memo` (a dict a caller keeps for
    one price table) holds them by conversation: a report asks three times for each."""
    hit = memo.get(id(conversation)) if memo is not None else None
    if hit is not None and hit[0] is conversation:
        return hit[1]
    calls = list(recorded_requests(conversation))
    totals = UsageTotals.of(r.usage for r in calls)
    cost = cost_of(((r.usage, r.model, r.timestamp) for r in calls), prices)
    if memo is not None:
        memo[id(conversation)] = (conversation, (totals, cost, calls))
    return totals, cost, calls


def usage_and_cost(conversation: Conversation, prices: PriceTable, *, per_request: bool = False,
                   memo: dict | None = None) -> dict[str, Any]:
    """`"usage"` (recorded, summed once per request) and `"cost"` of one conversation; with
    `per_request`, `"usage_by_request"` too."""
    totals, cost, calls = _usage_cost(conversation, prices, memo)
    out: dict[str, Any] = {"usage": totals.to_dict(), "cost": cost.to_dict()}
    if per_request:
        out["usage_by_request"] = [
            {"index": r.index, "model": r.model, "timestamp": r.timestamp,
             **UsageTotals.of((r.usage,)).to_dict(),
             "usd": _usd(prices.cost(r.usage, r.model, r.timestamp)),
             **({"recorded_usd": r.usage.recorded_usd} if r.usage.recorded_usd is not None else {})} for r in calls]
    return out


def session_usage_and_cost(session: Session, prices: PriceTable, memo: dict | None = None) -> dict[str, Any]:
    """The session's `"usage"` and `"cost"`: every conversation, sub-agents and side chains included."""
    totals, cost = UsageTotals(), CostTotal(None, 0)
    for c in session.conversations:
        t, k, _ = _usage_cost(c, prices, memo)
        totals, cost = totals + t, cost + k
    return {"usage": totals.to_dict(), "cost": cost.to_dict()}


def _usd(value: Any) -> float | None:
    return dollars(value)


def context_series(conversation: Conversation, settings: Settings, cache: PipelineCache) -> dict[str, Any]:
    """The context of every request: ctxview's estimate as sent and, where the file recorded it, the
    provider's input + cache; the requests that follow a compaction; the window (the usage chart)."""
    from ctxview.model import request_indices
    from ctxview.engine.windows import resolve_context_window

    counter = cache.counter(conversation, settings.counter)
    system = counter.count(conversation.system_prompt) if conversation.system_prompt else 0
    tokens = sent_estimate(cache, conversation, counter, system)
    msgs = conversation.messages
    requests = request_indices(msgs)
    points = [{"index": r, "estimate": tokens(r),
               "recorded": msgs[r].usage.context_tokens if msgs[r].usage is not None else None} for r in requests]
    compacted = [e.index for e in rewrite_events(conversation) if e.kind == "compaction"]
    drops = sorted({k for c in compacted for k, r in enumerate(requests) if r >= c and (k == 0 or requests[k - 1] < c)})
    return {"points": points, "compactions": drops, "marks": list(WARNING_MARKS),
            "window": resolve_context_window(settings.context_window, conversation.context_window,
                                             conversation.model)}


# --- the prompt cache: simulated against the record, and what a policy costs -------

def cache_replays(conversation: Conversation, settings: Settings, cache: PipelineCache, prices: PriceTable,
                  ttl: str | None = None) -> _CacheReplays:
    """The prompt-cache replays of one conversation (`.cache_section()`, `.compare(settings)`)."""
    return _CacheReplays(conversation, settings, as_sent_calibration(conversation, settings, cache), prices, cache,
                         ttl)


class _CacheReplays:
    """Every request of one conversation replayed through the prompt-cache simulation.

    ctxview's estimate does not hold what the file does not store (tool definitions, the
    harness's system prompt) and counts in its own tokens: where the calibration fitted recorded
    ≈ overhead + slope × estimate, the prompts carry that overhead as their system block and
    are scaled by the slope. What the cache held before the file began is not in the file
    either: the first recorded request's cache read is taken as the system block already cached.

    The cache's lifetime is `ttl` where given, else the one the file's writes were made with
    (Claude Code's 1-hour writes: usage.cache_creation), else Anthropic's default of 5 minutes. A
    compaction agent (Claude Code's agent-acompact-*) sends the main conversation as it stood, then
    its own request: it reads the main conversation's cache, so the prefix its first request read
    (recorded) is its system block, already cached."""

    def __init__(self, conversation: Conversation, settings: Settings, calibration: Any, prices: PriceTable,
                 cache: PipelineCache, ttl: str | None, usage_memo: dict | None = None) -> None:
        self.conversation, self.prices, self.cache = conversation, prices, cache
        self.recorded, self.recorded_cost, calls = _usage_cost(conversation, prices, usage_memo)
        self.ttl_source = "option" if ttl else ("file" if self.recorded.cache_ttl else "default")
        self.ttl = ttl or self.recorded.cache_ttl or "5m"
        self.warm = calls[0].usage.cache_read_tokens if calls else 0
        self.reads_parent = conversation.metadata.get("kind") == "compaction" and self.warm > 0
        slope = calibration.slope
        self.calibrated = slope is not None and slope > 0
        self.scale = slope if self.calibrated else 1.0
        # The fit's estimate counts the system prompt alone; the replay's system block also holds
        # the tool definitions the file recorded: those come out of the fitted overhead.
        counter = cache.counter(conversation, settings.counter)
        prompt = counter.count(conversation.system_prompt) if conversation.system_prompt else 0
        extra = cache.system_tokens(cache.data(conversation), counter) - prompt
        fitted = (calibration.overhead or 0) - self.scale * extra
        self.overhead = max(int(round(fitted)), 0) if self.calibrated else 0
        if self.reads_parent:
            self.overhead = self.warm   # the main conversation's prefix, in the main conversation's cache
        self.rules = CacheRules(ttl=TTL_SECONDS[self.ttl], minimum=min_cacheable_tokens(conversation.model))
        self.as_sent = Settings(counter=settings.counter, context_window=settings.context_window,
                                embed_ephemeral=settings.embed_ephemeral)
        self._runs: dict[Settings, Any] = {}  # each setting's outcome (a few sums), replayed once
        self._requests: RequestRuns | None = None   # the replays' requests in runs of one price

    def run(self, settings: Settings):
        hit = self._runs.get(settings)
        if hit is None:
            prompts = replay_fields(self.conversation, settings, cache=self.cache, overhead=self.overhead,
                                    scale=self.scale)
            indices = [p[0] for p in prompts]   # (each prompt's index)
            if self._requests is None or self._requests.indices != indices:
                self._requests = request_runs(self.conversation, indices)
            hit = self._runs[settings] = outcome(self.conversation, prompts,
                                                 simulate(prompts, self.rules, warm=self.warm), self.prices, self.ttl,
                                                 self._requests)
        return hit

    def advise(self, recommendations: Sequence[Any]) -> tuple[list[dict], list[dict]]:
        """advice.rank_advice over this conversation: each recommendation on top of the as-sent view."""
        as_sent = {"counter": self.as_sent.counter, "context_window": self.as_sent.context_window,
                   "embed_ephemeral": self.as_sent.embed_ephemeral}
        return rank_advice(recommendations, self.run(self.as_sent), self.run,
                           lambda o: settings_from(None, {**as_sent, **o}),
                           len(self.cache.data(self.conversation).requests))

    def cache_section(self) -> dict[str, Any]:
        sim = self.run(self.as_sent)
        rec = self.recorded
        recorded_share = rec.read_share if rec.cache_read or rec.cache_write else None
        return {"simulated_read_share": None if sim.read_share is None else round(sim.read_share, 4),
                "recorded_read_share": None if recorded_share is None else round(recorded_share, 4),
                "ttl": self.ttl, "ttl_source": self.ttl_source, "reads_parent_cache": self.reads_parent,
                "minimum_tokens": self.rules.minimum, "calibrated": self.calibrated,
                "overhead": self.overhead, "scale": round(self.scale, 4), "warm": self.warm,
                "simulated": sim.to_dict()}

    def compare(self, settings: Sequence[tuple[str, Settings]], *, release: bool = False) -> dict[str, Any]:
        """Each setting against the as-sent view through the same simulation (the change is the policy's alone), the
        record beside it; `release`: the cache is not shared with a view in use, forget each setting's after it."""
        base_outcome = self.run(self.as_sent)
        base = base_outcome.to_dict()
        rec = self.recorded
        recorded = None
        if rec.requests and rec.context:
            recorded = {"requests": rec.requests, "tokens": rec.context, "cache_read": rec.cache_read,
                        "cache_write": rec.cache_write, "input": rec.input,
                        "read_share": round(rec.read_share or 0.0, 4), "usd": self.recorded_cost.to_dict()["usd"]}
        rows = []
        for label, s in settings:
            d = replayed(base_outcome, self.run(s))
            if release:  # (one setting's cut messages in memory at a time, not every one's)
                self.cache.forget_derived()
            d.update(label=label, view_label=s.label(),
                     tokens_change=_change(d["tokens"], base["tokens"]), cost_change=_change(d["usd"], base["usd"]))
            rows.append(d)
        return {"as_sent": base, "recorded": recorded, "settings": rank_compare(rows)}


def _compare_settings(overrides: Mapping[str, Any], compare: Sequence[tuple[str, Mapping[str, Any]]]):
    """Each compared setting on its own (the defaults, not the report's or the file's what-if), with
    the report's counter and context window."""
    keep = {k: overrides.get(k) for k in ("counter", "context_window")}
    return [(label, settings_from(None, {**keep, **o})) for label, o in compare]


def _change(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return round(value / base - 1, 4) + 0.0  # (+ 0.0: never -0.0)


def as_sent_calibration(conversation: Conversation, settings: Settings, cache: PipelineCache):
    """The estimate of each recorded request's context as sent, fitted to what the file recorded."""
    counter = cache.counter(conversation, settings.counter)
    counts, _ = cache.stored_counts(cache.data(conversation), counter)
    system = counter.count(conversation.system_prompt) if conversation.system_prompt else 0
    return calibrate(conversation.messages, counter, system_prompt=conversation.system_prompt, counts=counts,
                     estimate=sent_estimate(cache, conversation, counter, system))


def _row_dict(row: Row) -> dict[str, Any]:
    msg = row.stored if row.stored is not None else row.prepared
    return {
        "index": row.index,
        "role": msg.role if msg is not None else None,
        "tool": row.tool_name,
        "tokens_stored": row.tokens_stored if row.stored is not None else None,
        "tokens_prepared": row.tokens_prepared if row.prepared is not None else None,
        "changes": [{"action": c.action, "rule": c.rule, "detail": c.detail, "tier": c.tier, "age": c.age,
                     "saved_tokens": c.saved_tokens} for c in row.changes],
    }


def build_report(
    session: Session,
    overrides: Mapping[str, Any] | None = None,
    *,
    agent: str | None = None,
    threshold: float = 0.7,
    rows: bool = False,
    prices: PriceTable | None = None,
    cache_ttl: str | None = None,
    compare: Sequence[tuple[str, Mapping[str, Any]]] = (),
    series: bool = False,
    trace: tuple[str, Sequence[TraceRequest]] | None = None,
    requests: bool = False,
) -> dict[str, Any]:
    """The whole report document; `agent` keeps only that conversation (KeyError if absent);
    `rows` adds one entry per message to each conversation. The session's `"usage"` and `"cost"`
    are over all its conversations, whichever `agent` is shown. `trace` (a claude-trace log's name
    and requests) adds `"trace"`: each request's as-sent reconstruction against what was sent."""
    conversations = [session.conversation(agent)] if agent is not None else list(session.conversations)
    cache = PipelineCache()
    prices = prices or PriceTable()
    # A request number names a request of one conversation: the one asked for, else the first.
    others = {k: v for k, v in (overrides or {}).items() if k != "request_number"}
    with paused_gc():  # (see gcpause: the collector would walk the whole session, again and again)
        doc = _build_report(session, overrides, others, conversations, cache, threshold, rows, prices, cache_ttl,
                            compare, series, requests)
        if trace is not None:
            doc["trace"] = compare_with_trace(session, trace[1], trace[0]).to_dict()
    return doc


def _build_report(session, overrides, others, conversations, cache, threshold, rows, prices, cache_ttl, compare,
                  series, requests=False) -> dict[str, Any]:
    memo: dict = {}  # each conversation's recorded usage and cost, worked out once
    return {
        "format": session.format,
        "source": session.source,
        "conversations": [
            conversation_report(c, settings_for(c, overrides if k == 0 else others), cache=cache,
                                threshold=threshold, rows=rows, prices=prices, cache_ttl=cache_ttl,
                                compare=_compare_settings(others, compare), series=series, usage_memo=memo,
                                requests=requests)
            for k, c in enumerate(conversations)
        ],
        **session_usage_and_cost(session, prices, memo),
    }
