"""Where each row of a PreparedView sits in the two panes.

Both panes share one `Layout`: every row is a block of the same height on
both sides (the taller side decides), so the panes stay aligned row by row.
Collapsed blocks have a height known from line counts alone (no wrapping),
which keeps building the layout for 100k rows cheap enough for a worker
thread; expanded rows get their wrapped heights from the renderer.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

from ..model import Message
from ..view import PreparedView, Row

__all__ = ["PREVIEW_LINES", "TOOL_CALL_PREVIEW", "Layout", "collapsed_height", "display_text", "removed_runs"]

PREVIEW_LINES = 3       # body lines a collapsed message shows
TOOL_CALL_PREVIEW = 2   # tool calls a collapsed assistant message lists


def display_text(message: Message) -> str:
    """The message text as shown: trailing newlines dropped (offsets unchanged)."""
    return message.text.rstrip("\n")


def collapsed_height(message: Message | None) -> int:
    """Lines a collapsed message takes: header, preview, "more" line, tool calls."""
    if message is None:
        return 1  # a ghost line
    text = display_text(message)
    lines = text.count("\n") + 1 if text else 0
    height = 1 + min(lines, PREVIEW_LINES)
    if lines > PREVIEW_LINES:
        height += 1
    calls = len(message.tool_calls)
    if calls:
        height += min(calls, TOOL_CALL_PREVIEW) + (1 if calls > TOOL_CALL_PREVIEW else 0)
    if not lines and not calls:
        height += 1  # "(empty)"
    return height


def removed_runs(rows: tuple[Row, ...]) -> dict[int, tuple[int, int]]:
    """For each row missing from the prepared side: (first row of its run, run length)."""
    runs: dict[int, tuple[int, int]] = {}
    i, n = 0, len(rows)
    while i < n:
        if rows[i].prepared is None and rows[i].stored is not None:
            j = i
            while j < n and rows[j].prepared is None and rows[j].stored is not None:
                j += 1
            run = (i, j - i)
            for k in range(i, j):
                runs[k] = run
            i = j
        else:
            i += 1
    return runs


@dataclass(slots=True)
class Layout:
    """Block heights and their prefix sums for one PreparedView."""

    view: PreparedView
    base_heights: list[int]
    runs: dict[int, tuple[int, int]]
    expanded: dict[int, int] = field(default_factory=dict)   # row -> expanded height
    heights: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)         # offsets[i] = first line of row i

    @classmethod
    def build(cls, view: PreparedView) -> Layout:
        heights = [
            max(collapsed_height(row.stored), collapsed_height(row.prepared)) for row in view.rows
        ]
        layout = cls(view=view, base_heights=heights, runs=removed_runs(view.rows))
        layout.reflow()
        return layout

    def reflow(self) -> None:
        """Recompute heights and prefix sums after an expand/collapse."""
        heights = list(self.base_heights)
        for row, height in self.expanded.items():
            if 0 <= row < len(heights):
                heights[row] = height
        self.heights = heights
        self.offsets = [0, *accumulate(heights)]

    @property
    def total_lines(self) -> int:
        return self.offsets[-1] if self.offsets else 0

    def __len__(self) -> int:
        return len(self.base_heights)

    def row_at(self, y: int) -> int:
        """The row whose block holds line y (clamped to the rows there are)."""
        if not self.base_heights:
            return -1
        return min(max(bisect_right(self.offsets, y) - 1, 0), len(self.base_heights) - 1)

    def row_top(self, row: int) -> int:
        return self.offsets[row]
