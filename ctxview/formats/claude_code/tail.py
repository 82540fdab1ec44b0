"""A transcript from its last compaction on, found by reading the file from its end.

After a compaction, the next request holds the summary and what follows it: nothing before the
boundary. For a big transcript whose last `compact_boundary` record lies near its end, the
inspector shows that request first from the tail alone (read in blocks from the end, nothing
before the boundary parsed) and loads the whole file after (tui/workers.load_job). The tail is
loaded by the same loader as the whole file, from the boundary's line on; its line numbers count
from there.
"""

from __future__ import annotations

import os

import orjson

from ctxview.formats.claude_code import load
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input, read_at
from ctxview.model import Session

__all__ = ["BLOCK", "MARK", "boundary_line_start", "load_tail"]

MARK = b'"compact_boundary"'
BLOCK = 1 << 20
MAX_LINE = 16 << 20


def boundary_line_start(path: str, size: int, most: int) -> int | None:
    """The byte offset of the line holding the file's last compact_boundary record, looking no
    further back than `most` bytes from the end; None when there is none there. A line that only
    quotes the mark (a message about compaction, say) is passed over."""
    end = size
    floor = max(0, size - most)
    carry = b""   # the start of the block after this one: a mark cut by the block's end
    while end > floor:
        start = max(floor, end - BLOCK)
        block = read_at(path, start, end - start) + carry
        at = len(block)
        while True:
            at = block.rfind(MARK, 0, at)
            if at < 0:
                break
            line_start = block.rfind(b"\n", 0, at) + 1
            if line_start == 0 and start > 0:
                break   # the line begins in an earlier block: read on with it
            line_end = block.find(b"\n", at)
            line = block[line_start:line_end if line_end >= 0 else len(block)]
            if _is_boundary(line):
                return start + line_start
        carry = block[:block.find(b"\n") + 1] if b"\n" in block else block
        if len(carry) > MAX_LINE:   # no boundary record is that long: what is carried is no boundary's
            carry = b""
        end = start
    return None


def _is_boundary(line: bytes) -> bool:
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return type(rec) is dict and rec.get("type") == "system" and rec.get("subtype") == "compact_boundary"


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
        return load(Input(path, None, data, len(data)), "jsonl", lenient)
    except LoadError:
        return None
