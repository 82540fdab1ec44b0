"""What fills a context, and what would shrink it: analyze_context_bloat.

The report says how many tokens the messages take and what share of the
context window that is; splits the tokens by role, by tool and into system
reminders (stored in history, and ephemeral ones added per request); lists
the largest messages, repeated tool results (same tool and arguments, or the
same content) and stale large tool results; and recommends actions, each with
the setting that does it and the tokens it would save, measured by running
that setting over the messages.
"""

from __future__ import annotations

import bisect
import heapq
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ctxview.engine import reminders
from ctxview.engine.budget import checkpoint_message, extractive_summary, fit_plan, summary_span
from ctxview.engine.clearing import clearing_saving
from ctxview.engine.call_arguments import args_groups
from ctxview.engine.compression import DEFAULT_POLICY, compress_tool_results
from ctxview.model import Message
from ctxview.engine.tokens import SwarmEstimate, TokenCounter
from ctxview.engine.tool_names import detect_tool_name
from ctxview.engine.bloat_scan import Scan, scan_by_id
from ctxview.engine.tiers_saving import tiers_saving
from ctxview.settings import ClearSettings

__all__ = ["BloatReport", "Recommendation", "analyze_context_bloat"]


@dataclass(frozen=True, slots=True)
class Recommendation:
    action: str        # what to do, in words
    setting: str       # the ctxview setting / option that does it
    saves: int         # tokens it would save on these messages
    detail: str = ""

    def to_dict(self) -> dict:
        return {"action": self.action, "setting": self.setting, "saves": self.saves, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class BloatReport:
    total_tokens: int
    bloated: bool
    threshold: float
    context_window: int | None = None
    by_role: Mapping[str, int] = field(default_factory=dict)
    by_tool: Mapping[str, int] = field(default_factory=dict)
    tool_result_tokens: int = 0
    reminder_tokens_stored: int = 0
    reminder_tokens_ephemeral: int = 0
    largest: tuple[Mapping[str, Any], ...] = ()
    repeated: tuple[Mapping[str, Any], ...] = ()
    stale: tuple[Mapping[str, Any], ...] = ()
    recommendations: tuple[Recommendation, ...] = ()
    counter: str = ""
    basis: str = "counted"   # what total_tokens is: "recorded", "calibrated" (the model's tokens) or "counted"
    rule: str = ""           # the rule the verdict followed, in words (or why there is none)

    @property
    def share(self) -> float | None:
        """Tokens as a share of the context window (None without a window)."""
        return self.total_tokens / self.context_window if self.context_window else None

    def to_dict(self) -> dict:
        share = self.share
        return {
            "bloated": self.bloated,
            "recommendations": [r.to_dict() for r in self.recommendations],
            "total_tokens": self.total_tokens,
            "context_window": self.context_window,
            "share": None if share is None else round(share, 4),
            "threshold": self.threshold,
            "counter": self.counter,
            "basis": self.basis,
            # (the parts below are each message's tokens as the counter counts them; only the total
            # and the recommendations are in the model's tokens where `basis` says so)
            "parts_basis": "counted",
            "rule": self.rule,
            "by_role": dict(self.by_role),
            "by_tool": dict(self.by_tool),
            "tool_result_tokens": self.tool_result_tokens,
            "reminders": {"stored": self.reminder_tokens_stored, "ephemeral": self.reminder_tokens_ephemeral},
            "largest": [dict(x) for x in self.largest],
            "repeated": [dict(x) for x in self.repeated],
            "stale": [dict(x) for x in self.stale],
        }

    def __getitem__(self, key: str) -> Any:
        """Dict-style access (`report["bloated"]`), as the original's hash result."""
        return self.to_dict()[key]


def _reminder_tokens(text: str, count: Callable[[str], int]) -> int:
    """Tokens of the reminder blocks in one text."""
    return sum(count(block) for block in reminders.extract(text)) if reminders.OPEN in text else 0


def _result_tool(msg: Message, call: Any) -> str | None:
    """clearing.tool_name_of(msg, {call id: call name}), given the call the result answers (None:
    none does; Scan.calls)."""
    return msg.tool_name or (call.name if call is not None else detect_tool_name(msg.text))


@dataclass(frozen=True)
class Measures:
    """How the analysis reads the messages, measures what the tiers and clearing would save and
    summarises the old messages: the rules (PLAIN), or twins that give the same (ctxview._fast.bloat.FAST)."""

    scan: Callable[[Sequence[Message], Sequence[int]], Scan] = scan_by_id
    tiers_saving: Callable[..., int] = tiers_saving
    clearing_saving: Callable[..., tuple[int, int]] = clearing_saving
    summary: Callable[[Sequence[Message]], str] = extractive_summary


PLAIN = Measures()


def analyze_context_bloat(
    messages: Sequence[Message],
    threshold: float = 0.7,
    context_window: int | None = None,
    counter: TokenCounter | None = None,
    *,
    ephemeral: Mapping[int, Sequence[str]] | None = None,
    system_prompt: str | None = None,
    keep_recent: int = 10,
    largest: int = 5,
    stale_age: int = 20,
    stale_tokens: int = 1000,
    counts: Sequence[int] | None = None,
    measure: Callable[[Message], int] | None = None,
    measure_cleared: Callable[[Message], int] | None = None,
    blank: Callable[[Message, str], Message] | None = None,
    rows: Sequence[Any] | None = None,
    figure: tuple[int, str, float] | None = None,
    compress: Callable[..., list[Message]] = compress_tool_results,
    measures: Measures = PLAIN,
) -> BloatReport:
    """Analyse `messages` (see the module docstring).

    bloated: the context ≥ threshold × context_window, and at least
    MIN_VERDICT_TOKENS; no verdict without a window (`rule` says which rule
    was used, or why none). `figure` (tokens, basis, scale): the request's
    context in the model's tokens (context_tokens) and how many of them one
    counted token is: the total, the verdict and every saving are then in
    that unit, a saving never more than the messages hold. `counts` (tokens
    per message), `measure` (tokens of any message, e.g. through a cache),
    and for the clearing measured, `measure_cleared` (tokens of a cleared
    result) and `blank` (a result with its content replaced), may be passed
    in by a caller that has them; so may `rows`, the pipeline's unchanged row
    of each message (view.Row: its tool name and reminder spans). `compress`:
    compress_tool_results or a twin with its results (the pipeline's, whose
    memo tables already hold the cuts). `measures`: the rules, or their fast twins (FAST).
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], not {threshold}")
    return _analyze(messages, threshold, context_window, counter or SwarmEstimate(), ephemeral, system_prompt,
                    keep_recent, largest, stale_age, stale_tokens, counts, measure, measure_cleared, blank,
                    rows, figure, compress, measures)


def _analyze(messages, threshold, context_window, counter, ephemeral, system_prompt, keep_recent, largest,
             stale_age, stale_tokens, counts, measure, measure_cleared=None, blank=None, rows=None,
             figure=None, compress=compress_tool_results, measures=PLAIN) -> BloatReport:
    measure = measure or counter.count_message
    per = list(counts) if counts is not None else [measure(m) for m in messages]
    n = len(messages)
    system_tokens = counter.count_message(Message("system", system_prompt)) if system_prompt else 0
    eph_tokens = 0
    if ephemeral:
        eph_tokens = sum(counter.count(str(p)) for i, ps in ephemeral.items() if 0 <= i < n for p in ps if p)
    total = sum(per) + system_tokens + eph_tokens
    scan = measures.scan(messages, per)
    tally = _Tally(messages, per, counter, stale_age, stale_tokens, rows, scan)
    if system_tokens:
        tally.by_role["system"] += system_tokens
    repeated = tally.repeated_groups()
    # the biggest first, ties in index order (nlargest: sorted(..., reverse=True)[:largest] without the sort)
    order = (heapq.nlargest(largest, range(n), key=per.__getitem__) if largest >= 0
             else sorted(range(n), key=per.__getitem__, reverse=True)[:largest])
    biggest = tuple(
        {"index": j, "role": messages[j].role, "tool": tally.tool_of(j) if messages[j].role == "tool" else None,
         "tokens": per[j]}
        for j in order
    )
    shown, basis, scale = figure if figure is not None else (total, "counted", 1.0)
    scale = scale if scale > 0 else 1.0
    held = min(shown, round(scale * sum(per)))  # the messages' part of the request, in the unit shown
    bloated, rule = _verdict(shown, threshold, context_window)
    # the tokens the messages may take (counted), when bloated: the threshold less the rest of the request
    room = (threshold * context_window - (shown - held)) / scale if context_window and bloated else None
    if figure is None:
        room = threshold * context_window - system_tokens - eph_tokens if context_window and bloated else None
    # the budget is the whole request's: in the model's tokens where the figure is, the threshold
    # itself; counted, the room with the system block counted in
    budget = (None if room is None else int(threshold * context_window) if figure is not None
              else int(room) + system_tokens + eph_tokens)
    recs = _recommendations(messages, per, counter, measure, keep_recent, repeated, tally.stale, room, threshold,
                            context_window, measure_cleared or measure, blank, scan.units, scan.results,
                            tally.same_text, budget, compress, measures)
    if figure is not None:
        recs = [Recommendation(r.action, r.setting, min(held, round(scale * r.saves)), r.detail) for r in recs]
    return BloatReport(
        total_tokens=shown,
        bloated=bloated,
        basis=basis,
        rule=rule,
        threshold=threshold,
        context_window=context_window,
        by_role=dict(sorted(tally.by_role.items(), key=lambda kv: -kv[1])),
        by_tool=dict(sorted(tally.by_tool.items(), key=lambda kv: -kv[1])),
        tool_result_tokens=tally.tool_tokens,
        reminder_tokens_stored=tally.stored_reminders,
        reminder_tokens_ephemeral=eph_tokens,
        largest=biggest,
        repeated=tuple(repeated),
        stale=tuple(tally.stale),
        recommendations=tuple(recs),
        counter=counter.name,
    )


MIN_VERDICT_TOKENS = 1_000  # below this, no context is called bloated, whatever the window


def _verdict(tokens: int, threshold: float, context_window: int | None) -> tuple[bool, str]:
    """(bloated, the rule in words): the context at or over `threshold` of the window; no verdict
    without a window, nor on a context of fewer than MIN_VERDICT_TOKENS."""
    if not context_window:
        return False, "no verdict: the context window is unknown (--context-window N sets it)"
    if tokens < MIN_VERDICT_TOKENS:
        return False, f"no verdict on {tokens:,} tokens (fewer than {MIN_VERDICT_TOKENS:,})"
    limit = threshold * context_window
    sign = "≥" if tokens >= limit else "<"
    return tokens >= limit, (f"context {tokens:,} {sign} {threshold:.0%} of the {context_window:,}-token window "
                             f"({int(limit):,})")


class _Tally:
    """Tokens by role and tool, stored reminders, the tool results that repeat a call or a text, and
    the stale large ones. `rows`: the pipeline's unchanged row of each message, whose reminder spans
    were found already (reminders.spans' spans)."""

    def __init__(self, messages, per, counter, stale_age: int, stale_tokens: int, rows, scan: Scan) -> None:
        self.messages, self.per, self.rows = messages, per, rows
        self.results, self.calls = scan.results, scan.calls
        self.by_role = scan.by_role
        self.by_tool: dict[str, int] = defaultdict(int)
        self.same_text: dict[str, list[int]] = defaultdict(list)
        self.stale: list[dict] = []
        # the tool, arguments and index of each result linked to a call with arguments
        linked_names: list[str] = []
        linked_args: list[Mapping[str, Any]] = []
        linked: list[int] = []
        # (names bound locally: one iteration per result of 60k)
        by_tool, same_text, stale = self.by_tool, self.same_text, self.stale
        tool_tokens = 0
        n = len(messages)
        for i, call in zip(scan.results, scan.calls):
            m, tokens = messages[i], per[i]
            name = m.tool_name or (call.name if call is not None else detect_tool_name(m.text)) or "unknown"  # _result_tool
            tool_tokens += tokens
            by_tool[name] += tokens
            if call is not None and call.arguments:
                linked_names.append(call.name)
                linked_args.append(call.arguments)
                linked.append(i)
            text = m.content
            if type(text) is not str:
                text = m.text
            if text:
                same_text[text].append(i)
            age = n - i
            if age > stale_age and tokens >= stale_tokens:
                stale.append({"index": i, "tool": name, "tokens": tokens, "age": age})
        self.tool_tokens = tool_tokens
        self.same_call = args_groups(linked, linked_args, linked_names)  # the results of equal calls
        self.stored_reminders = self._stored_reminders(counter, scan.reminded)

    def _stored_reminders(self, counter: TokenCounter, reminded: list[str]) -> int:
        """Tokens of the reminder blocks stored in the messages: from the rows' spans when given;
        else the tool results' texts are looked through once per distinct text (a third of the 60k
        of the bench file are distinct), the other messages' from the scan."""
        count = counter.count
        if self.rows is not None:
            stored = 0
            for m, row in zip(self.messages, self.rows):
                if row.stored_reminders:
                    text = m.text
                    stored += sum(count(text[s:e]) for s, e in row.stored_reminders)
            return stored
        return (sum(_reminder_tokens(text, count) for text in reminded)
                + sum(len(idx) * _reminder_tokens(text, count) for text, idx in self.same_text.items()))

    def tool_of(self, i: int) -> str | None:
        """The tool of result i (_result_tool)."""
        k = bisect.bisect_left(self.results, i)
        return _result_tool(self.messages[i], self.calls[k] if k < len(self.results) and self.results[k] == i else None)

    def repeated_groups(self) -> list[dict]:
        """Groups of two or more results of the same call or text, most wasted tokens first."""
        repeated = []
        seen: set[tuple[int, ...]] = set()
        for kind, groups in (("same call", self.same_call.values()), ("same content", self.same_text.values())):
            for idx in groups:
                if len(idx) < 2 or tuple(idx) in seen:
                    continue
                seen.add(tuple(idx))
                repeated.append({
                    "kind": kind,
                    "tool": self.tool_of(idx[0]) or "unknown",
                    "indices": list(idx),
                    "wasted_tokens": sum(self.per[j] for j in idx[:-1]),  # every copy but the latest
                })
        repeated.sort(key=lambda r: -r["wasted_tokens"])
        return repeated


def _recommendations(messages, per, counter, measure, keep_recent: int, repeated: list, stale: list,
                     room: float | None, threshold: float, context_window: int | None,
                     measure_cleared: Callable[[Message], int], blank, all_units, results,
                     by_text, budget: int | None = None, compress=compress_tool_results,
                     measures: Measures = PLAIN) -> list[Recommendation]:
    """What each setting would save, most first (`room`: tokens the messages may take, when bloated;
    `all_units`: unit_runs(messages), as summarising and fitting both keep a call with its results;
    `results`: the indices of the tool results; `by_text`: the tool results by their text, the
    tally's same_text)."""
    n = len(messages)
    recs: list[Recommendation] = []
    saved = measures.tiers_saving(messages, keep_recent, DEFAULT_POLICY, per, counter, measure, by_text=by_text,
                         compress=compress)
    if saved > 0:
        recs.append(Recommendation(
            "compress old tool results by age", f"--tiers default --keep-recent {keep_recent}", saved,
            "SwarmSDK's tiers: ages 11-20 → 1000 chars, 21-40 → 500, 41-60 → 200, older → 100"))
    cleared, clearing_saved = measures.clearing_saving(messages, ClearSettings(), counter, per, measure_cleared, blank,
                                              results, by_text)
    if clearing_saved > 0:
        waste = sum(r["wasted_tokens"] for r in repeated)
        recs.append(Recommendation(
            "clear old tool results (keep the 3 most recent)", "--clear-keep 3", clearing_saved,
            f"{cleared} results cleared; includes {len(repeated)} repeated groups "
            f"({waste:,} tokens) and {len(stale)} stale large results"))
    if n - keep_recent > 1:
        # exactly what --old-messages llm does: same boundary (moved to keep calls
        # with their results), same offline checkpoint
        # (plan_summary's "llm" without the messages after it: its removed and inserted only)
        boundary, removed = summary_span(messages, n - keep_recent, all_units)
        if removed:
            inserted = checkpoint_message(len(removed), measures.summary(list(map(messages.__getitem__, removed))))
            saving = sum(map(per.__getitem__, removed)) - measure(inserted)
            if saving > 0:
                recs.append(Recommendation(
                    "summarise old messages into one checkpoint", "--old-messages llm", saving,
                    f"the {len(removed):,} messages before index {boundary}"))
    # (a window too small for a budget of one token, a window of 1 say, gets no budget to set)
    if room is not None and context_window and budget is not None and budget >= 1:
        dropped, tokens = fit_plan(messages, max(int(room), 0), keep_recent, per, unit_list=all_units)
        if dropped:
            recs.append(Recommendation(
                f"drop the oldest messages to stay under {threshold:.0%} of the window",
                f"--budget {budget}", sum(per) - tokens,
                f"{len(dropped):,} messages dropped, tool calls kept with their results"))
    recs.sort(key=lambda r: -r.saves)
    return recs
