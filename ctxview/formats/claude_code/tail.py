"""A transcript from its last compaction on, found by reading the file from its end.

After a compaction, the next request holds the summary and what follows it: nothing before the
boundary. For a big transcript whose last `compact_boundary` record lies near its end, the
inspector shows that request first from the tail alone (parsing/backwards.py: read in blocks from
the end, nothing before the boundary parsed) and loads the whole file after (tui/workers.load_job).
The tail is loaded by the same loader as the whole file, from the boundary's line on. Its line
numbers count from there: a warning that names one says so.
"""

from __future__ import annotations

import os
from typing import Any

from ctxview.formats.claude_code import load
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input, read_at
from ctxview.formats.parsing.backwards import last_line_start, tail_warnings
from ctxview.model import Session

__all__ = ["MARK", "boundary_line_start", "load_tail"]

MARK = b'"compact_boundary"'


def _is_boundary(rec: Any) -> bool:
    return type(rec) is dict and rec.get("type") == "system" and rec.get("subtype") == "compact_boundary"


def boundary_line_start(path: str, size: int, most: int) -> int | None:
    """The byte offset of the line holding the file's last compact_boundary record, looking no
    further back than `most` bytes from the end; None when there is none there. A line that only
    quotes the mark is passed over."""
    return last_line_start(path, size, most, MARK, _is_boundary)


def load_tail(path: str, lenient: bool = False, share: float = 0.5) -> Session | None:
    """The transcript from its last compaction boundary on, when that boundary lies in the last
    `share` of the file; None when there is none there, when it starts the file, or when the
    loader refuses the tail (the whole file, read next, then says what is wrong)."""
    size = os.stat(path).st_size
    start = boundary_line_start(path, size, int(size * share))
    if not start:
        return None
    data = read_at(path, start, size - start)
    try:
        return tail_warnings(load(Input(path, None, data, len(data)), "jsonl", lenient), start)
    except LoadError:
        return None
