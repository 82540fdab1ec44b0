"""Recorded usage, summed: per request, per conversation and for a whole session.

The loaders put what the provider recorded for a model call on the assistant
message that call produced (one Usage per call: Claude Code's lines of one
response and Codex's repeated counts are merged already), so a request here is
an assistant message with a usage, and the totals are plain sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, NamedTuple

from ctxview.model import Conversation, Message, Session, Usage

__all__ = ["RecordedRequest", "UsageTotals", "conversation_usage", "recorded_requests", "seconds", "session_usage"]


class RecordedRequest(NamedTuple):
    """One model call the file recorded usage for: the assistant message at `index`. (A named tuple:
    a report or the session index makes one per recorded call.)"""

    index: int
    usage: Usage
    model: str | None
    timestamp: str | None   # ISO 8601 as the file wrote it, where the loader kept one


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Sums of recorded usage over some requests."""

    requests: int = 0
    input: int = 0          # fresh input tokens (not read from or written to the cache)
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0  # of cache_write: the writes recorded as 1-hour writes (the rest: 5 minutes)

    @classmethod
    def of(cls, usages: Iterable[Usage]) -> UsageTotals:
        n = i = o = r = w = h = 0
        for u in usages:
            n += 1
            i += u.input_tokens
            o += u.output_tokens
            r += u.cache_read_tokens
            w += u.cache_write_tokens
            h += u.cache_write_1h_tokens
        return cls(n, i, o, r, w, h)

    def __add__(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(self.requests + other.requests, self.input + other.input, self.output + other.output,
                           self.cache_read + other.cache_read, self.cache_write + other.cache_write,
                           self.cache_write_1h + other.cache_write_1h)

    @property
    def cache_ttl(self) -> str | None:
        """The cache lifetime the recorded writes were made with: "1h" when most written tokens were
        1-hour writes, "5m" when the file wrote any and most were not, None when it wrote none."""
        if not self.cache_write:
            return None
        return "1h" if 2 * self.cache_write_1h > self.cache_write else "5m"

    @property
    def context(self) -> int:
        """Every input token the model read: fresh, from the cache and written to it."""
        return self.input + self.cache_read + self.cache_write

    @property
    def read_share(self) -> float | None:
        """Cache reads as a share of all input tokens; None when nothing was read at all."""
        return self.cache_read / self.context if self.context else None

    def to_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "input": self.input, "output": self.output,
                "cache_read": self.cache_read, "cache_write": self.cache_write, "cache_write_1h": self.cache_write_1h}


def seconds(timestamp: str | None) -> float | None:
    """An ISO 8601 time as POSIX seconds (UTC when it names no zone); None when it is not one."""
    if not timestamp:
        return None
    try:
        t = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def timestamp_of(message: Message) -> str | None:
    meta = message.meta
    ts = meta.get("timestamp") if meta else None
    return ts if isinstance(ts, str) else None


def recorded_requests(conversation: Conversation) -> Iterator[RecordedRequest]:
    """The conversation's recorded model calls, in order."""
    default_model = conversation.model
    for i, m in enumerate(conversation.messages):
        if m.usage is not None:
            yield RecordedRequest(i, m.usage, m.model_id or default_model, timestamp_of(m))


def conversation_usage(conversation: Conversation) -> UsageTotals:
    return UsageTotals.of(r.usage for r in recorded_requests(conversation))


def session_usage(session: Session | Iterable[Conversation]) -> UsageTotals:
    """Over every conversation (sub-agents and side chains are conversations of their own)."""
    conversations: Any = session.conversations if isinstance(session, Session) else session
    total = UsageTotals()
    for c in conversations:
        total = total + conversation_usage(c)
    return total
