"""Claude Code transcripts: ~/.claude/projects/<project>/<session>.jsonl.

Each line is a record. The conversation is the chain of parentUuid links
ending at the last record, not the line order: a rewind leaves the
abandoned branch in the file. Records repeated by a resumed session (same
uuid) are dropped; the several lines of one streamed response (same
message.id) become one assistant message whose usage counts once. Side
chains, and sub-agent files in <session>/subagents/agent-*.jsonl, are
conversations of their own. compact_boundary records become compaction
events. Record types ctxview does not know are skipped and counted.

Also reads the web export {"loglines": [...]} and a JSON list of records.

The work is split by concern: records (what one line holds), scan (one pass
over the lines), chain (the path to the last message, side chains),
compaction (compact and microcompact boundaries), conversation (messages in
model order), subagents (their files, progress lines and Task calls). A file
of JSON lines is read first by linear, which makes the messages in the same
pass for the common transcript (no branch, no side chain) and hands any
other file to the path above.
"""

from __future__ import annotations

from typing import Any

from ctxview.model import Conversation, Session
from ctxview.formats.contract import ModuleFormat
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.argument_depth import check_arguments
from ctxview.formats.parsing.jsonio import Input, LineReader, load_document
from ctxview.formats.parsing.linking import usage_only_warning
from ctxview.formats.claude_code.conversation import build, scan_warnings
from ctxview.formats.claude_code.linear import read_linear
from ctxview.formats.claude_code.persisted import marked
from ctxview.formats.claude_code.records import ASSISTANT, KIND, SNIFF_TYPES, is_usage_record, str_or_none
from ctxview.formats.claude_code.scan import Scan, scan_lines
from ctxview.formats.claude_code.subagents import subagent_files, with_subagents

FORMAT = "claude-code"
EXPECTED = "Claude Code transcript"


def sniff_record(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if "type" not in rec:
        return is_usage_record(rec)
    return str_or_none(rec.get("type")) in SNIFF_TYPES and (
        "uuid" in rec or "sessionId" in rec or "leafUuid" in rec or "messageId" in rec
        or isinstance(rec.get("message"), dict))


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict):
        return isinstance(doc.get("loglines"), list) or sniff_record(doc)
    if isinstance(doc, list) and doc:
        head = [r for r in doc[:20] if isinstance(r, dict)]
        return bool(head) and all(str_or_none(r.get("type")) in SNIFF_TYPES for r in head) and any(
            isinstance(r.get("message"), dict) for r in head)
    return False


def records_of(doc: Any, name: str) -> tuple[list, str | None]:
    """The records of a JSON document, and the JSON pointer their index follows (None: one record, line 1)."""
    if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):
        return doc["loglines"], "/loglines/"
    if isinstance(doc, list):
        return doc, "/"
    if isinstance(doc, dict):
        return [doc], None
    raise LoadError(name, "expected an object with \"loglines\" or one record per line", expected=EXPECTED)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    if layout == "jsonl":
        linear = read_linear(inp, EXPECTED, lenient)  # most transcripts: one pass (linear.py)
        if linear is not None:
            return finished(inp, linear.scan, linear.reader, [linear.conversation], linear.warnings, linear.marks)
        scan, reader = scan_lines(inp, EXPECTED, lenient)
        return session_of(inp, scan, reader)
    if doc is None:
        doc = load_document(inp, EXPECTED)
    scan = Scan()
    scan.run(*records_of(doc, inp.name))
    return session_of(inp, scan, None)


def session_of(inp: Input, scan: Scan, reader: LineReader | None) -> Session:
    """The session of what `scan` holds, read from JSON lines by `reader` (None: from a document)."""
    if not any(e[KIND] <= ASSISTANT for e in scan.entries):
        raise LoadError(inp.name, "no user or assistant records found", expected=EXPECTED)
    return finished(inp, scan, reader, *build(scan))


def finished(inp: Input, scan: Scan, reader: LineReader | None, convs: list[Conversation],
             build_warnings: list[str], one_pass: list[int] | None = None) -> Session:
    """The session of the file's own conversations (`convs`, and the warnings building them gave),
    what else `scan` holds, and its sub-agents'; a LoadError where a call's arguments nest deeper
    than MAX_ARGUMENT_DEPTH (argument_depth.check_arguments, as registry.within_limits would).
    `one_pass`: read by linear.py, the positions it marked in its one conversation (whose
    arguments it checked); None: read by the general path."""
    warnings: list[str] = []
    skipped = 0
    if reader is not None:
        skipped = reader.skipped
        reader.warn_skipped(warnings)
    warnings.extend(scan_warnings(scan, inp.name))
    warnings.extend(build_warnings)
    skipped += scan.malformed + sum(scan.unknown.values())
    subagents: list[Conversation] = []
    unreadable: dict[str, str] = {}
    if inp.path is not None and reader is not None:
        subagents, sub_skipped = subagent_files(inp.path, EXPECTED, reader.lenient, warnings, unreadable)
        skipped += sub_skipped
    own = {c.name for c in subagents}  # (marked with their own file's replacements)
    read_once = convs[0] if one_pass is not None else None
    convs = with_subagents(scan, convs, subagents, inp.path, warnings)
    for conv in convs:
        if conv is not read_once:
            check_arguments(inp.name, conv.name, conv.messages)
    convs = [c if c.name in own else marked(c, scan, one_pass if c is read_once else None) for c in convs]
    for conv in convs:
        w = usage_only_warning(conv.name, conv.messages)
        if w:
            warnings.append(w)
    meta = dict(scan.metadata)
    meta["duplicates_dropped"] = scan.duplicates
    if scan.unknown:
        meta["unknown_records"] = dict(scan.unknown)
    if unreadable:
        meta["unreadable_subagents"] = unreadable
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta,
                   skipped=skipped, warnings=tuple(warnings))


class Resumable:
    """A transcript read so that what is appended to it later is read alone (formats/growing.py):
    the scan goes on from the reader's last complete line and the session is rebuilt from it.
    A LoadError from `appended` leaves this spoilt: read the file anew.

    The first read is the one pass (linear.py) where the file allows it, as load_session's is: it
    keeps no entries to go on from, so the first append reads the file again by the general path
    (in the follower's worker), which from then on reads only what is appended. A file that never
    grows (most files opened) never pays for the general path's entries."""

    def __init__(self, inp: Input, lenient: bool) -> None:
        self.lenient = lenient
        linear = read_linear(inp, EXPECTED, lenient)
        if linear is None:
            self._general(inp)
            return
        self.reader = linear.reader
        self.scan: Scan | None = None   # (nothing to go on from: see the class docstring)
        self.session = finished(inp, linear.scan, self.reader, [linear.conversation], linear.warnings,
                                linear.marks)

    @property
    def one_pass(self) -> bool:
        """Read by the one pass: nothing kept to go on from yet (the first append reads it whole)."""
        return self.scan is None

    def _general(self, inp: Input) -> None:
        self.reader = LineReader(inp, EXPECTED, self.lenient)
        self.scan = Scan()
        self.scan.resumable, self.scan.made = True, {}
        self.scan.run_lines(self.reader)
        self.session = session_of(inp, self.scan, self.reader)

    @property
    def end(self) -> int:
        """The byte offset just past the last complete line read."""
        return self.reader.end

    def appended(self, inp: Input) -> Session:
        """The session with the lines appended since the last read (`inp`: the file opened anew)."""
        if self.one_pass:   # nothing to go on from: the whole file, once, by the general path
            self._general(inp)
            return self.session
        reader = self.reader
        reader.inp = inp
        reader.resume()
        self.scan.run_lines(reader)
        self.session = session_of(inp, self.scan, reader)
        return self.session


SESSION_FORMAT = ModuleFormat(FORMAT, "Claude Code transcript (JSONL, or web export {\"loglines\": [...]})", EXPECTED,
                              40, load, sniff_record=sniff_record, sniff_document=sniff_document,
                              checks_arguments=True)
