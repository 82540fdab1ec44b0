"""The index's columns as text, for the browser and `ctxview sessions`: one place for both.

Every value that comes from a session (title, project, model, path) is sanitised here
(sanitize.py), so neither caller can show it raw; none is markup.
"""

from __future__ import annotations

import os
from typing import Mapping

from ctxview.sanitize import sanitize
from ctxview.sessions.index import SessionRow

__all__ = ["COLUMNS", "IMPORTANCE", "SORTS", "TOTAL_COLUMNS", "fit_cell", "fit_columns", "fit_total_columns", "sort_rows", "RowFilter", "cells", "filtered", "human_size", "matches", "table", "total_cells",
           "totals_table"]

# (header, width), in the order shown. The title takes what the others leave (TITLE_MIN at least).
COLUMNS = (("last activity", 16), ("project", 22), ("title", 36), ("msgs", 7), ("size", 9), ("tokens", 8),
           ("cost", 9), ("format", 11), ("model", 24))
_NARROWEST = {"title": 20, "project": 14}   # how narrow these two may be made to fit more columns
# Which columns a narrow terminal keeps, most important first: what tells sessions apart, then
# what people sort and total by.
IMPORTANCE = ("last activity", "title", "project", "tokens", "cost", "msgs", "size", "model", "format")
_WIDTH = dict(COLUMNS)

# The sort orders (`sort_rows`), the first the default: key → the column it sorts by.
SORTS = {"date": "last activity", "size": "size", "msgs": "msgs", "tokens": "tokens", "cost": "cost",
         "project": "project", "title": "title"}


def fit_columns(width: int, padding: int = 2, keep: str | None = None) -> tuple[tuple[str, int], ...]:
    """The columns that fit in `width` cells (each takes `padding` more), chosen by IMPORTANCE and
    shown in COLUMNS order (`keep`, the column sorted by, third in importance). The project and the
    title are taken at their narrowest, then what is left widens the title to its width, the project
    to its, and the title up to twice its own."""
    order = list(IMPORTANCE)
    if keep in order and order.index(keep) > 2:
        order.remove(keep)
        order.insert(2, keep)
    chosen: dict[str, int] = {}
    used = 0
    for rank, name in enumerate(order):
        w = _NARROWEST.get(name, _WIDTH[name])
        # past the first five, a column comes only where the title can still have its full width
        short = max(0, _WIDTH["title"] - chosen.get("title", _WIDTH["title"])) if rank >= 5 else 0
        if used + w + padding + short <= width:
            chosen[name] = w
            used += w + padding
    for name, most in (("title", _WIDTH["title"]), ("project", _WIDTH["project"]), ("title", 2 * _WIDTH["title"])):
        if name in chosen:
            more = max(0, min(width - used, most - chosen[name]))
            chosen[name] += more
            used += more
    return tuple((name, chosen[name]) for name, _ in COLUMNS if name in chosen)


def sort_rows(rows: list[SessionRow], key: str, reverse: bool = False,
              cost: Mapping[str, float | None] | None = None) -> list[SessionRow]:
    """The rows in the order `key` (of SORTS) names: dates, sizes, counts and costs largest first,
    project and title A to Z; `reverse` turns it round. A row without the value goes last."""
    cost = cost or {}
    values = {
        "date": lambda r: r.sort_key or None,
        "size": lambda r: r.size_bytes,
        "msgs": lambda r: r.messages,
        "tokens": lambda r: r.tokens,
        "cost": lambda r: cost.get(r.path),
        "project": lambda r: (r.project or "").lower() or None,
        "title": lambda r: (r.title or "").lower() or None,
    }[key]
    largest_first = key not in ("project", "title")
    have = [r for r in rows if values(r) is not None]
    missing = [r for r in rows if values(r) is None]
    have.sort(key=values, reverse=largest_first != reverse)  # (stable: ties keep the index's order)
    return have + missing


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


def cells(row: SessionRow, cost: float | None = None) -> tuple[str, ...]:
    """The row's cells, in COLUMNS order, safe to print; a problem takes the title's place, marked ⚠.
    `cost`: the session's dollars where the contents pass priced it (sessions/contents.py)."""
    messages = "" if row.messages is None else f"{'≈' if row.messages_estimated else ''}{row.messages:,}"
    title = _text(row.title) or _text(os.path.basename(row.path))
    if row.problem:
        title = f"⚠ {_text(row.problem)} · {title}"
    return (_when(row.updated), _text(_home_short(row.project)), title, messages, human_size(row.size_bytes),
            "" if row.tokens is None else f"{row.tokens:,}", _money(cost), _text(row.format) or "?", _text(row.model))


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


def table(rows: list[SessionRow], width: int = 160, cost: Mapping[str, float | None] | None = None) -> str:
    """`ctxview sessions`: a header and one line per row, the columns that fit `width` chosen by
    importance (fit_columns), then the count."""
    shown = fit_columns(width, padding=1)
    at = [i for i, (name, _) in enumerate(COLUMNS) if name in dict(shown)]
    cost = cost or {}

    def line(values: tuple[str, ...]) -> str:
        parts = [fit_cell(name, v, w).ljust(w) for v, (name, w) in zip(values, shown)]
        return " ".join(parts).rstrip()[:width]

    out = [line(tuple(h for h, _ in shown))]
    out.extend(line(tuple(c[i] for i in at)) for c in (cells(r, cost.get(r.path)) for r in rows))
    problems = sum(1 for r in rows if r.problem)
    out.append(f"{len(rows):,} session{'' if len(rows) == 1 else 's'}" + (f", {problems:,} with a problem (⚠)" if problems else ""))
    return "\n".join(out) + "\n"


def _money(usd: float | None) -> str:
    return "" if usd is None else f"${usd:,.2f}"


TOTAL_COLUMNS = (("sessions", 8), ("requests", 9), ("input", 13), ("output", 11), ("cache read", 14),
                 ("cache write", 13), ("cost", 11))
TOTAL_IMPORTANCE = ("cost", "requests", "sessions", "cache read", "input", "output", "cache write")
_KEY_WIDTHS = (18, 40)   # a totals row's key (a project, a day): at least, at most


def fit_total_columns(width: int, padding: int = 2) -> tuple[int, tuple[tuple[str, int], ...]]:
    """(the key's width, the sums' columns that fit beside it, by TOTAL_IMPORTANCE, in
    TOTAL_COLUMNS order); the key takes what is left, up to its widest."""
    narrow, wide = _KEY_WIDTHS
    used = narrow + padding
    chosen = set()
    for name in TOTAL_IMPORTANCE:
        w = dict(TOTAL_COLUMNS)[name] + padding
        if used + w <= width:
            chosen.add(name)
            used += w
    return min(wide, narrow + width - used), tuple(c for c in TOTAL_COLUMNS if c[0] in chosen)


def fit_cell(name: str, value: str, width: int) -> str:
    """A cell cut to `width`: a project keeps its end (the folder's own name), the rest their start."""
    if len(value) <= width:
        return value
    return "…" + value[-(width - 1):] if name == "project" else value[:width - 1] + "…"


def total_cells(t) -> tuple[str, ...]:
    """A Totals row's cells (sessions/contents.py), after its key: safe to print."""
    cost = _money(t.usd) + (" +?" if t.unpriced else "")
    return (f"{t.sessions:,}", f"{t.requests:,}", f"{t.input:,}", f"{t.output:,}", f"{t.cache_read:,}",
            f"{t.cache_write:,}", cost)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def totals_table(totals, by: str, width: int = 160, sessions: int | None = None) -> str:
    """`ctxview sessions --by project|day`: the key, then the sums, right-aligned; then the total
    (`sessions`: how many sessions the totals cover, when a session may count under several keys)."""
    keys = [_text(_home_short(t.key)) for t in totals]
    fitted, shown = fit_total_columns(width, padding=1)
    key_width = max(len(by), min(fitted, max(map(len, keys), default=0)))
    at = [i for i, (name, _) in enumerate(TOTAL_COLUMNS) if (name, dict(TOTAL_COLUMNS)[name]) in shown]

    def line(key: str, values: tuple[str, ...]) -> str:
        key = fit_cell("project", key, key_width)
        return (key.ljust(key_width) + " " + " ".join(values[i].rjust(TOTAL_COLUMNS[i][1]) for i in at)).rstrip()

    out = [line(by, tuple(h for h, _ in TOTAL_COLUMNS))]
    out.extend(line(key, total_cells(t)) for key, t in zip(keys, totals))
    usd = [t.usd for t in totals if t.usd is not None]
    unpriced = sum(t.unpriced for t in totals)
    sessions = sum(t.sessions for t in totals) if sessions is None else sessions
    requests = sum(t.requests for t in totals)
    summary = (f"{_count(len(totals), by)}, {_count(sessions, 'session')}, {_count(requests, 'request')}, "
               f"{_money(sum(usd)) if usd else 'no cost'}")
    if unpriced:
        summary += f" ({unpriced:,} requests on a model without a price)"
    out.append(summary)
    return "\n".join(out) + "\n"
