"""Every request of a conversation as a row: `ctxview report --requests`.

Per request (an assistant message that starts a model call, or one that recorded usage): its
context in the model's tokens with the basis (context_tokens), the usage the file recorded, the
composition by category of the request as sent (scaled to add up to the context figure), the
tokens added since the previous request, the prompt cache (read, written, lost and why:
cache_losses) and what the request cost (prices.PriceTable.cost of its recorded usage).

Composition: the counter counts each part of each message sent (text, thinking, tool calls,
tool results, reminder blocks, images at IMAGE_TOKENS each, the compaction summary); the hidden
prefix (`system_and_tools`) is the system block the file recorded plus what the file does not
store: the figure less the messages' share, which is the conversation's fitted slope × their
estimate (never more than the figure). The messages' share is split in proportion to the parts.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ctxview.engine import reminders
from ctxview.analysis.cache_losses import cache_events, loss_summary, recorded_usage_dict
from ctxview.engine.context_tokens import ContextTokens
from ctxview.engine.harness import history_as_sent, rewrite_events
from ctxview.model import Content, Conversation, Message, request_indices
from ctxview.pipeline import PipelineCache
from ctxview.pipeline.context import context_tokens
from ctxview.engine.tokens import TokenCounter, fit_line, tool_calls_text
from ctxview.analysis.usage import timestamp_of

__all__ = ["CATEGORIES", "IMAGE_TOKENS", "composition_of", "request_rows"]

CATEGORIES = ("system_and_tools", "user", "assistant", "thinking", "tool_calls", "tool_results", "reminders",
              "images", "compaction_summary")
IMAGE_TOKENS = 1_600  # an attachment (the file does not say its size): Anthropic's figure for a ~1.15 MP image


def message_parts(msg: Message, count: Callable[[str], int], summary: bool = False) -> dict[str, int]:
    """The counter's tokens of each part of one message, by category."""
    out: dict[str, int] = {}
    text = msg.text or ""
    kept = text
    if reminders.OPEN in text:
        found = reminders.spans(text)
        if found:
            out["reminders"] = sum(count(text[a:b]) for a, b in found)
            kept = reminders.remove(text)
    role = msg.role
    if summary:
        key = "compaction_summary"
    else:
        key = {"tool": "tool_results", "assistant": "assistant", "system": "system_and_tools",
               "developer": "system_and_tools"}.get(role, "user")
    if kept:
        out[key] = out.get(key, 0) + count(kept)
    if msg.thinking:
        out["thinking"] = count(msg.thinking if isinstance(msg.thinking, str) else str(msg.thinking))
    if msg.tool_calls:
        out["tool_calls"] = count(tool_calls_text(msg))
    if isinstance(msg.content, Content) and msg.content.attachments:
        out["images"] = IMAGE_TOKENS * len(msg.content.attachments)
    return out


def composition_of(parts: dict[str, int], tokens: int, hidden: int | None) -> dict[str, int]:
    """Tokens by category adding up to `tokens`: the hidden prefix takes `hidden` (the fitted
    constant: what every request carried besides its messages; None: the figure less the parts),
    at most all of it; the messages the rest, in proportion to `parts`."""
    out = dict.fromkeys(CATEGORIES, 0)
    total = sum(parts.values())  # (system or developer messages of the history among them)
    if hidden is None:
        share = min(tokens, total)
    else:
        share = max(0, tokens - min(tokens, hidden)) if total else 0
    if total:
        raw = {k: share * v / total for k, v in parts.items() if v}
        floors = {k: int(v) for k, v in raw.items()}
        for k in sorted(raw, key=lambda k: raw[k] - floors[k], reverse=True)[:share - sum(floors.values())]:
            floors[k] += 1
        for k, v in floors.items():
            out[k] += v
    out["system_and_tools"] += tokens - share
    return out


class _Epochs:
    """The history as sent under each set of rewrite events (a handful per conversation), with the
    parts of each message sent, summed by category as prefix sums over the sent positions."""

    def __init__(self, conversation: Conversation, count: Callable[[str], int]) -> None:
        self.conversation, self.count = conversation, count
        self.events = rewrite_events(conversation)
        self.summaries = {e.index for e in self.events if e.kind == "compaction"}
        self.by_epoch: dict[int, tuple[int, list[dict[str, int]]]] = {}
        self.memo: dict[int, tuple[Message, dict[str, int]]] = {}

    def parts(self, msg: Message, stored_index: int) -> dict[str, int]:
        hit = self.memo.get(id(msg))
        if hit is None or hit[0] is not msg:
            hit = self.memo[id(msg)] = (msg, message_parts(msg, self.count, stored_index in self.summaries
                                                          and msg.role == "user"))
        return hit[1]

    def sums(self, k: int) -> dict[str, int]:
        """The parts of the messages the request sending messages[:k] sent, by category."""
        applied = sum(1 for e in self.events if e.index <= k)
        hit = self.by_epoch.get(applied)
        if hit is None:
            n = len(self.conversation.messages)
            sent = history_as_sent(self.conversation, n, self.events[:applied])
            prefix = [dict()]
            for off, m in enumerate(sent.messages):
                row = dict(prefix[-1])
                for cat, v in self.parts(m, sent.start + off).items():
                    row[cat] = row.get(cat, 0) + v
                prefix.append(row)
            hit = self.by_epoch[applied] = (sent.start, prefix)
        start, prefix = hit
        return prefix[max(0, min(k - start, len(prefix) - 1))]


def request_rows(conversation: Conversation, counter: TokenCounter, cache: PipelineCache,
                 prices: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(one row per request, in order; the conversation's cache-loss summary)."""
    msgs = conversation.messages
    figures: ContextTokens = context_tokens(cache, conversation, counter)
    requests = sorted(set(request_indices(msgs)) | set(figures.indices))
    system_estimate = cache.system_tokens(cache.data(conversation), counter)
    epochs = _Epochs(conversation, counter.count)
    # the hidden prefix: the first recorded request (the least history, the least error in its
    # estimate) less the fitted slope × its messages' parts (slope of recorded against the parts
    # over the recorded requests; None with fewer than two: the messages count as counted)
    xs = [sum(epochs.sums(k).values()) for k in figures.indices]
    fitted = fit_line(xs, figures.recorded)[1] if len(xs) >= 2 else None
    hidden = None if fitted is None else max(system_estimate, round(figures.recorded[0] - fitted * xs[0]))
    caching = {e.index: e for e in cache_events(conversation, prices)}
    rows: list[dict[str, Any]] = []
    previous = None
    for number, k in enumerate(requests, 1):
        m = msgs[k]
        figure = figures.at(k)
        usage = m.usage if m.usage is not None and m.usage.context_tokens > 0 else None
        model = m.model_id or conversation.model
        ts = timestamp_of(m)
        cost = prices.cost(usage, model, ts) if usage is not None and prices is not None else None
        event = caching.get(k)
        rows.append({
            "number": number, "index": k, "timestamp": ts, "model": model,
            "context": figure.to_dict(),
            "recorded": recorded_usage_dict(usage),
            "composition": composition_of(epochs.sums(k), figure.tokens, hidden),
            "added": None if previous is None else figure.tokens - previous,
            "cache": None if event is None else {"read": event.read, "write": event.write, "lost": event.lost,
                                                 "cause": event.cause, "detail": event.detail, "usd": event.usd},
            "usd": None if cost is None else float(round(cost, 6)),
        })
        previous = figure.tokens
    return rows, loss_summary(list(caching.values()))


def requests_text_rows(rows: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The text table's cells (report_render draws them)."""
    out = []
    for r in rows:
        c = r["context"]
        fig = f"≈ {c['tokens']:,}" if c["basis"] == "calibrated" else f"{c['tokens']:,}"
        cache = r["cache"] or {}
        lost = f"{cache['lost']:,} ({cache['cause']})" if cache.get("lost") else (cache.get("cause") or "")
        comp = r["composition"]
        top = sorted(((v, k) for k, v in comp.items() if v), reverse=True)[:2]
        out.append([str(r["number"]), f"#{r['index']}", (r["timestamp"] or "")[11:19], fig, c["basis"],
                    "" if r["added"] is None else f"{r['added']:+,}",
                    "" if not cache else f"{cache['read']:,}", "" if not cache else f"{cache['write']:,}", lost,
                    "" if r["usd"] is None else f"${r['usd']:.4f}",
                    ", ".join(f"{k} {v * 100 // max(c['tokens'], 1)}%" for v, k in top)])
    return out
