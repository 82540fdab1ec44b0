"""What the browser knows of a session beyond its head and tail: its text, searchable, and what
its recorded usage cost, by day.

Both come from reading each file whole with its loader, once: the results are kept in an SQLite
database beside the index cache (`sessions-contents.sqlite`), a file's rows reused while its size
and mtime are unchanged, so a second start searches and totals at once. The text is an FTS5 table
(the standard library's sqlite3, as claude-code-log and agentsview do); the usage is summed per
file and per day of its requests (UTC), priced with the price table (analysis/prices.py).

The database is the cache's, never a session's: a session file is only read. A database that
cannot be used (not a regular file, corrupt, another version) is built anew, and said so in one
line; one that cannot be written, or no cache at all, leaves the contents in a temporary
database for this run (each thread has its own connection, which an in-memory one cannot share).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import tempfile
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ctxview.analysis.prices import PriceTable, cost_of, dollars
from ctxview.analysis.usage import RecordedRequest, UsageTotals, recorded_requests
from ctxview.formats import load_session
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.json_encode import compact_json
from ctxview.sanitize import utf8_text
from ctxview.sessions.index import UNKNOWN_FORMAT, SessionRow
from ctxview.sessions.row_values import iso

__all__ = ["CONTENTS_VERSION", "MAX_FILE_BYTES", "MAX_TEXT_CHARS", "Contents", "Totals", "contents_path", "fts_query", "text_of"]

# 2: the text's rowid is its file's id (a delete by path scanned the whole table); 3: usage by request
# where the harness names its requests (a request a copied session holds again counts once)
CONTENTS_VERSION = 3
MAX_TEXT_CHARS = 2_000_000       # of one file's text: a search needs words, not every byte of a 1 GB log
MAX_FILE_BYTES = 512 * 2**20     # a larger file is not read whole in the background (its row says so)
_NAME = "sessions-contents.sqlite"
_COMMIT_EVERY = 50               # files: a search during the build sees what is done

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT UNIQUE, size INTEGER, mtime_ns INTEGER,"
    " problem TEXT)",
    # a file's recorded usage by day, every request of it
    "CREATE TABLE IF NOT EXISTS days (path TEXT, day TEXT, requests INTEGER, input INTEGER, output INTEGER,"
    " cache_read INTEGER, cache_write INTEGER, usd REAL, unpriced INTEGER)",
    "CREATE INDEX IF NOT EXISTS days_path ON days(path)",
    # each request the harness names (`request`: its key), to count once one that several files hold
    "CREATE TABLE IF NOT EXISTS named (path TEXT, request INTEGER, day TEXT, input INTEGER, output INTEGER,"
    " cache_read INTEGER, cache_write INTEGER, usd REAL, unpriced INTEGER)",
    "CREATE INDEX IF NOT EXISTS named_path ON named(path)",
    "CREATE INDEX IF NOT EXISTS named_request ON named(request)",
    # the keys some file held beside another (a file gone since may leave one: it only costs a look)
    "CREATE TABLE IF NOT EXISTS repeated (request INTEGER PRIMARY KEY)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5(path UNINDEXED, text, tokenize='unicode61 remove_diacritics 2')",
)


# The named requests that several of the listed files hold, each holder's row, in request order.
_REPEATS = """
SELECT request, path, day, input, output, cache_read, cache_write, usd, unpriced FROM named
WHERE request IN (SELECT request FROM repeated) AND path IN (SELECT path FROM listed)
ORDER BY request, path
"""


def _column(path: str) -> str | bytes:
    """A path as the tables hold it: its text, or the bytes of a name that is not UTF-8 (Python
    keeps those bytes as lone surrogates, which SQLite's text cannot hold)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path)
    return path


def _path(value: str | bytes) -> str:
    """The path a table's value names (_column's inverse)."""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def contents_path(index_cache: Path) -> Path:
    """Where the contents are kept: beside the index cache (sessions/index_cache.cache_path)."""
    return index_cache.parent / _NAME


def text_of(session) -> str:
    """The words of a session a search looks in: every message's text and its tool calls' names and
    arguments, over every conversation, at most MAX_TEXT_CHARS."""
    parts: list[str] = []
    size = 0
    for conv in session.conversations:
        for m in conv.messages:
            text = m.text
            if text:
                parts.append(text)
                size += len(text)
            for call in m.tool_calls:
                args = call.arguments
                parts.append(f"{call.name or ''} {compact_json(args) if args else ''}")
                size += len(parts[-1])
            if size >= MAX_TEXT_CHARS:
                return "\n".join(parts)[:MAX_TEXT_CHARS]
    return "\n".join(parts)


def fts_query(text: str) -> str | None:
    """An FTS5 query for what the user typed: every word, as a prefix, all of them (None: no word).
    Each word is quoted, so that no character of it is FTS5 syntax."""
    words = [w for w in text.split() if w.strip('"')]
    if not words:
        return None
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


@dataclass(frozen=True, slots=True)
class Totals:
    """Recorded usage and its cost over some sessions (a project's, a day's)."""

    key: str
    sessions: int = 0
    requests: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    usd: float | None = None     # None: nothing priced
    unpriced: int = 0            # requests on a model without a price

    def to_json(self, by: str) -> dict:
        return {by: self.key, "sessions": self.sessions, "requests": self.requests, "input": self.input,
                "output": self.output, "cache_read": self.cache_read, "cache_write": self.cache_write,
                "usd": None if self.usd is None else round(self.usd, 6), "unpriced_requests": self.unpriced}


def _day(timestamp: str | None) -> str:
    """The UTC day of a recorded time ("2026-03-02"), or "unknown" for one that is no time."""
    when = iso(timestamp)
    return when[:10] if when is not None else "unknown"


# The harnesses whose message ids name a request wherever it is written: Claude Code writes the
# history of a session it continues into the new session's file again (ccusage counts each message
# id and request once for this reason).
_NAMED_REQUESTS = frozenset({"claude-code"})


def _request_key(message_id: str) -> int:
    """A request's key in the usage table: 64 bits of a hash of its message id (a collision among a
    million requests is about one chance in 30 million)."""
    return int.from_bytes(hashlib.blake2b(message_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "big", signed=True)


def _usage_rows(session, prices: PriceTable) -> tuple[list[tuple], list[tuple]]:
    """The session's recorded requests: (day, requests, input, output, cache_read, cache_write, usd or
    None, unpriced) by day, the usage module's sums and the price table's cost; and (request key, day,
    input, output, cache_read, cache_write, usd or None, unpriced) of each the harness names."""
    named_ids = session.format in _NAMED_REQUESTS
    by_day: dict[str, list[RecordedRequest]] = {}
    named: list[tuple] = []
    for conv in session.conversations:
        for r in recorded_requests(conv):
            day = _day(r.timestamp)
            by_day.setdefault(day, []).append(r)
            message_id = conv.messages[r.index].id if named_ids else None
            if message_id:
                u, usd = r.usage, prices.cost(r.usage, r.model, r.timestamp)
                named.append((_request_key(message_id), day, u.input_tokens, u.output_tokens, u.cache_read_tokens,
                              u.cache_write_tokens, _unrounded(usd), int(usd is None)))
    return [(day, *_sums(requests, prices)) for day, requests in by_day.items()], named


_SQLITE_INTEGERS = range(-2**63, 2**63)


def _fit_integers(*tables: list[tuple]) -> None:
    """ValueError where a count in the rows is past what SQLite holds (a 64-bit integer): the file's
    problem then, in place of a traceback."""
    for rows in tables:
        for row in rows:
            for v in row:
                if type(v) is int and v not in _SQLITE_INTEGERS:
                    raise ValueError("a usage count past 64 bits, which the totals cannot hold")


def _sums(requests: list[RecordedRequest], prices: PriceTable) -> tuple:
    u = UsageTotals.of(r.usage for r in requests)
    cost = cost_of(((r.usage, r.model, r.timestamp) for r in requests), prices)
    return u.requests, u.input, u.output, u.cache_read, u.cache_write, _unrounded(cost.usd), cost.unpriced_requests


def _unrounded(usd: Decimal | None) -> float | None:
    # (stored unrounded: a repeated request's cost taken off a day's sum leaves no rounding behind;
    # the totals are rounded once, as the reports round a cost)
    return None if usd is None else float(usd)


class Contents:
    """The contents database: `update(rows)` reads what changed (in a worker thread), `search` and
    `totals` answer from what is there (from any thread: each has its own connection)."""

    def __init__(self, path: Path | None, notice: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._notice = notice
        self._local = threading.local()
        self._scratch: tempfile.TemporaryDirectory | None = None
        if path is not None:
            self._check_file(path)
        if self.path is None:
            self._use_scratch()

    def _use_scratch(self) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="ctxview-contents-")
        self.path = Path(self._scratch.name) / _NAME

    # -- the database ------------------------------------------------------------------
    def _say(self, text: str) -> None:
        if self._notice is not None:
            self._notice(text)

    def _check_file(self, path: Path) -> None:
        """A path that is no regular file is not opened; a database of another version or a corrupt
        one is removed (it is the cache's own)."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        except OSError as exc:
            self._say(f"{path}: cannot be read ({exc.strerror or exc}); the contents are kept for this run only")
            self.path = None
            return
        if not stat.S_ISREG(st.st_mode):
            self._say(f"{path}: not a regular file; the contents are kept for this run only")
            self.path = None
            return
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                db.execute("SELECT count(*) FROM files").fetchone()
        except sqlite3.DatabaseError as exc:
            self._say(f"{path}: cannot be used ({exc}); built anew")
            version = None
        if version != CONTENTS_VERSION:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{path}{suffix}")
                except FileNotFoundError:
                    pass
                except OSError:
                    self.path = None

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is not None:
            return db
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            self._init(db)
        except (sqlite3.Error, OSError) as exc:
            if self._scratch is not None:
                raise
            self._say(f"{self.path}: cannot be written ({exc}); the contents are kept for this run only")
            self._use_scratch()
            return self._connect()
        self._local.db = db
        return db

    @staticmethod
    def _init(db: sqlite3.Connection) -> None:
        for statement in _SCHEMA:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {CONTENTS_VERSION}")
        db.commit()

    # -- building ----------------------------------------------------------------------
    def update(self, rows: Sequence[SessionRow], progress: Callable[[int, int], None] | None = None,
               prices: PriceTable | None = None, stop: Callable[[], bool] | None = None) -> int:
        """Read every listed session whose size or mtime changed since it was read (all, the first
        time); forget the files no longer listed. Returns how many were read."""
        db = self._connect()
        prices = prices or PriceTable()
        known = {_path(p): (s, m) for p, s, m in db.execute("SELECT path, size, mtime_ns FROM files")}
        wanted = {r.path: r for r in rows if r.format is not None}
        gone = [p for p in known if p not in wanted]
        for chunk in _chunks([_column(p) for p in gone], 500):
            marks = ",".join("?" * len(chunk))
            db.execute(f"DELETE FROM body WHERE rowid IN (SELECT id FROM files WHERE path IN ({marks}))", chunk)
            db.execute(f"DELETE FROM days WHERE path IN ({marks})", chunk)
            db.execute(f"DELETE FROM named WHERE path IN ({marks})", chunk)
            db.execute(f"DELETE FROM files WHERE path IN ({marks})", chunk)
        todo = [r for p, r in wanted.items() if known.get(p) != (r.size_bytes, r.mtime_ns)]
        total = len(todo)
        for done, row in enumerate(todo, 1):
            if stop is not None and stop():
                break
            self._read(db, row, prices)
            if done % _COMMIT_EVERY == 0 or done == total:
                db.commit()
            if progress is not None:
                progress(done, total)
        db.commit()
        return total

    def _read(self, db: sqlite3.Connection, row: SessionRow, prices: PriceTable) -> None:
        problem = None
        text = ""
        days: list[tuple] = []
        named: list[tuple] = []
        try:
            if row.format == UNKNOWN_FORMAT:   # (listed for its problem: no loader reads it)
                raise LoadError(row.path, row.problem or "not a session file ctxview reads")
            if row.size_bytes > MAX_FILE_BYTES:
                raise LoadError(row.path, f"{row.size_bytes:,} bytes, more than the background pass reads "
                                          f"({MAX_FILE_BYTES:,}); open it to see it")
            session = load_session(row.path, row.format, lenient=True)
            text = utf8_text(text_of(session))   # (SQLite takes no lone surrogate)
            found = _usage_rows(session, prices)
            _fit_integers(*found)
            days, named = found
        except LoadError as exc:
            problem = str(exc)
        except (MemoryError, RecursionError, ValueError, OSError) as exc:
            problem = f"{row.path}: {type(exc).__name__}: {exc}"
        problem = utf8_text(problem) if problem is not None else None   # (it may quote a name that is not UTF-8)
        # (the text is found by its file's id: a delete by its unindexed path would read every text)
        path = _column(row.path)
        known = db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if known is None:
            file_id = db.execute("INSERT INTO files (path, size, mtime_ns, problem) VALUES (?, ?, ?, ?)",
                                 (path, row.size_bytes, row.mtime_ns, problem)).lastrowid
        else:
            file_id = known[0]
            db.execute("UPDATE files SET size = ?, mtime_ns = ?, problem = ? WHERE id = ?",
                       (row.size_bytes, row.mtime_ns, problem, file_id))
            db.execute("DELETE FROM body WHERE rowid = ?", (file_id,))
            db.execute("DELETE FROM days WHERE path = ?", (path,))
            db.execute("DELETE FROM named WHERE path = ?", (path,))
        db.executemany("INSERT INTO days VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(path, *values) for values in days])
        if named:
            db.executemany("INSERT INTO named VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(path, *values) for values in named])
            db.execute("INSERT OR IGNORE INTO repeated SELECT request FROM named WHERE request IN "
                       "(SELECT request FROM named WHERE path = ?) GROUP BY request HAVING count(*) > 1", (path,))
        if text:
            db.execute("INSERT INTO body (rowid, path, text) VALUES (?, ?, ?)", (file_id, path, text))

    # -- answering ---------------------------------------------------------------------
    def known(self) -> int:
        return self._connect().execute("SELECT count(*) FROM files").fetchone()[0]

    def search(self, text: str) -> set[str] | None:
        """The paths whose text holds every word typed (as word prefixes, any case); None when
        nothing was typed. Unranked: the list shows them in its own order (ranking every match
        by bm25, or reading the path from the text table, costs ten to twenty times the match)."""
        query = fts_query(text)
        if query is None:
            return None
        try:
            found = self._connect().execute(
                "SELECT path FROM files WHERE id IN (SELECT rowid FROM body WHERE body MATCH ?)", (query,)).fetchall()
        except sqlite3.OperationalError:
            return set()
        return {_path(p) for (p,) in found}

    def unread(self) -> dict[str, str]:
        """The files that could not be read whole, and why (one line each): their text, usage and
        cost are not known, so a search, the totals and the cost column leave them out."""
        return {_path(p): problem for p, problem in
                self._connect().execute("SELECT path, problem FROM files WHERE problem IS NOT NULL")}

    def cost_by_path(self) -> dict[str, float | None]:
        """Each file's dollars (None: nothing priced)."""
        out: dict[str, float | None] = {}
        for path, usd in self._connect().execute("SELECT path, sum(usd) FROM days GROUP BY path"):
            out[_path(path)] = usd
        return out

    def sessions_with_usage(self, rows: Iterable[SessionRow]) -> int:
        """How many of the listed sessions recorded usage (a session of several days counts once)."""
        listed = {r.path for r in rows}
        return sum(1 for (p,) in self._connect().execute("SELECT DISTINCT path FROM days") if _path(p) in listed)

    def _repeats(self, paths: Iterable[str]) -> list[tuple]:
        """(request, path, day, input, output, cache_read, cache_write, usd, unpriced) of each named
        request that more than one of the files `paths` names holds, every holder's row, in order."""
        db = self._connect()
        db.execute("CREATE TEMP TABLE IF NOT EXISTS listed (path PRIMARY KEY)")
        db.execute("DELETE FROM listed")
        db.executemany("INSERT OR IGNORE INTO listed VALUES (?)", [(_column(p),) for p in paths])
        try:
            return db.execute(_REPEATS).fetchall()
        finally:
            db.execute("DELETE FROM listed")
            db.commit()

    def totals(self, rows: Iterable[SessionRow], by: str) -> list[Totals]:
        """The usage of the listed sessions summed by "project" (the row's) or "day" (each
        request's, UTC), the most expensive first."""
        if by not in ("project", "day"):
            raise ValueError(f"totals by project or day, not {by!r}")
        project = {r.path: r.project or "(none)" for r in rows}
        sums: dict[str, list] = {}
        sessions: dict[str, set[str]] = {}
        for path, day, *values in self._connect().execute("SELECT * FROM days"):
            path = _path(path)
            if path not in project:
                continue
            key = project[path] if by == "project" else day
            acc = sums.setdefault(key, [0, 0, 0, 0, 0, None, 0])
            for k in (0, 1, 2, 3, 4, 6):
                acc[k] += values[k]
            if values[5] is not None:
                acc[5] = (acc[5] or 0.0) + values[5]
            sessions.setdefault(key, set()).add(path)
        # a request several listed files hold (a continued session's history) counts once: for the
        # first of them by path, and is taken off the others' sums
        first = None
        for request, path, day, *values in self._repeats(project):
            if request != first:
                first = request
                continue
            acc = sums[project[_path(path)] if by == "project" else day]
            acc[0] -= 1
            for k, v in zip((1, 2, 3, 4, 6), (*values[:4], values[5])):
                acc[k] -= v
            if values[4] is not None and acc[5] is not None:
                acc[5] -= values[4]
        for acc in sums.values():
            if acc[5] is not None:   # (+ 0.0: a sum that came to nothing is 0, not -0)
                acc[5] = dollars(Decimal(repr(acc[5]))) + 0.0
        out = [Totals(key, len(sessions[key]), *acc) for key, acc in sums.items()]
        if by == "day":
            out.sort(key=lambda t: (t.key != "unknown", t.key), reverse=True)   # (the newest first; unknown last)
        else:
            out.sort(key=lambda t: (-(t.usd or 0.0), t.key))
        return out


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def open_contents(env: Mapping[str, str] | None = None, notice: Callable[[str], None] | None = None,
                  cache: bool = True) -> Contents:
    """The contents database beside the index cache (in memory with cache=False)."""
    from ctxview.sessions.index_cache import cache_path

    return Contents(contents_path(cache_path(env)) if cache else None, notice)
