"""The common transcript in one pass: one conversation, each message hanging off the line before it.

The general path (scan.py, chain.py, conversation.py) keeps an entry per line so that the chain of
parent links can be walked, then builds the messages from the entries on it. In a file where every
message names the line just before it as its parent (tool results aside) there is no branch and the
chain is every entry in file order, so here each line becomes its messages as it is read and no
entry is kept (made, walked and freed, they cost a fifth of the load). The rules are the general
path's own (records.py's line data, conversation.py's messages, the Scan's handling of every other
record); the loop is this module's, with the common user line (one tool result) written out. A user
or assistant line is decoded as a LineFields (line_fields.py: the fields the rules read, the rest
skipped unmade), a plain progress line too; every other line whole, as the general path decodes it.

The first line this pass does not handle -- a message hanging off an earlier line (where a rewind
left a branch, say), a line of a response after the next one started, a side chain, a malformed or
usage-only record, a uuid that is not a string, a tool call whose arguments nest deeper than
MAX_ARGUMENT_DEPTH -- ends it with None, and the file is read again by the general path, which
stays the reference: tests/test_claude_code_linear.py checks that both give the same Session.

Two checks every load of a transcript ends with are done here while each line is in the cache,
where a walk of every message after the load would read them all again (a tenth of the load of a
file of small messages):

- the depth of a call's arguments (argument_depth.check_arguments), measured as its line is read;
- which tool results may carry a persisted preview or load deferred tools (persisted.marked): the
  positions of those whose text starts with its tag or that answer ToolSearch, and of every message
  a less common user line made, so that marked() looks at those alone.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from msgspec import UNSET, ValidationError, convert

from ctxview.model import Conversation
from ctxview.formats.parsing.argument_depth import MAX_ARGUMENT_DEPTH, deeper_than
from ctxview.formats.parsing.builders import EMPTY_META, message
from ctxview.formats.parsing.jsonio import SKIP, Input, LineReader
from ctxview.formats.claude_code.compaction import compaction_spec
from ctxview.formats.claude_code.conversation import add_user, assistant_message, conversation
from ctxview.formats.claude_code.persisted import TAG
from ctxview.formats.claude_code.line_fields import (DECODE_ERRORS, LineFields, decode_fields, decode_record,
                                                     ToolResultFields, plain_progress, progress_record)
from ctxview.formats.claude_code.records import BOUNDARY, KIND, NODE, P, assistant_fields, user_fields
from ctxview.formats.claude_code.scan import Scan


class OnePass(NamedTuple):
    scan: Scan                # what the file says besides its messages
    reader: LineReader
    conversation: Conversation
    warnings: list[str]
    marks: list[int]          # the positions of the messages persisted.marked need look at


def read_linear(inp: Input, expected: str, lenient: bool) -> OnePass | None:
    """The file read in one pass; None when it needs the general path."""
    reader = LineReader(inp, expected, lenient)
    scan = Scan()
    with reader.raw_lines() as lines:
        found = _messages(scan, lines, reader.bad_line)
    if found is None:
        return None
    lineno, messages, specs, unlinked, marks = found
    reader.read_to(lineno)
    warnings: list[str] = []
    return OnePass(scan, reader, conversation("main", messages, specs, unlinked, warnings), warnings, marks)


def _messages(scan: Scan, lines: Any, bad_line: Any) -> tuple | None:
    """(the last line's number, messages, compaction specs, unlinked results, the positions to mark) of
    the lines, Scan._run's rules and messages_of's at once; None at the first line that needs the
    general path."""
    decode, other_line = decode_fields, _other_line
    seen = scan.seen
    seen_add = seen.add
    # The line just before (its uuid), and whether a message hangs off it already: in a file without
    # branches each message names that line as its parent (tool results aside: siblings by design).
    # A string compare, where the general path keeps a table of every parent to find a second child.
    prev = None
    has_child = False
    entries = scan.entries  # only what _other_record keeps: progress and system lines, boundaries
    other_record = scan._other_record
    out: list[Any] = []  # a Message, or an assistant message's parts (a list) to join at the end
    out_append = out.append
    mids: set[str] = set()  # the responses met
    mids_add = mids.add
    open_mid = parts = None  # the response being read, its lines' data (origin first)
    at = 0  # and its place in `out`
    names: dict[str, str] = {}
    boundaries: list[tuple[int, tuple]] = []
    summary_at: set[int] = set()
    unlinked = 0
    marks: list[int] = []
    last = None  # the last message line, and the line decoded whole where it was: its metadata
    n = 0
    for raw in lines:
        n += 1
        # The common line, a user or assistant one, read as LineFields; the rest as _other_record
        # reads them (other_line).
        try:
            line = decode(raw)
        except DECODE_ERRORS:
            line = None
        whole = None  # the line decoded whole, where it was
        if line is not None and ((rtype := line.type) == "assistant" or rtype == "user"):
            uuid = line.uuid
        else:
            rec = other_line(raw, n, bad_line, line)
            if rec is SKIP:
                continue
            if type(rec) is not dict:
                return None
            rtype, uuid = rec.get("type"), rec.get("uuid")
            line = None
            if rtype == "assistant" or rtype == "user":
                # read by bad_line() alone (a lone surrogate, a byte order mark): its fields from the record;
                # refused where its message is not an object (the general path says so)
                try:
                    line = convert(rec, LineFields)
                except ValidationError:
                    return None
                whole = rec
        if uuid is not None:
            if type(uuid) is not str:
                return None
            if uuid in seen:
                scan.duplicates += 1
                continue
        if rtype == "assistant":
            msg = line.message
            if msg is None or line.isSidechain is True:
                return None
            data = assistant_fields(msg.content, msg.id, msg.model, msg.usage, line.costUSD, line.isApiErrorMessage,
                                    line.timestamp, uuid)
            parent = line.parentUuid
            if parent is not None:
                if parent != prev or has_child:
                    return None
                has_child = True
            mid = data[0]
            if mid is None:  # a message of its own
                out_append(assistant_message([n, data]))
            elif mid == open_mid:  # the next line of the response being read
                parts.append(data)
            else:
                # A response is made into its message when the next one starts, while its lines are
                # still in the cache; a line of it after that (never seen) is for the general path.
                if mid in mids:
                    return None
                mids_add(mid)
                if parts is not None:
                    out[at] = assistant_message(parts)
                open_mid, parts, at = mid, [n, data], len(out)
                out_append(parts)
            for c in data[4]:
                names[c.id] = c.name
                if deeper_than(c.arguments, MAX_ARGUMENT_DEPTH):
                    return None  # (the general path's load refuses it, naming the message)
        elif rtype == "user":
            msg = line.message
            if msg is None or line.isSidechain is True:
                return None
            content = msg.content
            b = content[0] if type(content) is list and len(content) == 1 else None
            tur = None
            if type(tur_fields := line.toolUseResult) is ToolResultFields and tur_fields.agentId is not UNSET:
                # (a Task call's result, maybe: ToolResultFields)
                whole = whole or _whole(raw)
                if whole is None:
                    return None
                tur = whole["toolUseResult"]
            if (type(b) is dict and b.get("type") == "tool_result" and type(tid := b.get("tool_use_id")) is str
                    and type(result := b.get("content")) is str and tur is None):
                # Most user lines: one tool result, its text a string, not a sub-agent's. user_data's and
                # add_user's message for it, made here (a third of the lines: two calls and a tuple each).
                name = names.get(tid)
                if name is None:
                    unlinked += 1
                if name == "ToolSearch" or result.startswith(TAG):
                    marks.append(len(out))
                out_append(message("tool", result, tid, (), None, name, None, None, False, "line " + str(n), uuid,
                                   {"is_error": True} if b.get("is_error") is True else EMPTY_META))
            else:
                data = user_fields(content, line.isMeta, line.isCompactSummary, uuid)
                if data is None:
                    return None
                if data[0] and tur is not None and type(tur.get("agentId")) is str:  # a Task call's result
                    scan._task_result(tur, data[0][0][0], n)
                parent = line.parentUuid
                if parent is not None and (data[1] is not None or not data[0]):  # (results are siblings)
                    if parent != prev or has_child:
                        return None
                    has_child = True
                first = len(out)
                unlinked += add_user(out, data, "line " + str(n), names, summary_at)
                marks.extend(range(first, len(out)))
        else:
            count = len(entries)
            if other_record(rec, rtype, n if uuid is None else uuid, uuid, n) or scan.sided:
                return None  # (a usage-only line, a side chain)
            if len(entries) > count and entries[-1][KIND] != NODE:
                e = entries[-1]
                if e[KIND] == BOUNDARY and e[P] is not None:  # a compaction hangs off the line before it too
                    if e[P] != prev or has_child:
                        return None
                    has_child = True
                boundaries.append((len(out), e))
            if uuid is not None:
                prev, has_child = uuid, False
            continue
        if uuid is not None:
            seen_add(uuid)
            prev, has_child = uuid, False
        if last is None:
            # (decoded whole for what LineFields skip: where the session ran, by the same rules)
            whole = whole or _whole(raw)
            if whole is None:
                return None
            scan._meta(whole)
        last = (raw, whole)
    if last is None:
        return None  # no message: the general path says why
    if parts is not None:
        out[at] = assistant_message(parts)
    whole = last[1] or _whole(last[0])
    if whole is None:
        return None
    scan._ended(whole)
    return n, out, [compaction_spec(index, e, out, summary_at) for index, e in boundaries], unlinked, marks


def _other_line(raw: bytes, n: int, bad_line: Any, line: LineFields | None) -> Any:
    """A line that is not a user or assistant one as LineFields read it (`line`; None: refused), as
    _other_record reads it: a plain progress line from its LineFields, the rest decoded whole (SKIP
    where bad_line() says so)."""
    if line is not None and plain_progress(line):
        return progress_record(line)
    return _record(raw, n, bad_line)


def _record(raw: bytes, n: int, bad_line: Any) -> Any:
    """The line decoded whole, as the general path decodes it (scan.py); SKIP where bad_line says so."""
    try:
        return decode_record(raw)
    except DECODE_ERRORS:
        return bad_line(raw, n)


def _whole(raw: bytes) -> dict | None:
    """A message line decoded whole; None where only bad_line() would read it (the general path's)."""
    try:
        return decode_record(raw)
    except DECODE_ERRORS:
        return None
