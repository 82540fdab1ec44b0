"""The common transcript in one pass: one conversation, no branches, no side chains.

The general path (scan.py, chain.py, conversation.py) keeps an entry per line so that the chain of
parent links can be walked, then builds the messages from the entries on it. In a file without
branches or side chains that chain is every entry in file order, so here each line becomes its
messages as it is read and no entry is kept (the entries cost a fifth of the load: made, walked and
freed). The rules are the general path's own functions (records, add_user, joined, the Scan's
handling of every other record): only the loop is this module's.

The first line this pass does not handle -- a second message child of one parent (a rewind), a side
chain, a malformed or usage-only record, a key that is not a string -- ends it with None, and the
file is read again by the general path, which stays the reference: tests/test_claude_code_linear.py
checks that both give the same Session.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...model import Conversation
from ..jsonio import SKIP, Input, LineReader
from .conversation import add_user, conversation, joined
from .records import KIND, NODE, assistant_data, user_data
from .scan import Scan


def read_linear(inp: Input, expected: str, lenient: bool) -> tuple[Scan, LineReader, Conversation, list[str]] | None:
    """The scan (what the file says besides its messages), its reader, the conversation and its warnings;
    None when the file needs the general path."""
    reader = LineReader(inp, expected, lenient)
    scan = Scan()
    with reader.raw_lines() as lines:
        found = _messages(scan, lines, reader.bad_line)
    if found is None:
        return None
    reader.read_to(found[0])
    warnings: list[str] = []
    return scan, reader, conversation("main", *found[1:], warnings), warnings


def _messages(scan: Scan, lines: Any, bad_line: Any) -> tuple | None:
    """(the last line's number, messages, compaction specs, unlinked results) of the lines, Scan._run's
    rules and messages_of's at once; None at the first line that needs the general path."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    seen = scan.seen
    seen_add = seen.add
    parented = scan._parented  # parents with a message child: a second child is a branch
    parented_add = parented.add
    entries = scan.entries  # only what _other_record keeps: progress and system lines, boundaries
    other_record = scan._other_record
    out: list[Any] = []  # a Message, or an assistant message's parts (a list) to join at the end
    out_append = out.append
    open_ids: dict[str, list] = {}
    names: dict[str, str] = {}
    boundaries: list[tuple[int, tuple]] = []
    summary_at: set[int] = set()
    unlinked = 0
    last_rec = None
    n = 0
    for raw in lines:
        n += 1
        try:
            rec = loads(raw)
        except decode_error:
            rec = bad_line(raw, n)
            if rec is SKIP:
                continue
        if type(rec) is not dict:
            return None
        rtype = rec.get("type")
        uuid = rec.get("uuid")
        if uuid is not None:
            if type(uuid) is not str:
                return None
            if uuid in seen:
                scan.duplicates += 1
                continue
        if rtype == "assistant":
            msg = rec.get("message")
            if type(msg) is not dict or rec.get("isSidechain") is True:
                return None
            data = assistant_data(rec, msg, uuid)
            parent = rec.get("parentUuid")
            if parent is not None:
                if type(parent) is not str or parent in parented:
                    return None
                parented_add(parent)
            mid = data[0]
            if mid:
                parts = open_ids.get(mid)
                if parts is None:
                    parts = open_ids[mid] = [n, data]
                    out_append(parts)
                else:
                    parts.append(data)
            else:
                out_append([n, data])
            for c in data[4]:
                names[c.id] = c.name
        elif rtype == "user":
            msg = rec.get("message")
            if type(msg) is not dict or rec.get("isSidechain") is True:
                return None
            data = user_data(rec, msg, uuid)
            if data is None:
                return None
            if data[0]:
                tur = rec.get("toolUseResult")
                if type(tur) is dict and type(tur.get("agentId")) is str:  # a Task call's result
                    scan._task_result(tur, data[0][0][0], n)
            parent = rec.get("parentUuid")
            if parent is not None and (data[1] is not None or not data[0]):  # (results are siblings)
                if type(parent) is not str or parent in parented:
                    return None
                parented_add(parent)
            unlinked += add_user(out, data, "line " + str(n), names, summary_at)
        else:
            count = len(entries)
            if other_record(rec, rtype, n if uuid is None else uuid, uuid, n) or scan.sided or scan.branched:
                return None  # (a usage-only line, a side chain, a branch at a compaction boundary)
            if len(entries) > count and entries[-1][KIND] != NODE:
                boundaries.append((len(out), entries[-1]))
            continue
        if uuid is not None:
            seen_add(uuid)
        if last_rec is None:
            scan._meta(rec)
        last_rec = rec
    if last_rec is None:
        return None  # no message: the general path says why
    scan._ended(last_rec)
    return (n, *joined(out, boundaries, summary_at), unlinked)
