"""Row heights and the line each row starts on, changed a row at a time.

The panes' layout holds one height per row (100k rows and more) and needs,
per painted line, the row holding it and that row's first line. A list of
prefix sums answers those in O(log n) but costs O(n) to redo after one row
changes, which a keep_recent step (a few rows) should not pay. `RowHeights`
keeps the heights in a Fenwick (binary indexed) tree: setting a height, the
first line of a row and the row at a line each take O(log n).
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from operator import sub
from typing import Iterator, Sequence

__all__ = ["RowHeights", "RowTops"]


class RowHeights:
    """Heights of rows 0..n-1 (`heights`, a plain list, read it freely; change it with `set`) and
    their prefix sums. Heights are >= 0 (a hidden row is 0)."""

    __slots__ = ("heights", "_tree", "_top_bit", "total")

    def __init__(self, heights: list[int]) -> None:
        n = len(heights)
        self.heights = heights  # (owned: `set` changes it)
        prefix = array("q", accumulate(heights, initial=0))
        # machine integers: 500k Python ints would be ~14 MB more
        self._tree = fenwick_nodes(prefix)
        self._top_bit = 1 << (n.bit_length() - 1) if n else 0
        self.total = prefix[-1]

    def __len__(self) -> int:
        return len(self.heights)

    def set(self, row: int, height: int) -> None:
        """Row `row` is now `height` lines tall."""
        delta = height - self.heights[row]
        if not delta:
            return
        self.heights[row] = height
        self.total += delta
        tree, n, i = self._tree, len(self.heights), row + 1
        while i <= n:
            tree[i] += delta
            i += i & -i

    def top(self, row: int) -> int:
        """The first line of row `row` (the sum of the heights before it; `top(n)` is the total)."""
        tree, total, i = self._tree, 0, row
        while i > 0:
            total += tree[i]
            i &= i - 1
        return total

    def row_at(self, y: int) -> int:
        """The number of rows that start at or before line y, less one: the row whose block holds
        line y, past any hidden (0-high) rows starting there; -1 only when there are no rows.
        As `bisect_right(prefix_sums, y) - 1`, clamped to the rows there are."""
        tree, n = self._tree, len(self.heights)
        pos, rest, step = 0, y, self._top_bit
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= rest:
                pos = nxt
                rest -= tree[nxt]
            step >>= 1
        return min(max(pos, 0 if n else -1), n - 1)

    @property
    def tops(self) -> RowTops:
        """The first line of every row and the total after them, as a read-only sequence of n + 1."""
        return RowTops(self)


def fenwick_nodes(prefix: array) -> array:
    """The tree of the heights whose prefix sums are `prefix` (n + 1 of them, from 0): node i holds
    the sum of heights[i - lowbit(i):i], i.e. prefix[i] - prefix[i & (i - 1)] (node 0: 0).

    Built a level at a time (the nodes whose lowbit is 2^k are every 2^(k+1)-th from 2^k, and
    i & (i - 1) = i - 2^k for them) with C-level slices and `map(sub)`: a first layout sizes 100k
    rows, and the comprehension per node was ~15 ms of it."""
    n = len(prefix) - 1
    tree = array("q", bytes(8 * (n + 1)))
    low = 1
    while low <= n:
        step = 2 * low
        tree[low::step] = array("q", map(sub, prefix[low::step], prefix[0::step]))
        low = step
    return tree


class RowTops(Sequence[int]):
    """RowHeights' prefix sums as a sequence (`tops[i]`: the first line of row i; `tops[-1]`: the
    total), each read in O(log n): what a list of offsets was, without being rebuilt."""

    __slots__ = ("_heights",)

    def __init__(self, heights: RowHeights) -> None:
        self._heights = heights

    def __len__(self) -> int:
        return len(self._heights) + 1

    def __getitem__(self, i):  # type: ignore[override]
        n = len(self._heights)
        if type(i) is slice:
            return [self[j] for j in range(*i.indices(n + 1))]
        if i < 0:
            i += n + 1
        if not 0 <= i <= n:
            raise IndexError(i)
        return self._heights.total if i == n else self._heights.top(i)

    def __iter__(self) -> Iterator[int]:
        return iter(accumulate(self._heights.heights, initial=0))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RowTops, Sequence)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

