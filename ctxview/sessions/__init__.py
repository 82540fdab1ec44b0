"""The sessions people have: where agents keep them, and one row per file for the browser.

    places.py       the known places (Claude Code, Codex, Gemini CLI) and the walk of a directory
    index.py        one SessionRow per file, from its head and tail (bounded reads, never a full parse)
    index_cache.py  the rows kept on disk, keyed by path, size and mtime

No terminal libraries here: the browser (tui/browser.py) and `ctxview sessions` (cli/commands.py) show the rows.
"""

from __future__ import annotations

from ctxview.sessions.index import SessionRow, index_file
from ctxview.sessions.index_cache import build_index, cache_path
from ctxview.sessions.places import find_files, known_places

__all__ = ["SessionRow", "build_index", "cache_path", "find_files", "index_file", "known_places"]
