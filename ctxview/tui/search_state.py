"""The inspector's search, with no terminal in sight: which rows hold the term typed (`/`), the next
one from the cursor (`n`, `N`, wrapping over the visible rows) and the count of them all, shown
as `3/17`. The scans run in a worker (widgets/pane_pair.py); these are their rules.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Sequence

from ctxview.model import Message

__all__ = ["Search", "find_match", "match_positions", "messages_match", "next_row", "term_pattern"]


def next_row(heights: Sequence[int], start: int, predicate: Callable[[int], bool], direction: int = 1,
             include_start: bool = False, cancelled: Callable[[], bool] | None = None) -> int | None:
    """The first visible row (height > 0) from `start` in `direction`, wrapping, for which
    `predicate(row)` holds; `start` itself only with `include_start` (or after a full turn)."""
    n = len(heights)
    for step in range(0 if include_start else 1, n + 1):
        if cancelled is not None and cancelled():
            return None
        i = (start + direction * step) % n
        if heights[i] and predicate(i):
            return i
    return None


def term_pattern(term: str) -> re.Pattern[str]:
    """The search term as typed (no regex), any case."""
    return re.compile(re.escape(term), re.IGNORECASE)


def messages_match(stored: Message | None, prepared: Message | None, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` is in either message's text, thinking or tool calls (None: no message on
    that side)."""
    search = pattern.search
    for message in (stored, prepared):
        if message is None:
            continue
        if search(message.text):  # raw text: no copy of a 100k-message session per search
            return True
        if message.thinking and search(message.thinking):
            return True
        for call in message.tool_calls:
            if search(call.name) or search(str(dict(call.arguments))):
                return True
    return False


def find_match(stored: Sequence[Message | None], prepared: Sequence[Message | None], heights: Sequence[int],
               term: str, start: int, direction: int = 1, include_start: bool = False,
               cancelled: Callable[[], bool] | None = None) -> int | None:
    """The next visible row whose messages hold `term` (case-insensitive), as `next_row` walks.
    `stored`, `prepared`: the rows' messages (view.row_columns), so no changed row is made."""
    pattern = term_pattern(term)
    return next_row(heights, start, lambda i: messages_match(stored[i], prepared[i], pattern), direction,
                    include_start, cancelled)


def match_positions(stored: Sequence[Message | None], prepared: Sequence[Message | None], term: str,
                    cancelled: Callable[[], bool] | None = None) -> list[int] | None:
    """Every position whose messages hold `term`, in order (the search's count); None if cancelled."""
    pattern = term_pattern(term)
    out = []
    for i in range(len(stored)):
        if cancelled is not None and not i % 1024 and cancelled():
            return None
        if messages_match(stored[i], prepared[i], pattern):
            out.append(i)
    return out


@dataclass(slots=True)
class Search:
    """The search: its term, the direction of the last step, the row of the last match, and every
    matching row of the view it was counted over (`counted`: that view's layout, None: not yet)."""

    term: str = ""
    direction: int = 1
    hit: int | None = None
    running: bool = False       # a scan is in flight
    matches: Sequence[int] = ()
    counted: object | None = None

    def submit(self, term: str) -> bool:
        """A new term from the search box; whether there is one to look for."""
        self.term, self.direction, self.hit = term, 1, None
        self.matches, self.counted = (), None
        return bool(term)

    def needs_count(self, layout: object) -> bool:
        """Whether the matches of the term over `layout` are still to be counted."""
        return bool(self.term) and self.counted is not layout

    def count_done(self, term: str, layout: object, matches: Sequence[int]) -> bool:
        """A count for `term` over `layout` ended; whether it is the current term's."""
        if term != self.term:
            return False
        self.matches, self.counted = matches, layout
        return True

    def count_label(self, row: int, layout: object) -> str:
        """`3/17` (the row under the cursor is the 3rd of 17 matches), `–/17` (it is none of
        them), `0/0`; '' while not counted over the view on screen."""
        if not self.term or self.counted is not layout:
            return ""
        matches = self.matches
        i = bisect_left(matches, row)
        here = i < len(matches) and matches[i] == row
        return f"{i + 1 if here else '–'}/{len(matches):,}" if matches else "0/0"

    def step(self, direction: int) -> None:
        """`n` / `N` (or a new term): a scan in `direction` starts."""
        self.direction, self.running = direction, True

    def done(self, term: str, row: int | None, same_view: bool = True) -> bool:
        """A scan for `term` ended at `row` (None: no match); whether to go there: it must answer
        the current term, over the view still on screen (`same_view`)."""
        self.running = False
        if term != self.term or not same_view:
            return False
        self.hit = row
        return True
