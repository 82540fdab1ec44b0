"""The index kept on disk: a file's row is reused while its path, size and mtime are unchanged.

The cache is one JSON file in platformdirs' user cache directory (`$CTXVIEW_CACHE_DIR` instead,
for tests and benchmarks), written atomically (atomic.write_atomic). A cache that cannot be read
or parsed, or holds another version, is ignored and rebuilt; one that cannot be written is no
error (the index is then built again next time).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

import orjson

from ..atomic import write_atomic
from .index import ROW_FIELDS, SessionRow, index_file
from .places import find_files

__all__ = ["CACHE_ENV", "CACHE_VERSION", "build_index", "cache_path", "load_cache"]

CACHE_ENV = "CTXVIEW_CACHE_DIR"
CACHE_VERSION = 1
_CACHE_NAME = "sessions-index.json"
_MAX_ENTRIES = 100_000
_UNCACHED = "unreadable:"  # a permission can change without the mtime: such rows are read again


def cache_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]) / _CACHE_NAME
    import platformdirs

    return Path(platformdirs.user_cache_dir("ctxview", appauthor=False)) / _CACHE_NAME


def load_cache(path: Path) -> dict[str, list]:
    """{file path: [size, mtime_ns, row fields...]}; empty when the cache is missing, corrupt or old."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or data.get("fields") != list(ROW_FIELDS):
        return {}
    rows = data.get("rows")
    if not isinstance(rows, dict):
        return {}
    return rows


def _save_cache(path: Path, rows: dict[str, list]) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, orjson.dumps({"version": CACHE_VERSION, "fields": list(ROW_FIELDS), "rows": rows}))
    except OSError:
        return False
    return True


def _from_cache(entry: object, size: int, mtime_ns: int) -> SessionRow | None:
    if not isinstance(entry, list) or len(entry) != len(ROW_FIELDS) + 2 or entry[0] != size or entry[1] != mtime_ns:
        return None
    try:
        return SessionRow(*entry[2:])
    except TypeError:
        return None


Progress = Callable[[int, int], None]


def build_index(
    root: str | os.PathLike[str] | None = None,
    *,
    files: Iterable[str] | None = None,
    cache: Path | None | bool = True,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
) -> list[SessionRow]:
    """The listed rows, newest first: of `files`, else of the session files under `root`, else of
    the known places. `cache`: True for cache_path(), a path, or False/None for none. `progress` is
    called with (files done, files in all) now and then."""
    paths = list(files) if files is not None else find_files(root, env=env)
    where = cache_path(env) if cache is True else (cache or None)
    old = load_cache(where) if where is not None else {}
    new: dict[str, list] = {}
    rows: list[SessionRow] = []
    total, changed, seen = len(paths), False, set(paths)
    step = max(1, total // 100)
    for i, path in enumerate(paths):
        if progress is not None and i % step == 0:
            progress(i, total)
        try:
            st = os.stat(path)
        except OSError:
            row = index_file(path)
        else:
            row = _from_cache(old.get(path), st.st_size, st.st_mtime_ns)
            if row is None:
                row = index_file(path, st)
                changed = True
            if not (row.problem or "").startswith(_UNCACHED):
                new[path] = [st.st_size, st.st_mtime_ns, *row.as_list()]
        if row.listed:
            rows.append(row)
    if progress is not None:
        progress(total, total)
    if where is not None and (changed or any(p not in new for p in old if p in seen)):
        # rows of other roots (`ctxview sessions DIR`) are kept, up to a bound
        for path, entry in old.items():
            if path not in seen and len(new) < _MAX_ENTRIES:
                new[path] = entry
        _save_cache(where, new)
    rows.sort(key=lambda r: r.sort_key, reverse=True)
    return rows
