"""A Codex rollout from its last compaction on, found by reading the file from its end.

A `compacted` record replaces the history with its `replacement_history` (or, in older rollouts,
its summary): the next request holds nothing from before it. What the lines after it need from
before is state, not messages: the session's instructions (its `session_meta`, the first line),
the turn's model and truncation policy (the last `turn_context`) and the last token count (Codex
repeats it at a turn's start, and the loader drops the repeat). The tail is loaded by the same
loader as the whole file with those three records read first; its line numbers count from the
compaction, and a warning that names one says so.
"""

from __future__ import annotations

import os
from typing import Any

from ctxview.formats.codex import load
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input, read_at
from ctxview.formats.parsing.backwards import first_line, last_line_start, last_record, tail_warnings
from ctxview.model import Session

__all__ = ["MARK", "STATE_REACH", "compacted_line_start", "load_tail"]

MARK = b'"compacted"'
# How far before the compaction the turn's state is looked for (Codex writes it at every turn):
# a rollout without it there, and longer before, is read whole.
STATE_REACH = 64 << 20


def _envelope(kind: str):
    def accept(rec: Any) -> bool:
        return type(rec) is dict and rec.get("type") == kind and type(rec.get("payload")) is dict
    return accept


_IS_COMPACTED, _IS_SESSION_META, _IS_TURN_CONTEXT, _IS_EVENT = map(
    _envelope, ("compacted", "session_meta", "turn_context", "event_msg"))


def _is_token_count(rec: Any) -> bool:
    if not _IS_EVENT(rec):
        return False
    payload = rec["payload"]
    return payload.get("type") == "token_count" and type(payload.get("info")) is dict


def compacted_line_start(path: str, size: int, most: int) -> int | None:
    """The byte offset of the rollout's last `compacted` record, no further back than `most` bytes
    from the end; None when there is none there."""
    return last_line_start(path, size, most, MARK, _IS_COMPACTED)


def load_tail(path: str, lenient: bool = False, share: float = 0.5) -> Session | None:
    """The rollout from its last `compacted` record on, when that lies in the last `share` of the
    file, after a session_meta line, with the turn's state found within STATE_REACH before it (or
    none in the whole file before it); None otherwise, or when the loader refuses the
    tail (the whole file, read next, then says what is wrong)."""
    size = os.stat(path).st_size
    start = compacted_line_start(path, size, int(size * share))
    if not start:
        return None
    head = first_line(path, size)
    if not _IS_SESSION_META(head):
        return None
    turn = last_record(path, start, STATE_REACH, b'"turn_context"', _IS_TURN_CONTEXT)
    count = last_record(path, start, STATE_REACH, b'"token_count"', _is_token_count)
    if (turn is None or count is None) and start > STATE_REACH:
        return None   # (there may be one further back)
    data = read_at(path, start, size - start)
    try:
        session = load(Input(path, None, data, len(data)), "jsonl", lenient, prelude=(head, turn, count))
    except LoadError:
        return None
    return tail_warnings(session, start)
