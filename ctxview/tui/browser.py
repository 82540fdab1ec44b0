"""The session browser: the sessions found, newest first; type to filter, Enter opens one.

The index (ctxview/sessions) is built in a thread worker behind a progress bar and kept in the
cache, so a second start lists at once. Enter ends this app with the chosen path; launch.py opens
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
from textual.message import Message
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.widgets.data_table import RowDoesNotExist

from ctxview.sanitize import sanitize
from ctxview.sessions import SessionRow, build_index
from ctxview.sessions.columns import COLUMNS, RowFilter, cells

__all__ = ["BrowserApp"]


class IndexProgress(Message):
    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total


class IndexReady(Message):
    def __init__(self, rows: list[SessionRow]) -> None:
        super().__init__()
        self.rows = rows


class IndexNotice(Message):
    """A line about an index cache that could not be used (the list is built all the same)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class IndexFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class SessionTable(DataTable):
    """A DataTable that asks for more rows when scrolled near either end of those it holds."""

    class NearEnd(Message):
        pass

    class NearStart(Message):
        pass

    _clearing = False

    def clear(self, columns: bool = False) -> SessionTable:
        self._clearing = True  # (clear() scrolls to the top: that is no user's scroll)
        try:
            return super().clear(columns)
        finally:
            self._clearing = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y - 5:
            self.post_message(self.NearEnd())
        elif new_value <= 5 < old_value and not self._clearing:
            self.post_message(self.NearStart())


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
        Binding("escape", "escape", "Clear the filter", id="ctxview.browser_escape"),
        Binding("ctrl+c,ctrl+q", "quit", "Quit", priority=True, id="ctxview.browser_quit"),
    ]

    def __init__(self, root: str | None = None, *, rows: list[SessionRow] | None = None, filter_text: str = "",
                 selected: str | None = None, notice: str | None = None, cache: bool = True,
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.root = root
        self.rows: list[SessionRow] = list(rows or [])
        self.shown: list[SessionRow] = []
        self.filter_text = filter_text
        self.selected = selected
        self.notice = notice
        self.indexing = True
        self._cache = cache
        self._env = env
        self._made: dict[str, tuple[SessionRow, tuple[Text, ...]]] = {}
        self._filter = RowFilter(self.rows)
        self.offset = 0  # the index in `shown` of the table's first row

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

    @property
    def table(self) -> DataTable:
        return self.query_one("#table", DataTable)

    def on_mount(self) -> None:
        table = self.table
        for header, width in COLUMNS:
            table.add_column(header, width=width or None, key=header)
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

    def _fill(self) -> None:
        """Show the rows the filter keeps, the cursor on the selected path where it is still shown."""
        keep = self.selected
        self.shown = self._filter(self.filter_text)
        index = next((i for i, r in enumerate(self.shown) if r.path == keep), 0) if keep else 0
        self._window(index)
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
        """The row's cells as Text (plain, never markup), made once per row."""
        made = self._made.get(row.path)
        if made is None or made[0] is not row:
            made = self._made[row.path] = (row, tuple(Text(c, no_wrap=True, overflow="ellipsis", end="")
                                                      for c in cells(row)))
        return made[1]

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
        problems = sum(1 for r in self.shown if r.problem)
        noun = "session" if len(self.rows) == 1 else "sessions"
        parts = [f"{len(self.shown):,} of {len(self.rows):,} {noun}" if self.filter_text
                 else f"{len(self.rows):,} {noun}"]
        if problems:
            parts.append(f"⚠ {problems:,} with a problem")
        if self.indexing:
            parts.append("indexing…")
        parts.append("Enter opens · Esc " + ("clears the filter" if self.filter_text else "quits"))
        self.query_one("#status", Static).update(Text(" · ".join(parts), end=""))

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
        if self.shown:
            target = max(0, min(len(self.shown) - 1, self.cursor_index + delta))
            end = self.offset + self.table.row_count
            if self.offset <= target < end + BATCH:  # within the window, or a batch beyond it
                self._load_rows(target)
                self.table.move_cursor(row=target - self.offset, animate=False)
            else:
                self._window(target)

    def action_open(self) -> None:
        row = self.current
        if row is None:
            self.bell()
            return
        self.selected = row.path
        self.exit(row.path)

    def action_escape(self) -> None:
        # Escape only clears: pressed once too often (after the palette or a dialog closed), it must
        # not end the session. Quitting is ctrl+q, which the footer shows.
        if self.filter_text:
            self.query_one("#filter", Input).value = ""  # (Input.Changed refills the table)
        else:
            self.notify("ctrl+q quits", timeout=2)
