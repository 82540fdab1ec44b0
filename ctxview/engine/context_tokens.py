"""The context of a request in the model's tokens, and what the figure rests on.

A request's context is every token the model read: the hidden prefix (system prompt, tool
definitions), the history as sent, the reminders. ctxview shows it in one unit, the model's
tokens, each figure with its basis:

- ``recorded``: the file recorded that request's usage (input + cache read + cache write);
- ``calibrated``: the file recorded earlier requests but not this one: the counter's estimate
  of the request as sent, corrected by the file's own fit. The fit's slope is the least-squares
  slope of recorded against estimated over the earlier recorded requests; the line goes through
  the latest of them (its anchor), so the overhead, what every request carried that the file
  does not store (the harness's system prompt, tool definitions), is the anchor's recorded
  figure less slope × its estimate. Across a compaction the latest request held a history the
  next one no longer holds, and the anchor is the earlier request whose estimate was smallest
  (the least history, the least error in the estimate). Only requests before the one predicted
  are used: a prediction never sees what it predicts;
- ``counted``: nothing recorded before: the counter's estimate as it is.

A what-if view of a recorded request is calibrated on that request itself: its recorded figure
plus slope × what the what-if changes in the estimate.

Out of sample on the real Claude Code session in tests/fixtures (cut before each of its 150
recorded requests, predicted from the ones before), the figure is within 10% of what was recorded
for all but the first request after the compaction (docs/notes/s21-numbers.md has the figures).
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ctxview.model import Conversation

__all__ = ["BASES", "COUNTED", "ContextFigure", "ContextFit", "ContextTokens", "TokenUnits", "basis_label",
           "format_figure"]

BASES = ("recorded", "calibrated", "counted")
_LABELS = {"recorded": "recorded", "calibrated": "≈ calibrated", "counted": "counted"}


def basis_label(basis: str) -> str:
    """How a basis is written beside a figure: `recorded`, `≈ calibrated`, `counted`."""
    return _LABELS.get(basis, basis)


def format_figure(tokens: int, basis: str) -> str:
    """`76,350 recorded`, `≈ 76,350 calibrated`, `31,647 counted`."""
    if basis == "calibrated":
        return f"≈ {tokens:,} calibrated"
    return f"{tokens:,} {basis}"


@dataclass(frozen=True, slots=True)
class ContextFigure:
    """One request's context in the model's tokens, and its basis."""

    tokens: int
    basis: str          # "recorded", "calibrated" or "counted"

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "basis": self.basis}

    def __str__(self) -> str:
        return format_figure(self.tokens, self.basis)


@dataclass(frozen=True, slots=True)
class TokenUnits:
    """How the counter's tokens of one request become the model's: a whole prompt of `counted`
    tokens (system block included) is `offset + scale × counted` of the model's; a part of it (the
    messages alone, a saving) is `scale ×` its count. The what-ifs' thresholds (a budget, a
    clearing trigger, a minimum saving) are given in the model's tokens and read through this."""

    offset: float = 0.0
    scale: float = 1.0

    def model(self, counted: int) -> int:
        """A whole prompt's tokens, the model's."""
        return max(0, round(self.offset + self.scale * counted))

    def part(self, counted: int) -> int:
        """A part of a prompt (messages, a saving), the model's."""
        return round(self.scale * counted)

    def counted(self, model: int) -> int:
        """The largest whole prompt, in the counter's tokens, that `model(...)` keeps within `model`
        tokens (negative when even an empty prompt is over it)."""
        c = math.floor((model - self.offset) / self.scale)
        while self.model(c + 1) <= model:   # (round() may leave a token of room)
            c += 1
        while c > 0 and self.model(c) > model:
            c -= 1
        return c


COUNTED = TokenUnits()   # no fit: the counter's tokens are the figure


@dataclass(frozen=True, slots=True)
class ContextFit:
    """What one request's figure rests on: its estimate, its record, the fit's anchor and slope."""

    request: int                    # the request sends messages[:request]
    estimate: int                   # the counter's estimate of it as sent (system block included)
    recorded: int | None = None     # what the file recorded for it
    anchor_tokens: int | None = None    # the anchor request's recorded figure
    anchor_estimate: int | None = None  # and its estimate
    slope: float | None = None      # model tokens per counted token
    requests_fitted: int = 0        # recorded requests the slope was fitted on

    @property
    def overhead(self) -> int | None:
        """What every request carried that the file does not store, by the fit (None: no fit)."""
        if self.slope is None or self.anchor_tokens is None or self.anchor_estimate is None:
            return None
        return round(self.anchor_tokens - self.slope * self.anchor_estimate)

    @property
    def scale(self) -> float:
        """Model tokens per counted token (1.0 without a fit): a saving counted in the estimate
        is this many times as many of the model's tokens."""
        return self.slope if self.slope is not None and self.slope > 0 else 1.0

    @property
    def basis(self) -> str:
        """The basis of a what-if's figure of this request: "calibrated" or "counted"."""
        return "counted" if self.units() is COUNTED else "calibrated"

    def units(self) -> TokenUnits:
        """How a what-if view of this request is turned into the model's tokens: from the
        request's own record where it has one (what the what-if changes, scaled), else from the
        fit's anchor, else as counted."""
        if self.recorded is not None:
            return TokenUnits(self.recorded - self.scale * self.estimate, self.scale)
        if self.slope is not None and self.anchor_tokens is not None and self.anchor_estimate is not None:
            return TokenUnits(self.anchor_tokens - self.scale * self.anchor_estimate, self.scale)
        return COUNTED

    def figure(self, estimate: int | None = None, as_sent: bool = True) -> ContextFigure:
        """The request's figure; `estimate`: the counter's estimate of the view shown (a what-if's),
        `as_sent`: whether that view is the request as the harness sent it."""
        est = self.estimate if estimate is None else estimate
        if self.recorded is not None and as_sent:
            return ContextFigure(self.recorded, "recorded")
        units = self.units()
        if units is COUNTED:
            return ContextFigure(est, "counted")
        return ContextFigure(units.model(est), "calibrated")

    def saving(self, estimated: int) -> int:
        """A saving counted in the estimate, in the model's tokens."""
        return round(self.scale * estimated)


class ContextTokens:
    """The figures of one conversation's requests (a request n sends messages[:n]; n = len: the
    next one). `estimate(n)`: the counter's tokens of that request as sent, system block
    included (harness.sent_tokens)."""

    def __init__(self, conversation: Conversation, estimate: Callable[[int], int]) -> None:
        self.conversation, self.estimate = conversation, estimate
        msgs = conversation.messages
        self.indices: list[int] = []
        self.recorded: list[int] = []
        for i, m in enumerate(msgs):
            u = m.usage
            if m.role == "assistant" and u is not None and u.context_tokens > 0:
                self.indices.append(i)
                self.recorded.append(u.context_tokens)
        self.estimates = [estimate(i) for i in self.indices]
        # prefix sums of x, y, x², xy over the recorded requests: a fit over the first k in O(1)
        xs, ys = self.estimates, self.recorded
        self._sx, self._sy, self._sxx, self._sxy = (
            list(itertools.accumulate(v, initial=0)) for v in (xs, ys, map(operator.mul, xs, xs),
                                                                map(operator.mul, xs, ys)))
        self._compactions = sorted(e.index for e in conversation.events
                                   if e.kind == "compaction" and type(e.index) is int)

    def recorded_at(self, n: int) -> int | None:
        k = bisect.bisect_left(self.indices, n)
        return self.recorded[k] if k < len(self.indices) and self.indices[k] == n else None

    def slope_of(self, k: int) -> float | None:
        """The least-squares slope of recorded against estimated over the first k recorded requests
        (as tokens.fit_line: through the origin where the free line's intercept would be < 0);
        None with fewer than two distinct estimates."""
        if k < 2:
            return None
        n, sx, sy = k, self._sx[k], self._sy[k]
        sxx, sxy = self._sxx[k], self._sxy[k]
        var = sxx - sx * sx / n
        if var <= 0:
            return None
        b = (sxy - sx * sy / n) / var
        if sy / n - b * sx / n < 0:
            return sxy / sxx if sxx else None
        return b

    def fit(self, n: int | None = None) -> ContextFit:
        """What request n's figure rests on (None: the next request)."""
        n = len(self.conversation.messages) if n is None else n
        est = self.estimate(n)
        k = bisect.bisect_left(self.indices, n)  # recorded requests before n
        recorded = self.recorded[k] if k < len(self.indices) and self.indices[k] == n else None
        if k == 0:
            return ContextFit(n, est, recorded)
        slope = self.slope_of(k)
        if slope is None or slope <= 0:
            slope = 1.0  # one earlier request: the overhead alone is known
        anchor = k - 1
        if any(self.indices[anchor] < c <= n for c in self._compactions):
            anchor = min(range(k), key=self.estimates.__getitem__)
        return ContextFit(n, est, recorded, self.recorded[anchor], self.estimates[anchor], slope, k)

    @classmethod
    def of(cls, conversation: Conversation, counter: Any) -> ContextTokens:
        """Counted from scratch (pipeline.context.context_tokens has the cached way)."""
        from ctxview.engine.harness import sent_tokens
        from ctxview.engine.system_block import system_block_tokens

        counts = [counter.count_message(m) for m in conversation.messages]
        return cls(conversation, sent_tokens(conversation, counts, counter.count_message,
                                             system_block_tokens(conversation, counter)))

    def at(self, n: int | None = None) -> ContextFigure:
        """Request n's figure as sent (None: the next request)."""
        return self.fit(n).figure()

    def figures(self, requests: Sequence[int]) -> list[ContextFigure]:
        return [self.at(n) for n in requests]
