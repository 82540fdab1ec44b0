"""Prefix sums of a list that changes in place and grows at its end (a Fenwick, or binary indexed,
tree): what the stepwise replay (stepwise_replay.py) keeps of each request's tokens, so that every
prompt's size and shared prefix is a sum over a range, in log n."""

from __future__ import annotations

import bisect
import itertools
from typing import Sequence

__all__ = ["UNREAD", "Fenwick", "Unread"]


class Fenwick:
    """Prefix sums of a list that changes in place and grows at its end.

    While the list has only grown (the replay as sent: nothing changes after it is appended) its
    running totals answer at once; the first add() builds the tree, which answers from then on."""

    def __init__(self, values: Sequence[int] = ()) -> None:
        self.totals: list[int] | None = [0, *itertools.accumulate(values)]
        self.tree: list[int] | None = None

    def _build(self) -> None:
        totals = self.totals
        n = len(totals) - 1
        tree = [0] * (n + 1)
        for i in range(1, n + 1):
            tree[i] += totals[i] - totals[i - 1]
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self.tree, self.totals = tree, None

    def append(self, value: int) -> None:
        tree = self.tree
        if tree is None:
            totals = self.totals
            totals.append(totals[-1] + value)
            return
        i = len(tree)
        # the new node covers (i - lowbit(i), i]: its value plus the nodes that end inside that range
        total, j, stop = value, i - 1, i - (i & -i)
        while j > stop:
            total += tree[j]
            j -= j & -j
        tree.append(total)

    def extend(self, values: Sequence[int]) -> None:
        """append() each value in turn."""
        totals = self.totals
        if totals is not None:
            running = itertools.accumulate(values, initial=totals[-1])
            next(running)   # (the last total, there already)
            totals.extend(running)
        else:
            for v in values:
                self.append(v)

    def add(self, position: int, delta: int) -> None:
        if self.tree is None:
            self._build()
        i, n, tree = position + 1, len(self.tree) - 1, self.tree
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        tree = self.tree
        if tree is None:
            return self.totals[count] if count > 0 else 0
        total, i = 0, count
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def at(self, position: int) -> int:
        return self.prefix(position + 1) - self.prefix(position)

    def reaching(self, need: int) -> int:
        """The fewest leading values whose sum is at least `need` (the length when none is), for a
        list of values ≥ 0, whose prefix sums only grow: a binary search over the running totals,
        or a descent of the tree."""
        tree = self.tree
        if tree is None:
            totals = self.totals
            return min(bisect.bisect_left(totals, need), len(totals) - 1)
        n = len(tree) - 1
        if need <= 0:
            return 0
        count, rest, step = 0, need, 1 << n.bit_length()
        while step:   # the largest count whose sum stays under need, then one more
            nxt = count + step
            if nxt <= n and tree[nxt] < rest:
                count, rest = nxt, rest - tree[nxt]
            step >>= 1
        return min(count + 1, n)


class Unread:
    """A Fenwick tree whose sums nothing reads (savings without clearing, raw tokens without a budget)."""

    def append(self, value: int) -> None:
        pass

    def add(self, position: int, delta: int) -> None:
        pass

    def at(self, position: int) -> int:
        return 0


UNREAD = Unread()
