"""The session browser's table and the messages its workers send (browser.py)."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from ctxview.sessions import SessionRow

__all__ = ["status_text", "ContentsProgress", "ContentsReady", "IndexFailed", "IndexNotice", "IndexProgress", "IndexReady",
           "SessionTable"]


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


class ContentsProgress(Message):
    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total


class ContentsReady(Message):
    pass


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


def status_text(app) -> str:
    """The browser's status line: what is listed, how, and what the keys do now."""
    problems = sum(1 for r in app.shown if r.problem)
    noun = "session" if len(app.rows) == 1 else "sessions"
    parts = [f"{len(app.shown):,} of {len(app.rows):,} {noun}" if app.filter_text
             else f"{len(app.rows):,} {noun}"]
    if app.search_text:
        parts.insert(0, "text search")
    if app.view != "list":
        parts.insert(0, f"totals by {app.view}: {len(app.totals):,}")
    elif (app.sort, app.reverse) != ("date", False):
        parts.append(f"by {app.sort} {'↑' if app.reverse else '↓'}")
    if problems:
        parts.append(f"⚠ {problems:,} with a problem")
    unread = sum(1 for r in app.rows if r.path in app.unread) if app.unread else 0
    if unread:  # (their text and usage are not known: a search and the totals cannot count them)
        parts.append(f"⚠ {unread:,} not read whole, left out of search and cost")
    if app.indexing:
        parts.append("indexing…")
    elif app.contents_done is not None:
        done, total = app.contents_done
        parts.append(f"reading text and cost {done:,}/{total:,}")
    if app.view != "day":
        parts.append("Enter opens" if app.view == "list" else "Enter lists the project's")
    parts.append("Esc clears the filter" if app.filter_text else "ctrl+q quits")
    return " · ".join(parts)
