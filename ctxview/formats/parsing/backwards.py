"""Finding a file's last line of one kind by reading it from its end, in blocks.

A harness marks a compaction with a record of its own (Claude Code's `compact_boundary`, Codex's
`compacted`). The request after it holds nothing from before it, so the view a user opens on can
be built from the lines that follow the last one: found here without parsing what lies before.
A line is a candidate when it holds `mark`; `accept` (given the parsed record) says whether it
is the record itself or only quotes the mark (a message about compaction, say).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import orjson

from ctxview.formats.inputs import open_read_only, read_at
from ctxview.formats.parsing.json_decode import loads
from ctxview.model import Session

__all__ = ["BLOCK", "MAX_LINE", "first_line", "last_line_start", "last_record", "tail_warnings"]

BLOCK = 1 << 20
MAX_LINE = 16 << 20   # no record looked for is longer: a longer line carried over is no candidate


def last_line_start(path: str, end: int, most: int, mark: bytes, accept: Callable[[Any], bool]) -> int | None:
    """The byte offset of the last line before `end` that holds `mark` and whose record `accept`
    takes, looking no further back than `most` bytes from `end`; None when there is none there."""
    found = _last(path, end, most, mark, accept)
    return None if found is None else found[0]


def last_record(path: str, end: int, most: int, mark: bytes, accept: Callable[[Any], bool]) -> Any:
    """The record of that line (last_line_start), or None."""
    found = _last(path, end, most, mark, accept)
    return None if found is None else found[1]


def _last(path: str, end: int, most: int, mark: bytes, accept: Callable[[Any], bool]) -> tuple[int, Any] | None:
    floor = max(0, end - most)
    carry = b""   # the start of the block after this one: a line cut by the block's end
    # One buffer for every block, the carry copied in after it: a new bytes object per block (and
    # block + carry, another) would fault its pages in anew, which cost more than the search.
    buf = bytearray()
    with open_read_only(path) as f:
        while end > floor:
            start = max(floor, end - BLOCK)
            size = end - start
            if len(buf) < size + len(carry):
                buf = bytearray(size + len(carry))
            got = _read_into(f, memoryview(buf)[:size], start)   # (short only when the file shrank)
            n = got + len(carry)
            buf[got:n] = carry
            at = n
            while True:
                at = buf.rfind(mark, 0, at)
                if at < 0:
                    break
                line_start = buf.rfind(b"\n", 0, at) + 1
                if line_start == 0 and start > 0:
                    break   # the line begins in an earlier block: read on with it
                line_end = buf.find(b"\n", at, n)
                rec = _record(buf[line_start:line_end if line_end >= 0 else n])
                if accept(rec):
                    return start + line_start, rec
            nl = buf.find(b"\n", 0, n)
            carry = bytes(buf[:nl + 1 if nl >= 0 else n])
            if len(carry) > MAX_LINE:
                carry = b""
            end = start
    return None


def _read_into(f: Any, view: memoryview, offset: int) -> int:
    """Fill `view` from byte `offset` of the file; the bytes read (fewer at its end)."""
    f.seek(offset)
    got = 0
    while got < len(view):
        k = f.readinto(view[got:])
        if not k:
            break
        got += k
    return got


def first_line(path: str, size: int) -> Any:
    """The record on the file's first line (None when it is not JSON or longer than MAX_LINE)."""
    head = read_at(path, 0, min(size, 1 << 16))   # (most first lines fit: MAX_LINE is read only if not)
    if b"\n" not in head and len(head) < size:
        head = read_at(path, 0, min(size, MAX_LINE))
    nl = head.find(b"\n")
    return _record(head if nl < 0 else head[:nl])


def _record(line: bytes) -> Any:
    try:
        return loads(line)
    except orjson.JSONDecodeError:
        return None


def tail_warnings(session: Session, start: int) -> Session:
    """`session`, read from byte `start` on, with its warnings saying where their lines count from."""
    if not session.warnings:
        return session
    where = f"in the part after the last compaction (lines counted from byte {start:,}): "
    return dataclasses.replace(session, warnings=tuple(where + w for w in session.warnings))
