"""The session browser: the sessions found, newest first; type to filter, Enter opens one.

The index (ctxview/sessions) is built in a thread worker behind a progress bar and kept in the
cache, so a second start lists at once. A second worker then reads each session whole, once
(sessions/contents.py): its text for the search (ctrl+f: the filter box searches the text) and
its recorded usage for the cost column and the totals by project and by day (ctrl+t). ctrl+s
sorts by the next column (or click a header), ctrl+r turns the order round. The columns that fit
the width are chosen by importance (sessions/columns.fit_columns). Enter ends this app with the
chosen path; launch.py opens
it in the inspector and, when the user presses Escape there, starts a browser again with the same
rows, filter and row (`BrowserApp(rows=..., filter_text=..., selected=...)`). Every cell is a Rich
Text of sanitised text (sessions/columns.py), never markup.
"""

from __future__ import annotations

from typing import Mapping

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, ProgressBar, Static
from textual.widgets.data_table import RowDoesNotExist

from ctxview.sanitize import sanitize
from ctxview.sessions import SessionRow, build_index
from ctxview.sessions.columns import (COLUMNS, SORTS, TOTAL_COLUMNS, RowFilter, cells, fit_cell, fit_columns,
                                     fit_total_columns, sort_rows, total_cells)
from ctxview.sessions.contents import Totals, open_contents
from ctxview.tui.widgets.footer import Footer
from ctxview.tui.widgets.session_table import (ContentsProgress, ContentsReady, IndexFailed, IndexNotice, IndexProgress,
                                               IndexReady, SessionTable, status_text)

__all__ = ["BrowserApp"]


VIEWS = ("list", "project", "day")   # ctrl+t: the sessions, then the totals by project, by day


def _cost_at(columns: tuple[tuple[str, int], ...]) -> int:
    return [name for name, _ in columns].index("cost")


# The table measures every cell it is given (5,000 rows: seconds), so it holds a window of the rows
# the filter keeps: from `offset`, a batch at a time, the next batch added when the cursor or the
# scroll nears its end. A jump further (ctrl+end, a row far down kept across a filter) starts the
# window anew there: no key ever costs more than a few batches, so ctrl+c is always handled at once.
BATCH = 100


class BrowserApp(App[str | None]):
    """Pick a session: the app's result is its path (None: the user quit)."""

    TITLE = "ctxview sessions"
    CSS = """
    #where { height: 1; padding: 0 1; background: $panel; }
    #filter { height: 3; }
    #progress { height: 1; padding: 0 1; }
    #table { height: 1fr; }
    #status { height: 1; padding: 0 1; background: $panel; }
    ToastRack { margin-bottom: 2; }   /* above the status line and the footer, never over them */
    Toast { max-width: 75%; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("ctrl+home", "move(-1000000000)", "First", show=False),
        Binding("ctrl+end", "move(1000000000)", "Last", show=False),
        Binding("enter", "open", "Open", id="ctxview.browser_open"),
        Binding("escape", "escape", "Clear", id="ctxview.browser_escape"),
        Binding("ctrl+s", "sort", "Sort", id="ctxview.browser_sort"),
        # (left out of the footer, which has no room for it at 80 columns; the status line says "↑")
        Binding("ctrl+r", "reverse", "Reverse", show=False, id="ctxview.browser_reverse"),
        Binding("ctrl+f", "search_text", "Search text", id="ctxview.browser_search"),
        Binding("ctrl+t", "totals", "Totals", id="ctxview.browser_totals"),
        Binding("ctrl+c,ctrl+q", "quit", "Quit", priority=True, id="ctxview.browser_quit"),
    ]

    def __init__(self, root: str | None = None, *, rows: list[SessionRow] | None = None, filter_text: str = "",
                 selected: str | None = None, notice: str | None = None, cache: bool = True,
                 env: Mapping[str, str] | None = None, contents: bool = True) -> None:
        """`contents`: read each session whole in the background (text search, cost, totals)."""
        super().__init__()
        self._contents_pass = contents
        self.root = root
        self.rows: list[SessionRow] = list(rows or [])
        self.shown: list[SessionRow] = []
        self.filter_text = filter_text
        self.selected = selected
        self.notice = notice
        self.indexing = True
        self._cache = cache
        self._env = env
        self._made: dict[str, tuple[SessionRow, float | None, tuple[str, ...]]] = {}
        self._filter = RowFilter(self.rows)
        self.offset = 0  # the index in `shown` of the table's first row
        self.sort, self.reverse = "date", False
        self.search_text = False          # ctrl+f: the filter box searches the sessions' text
        self.view = "list"                # or the totals by "project", by "day"
        self.totals: list[Totals] = []
        self.cost: dict[str, float | None] = {}
        self.unread: dict[str, str] = {}   # path -> why the contents pass could not read it whole
        self.contents = open_contents(env, cache=cache)
        self.contents_done: tuple[int, int] | None = None   # (read, to read) while the pass runs
        self.columns = fit_columns(160)
        self.total_columns = TOTAL_COLUMNS
        self.closing = False   # the app is ending: the contents pass stops, its last messages are let go

    def compose(self) -> ComposeResult:
        where = (f"session files under {self.root}" if self.root is not None
                 else "sessions of Claude Code, Codex and Gemini CLI")
        yield Static(Text(sanitize(where), end=""), id="where")
        yield Input(value=self.filter_text, placeholder="type to filter (project, title, model, format, path)",
                    id="filter")
        yield ProgressBar(id="progress", show_eta=False)
        table = SessionTable(id="table", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(id="status")
        yield Footer()

    def on_unmount(self) -> None:
        self.closing = True

    def exit(self, *args, **kwargs) -> None:  # type: ignore[override]
        self.closing = True
        super().exit(*args, **kwargs)

    @property
    def table(self) -> DataTable:
        return self.query_one("#table", DataTable)

    def on_mount(self) -> None:
        self._set_columns()
        self.query_one("#filter", Input).focus()
        if self.rows:
            self._fill()
        if self.notice:
            self.notify(sanitize(self.notice), title="cannot open", severity="error", markup=False, timeout=8)
        self._index()

    # -- the index --------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _index(self) -> None:
        try:
            rows = build_index(self.root, cache=self._cache, env=self._env,
                               progress=lambda done, total: self.post_message(IndexProgress(done, total)),
                               notice=lambda text: self.post_message(IndexNotice(text)))
        except Exception as exc:  # noqa: BLE001 - the browser says so and stays open
            self.post_message(IndexFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(IndexReady(rows))

    @on(IndexProgress)
    def _index_progress(self, event: IndexProgress) -> None:
        self.query_one("#progress", ProgressBar).update(total=max(event.total, 1), progress=event.done)

    @on(IndexReady)
    def _index_ready(self, event: IndexReady) -> None:
        self.indexing = False
        self.query_one("#progress", ProgressBar).display = False
        self.rows = event.rows
        self._filter = RowFilter(self.rows)
        self._fill()
        if self._contents_pass:
            self._read_contents(self.rows)

    @work(thread=True, exclusive=True, exit_on_error=False, group="contents")
    def _read_contents(self, rows: list[SessionRow]) -> None:
        try:
            def progress(done: int, total: int) -> None:
                if done % 25 == 0 or done == total:   # (a message per file would keep the screen busy)
                    self.post_message(ContentsProgress(done, total))

            self.contents.update(rows, progress=progress, stop=lambda: self.closing)
        except Exception as exc:  # noqa: BLE001 - the list works without it; the browser says so
            self.post_message(IndexNotice(f"the sessions' text and cost could not be read: {type(exc).__name__}: {exc}"))
        self.post_message(ContentsReady())

    @on(ContentsProgress)
    def _contents_progress(self, event: ContentsProgress) -> None:
        if self.closing:
            return
        self.contents_done = (event.done, event.total)
        if event.done % 200 == 0 and self.search_text and self.filter_text:
            self._fill()   # (the search sees what is read so far)
        self._status()

    @on(ContentsReady)
    def _contents_ready(self) -> None:
        """The costs are known: put them in the rows the table holds, where they are (the cursor and
        the window stay); an order or a view that depends on them is made anew."""
        if self.closing:
            return
        self.contents_done = None
        self.cost = self.contents.cost_by_path()
        self.unread = self.contents.unread()
        if self.view != "list" or self.sort == "cost" or self.search_text:
            self._fill()
            return
        table = self.table
        if "cost" in dict(self.columns):
            at = _cost_at(self.columns)
            for k, row in enumerate(table.ordered_rows):
                if self.offset + k < len(self.shown):
                    table.update_cell(row.key, "cost", self._cells(self.shown[self.offset + k])[at])
        self._status()

    @on(IndexNotice)
    def _index_notice(self, event: IndexNotice) -> None:
        self.notify(sanitize(event.text), title="session index cache", severity="warning", markup=False, timeout=8)

    @on(IndexFailed)
    def _index_failed(self, event: IndexFailed) -> None:
        self.indexing = False
        self.query_one("#progress", ProgressBar).display = False
        self.notify(sanitize(event.error), title="cannot list the sessions", severity="error", markup=False)
        self._status()

    # -- the table ----------------------------------------------------------------------

    def _set_columns(self) -> None:
        """The columns that fit the table's width (by importance), the sorted one marked."""
        table = self.table
        if self.view == "list":
            # (the vertical scrollbar takes 2 cells; the column sorted by is shown whatever the width)
            self.columns = fit_columns(max(self.size.width - 2, 40), keep=SORTS[self.sort])
            arrow = "↑" if self.reverse else "↓"
            marked = {SORTS[self.sort]: arrow} if (self.sort, self.reverse) != ("date", False) else {}
            labels = [(f"{name} {marked[name]}" if name in marked else name, width, name)
                      for name, width in self.columns]
        else:
            key_width, sums = fit_total_columns(max(self.size.width - 2, 40))
            self.total_columns = sums
            labels = [(self.view, key_width, self.view), *((name, width, name) for name, width in sums)]
        table.clear(columns=True)
        for label, width, key in labels:
            table.add_column(label, width=width, key=key)

    def on_resize(self) -> None:
        if self.view == "list" and fit_columns(max(self.size.width - 2, 40), keep=SORTS[self.sort]) != self.columns:
            self._set_columns()
            self._fill()

    def _fill(self) -> None:
        """Show the rows the filter (or the text search) keeps, in the order chosen, the cursor on the
        selected path where it is still shown; in a totals view, their totals."""
        keep = self.selected
        found = self.contents.search(self.filter_text) if self.search_text else None
        shown = self._filter("" if self.search_text else self.filter_text)
        if found is not None:
            shown = [r for r in shown if r.path in found]
        if (self.sort, self.reverse) != ("date", False):
            shown = sort_rows(shown, self.sort, self.reverse, self.cost)
        self.shown = shown
        if self.view != "list":
            self._fill_totals()
            return
        index = next((i for i, r in enumerate(self.shown) if r.path == keep), 0) if keep else 0
        self._window(index)
        self._status()

    def _fill_totals(self) -> None:
        """The totals of the rows shown, by project or day (from what the contents pass has read)."""
        self.totals = self.contents.totals(self.shown, self.view)
        self.table.clear()
        key_width = self.table.ordered_columns[0].width
        shown = {name for name, _ in self.total_columns}
        self.table.add_rows([(Text(fit_cell("project", sanitize(t.key), key_width), no_wrap=True, end=""),
                              *(Text(c, justify="right", end="")
                                for (name, _), c in zip(TOTAL_COLUMNS, total_cells(t)) if name in shown))
                             for t in self.totals])
        self._status()

    def _window(self, index: int) -> None:
        """The table anew, holding the rows around `index` of `shown` (from the top when it is in the
        first batches), the cursor there."""
        table = self.table
        table.clear()
        self.offset = 0 if index < 2 * BATCH else index - BATCH
        self._load_rows(index + 1)
        if self.shown:
            table.move_cursor(row=index - self.offset, animate=False, scroll=True)

    def _load_rows(self, upto: int) -> None:
        """Add the filtered rows to the table up to row `upto` of `shown` and a batch beyond."""
        table = self.table
        have = self.offset + table.row_count
        want = min(len(self.shown), self.offset + ((upto - self.offset) // BATCH + 1) * BATCH)
        if want > have:
            table.add_rows([self._cells(r) for r in self.shown[have:want]])

    def _cells(self, row: SessionRow) -> tuple[Text, ...]:
        """The row's cells in the columns shown, as Text (plain, never markup); its texts made once
        per row and cost."""
        cost = self.cost.get(row.path)
        made = self._made.get(row.path)
        if made is None or made[0] is not row or made[1] != cost:
            made = self._made[row.path] = (row, cost, cells(row, cost))
        shown = dict(self.columns)
        return tuple(Text(fit_cell(name, c, shown[name]), no_wrap=True, overflow="ellipsis", end="")
                     for (name, _), c in zip(COLUMNS, made[2]) if name in shown)

    @on(SessionTable.NearEnd)
    def _near_end(self) -> None:
        self._load_rows(self.offset + self.table.row_count)

    @on(SessionTable.NearStart)
    def _near_start(self) -> None:
        """Scrolled to the top of a window that starts below the first row: the batch above is
        added, the same rows kept in view (the cursor stays on its row)."""
        table = self.table
        if self.offset and self.shown and table.scroll_y <= 5:
            index, top = self.cursor_index, self.offset
            table.clear()
            self.offset = max(0, top - BATCH)
            self._load_rows(min(index, self.offset + 3 * BATCH - 1))
            if index < self.offset + table.row_count:
                table.move_cursor(row=index - self.offset, animate=False, scroll=False)
            # (after the refresh that measures the rows added: before it, the scroll would be clamped)
            table.call_after_refresh(table.scroll_to, y=top - self.offset, animate=False)

    def _status(self) -> None:
        self.query_one("#status", Static).update(Text(status_text(self), end=""))

    @property
    def cursor_index(self) -> int:
        """The cursor's row in `shown` (the table holds a window of it)."""
        return self.offset + self.table.cursor_row

    @property
    def current(self) -> SessionRow | None:
        row = self.cursor_index
        return self.shown[row] if self.shown and 0 <= row < len(self.shown) else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.view != "list":
            return
        try:  # (an event from before the table was filled anew names a row no longer in it)
            row = self.table.get_row_index(event.row_key)
        except RowDoesNotExist:
            return
        index = self.offset + row
        if 0 <= index < len(self.shown):
            self.selected = self.shown[index].path
            if row >= self.table.row_count - 30:
                self._load_rows(index + 30)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if event.value != self.filter_text or not self.shown:
            self.filter_text = event.value
            self._fill()

    @on(Input.Submitted, "#filter")
    def _submitted(self, event: Input.Submitted) -> None:
        self.action_open()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_move(self, delta: int) -> None:
        if self.view != "list":   # (the totals are all in the table)
            if self.totals:
                target = max(0, min(len(self.totals) - 1, self.table.cursor_row + delta))
                self.table.move_cursor(row=target, animate=False)
            return
        if self.shown:
            target = max(0, min(len(self.shown) - 1, self.cursor_index + delta))
            end = self.offset + self.table.row_count
            if self.offset <= target < end + BATCH:  # within the window, or a batch beyond it
                self._load_rows(target)
                self.table.move_cursor(row=target - self.offset, animate=False)
            else:
                self._window(target)

    def action_open(self) -> None:
        if self.view != "list":
            self._open_total()
            return
        row = self.current
        if row is None:
            self.bell()
            return
        self.selected = row.path
        self.exit(row.path)

    def _open_total(self) -> None:
        """Enter on a project's totals: the list of its sessions (the filter set to the project)."""
        row = self.table.cursor_row
        if self.view != "project" or not 0 <= row < len(self.totals):
            self.bell()
            return
        self.view = "list"
        if self.search_text:
            self.action_search_text()   # (the project is a filter, not words of the text)
        self._set_columns()
        box, key = self.query_one("#filter", Input), self.totals[row].key
        if box.value == key:
            self._fill()
        else:
            box.value = key   # (Input.Changed refills the table)

    def action_sort(self) -> None:
        """The next sort order (SORTS), largest or A to Z first."""
        keys = list(SORTS)
        self._sort_by(keys[(keys.index(self.sort) + 1) % len(keys)], False)

    def action_reverse(self) -> None:
        self._sort_by(self.sort, not self.reverse)

    def _sort_by(self, key: str, reverse: bool) -> None:
        self.sort, self.reverse = key, reverse
        if self.view == "list":
            self._set_columns()
        self._fill()

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it; a second click turns the order round."""
        key = next((k for k, column in SORTS.items() if column == event.column_key.value), None)
        if self.view != "list" or key is None:
            return
        self._sort_by(key, not self.reverse if key == self.sort else False)

    def action_search_text(self) -> None:
        """The filter box searches the sessions' text (ctrl+f again: their project, title, ...)."""
        self.search_text = not self.search_text
        box = self.query_one("#filter", Input)
        box.placeholder = ("search the sessions' text (every word, as a word's start)" if self.search_text
                           else "type to filter (project, title, model, format, path)")
        self._fill()

    def action_totals(self) -> None:
        """The sessions, then their recorded usage and cost by project, then by day."""
        self.view = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        self._set_columns()
        self._fill()

    def action_escape(self) -> None:
        # Escape only clears: pressed once too often (after the palette or a dialog closed), it must
        # not end the session. Quitting is ctrl+q, which the footer shows.
        if self.filter_text:
            self.query_one("#filter", Input).value = ""  # (Input.Changed refills the table)
        else:
            self.notify("ctrl+q quits", timeout=2)
