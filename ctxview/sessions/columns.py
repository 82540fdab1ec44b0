"""The index's columns as text, for the browser and `ctxview sessions`: one place for both.

Every value that comes from a session (title, project, model, path) is sanitised here
(sanitize.py), so neither caller can show it raw; none is markup.
"""

from __future__ import annotations

import os

from ctxview.sanitize import sanitize
from ctxview.sessions.index import SessionRow

__all__ = ["COLUMNS", "RowFilter", "cells", "filtered", "human_size", "matches", "table"]

# (header, width or 0 for the rest of the line); what tells sessions apart comes first, so that an
# 80-column terminal shows it
COLUMNS = (("last activity", 16), ("project", 22), ("title", 36), ("msgs", 7), ("size", 9), ("tokens", 8),
           ("format", 11), ("model", 0))


def human_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _when(iso: str | None) -> str:
    return _text(iso[:16].replace("T", " ")) if iso else "?"


def _text(value: str | None) -> str:
    return " ".join(sanitize(value).split()) if value else ""


def _home_short(path: str | None) -> str:
    if not path:
        return ""
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path


def cells(row: SessionRow) -> tuple[str, ...]:
    """The row's cells, in COLUMNS order, safe to print; a problem takes the title's place, marked ⚠."""
    messages = "" if row.messages is None else f"{'≈' if row.messages_estimated else ''}{row.messages:,}"
    title = _text(row.title) or _text(os.path.basename(row.path))
    if row.problem:
        title = f"⚠ {_text(row.problem)} · {title}"
    return (_when(row.updated), _text(_home_short(row.project)), title, messages, human_size(row.size_bytes),
            "" if row.tokens is None else f"{row.tokens:,}", _text(row.format) or "?", _text(row.model))


def _hay(row: SessionRow) -> str:
    return " ".join(filter(None, (row.project, row.title, row.format, row.model, row.path, row.problem))).lower()


def matches(row: SessionRow, words: list[str]) -> bool:
    """Whether every word of a filter is in the row's project, title, format, model or path (any case)."""
    if not words:
        return True
    hay = _hay(row)
    return all(w in hay for w in words)


def filtered(rows: list[SessionRow], text: str) -> list[SessionRow]:
    """The rows a filter keeps (every word of `text`, any case), in order."""
    words = text.lower().split()
    return [r for r in rows if matches(r, words)] if words else list(rows)


class RowFilter:
    """filtered() for a browser that filters at every key: each row's text is made once, a filter that
    extends the last one (a key typed) looks only among the rows that one kept, and the last results
    are kept (a key deleted gives back what was kept before it was typed)."""

    _KEEP = 64  # results kept (about what a few filters typed and deleted make)

    def __init__(self, rows: list[SessionRow]) -> None:
        self.rows = rows
        self._hays: list[str] | None = None
        self._kept: dict[str, list[int]] = {}  # filter words (joined) → indices of the rows it keeps

    def __call__(self, text: str) -> list[SessionRow]:
        words = text.lower().split()
        if not words:
            return list(self.rows)
        key = " ".join(words)
        found = self._kept.get(key)
        if found is None:
            if self._hays is None:
                self._hays = [_hay(r) for r in self.rows]
            hays = self._hays
            # the narrowest kept result whose every word is in one of ours: a superset of our rows
            among = min((kept for k, kept in self._kept.items() if _narrows(k.split(), words)), key=len, default=None)
            candidates = range(len(hays)) if among is None else among
            found = [i for i in candidates if all(w in hays[i] for w in words)]
            if len(self._kept) >= self._KEEP:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = found
        rows = self.rows
        return [rows[i] for i in found]


def _narrows(before: list[str], now: list[str]) -> bool:
    """Whether a row `now` keeps is one `before` kept: each word before is within a word now."""
    return all(any(b in w for w in now) for b in before)


def table(rows: list[SessionRow], width: int = 160) -> str:
    """`ctxview sessions`: a header and one line per row, cut to `width` columns, then the count."""
    def line(values: tuple[str, ...]) -> str:
        parts = [v if not w else (v if len(v) <= w else v[:w - 1] + "…").ljust(w) for v, (_, w) in zip(values, COLUMNS)]
        return " ".join(parts).rstrip()[:width]

    out = [line(tuple(h for h, _ in COLUMNS))]
    out.extend(line(cells(r)) for r in rows)
    problems = sum(1 for r in rows if r.problem)
    out.append(f"{len(rows):,} session{'' if len(rows) == 1 else 's'}" + (f", {problems:,} with a problem (⚠)" if problems else ""))
    return "\n".join(out) + "\n"
