"""The two panes, stored and prepared, as one widget.

`PanePair` holds the row layout both panes draw, the cursor row, which rows
are expanded and which removed runs the user unfolded, and links the panes'
scrolling. The app hands it a layout (`show`) and titles; the pair tells the
app when the cursor moved (`CursorMoved`), so the status bar follows. Jumps
(a search match, a reminder, a change) are pane_jumps.py's, mixed in.
"""

from __future__ import annotations

import weakref
from typing import Callable

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message as TMessage
from textual.worker import get_current_worker

from ctxview.tui.layout import Layout, system_row
from ctxview.tui.messages import SearchCounted, SearchDone
from ctxview.tui.widgets.pane import MessagePane
from ctxview.tui.render import block_lines, header_line
from ctxview.tui.screens.modals import DetailScreen
from ctxview.tui.search_state import find_match, match_positions
from ctxview.tui.widgets.basic import Line
from ctxview.tui.widgets.pane_jumps import PaneJumps

__all__ = ["FOLD_MIN", "PanePair"]

# Runs of at least this many removed messages fold into one line on each side.
FOLD_MIN = 2


class PanePair(PaneJumps, Vertical):
    """Stored messages beside prepared ones: one layout, one cursor row, linked scrolling."""

    # Active while either pane has focus (the pair is their ancestor).
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Previous message", show=False, id="ctxview.cursor_up"),
        Binding("down,j", "cursor(1)", "Next message", show=False, id="ctxview.cursor_down"),
        Binding("home", "cursor_to('first')", "First message", show=False, id="ctxview.first"),  # (g: go to #N)
        Binding("end,G", "cursor_to('last')", "Last message", show=False, id="ctxview.last"),
        Binding("enter", "expand", "Expand", id="ctxview.expand",
                tooltip="Expand / collapse the message (huge ones open the detail view; a Task call opens its "
                        "sub-agent's conversation)"),
        Binding("o", "detail", "Open in detail view", show=False, id="ctxview.detail",
                tooltip="Open the message in the detail view (Tab there: the other side)"),
        Binding("z", "fold", "Fold/unfold removed messages", show=False, id="ctxview.fold",
                tooltip="Fold / unfold a run of removed messages (Enter unfolds too)"),
    ]

    class CursorMoved(TMessage):
        """The cursor row or the link state changed (for the status bar)."""

    def __init__(self, *, id: str | None = None, on_cursor_moved: Callable[[], None] | None = None) -> None:
        super().__init__(id=id)
        # Called at once when the cursor moves (the app's status bar then changes in the same frame as the
        # panes: a CursorMoved message would be handled after the panes were painted, a frame later).
        self.on_cursor_moved = on_cursor_moved
        self.row_layout: Layout | None = None
        self.cursor = 0
        self.linked = True
        self.expanded_rows: set[int] = set()
        self.unfolded_runs: set[int] = set()   # removed runs the user unfolded (first rows)
        # Asked first on Enter with the cursor row: True when it took the key (a Task call opens its
        # sub-agent's conversation), False to expand as usual.
        self.on_enter: Callable[[int], bool] | None = None
        self._syncing_scroll = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="titles"):
            yield Line(Text("stored messages", Style(bold=True)), id="title-stored", classes="pane-title")
            yield Line(Text("as sent", Style(bold=True)), id="title-prepared", classes="pane-title")
        with Horizontal(id="pane-row"):
            yield MessagePane("stored", id="stored")
            yield MessagePane("prepared", id="prepared")

    def on_mount(self) -> None:
        stored, prepared = self.panes
        self.watch(stored, "scroll_y", lambda y: self._link_scroll(prepared, y), init=False)
        self.watch(prepared, "scroll_y", lambda y: self._link_scroll(stored, y), init=False)

    @property
    def stored(self) -> MessagePane:
        return self.query_one("#stored", MessagePane)

    @property
    def prepared(self) -> MessagePane:
        return self.query_one("#prepared", MessagePane)

    @property
    def panes(self) -> tuple[MessagePane, MessagePane]:
        return self.stored, self.prepared

    # -- what the app hands over ---------------------------------------------------

    def show(self, layout: Layout) -> None:
        """Draw `layout` (a new view, or the pending stored-only one), keeping the cursor,
        the expanded rows that still exist and the unfolded runs."""
        layout.settle()  # (a layout built from the one on screen takes its heights over now)
        self.row_layout = layout
        if self.cursor >= len(layout):
            self.cursor = max(len(layout) - 1, 0)
        self.expanded_rows = {r for r in self.expanded_rows if r < len(layout)}
        self._reflow()
        for pane in self.panes:
            pane.cursor = self.cursor
            pane.set_layout(layout)

    def set_head_note(self, counter: str, note: str, tokens: int) -> None:
        """The #sys ghost's note, fitted with `counter` after the view showed (the row keeps its height)."""
        layout = self.row_layout
        if (layout is not None and not layout.is_pending and layout.head.stored is None
                and layout.view.settings.counter == counter):
            layout.head = system_row(None, tokens, note)
            for pane in self.panes:
                pane.refresh()

    def reset(self) -> None:
        """Another conversation: cursor at the top, nothing expanded or unfolded."""
        self.cursor = 0
        self.expanded_rows.clear()
        self.unfolded_runs.clear()
        for pane in self.panes:
            pane.scroll_to(y=0, animate=False)

    def set_titles(self, stored: str, prepared: Text) -> None:
        self.query_one("#title-stored", Line).update(Text(stored, Style(bold=True), end=""))
        self.query_one("#title-prepared", Line).update(prepared)

    def set_search(self, term: str) -> None:
        for pane in self.panes:
            pane.set_search(term)

    @property
    def focused_side(self) -> str:
        focused = self.app.focused
        return "prepared" if isinstance(focused, MessagePane) and focused.side == "prepared" else "stored"

    # -- scrolling ---------------------------------------------------------------------

    def toggle_link(self) -> None:
        self.linked = not self.linked
        if self.linked:
            self.prepared.scroll_to(y=self.stored.scroll_y, animate=False, immediate=True)
        self._cursor_moved()

    def _link_scroll(self, other: MessagePane, y: float) -> None:
        if not self.linked or self._syncing_scroll or other.scroll_y == y:
            return
        self._syncing_scroll = True
        try:
            other.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._syncing_scroll = False

    # -- the cursor ----------------------------------------------------------------------

    def set_cursor(self, row: int, scroll: bool = True) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row = min(max(row, 0), len(layout) - 1)
        if not layout.visible(row):
            row = layout.fold_of(row) or 0
        self.cursor = row
        for pane in self.panes:
            pane.set_cursor(row)
        if scroll:
            self._scroll_to_row(row)
        self._cursor_moved()

    def _cursor_moved(self) -> None:
        if self.on_cursor_moved is not None:
            self.on_cursor_moved()
        else:
            self.post_message(self.CursorMoved())

    def _scroll_to_row(self, row: int) -> None:
        layout = self.row_layout
        assert layout is not None
        top = layout.row_top(row)
        height = layout.heights[row]
        focused = self.app.focused
        targets = self.panes if self.linked else (focused if isinstance(focused, MessagePane) else self.stored,)
        for pane in targets:
            viewport = pane.scrollable_content_region.height or 1
            y = pane.scroll_y
            if top < y:
                y = top
            elif top + min(height, viewport) > y + viewport:
                y = top + min(height, viewport) - viewport
            if y != pane.scroll_y:
                pane.scroll_to(y=y, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row, step = self.cursor, (1 if delta > 0 else -1)
        for _ in range(abs(delta)):
            nxt = row + step
            while 0 <= nxt < len(layout) and not layout.visible(nxt):
                nxt += step  # over the hidden rows of a folded run
            if not 0 <= nxt < len(layout):
                break
            row = nxt
        self.set_cursor(row)

    def action_cursor_to(self, where: str) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self.set_cursor(0 if where == "first" else len(layout) - 1)
        if where == "last":
            for pane in self.panes:
                pane.scroll_end(animate=False, immediate=True)

    # -- search ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="search", description="search", exit_on_error=False)
    def scan(self, scanned: weakref.ref[Layout], term: str, direction: int, start: int,
             include_current: bool, count: bool = False) -> None:
        """Scan for the next row matching `term` off the UI thread (a miss reads every message) and
        post SearchDone (the app decides); then, with `count`, every matching row (SearchCounted:
        the `3/17` of the status bar). A newer search cancels this one. The layout is held
        weakly (see CtxviewApp._compute)."""
        worker = get_current_worker()
        layout = scanned()
        if layout is None:
            return  # a newer view replaced it: the answer would be dropped
        # the rows' messages, not the rows: a changed row is made only when shown
        stored, prepared = layout.columns()
        # every row, folded ones too (base heights are never 0): landing unfolds the run
        row = find_match(stored, prepared, layout.base_heights, term, start, direction, include_current,
                         cancelled=lambda: worker.is_cancelled)
        if worker.is_cancelled:
            return
        self.post_message(SearchDone(layout, term, row))
        if count:
            self._count(layout, term, lambda: worker.is_cancelled)

    # (a group of its own: a count must not cancel a scan for `n`, whose answer the search waits for)
    @work(thread=True, exclusive=True, group="search-count", description="search count", exit_on_error=False)
    def count(self, counted: weakref.ref[Layout], term: str) -> None:
        """Count the rows matching `term` over a new view (the search stays on: its `3/17` follows)."""
        worker = get_current_worker()
        layout = counted()
        if layout is not None:
            self._count(layout, term, lambda: worker.is_cancelled)

    def _count(self, layout: Layout, term: str, cancelled: Callable[[], bool]) -> None:
        stored, prepared = layout.columns()
        matches = match_positions(stored, prepared, term, cancelled=cancelled)
        if matches is not None and not cancelled():
            self.post_message(SearchCounted(layout, term, matches))

    @on(MessagePane.RowChosen)
    def _row_chosen(self, event: MessagePane.RowChosen) -> None:
        event.stop()
        self.set_cursor(event.row, scroll=False)

    @on(MessagePane.Resized)
    def _pane_resized(self, event: MessagePane.Resized) -> None:
        event.stop()
        if self.expanded_rows and self.row_layout is not None:
            self._refold()

    # -- expand, fold, detail ----------------------------------------------------------------

    def _reflow(self) -> None:
        """Apply folds and expanded rows to the current layout."""
        layout = self.row_layout
        if layout is None:
            return
        layout.fold_runs(FOLD_MIN, self.unfolded_runs)
        layout.expanded = {row: self._expanded_height(row) for row in self.expanded_rows}
        layout.reflow()
        if len(layout) and not layout.visible(self.cursor):
            self.cursor = layout.fold_of(self.cursor) or 0

    def restore_folds(self, expanded: frozenset[int], unfolded: frozenset[int]) -> None:
        """The rows expanded and the runs unfolded as they were (back from a sub-agent: the same view)."""
        layout = self.row_layout
        if layout is None:
            return
        self.expanded_rows = {r for r in expanded if r < len(layout)}
        self.unfolded_runs = set(unfolded)
        self._refold()

    def _refold(self) -> None:
        self._reflow()
        for pane in self.panes:
            pane.invalidate()

    def _expanded_height(self, row: int) -> int:
        layout = self.row_layout
        assert layout is not None
        r = layout.row(row)
        return max(len(block_lines(r, pane.side, pane.styles_for_render, pane.text_width, True,
                                   layout.runs.get(row), row, console=self.app.console)) for pane in self.panes)

    def action_expand(self) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row = self.cursor
        if row in layout.folded:
            self.action_fold()
            return
        if self.on_enter is not None and self.on_enter(row):
            return
        r = layout.row(row)
        if r.stored is None and r.prepared is None:  # the #sys ghost: nothing in the file to show
            self.app.bell()
            return
        if row not in self.expanded_rows and self._huge(row):
            self.action_detail()
            return
        if row in self.expanded_rows:
            self.expanded_rows.discard(row)
        else:
            self.expanded_rows.add(row)
        self._refold()
        self._scroll_to_row(row)

    def action_fold(self) -> None:
        """Fold or unfold the run of removed messages under the cursor."""
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        run = layout.runs.get(self.cursor)
        if run is None or run[1] < FOLD_MIN:
            self.app.bell()
            return
        start = run[0]
        if start in layout.folded:
            self.unfolded_runs.add(start)
        else:
            self.unfolded_runs.discard(start)
        self._refold()
        self.set_cursor(start)

    def action_detail(self) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        r = layout.row(self.cursor)
        if r.stored is None and r.prepared is None:  # the #sys ghost
            self.app.bell()
            return
        sides: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
        if r.stored is not None:
            sides["stored"] = (r.stored.text, [(s, e, "reminder") for s, e in r.stored_reminders])
        if r.prepared is not None:
            spans = [(s, e, "reminder") for s, e in r.prepared_reminders]
            spans += [(s, e, "ephemeral") for s, e in r.ephemeral_spans]
            sides["prepared"] = (r.prepared.text, spans)
        # each side's own header: the prepared tab shows the prepared tokens and badges
        styles = self.stored.styles_for_render
        titles = {side: header_line(r, side, styles) for side in sides}  # type: ignore[arg-type]
        self.app.push_screen(DetailScreen(titles, sides, self.focused_side, self.stored.search))
