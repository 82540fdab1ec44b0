"""Jumps in the two panes: the cursor to a row, scrolled so that what the jump found shows.

Mixed into PanePair: `jump` and `reveal` (a search match, a system reminder, a change: the first
line of the block carrying its style, expanding the row when the collapsed block does not show
it), `unfold` (a folded run holding the row) and `jump_to_next` (`r`, `x`). A message too big to
expand in place (HUGE_CHARS, HUGE_LINES) is left to the detail view, with a note saying where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxview.tui.block_heights import display_text
from ctxview.tui.render import block_lines
from ctxview.tui.reveal import Kind, first_styled_line, reveal_scroll, target_styles
from ctxview.tui.search_state import next_row
from ctxview.tui.widgets.pane import MessagePane

if TYPE_CHECKING:
    from ctxview.tui.widgets.pane_pair import PanePair

__all__ = ["HUGE_CHARS", "HUGE_LINES", "PaneJumps"]

# A message this big opens in the detail view instead of expanding in place.
HUGE_CHARS = 100_000
HUGE_LINES = 1_500


class PaneJumps:
    """Jumps, mixed into PanePair (see the module's docstring)."""

    def jump(self: PanePair, row: int | None, what: str, kind: Kind | None = None) -> None:
        """The cursor to `row`, revealing what a jump of `kind` found there (`reveal`); None: a note
        that there is no `what`, and the bell."""
        if row is None:
            self.app.notify(f"no {what}", markup=False)
            self.app.bell()
        elif kind is not None:
            self.reveal(row, kind)
        else:
            self.set_cursor(row)

    def unfold(self: PanePair, row: int) -> None:
        """Unfold the folded run holding `row`, if any (a jump to a row inside it shows it)."""
        layout = self.row_layout
        start = layout.fold_of(row) if layout is not None else None
        if start is not None and start != row:
            self.unfolded_runs.add(start)
            self._refold()

    def reveal(self: PanePair, row: int, kind: Kind) -> None:
        """The cursor to `row`, scrolled so that what a jump of `kind` found is on screen: the first
        line of the block carrying its style (the search highlight, a reminder, what a change
        added), expanding the row when the collapsed block does not show it (not a huge one: that
        says where it is and leaves it to the detail view)."""
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self.unfold(row)
        self.set_cursor(row, scroll=False)
        line = self._styled_line(row, kind, row in self.expanded_rows)
        if line is None and row not in self.expanded_rows:
            if self._huge(row):
                found = {"search": "the match", "reminder": "the reminder", "changed": "the change"}[kind]
                where = ", at the search's first match" if kind == "search" else ""
                self.app.notify(f"{found} is below the preview of a huge message: o opens it in the detail "
                                f"view{where}", markup=False)
            else:
                line = self._styled_line(row, kind, True)
                if line is not None:
                    self.expanded_rows.add(row)
                    self._refold()
        self._scroll_to_line(row, line or 0)
        self._cursor_moved()

    def _styled_line(self: PanePair, row: int, kind: Kind, expanded: bool) -> int | None:
        """The first line of `row`'s block (either side, the same line on both) showing what `kind`
        looks for; None: not in the block drawn so."""
        layout = self.row_layout
        assert layout is not None
        r, run = layout.row(row), layout.runs.get(row)
        found = []
        for pane in self.panes:
            styles = pane.styles_for_render
            lines = block_lines(r, pane.side, styles, pane.text_width, expanded, run, row,
                                search=self.stored.search if kind == "search" else "", console=self.app.console)
            line = first_styled_line(lines, target_styles(kind, styles))
            if line is not None:
                found.append(line)
        return min(found) if found else None

    def _huge(self: PanePair, row: int) -> bool:
        """Whether `row`'s message is too big to expand in place (it opens in the detail view)."""
        assert self.row_layout is not None
        r = self.row_layout.row(row)
        sizes = [display_text(m) for m in (r.stored, r.prepared) if m is not None]
        return any(len(t) > HUGE_CHARS or t.count("\n") > HUGE_LINES for t in sizes)

    def _scroll_to_line(self: PanePair, row: int, line: int) -> None:
        layout = self.row_layout
        assert layout is not None
        top = layout.row_top(row)
        focused = self.app.focused
        targets = self.panes if self.linked else (focused if isinstance(focused, MessagePane) else self.stored,)
        for pane in targets:
            y = reveal_scroll(top, line, pane.scroll_y, pane.scrollable_content_region.height or 1)
            if y != pane.scroll_y:
                pane.scroll_to(y=y, animate=False, immediate=True)

    def jump_to_next(self: PanePair, what: str) -> None:
        """`r`, `x`: to the next row with system reminders ("reminder"), or changed ("changed")."""
        layout = self.row_layout
        if what == "reminder":
            rows = layout.rows if layout is not None else ()

            def wanted(i: int) -> bool:
                r = rows[i]
                return bool(r.stored_reminders or r.prepared_reminders or r.ephemeral_spans)
            noun = "system reminders"
        else:
            # a row changed exactly when its prepared message is not its stored one: read from the
            # columns, so the rows passed over are not made
            stored, prepared = layout.columns() if layout is not None else ((), ())

            def wanted(i: int) -> bool:
                return prepared[i] is not stored[i]
            noun = "changed messages"
        found = next_row(layout.heights, self.cursor, wanted) if layout is not None and len(layout) else None
        self.jump(found, noun, what)  # type: ignore[arg-type]
