"""What a row says was done to its message: one named constructor per kind of Change.

The reference pipeline and the cached one build their Changes here, so a
detail line reads the same whichever made it.
"""

from __future__ import annotations

from typing import Any, Callable

from ctxview.engine import compression
from ctxview.engine.budget import EXCERPT_CHARS
from ctxview._slots import slot_builder
from ctxview.model import ContextEvent
from ctxview.engine.view import Change

__all__ = ["compacted", "compressed", "detail_line", "tier_head", "tier_of", "cleared", "thinking_cleared", "dropped", "ephemeral", "excerpted", "inserted", "removed",
           "rewritten", "rewritten_by"]

# Change(...) by position without the frozen __init__ (rows are made by the tens of thousands).
new_change = slot_builder(Change, "new_change", {})


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def tier_head(policy: compression.CompressionPolicy, t_index: int) -> str:
    """"tier 3 (ages 21-40 → 500 chars)"."""
    return f"tier {t_index + 1} ({compression.describe_tier(policy, t_index)})"


def tier_of(policy: compression.CompressionPolicy, age: int) -> tuple[str, int, Any]:
    """(the name of the tier an age falls in, its index, the tier)."""
    t_index, tier = compression.tier_for_age(policy, age)
    return tier_head(policy, t_index), t_index, tier


def compressed(policy: compression.CompressionPolicy, age: int, stored_chars: int, saved_tokens: int,
               tier_of: Callable[[compression.CompressionPolicy, int], tuple[str, int, Any]] = tier_of) -> Change:
    """A tool result cut by the what-if tier compression (age: its distance from the request's end).
    tier_of: where the tier's name comes from (a cache's table: interned.Interned.tier)."""
    head, t_index, tier = tier_of(policy, age)
    cut = stored_chars - (tier.max_chars or stored_chars)
    return new_change("compressed", "compression", f"{head}, age {age}: {cut:,} chars cut", t_index, age, saved_tokens)


def cleared(saved: int, is_result: bool, keep: int) -> Change:
    what = "tool result cleared" if is_result else "tool-call inputs cleared"
    return new_change("cleared", "clear",
                      f"{what} (the {plural(keep, 'most recent tool result')} kept): {saved:,} tokens saved",
                      None, None, saved)


def thinking_cleared(keep: int, saved: int) -> Change:
    """The message's thinking left out by the API's clear_thinking_20251015 what-if."""
    return new_change("thinking cleared", "clear_thinking",
                      f"thinking cleared (the thinking of the {plural(keep, 'most recent assistant turn')} with "
                      f"thinking kept): {saved:,} tokens saved", None, None, saved)


def rewritten_by(stage: str, words: str, saved: int) -> Change:
    """Rewritten by a stage declared with a rule on one message (stages/declare.py), named by its
    what-if's words."""
    return new_change(stage, stage, f"{words}: {saved:,} tokens saved", None, None, saved)


def ephemeral(pieces: int, added: int) -> Change:
    return new_change("ephemeral", "ephemeral",
                      f"{plural(pieces, 'ephemeral reminder')} added for this request (+{added:,} tokens)",
                      None, None, -added)


def excerpted(boundary: int, cut: int, saved: int) -> Change:
    return new_change("excerpted", "summarize",
                      f"cut to a {EXCERPT_CHARS}-char excerpt (before index {boundary}): {cut:,} chars cut",
                      None, None, saved)


def detail_line(kind: str, *figures: int) -> str:
    """The detail line of a change that reads the same on every row it marks: a removal, a summary's
    or a budget's drop."""
    if kind == "dropped":
        return f"dropped to fit the budget of {figures[0]:,} tokens (oldest first, calls kept with results)"
    boundary, total = figures
    into = "a removal marker" if kind == "removed" else "a summary checkpoint"
    return f"{kind}: the {total:,} messages before index {boundary} are replaced by {into}"


def removed(action: str, boundary: int, total: int, tokens: int,
            detail: Callable[..., str] = detail_line) -> Change:
    """Left out by the what-if summary (action "removed" or "summarised"). detail: where the line
    comes from (a cache's table: interned.Interned.detail)."""
    return new_change(action, "summarize", detail(action, boundary, total), None, None, tokens)


def dropped(budget: int, tokens: int, detail: Callable[..., str] = detail_line) -> Change:
    return new_change("dropped", "budget", detail("dropped", budget), None, None, tokens)


def inserted(strategy: str, count: int, tokens: int) -> Change:
    verb = "removal marker" if strategy == "remove" else "summary checkpoint"
    return Change("inserted", "summarize", f"{verb} standing for {count:,} messages", saved_tokens=-tokens)


def compaction_words(event: ContextEvent) -> str:
    """"auto, 167,412 tokens before, recorded" (what the record says of a compaction: the harness's
    own count, in the model's tokens, beside the counter's figures of the rows)."""
    parts = [event.trigger] if event.trigger else []
    if event.tokens_before is not None:
        parts.append(f"{event.tokens_before:,} tokens before, recorded")
    return ", ".join(parts)


def compacted(event: ContextEvent, total: int, tokens: int) -> Change:
    """Not sent: replaced by the harness's compaction (recorded in the file); one of `total` such."""
    words = compaction_words(event)
    return new_change("compacted", "compaction", f"replaced by compaction at #{event.index}"
                      + (f" ({words})" if words else ""), None, None, tokens)


def rewritten(kind: str, event: ContextEvent, age: int, saved: int) -> Change:
    """Sent other than stored by the harness's own rule: Claude Code's microcompaction, or
    SwarmSDK's one-shot compression (recorded, or the swarm-auto what-if's)."""
    if kind == "microcompaction":
        return new_change("microcompacted", "compaction",
                          f"tool result cleared by the harness's microcompaction at #{event.index}: "
                          f"{saved:,} tokens saved", None, None, saved)
    if kind == "resent":
        return new_change("resent", "harness", f"sent other than first sent, from the request at #{event.index} on "
                          "(as the trace log recorded it)", None, None, saved)
    if kind == "persisted":
        meta = event.meta if hasattr(event.meta, "get") else {}
        size, path = meta.get("size"), meta.get("path")
        whole = f"the whole output ({size}) saved to {path}" if size and path else "the whole output saved to a file"
        return new_change("persisted", "harness", f"sent as Claude Code's <persisted-output> preview, {whole}"
                          + (f": {saved:,} tokens saved" if saved else ""), None, None, saved)
    if kind == "truncation":
        policy = event.meta.get("policy") or {}
        return new_change("truncated", "harness",
                          f"cut by Codex to the turn's truncation policy ({policy.get('mode', '?')} "
                          f"{policy.get('limit', '?')}) when it recorded the output: {saved:,} tokens saved",
                          None, None, saved)
    head, t_index, _ = tier_of(compression.DEFAULT_POLICY, age)
    what_if = bool(event.meta.get("what_if")) if hasattr(event.meta, "get") else False
    who = "what-if swarm-auto: SwarmSDK's rule would compress" if what_if else "SwarmSDK compressed"
    return new_change("compressed", "swarm-auto" if what_if else "harness",
                      f"{who} the history after #{event.index - 1} ({head}, age {age}): {saved:,} tokens saved",
                      t_index, age, saved)
