"""The index kept on disk: a file's row is reused while its path, size and mtime are unchanged.

The cache is one JSON file in platformdirs' user cache directory (`$CTXVIEW_CACHE_DIR` instead,
for tests and benchmarks), written atomically (atomic.write_atomic). It is read as untrusted
input: only a regular file (a FIFO, a device or a link to one is never opened for reading, nor
replaced), at most MAX_CACHE_BYTES, and every row is checked field by field (cache_rows.py) before
it stands for a file. A cache that cannot be used is rebuilt from the session files and said so in
one line (the `notice` callback); one that holds another version is rebuilt silently; one that
cannot be written is no error (the index is then built again next time).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable, Iterable, Mapping

import orjson

from ctxview.atomic import write_atomic
from ctxview.sessions.cache_rows import CACHE_FIELDS, checked_row, entry_of
from ctxview.sessions.index import SessionRow, index_file
from ctxview.sessions.places import find_files
from ctxview.sessions.sample import file_kind

__all__ = ["CACHE_ENV", "CACHE_VERSION", "MAX_CACHE_BYTES", "build_index", "cache_path", "load_cache"]

CACHE_ENV = "CTXVIEW_CACHE_DIR"
CACHE_VERSION = 2  # 2: message counts as the loaders count them, rows checked on reading
MAX_CACHE_BYTES = 64 * 1024 * 1024  # (100,000 rows of a few hundred bytes, with room)
_CACHE_NAME = "sessions-index.json"
_MAX_ENTRIES = 100_000
_UNCACHED = "unreadable:"  # a permission can change without the mtime: such rows are read again

Notice = Callable[[str], None]


def cache_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]) / _CACHE_NAME
    import platformdirs

    return Path(platformdirs.user_cache_dir("ctxview", appauthor=False)) / _CACHE_NAME


class _Unusable(Exception):
    """Why the cache file cannot be used (one line)."""


def _read_bounded(path: Path) -> bytes | None:
    """The cache file's bytes; None when there is none. Never blocks (a FIFO), never reads more than
    MAX_CACHE_BYTES (a device, a sparse file)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Unusable(f"cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Unusable(f"is {file_kind(st.st_mode)}, not a regular file")
        if st.st_size > MAX_CACHE_BYTES:
            raise _Unusable(f"is {st.st_size:,} bytes, more than a cache can be ({MAX_CACHE_BYTES:,})")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_CACHE_BYTES + 1)
        if len(data) > MAX_CACHE_BYTES:  # (grew since its size was read)
            raise _Unusable(f"is more than a cache can be ({MAX_CACHE_BYTES:,} bytes)")
        return data
    except OSError as exc:
        raise _Unusable(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def load_cache(path: Path, notice: Notice | None = None) -> dict[str, list]:
    """{file path: [size, mtime_ns, row fields...]} as stored (each entry checked when used); empty
    when the cache is missing, unusable (`notice` is told why) or of another version."""
    try:
        data = _read_bounded(path)
        if data is None:
            return {}
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise _Unusable("is not valid JSON") from None
    except _Unusable as exc:
        if notice is not None:
            notice(f"session index cache {path} {exc}; not used (the sessions were read from their files)")
        return {}
    if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION or doc.get("fields") != list(CACHE_FIELDS):
        return {}
    rows = doc.get("rows")
    return rows if isinstance(rows, dict) else {}


def _save_cache(path: Path, rows: dict[str, list], other: dict[str, list]) -> bool:
    """Write `rows` and, room allowing, `other` (rows of other roots). A row that JSON cannot hold (a
    path that is not UTF-8) is left out: its file is read again next time."""
    kept = dict(rows)
    for key, entry in other.items():
        if len(kept) >= _MAX_ENTRIES:
            break
        kept.setdefault(key, entry)
    try:
        payload = _dump(kept)
        if len(payload) > MAX_CACHE_BYTES:  # the other roots' rows go first, then the cache itself
            payload = _dump(rows)
            if len(payload) > MAX_CACHE_BYTES:
                return False
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, payload)  # (refuses to replace a FIFO, a device or a link)
    except OSError:
        return False
    return True


def _dump(rows: dict[str, list]) -> bytes:
    doc = {"version": CACHE_VERSION, "fields": list(CACHE_FIELDS), "rows": rows}
    try:
        return orjson.dumps(doc)
    except TypeError:  # a lone surrogate: a file name that is not UTF-8 (Python keeps its bytes so)
        doc["rows"] = {k: v for k, v in rows.items() if _encodable(k, v)}
        return orjson.dumps(doc)


def _encodable(key: str, entry: list) -> bool:
    try:
        orjson.dumps([key, entry])
    except TypeError:
        return False
    return True


Progress = Callable[[int, int], None]


def build_index(
    root: str | os.PathLike[str] | None = None,
    *,
    files: Iterable[str] | None = None,
    cache: Path | None | bool = True,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
    notice: Notice | None = None,
) -> list[SessionRow]:
    """The listed rows, newest first: of `files`, else of the session files under `root`, else of
    the known places. `cache`: True for cache_path(), a path, or False/None for none. `progress` is
    called with (files done, files in all) now and then; `notice` with a line about a cache that
    could not be used, or rows of it that could not."""
    paths = list(files) if files is not None else find_files(root, env=env)
    where = cache_path(env) if cache is True else (cache or None)
    old = load_cache(where, notice) if where is not None else {}
    new: dict[str, list] = {}
    rows: list[SessionRow] = []
    total, changed, seen, bad = len(paths), False, set(paths), 0
    step = max(1, total // 100)
    for i, path in enumerate(paths):
        if progress is not None and i % step == 0:
            progress(i, total)
        try:
            st = os.stat(path)
        except OSError:
            row = index_file(path)
        else:
            entry = old.get(path)
            row = None if entry is None else checked_row(path, entry, st.st_size, st.st_mtime_ns)
            if row is None:
                if entry is not None and checked_row(path, entry) is None:
                    bad += 1  # (not merely out of date: unusable)
                row = index_file(path, st)
                changed = True
            if not (row.problem or "").startswith(_UNCACHED):
                new[path] = entry_of(row, st.st_size, st.st_mtime_ns)
        if row.listed:
            rows.append(row)
    if progress is not None:
        progress(total, total)
    if bad and notice is not None:
        notice(f"session index cache {where}: {bad:,} row{'' if bad == 1 else 's'} of the wrong shape or for "
               "another file; those sessions were read from their files")
    if where is not None and (changed or any(p not in new for p in old if p in seen)):
        # rows of other roots (`ctxview sessions DIR`) are kept, up to a bound, when they are sound
        other = {p: e for p, e in old.items() if p not in seen and checked_row(p, e) is not None}
        _save_cache(where, new, other)
    rows.sort(key=lambda r: r.sort_key, reverse=True)
    return rows
