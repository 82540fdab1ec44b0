"""Cache forensics: which recorded requests lost the cached prefix, why, and what it cost.

After a request, the provider's cache holds its prompt: Anthropic the part up to its last
breakpoint (what it read from the cache plus what it wrote), OpenAI the whole prompt. The next
request should read all of that back; what it does not read back is *lost* and is written (or
sent) again. For each recorded request the file says how much it read and wrote; the cause of a
loss is read off the file, the first that applies:

- ``first``: the conversation's first recorded request (nothing cached before it in this file);
- ``model``: the model changed (each model has its own cache);
- ``compaction``: the harness replaced the history by its summary in between;
- ``ttl``: the gap between the two requests passed the cache's lifetime: 1 hour when the file
  records hour-long writes (cache_creation.ephemeral_1h_input_tokens), else 5 minutes;
- ``microcompaction``: the harness cleared old tool results in between;
- ``edited``: a message the previous request sent was sent differently (the first one is named);
- ``system_or_tools``: every message was sent as before, within the lifetime: the hidden prefix
  (system prompt, tool definitions), which the file does not store, changed;
- ``unknown``: messages unchanged and no timestamps to rule out the lifetime.

A loss below LOSS_MIN tokens is not counted: OpenAI caches in 128-token steps, and no prompt
shorter than 1,024 tokens is cached at all. What a loss cost is the lost tokens the request sent
again, at the cache write price less the read price they would have paid (prices.PriceTable.price):
no more of them than it paid for uncached (written, or input), and none after a compaction, which
replaced them by its summary rather than sending them again.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple, Sequence

from ctxview.engine.harness import history_as_sent, rewrite_events
from ctxview.model import Conversation, Usage
from ctxview.analysis.usage import seconds, timestamp_of

__all__ = ["CAUSES", "LOSS_MIN", "CacheEvent", "cache_events", "cache_losses", "cache_ttl_of", "loss_summary"]

CAUSES = ("first", "model", "compaction", "ttl", "microcompaction", "edited", "system_or_tools", "unknown")
LOSS_MIN = 1024
_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


class CacheEvent(NamedTuple):
    """One recorded request's cache: what it read and wrote, what it lost of the previous prompt.
    (A named tuple: a report makes one per recorded request, and a frozen dataclass took three
    times as long to make.)"""

    index: int                  # the assistant message of the request
    read: int
    write: int
    lost: int = 0
    cause: str | None = None    # one of CAUSES where it lost (or is the first), else None
    detail: str = ""            # the edited message, the gap, the models
    usd: float | None = None    # what the loss cost (None: no price, or nothing lost)

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, "write": self.write, "lost": self.lost, "cause": self.cause,
                "detail": self.detail, "usd": self.usd}


def cache_ttl_of(conversation: Conversation) -> str:
    """"1h" when the file records hour-long cache writes, else "5m"."""
    return "1h" if any(m.usage is not None and m.usage.cache_write_1h_tokens > 0 for m in conversation.messages) \
        else "5m"


def _first_edit(conversation: Conversation, before: int, now: int) -> int | None:
    """The stored index of the first message the request at `before` sent that the one at `now` sent
    differently (None: all sent as before)."""
    a, b = history_as_sent(conversation, before), history_as_sent(conversation, now)
    if a.start != b.start:
        return a.start
    for off, (x, y) in enumerate(zip(a.messages, b.messages)):
        if x is not y and x != y:
            return a.start + off
    return None


def _describe(conversation: Conversation, i: int) -> str:
    m = conversation.messages[i]
    what = {"tool": "tool result", "assistant": "assistant message", "user": "user message"}.get(m.role, m.role)
    name = f" of {m.tool_name}" if m.role == "tool" and m.tool_name else ""
    return f"message #{i} ({what}{name})"


def cache_events(conversation: Conversation, prices: Any = None) -> list[CacheEvent]:
    """One CacheEvent per recorded request, in order; `prices` (a prices.PriceTable): price the losses."""
    return _events(conversation, prices, every=True)


def cache_losses(conversation: Conversation, prices: Any = None) -> list[CacheEvent]:
    """The CacheEvents of cache_events that lost something (what loss_summary reads), without one
    made for each of the other requests."""
    return _events(conversation, prices, every=False)


def _events(conversation: Conversation, prices: Any, every: bool) -> list[CacheEvent]:
    msgs = conversation.messages
    calls = [(i, m.usage) for i, m in enumerate(msgs)
             if m.role == "assistant" and m.usage is not None and m.usage.context_tokens > 0]
    writes = any(u.cache_write_tokens for _, u in calls)  # Anthropic: the cache holds read + write
    ttl = cache_ttl_of(conversation)
    events = rewrite_events(conversation)
    out: list[CacheEvent] = []
    for n, (k, u) in enumerate(calls):
        if n == 0:
            if every:
                out.append(CacheEvent(k, u.cache_read_tokens, u.cache_write_tokens, 0, "first"))
            continue
        p, pu = calls[n - 1]
        held = pu.cache_read_tokens + pu.cache_write_tokens if writes else pu.context_tokens
        lost = held - u.cache_read_tokens
        if lost < LOSS_MIN:
            if every:
                out.append(CacheEvent(k, u.cache_read_tokens, u.cache_write_tokens))
            continue
        cause, detail = _cause(conversation, events, p, k, ttl)
        sent_again = 0 if cause == "compaction" else min(lost, u.cache_write_tokens + u.input_tokens)
        out.append(CacheEvent(k, u.cache_read_tokens, u.cache_write_tokens, lost, cause, detail,
                              _loss_usd(prices, msgs[k].model_id or conversation.model, timestamp_of(msgs[k]), ttl,
                                        sent_again)))
    return out


def _cause(conversation: Conversation, events: Sequence[Any], p: int, k: int, ttl: str) -> tuple[str, str]:
    msgs = conversation.messages
    model_p, model_k = msgs[p].model_id or conversation.model, msgs[k].model_id or conversation.model
    if model_p and model_k and model_p != model_k:
        return "model", f"{model_p} → {model_k}"
    between = [e for e in events if p < e.index <= k]
    if any(e.kind == "compaction" for e in between):
        return "compaction", "the history was replaced by its summary (not sent again)"
    t0, t1 = seconds(timestamp_of(msgs[p])), seconds(timestamp_of(msgs[k]))
    gap = None if t0 is None or t1 is None else t1 - t0
    if gap is not None and gap > _TTL_SECONDS[ttl]:
        return "ttl", f"{gap:,.0f} s after the previous request (cache lifetime {ttl})"
    if any(e.kind == "microcompaction" for e in between):
        return "microcompaction", "old tool results cleared"
    # only a rewrite recorded in between sends an earlier message differently (then look for it)
    edited = _first_edit(conversation, p, k) if between else None
    if edited is not None:
        return "edited", f"{_describe(conversation, edited)} sent differently"
    if gap is None:
        return "unknown", "messages sent as before; no timestamps"
    return "system_or_tools", f"messages sent as before, {gap:,.0f} s after the previous request"


def _loss_usd(prices: Any, model: str | None, timestamp: str | None, ttl: str, lost: int) -> float | None:
    if prices is None or model is None:
        return None
    price = prices.price(model, timestamp)
    if price is None:
        return None
    write = price.cache_write
    if ttl == "1h":  # (the entries the file wrote lived an hour: lost, they are written again at that price)
        write = price.cache_write_1h if price.cache_write_1h is not None else 2 * price.input
    return float(round((write - price.cache_read) * lost / Decimal(1_000_000), 6))


def loss_summary(events: Sequence[CacheEvent]) -> dict[str, Any]:
    """Over one conversation: tokens lost, at how many requests, what it cost, by cause."""
    lost = [e for e in events if e.lost]
    priced = [e.usd for e in lost if e.usd is not None]
    by_cause: dict[str, int] = {}
    for e in lost:
        by_cause[e.cause or "unknown"] = by_cause.get(e.cause or "unknown", 0) + e.lost
    return {"tokens": sum(e.lost for e in lost), "requests": len(lost),
            "usd": round(sum(priced), 6) if priced else None, "by_cause": by_cause,
            "unpriced": len(lost) - len(priced)}


def recorded_usage_dict(u: Usage | None) -> dict[str, int] | None:
    """A request's recorded usage as the requests table gives it."""
    if u is None:
        return None
    return {"input": u.input_tokens, "output": u.output_tokens, "cache_read": u.cache_read_tokens,
            "cache_write": u.cache_write_tokens, "cache_write_1h": u.cache_write_1h_tokens}
