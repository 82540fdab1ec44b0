"""The values a view's rows share, one object each, kept by a PipelineCache (`cache.interned`).

Tens of thousands of rows carry the same few changes (a removal, a budget
drop, a placeholder's clearing), the same detail lines and the same tier
names. The plain constructors (changes.py, row_keys.change_of) make a new one
on each call, and the reference pipeline uses them; the cached pipeline asks
this table, which makes each once and hands out that object after. What it
hands out equals what the plain constructors make (tests/test_fast_equals_plain.py).
"""

from __future__ import annotations

from typing import Any

from ctxview.engine import compression
from ctxview.engine.view import Change
from ctxview.model import Message
from ctxview.pipeline import changes as made
from ctxview.pipeline import limits
from ctxview.pipeline.row_keys import change_of

__all__ = ["Interned"]

_NO_MESSAGE = Message("tool")  # change_of reads the policy and message for compressed specs only


class Interned:
    """Per spec its Change, and the 1-tuple of it; per policy its tiers' names by age; per figures
    a removal's or a budget drop's detail line. Each table is bounded (emptied when full)."""

    __slots__ = ("changes", "ones", "tiers", "details")

    def __init__(self) -> None:
        self.changes: dict[tuple, Change] = {}
        self.ones: dict[tuple, tuple[Change]] = {}
        self.tiers: dict[int, tuple] = {}     # id(policy) -> (policy, heads, tier_for_age by age)
        self.details: dict[tuple, str] = {}   # (kind, *figures) -> made.detail_line(kind, *figures)

    def change(self, spec: tuple) -> Change:
        """change_of(spec) for a spec of any kind but compressed: made of its spec alone, so one
        object per spec."""
        change = self.changes.get(spec)
        if change is None:
            if len(self.changes) >= limits.SHARED_CHANGES:
                self.changes.clear()
                self.ones.clear()  # (their changes must stay the shared ones: rows are checked by identity)
            change = self.changes[spec] = change_of(spec, compression.DEFAULT_POLICY, 0, 0, _NO_MESSAGE, self)
        return change

    def only(self, spec: tuple) -> tuple[Change]:
        """(change(spec),), the same tuple for every row whose only change is this spec."""
        changes = self.ones.get(spec)
        if changes is None:
            if len(self.ones) >= limits.SHARED_CHANGES:
                self.ones.clear()
            changes = self.ones[spec] = (self.change(spec),)
        return changes

    def tier(self, policy: compression.CompressionPolicy, age: int) -> tuple[str, int, Any]:
        """made.tier_of(policy, age), from a table made once per policy for the ages up to one past
        its largest finite tier age (older ages fall where that one does)."""
        hit = self.tiers.get(id(policy))
        if hit is None or hit[0] is not policy:
            heads = tuple(made.tier_head(policy, t) for t in range(len(policy.tiers)))
            top = max((t.max_age for t in policy.tiers if t.max_age is not None), default=-1)
            by_age = [compression.tier_for_age(policy, a) for a in range(max(top, 0) + 2)]
            if len(self.tiers) > limits.TOTALS:
                self.tiers.clear()
            hit = self.tiers[id(policy)] = (policy, heads, by_age)
        heads, by_age = hit[1], hit[2]
        t_index, tier = by_age[age] if 0 <= age < len(by_age) else (
            by_age[-1] if age > 0 else compression.tier_for_age(policy, age))
        return heads[t_index], t_index, tier

    def detail(self, kind: str, *figures: int) -> str:
        """made.detail_line(kind, *figures), one string for every row it marks."""
        key = (kind, *figures)
        line = self.details.get(key)
        if line is None:
            if len(self.details) > limits.TEXTS:
                self.details.clear()
            line = self.details[key] = made.detail_line(kind, *figures)
        return line
