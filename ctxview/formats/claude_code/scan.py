"""One pass over a Claude Code transcript's records: the entries of every message and boundary, and what
the file says besides (metadata, sub-agents seen from the parent, what was skipped and why)."""

from __future__ import annotations

from typing import Any, Iterable

from ctxview.model import Usage
from ctxview.formats.parsing.blocks import result_text
from ctxview.formats.parsing.builders import anthropic_usage
from ctxview.formats.parsing.jsonio import SKIP, Input, LineReader
from ctxview.formats.claude_code.compaction import boundary_data, microcompaction_data
from ctxview.formats.claude_code.deferred import delta_of
from ctxview.formats.claude_code.line_fields import DECODE_ERRORS, decode_record
from ctxview.formats.claude_code.persisted import replacements_of
from ctxview.formats.claude_code.records import (ASSISTANT, BOUNDARY, MESSAGE_TYPES, MICRO, NODE, QUIET_TYPES, USER, assistant_data,
                      is_usage_record, key_of, origin_text, str_or_none, user_data)

class Scan:
    def __init__(self) -> None:
        self.entries: list[tuple] = []
        self.seen: set[str] = set()
        self.duplicates = 0
        self.unknown: dict[str, int] = {}
        self.malformed = 0
        self.malformed_notes: list[str] = []
        self.metadata: dict[str, Any] = {}
        self.branched = False
        self.sided = False  # some entry is on a side chain
        self.linked = False  # some message or boundary names a parent
        self._parented: set = set()
        self._met = False  # the first message line's metadata was taken
        self.resumable = False  # keep what a scan of appended lines needs (the parents table)
        self.made: dict | None = None  # a resumable scan's messages by entry (conversation.messages_of)
        # Sub-agents seen from the parent: agent id -> its messages as agent_progress lines
        # carried them ([(origin, record)]), the Task call that started it, what it returned.
        self.progress: dict[str, list[tuple[Any, dict]]] = {}
        self.task_call: dict[str, str] = {}
        self.task_answer: dict[str, tuple[str, Any, Usage | None]] = {}
        # content-replacement records: tool_use_id -> the text the model was sent instead (persisted.py)
        self.replacements: dict[str, str] = {}
        # deferred_tools_delta attachments: (names added, names removed), in file order (deferred.py)
        self.deferred: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def run_lines(self, reader: LineReader) -> None:
        """Scan a JSONL input, parsing each line here (no generator in between: the hot path).
        Again with the reader resumed (a file that grew): the lines appended, as if read with the rest."""
        with reader.raw_lines() as lines:
            last = self._run(lines, decode_record, reader.bad_line, None, start=reader.first_line - 1)
        reader.read_to(last)

    def run(self, records: Iterable[Any], pointer: str | None, origins: list | None = None) -> None:
        """Scan parsed records; their origin is `pointer` + index, or the line number when None,
        or origins[index] when given (records taken out of another file's lines)."""
        self._run(records, None, None, pointer, origins)

    def _run(self, items: Iterable[Any], loads: Any, bad_line: Any, pointer: str | None,
             origins: list | None = None, start: int = 0) -> int:
        # Speed matters here (one iteration per line of a 100 MB file): names are bound
        # locally and message lines are handled here (records.py: what their data holds),
        # every other record in _other_record.
        entries_append = self.entries.append
        seen = self.seen
        seen_add = seen.add
        unknown = self.unknown
        decode_error = DECODE_ERRORS
        first_meta = not self._met
        last_rec = None
        # Parents that already have a message child. A second one means a branch (a rewind)
        # and the chain must be walked; tool-result lines are siblings by design and don't count.
        # A resumed scan (start > 0) goes on with the table of the lines before.
        parented = self._parented if start else set()
        self._parented = parented
        parented_add = parented.add
        if not start:
            self.branched = self.sided = False  # what _other_record finds, joined with these at the end
        branched = sided = linked = False
        other_record = self._other_record
        n = start
        origin: Any = 0
        for rec in items:
            n += 1
            if loads is not None:
                try:
                    rec = loads(rec)
                except decode_error:
                    rec = bad_line(rec, n)
                    if rec is SKIP:
                        continue
                origin = n
            elif origins is not None:
                origin = origins[n - 1]
            else:
                origin = n if pointer is None else pointer + str(n - 1)
            if type(rec) is not dict:
                name = type(rec).__name__
                unknown[name] = unknown.get(name, 0) + 1
                continue
            rtype = rec.get("type")
            uuid = rec.get("uuid")
            if uuid is not None:
                if type(uuid) is not str:
                    uuid = str(uuid)
                if uuid in seen:
                    self.duplicates += 1
                    continue
                key = uuid
            else:
                key = origin
            if rtype == "assistant" or rtype == "user":
                msg = rec.get("message")
                if type(msg) is not dict:
                    self._malformed(origin, "message is not an object")
                    continue
                if rtype == "assistant":
                    data = assistant_data(rec, msg, uuid)
                    kind = ASSISTANT
                else:
                    data = user_data(rec, msg, uuid)
                    if data is None:
                        self._malformed(origin, "user message content is missing or not text or blocks")
                        continue
                    tur = rec.get("toolUseResult") if data[0] else None
                    if type(tur) is dict and type(tur.get("agentId")) is str:  # a Task call's result
                        self._task_result(tur, data[0][0][0], origin)
                    kind = USER
                parent = rec.get("parentUuid")
                if parent is not None:
                    linked = True
                    if type(parent) is not str:
                        parent = str(parent)
                    if kind == ASSISTANT or data[1] is not None or not data[0]:
                        if parent in parented:
                            branched = True
                        else:
                            parented_add(parent)
                if rec.get("isSidechain") is True:
                    sided = True
                    entries_append((key, parent, origin, kind, True, rec.get("agentId"), data))
                else:
                    entries_append((key, parent, origin, kind, False, None, data))
                if uuid is not None:
                    seen_add(uuid)
            elif not other_record(rec, rtype, key, uuid, origin):
                continue  # not a message: what follows is for message lines (and usage-only ones)
            if first_meta:
                self._meta(rec)
                first_meta = False
                self._met = True
            last_rec = rec
        self.branched = branched or self.branched
        self.sided = sided or self.sided
        if not self.resumable:
            self._parented = set()  # needed only while scanning: let go of its table
        self.linked = self.linked or linked
        if last_rec is not None:
            self._ended(last_rec)
        return n

    def _ended(self, last_rec: dict) -> None:
        if isinstance(last_rec.get("timestamp"), str):
            self.metadata["ended_at"] = last_rec["timestamp"]
        if isinstance(last_rec.get("version"), str):
            self.metadata["cli_version"] = last_rec["version"]

    def _parent(self, parent: str | None) -> None:
        """Note a boundary's parent link, as _run does for messages."""
        if parent is not None:
            self.linked = True
            if parent in self._parented:
                self.branched = True
            else:
                self._parented.add(parent)

    def _other_record(self, rec: dict, rtype: Any, key: Any, uuid: str | None, origin: Any) -> bool:
        """A record that is not a user or assistant line: an entry where it has a place in the chain,
        metadata, or counted as unknown. True for a usage-only line (a message for the metadata too)."""
        side = rec.get("isSidechain") is True
        entry = None
        if rtype == "progress" or rtype == "system":
            subtype = rec.get("subtype") if rtype == "system" else None
            if subtype is None:
                pdata = rec.get("data")
                if type(pdata) is dict and pdata.get("type") == "agent_progress":
                    self._agent_progress(rec, pdata, origin)
            if subtype == "compact_boundary":
                parent = key_of(rec.get("parentUuid") or rec.get("logicalParentUuid"))
                self._parent(parent)
                entry = (key, parent, origin, BOUNDARY, side, rec.get("agentId"), boundary_data(rec))
            elif subtype == "microcompact_boundary":  # old tool results cleared in place; not a break in the chain
                entry = (key, key_of(rec.get("parentUuid")), origin, MICRO, side, rec.get("agentId"),
                         microcompaction_data(rec))
            elif uuid is not None:  # progress and system lines sit inside the parent chain
                entry = (key, key_of(rec.get("parentUuid")), origin, NODE, side, rec.get("agentId"), None)
        elif type(rtype) is str and rtype in QUIET_TYPES:
            if rtype == "summary" and type(rec.get("summary")) is str:
                self.metadata.setdefault("title", rec["summary"])
            elif rtype == "custom-title" and type(rec.get("customTitle")) is str:
                self.metadata["title"] = rec["customTitle"]
            elif rtype == "content-replacement":
                self.replacements.update(replacements_of(rec))
            elif rtype == "attachment" and type(rec.get("attachment")) is dict:
                delta = delta_of(rec["attachment"])
                if delta is not None:
                    self.deferred.append(delta)
            if uuid is not None:
                entry = (key, key_of(rec.get("parentUuid")), origin, NODE, side, rec.get("agentId"), None)
        elif rtype is None and is_usage_record(rec):
            # ccusage's shape: a line with message.usage and no type (Claude Code's own
            # assistant lines stripped to their usage)
            self.entries.append((key, None, origin, ASSISTANT, False, None, assistant_data(rec, rec["message"], uuid)))
            if uuid is not None:
                self.seen.add(uuid)
            return True
        else:
            name = str(rtype)
            self.unknown[name] = self.unknown.get(name, 0) + 1
            return False
        if entry is not None:
            self.entries.append(entry)
            self.sided = self.sided or side
        if uuid is not None:
            self.seen.add(uuid)
        return False

    def _agent_progress(self, rec: dict, pdata: dict, origin: Any) -> None:
        agent, inner = pdata.get("agentId"), pdata.get("message")
        if type(agent) is not str or not agent:
            return
        tool_id = rec.get("parentToolUseID")
        if type(tool_id) is str:
            self.task_call.setdefault(agent, tool_id)
        if type(inner) is dict and str_or_none(inner.get("type")) in MESSAGE_TYPES:
            self.progress.setdefault(agent, []).append((origin, inner))

    def _task_result(self, tur: dict, tool_use_id: str, origin: Any) -> None:
        agent = tur["agentId"]
        self.task_call.setdefault(agent, tool_use_id)
        content = tur.get("content")
        if content is not None and agent not in self.task_answer:
            # the sub-agent's last answer, without the "agentId: ..." note the model was shown too
            # with the usage of its last model call (toolUseResult.usage)
            usage = tur.get("usage")
            self.task_answer[agent] = (content if type(content) is str else result_text(content), origin,
                                       anthropic_usage(usage) if type(usage) is dict else None)

    def _malformed(self, origin: Any, why: str) -> None:
        self.malformed += 1
        if len(self.malformed_notes) < 3:
            self.malformed_notes.append(f"{origin_text(origin)}: {why}")

    def _meta(self, rec: dict) -> None:
        m = self.metadata
        for src, dst in (("sessionId", "session_id"), ("cwd", "cwd"), ("gitBranch", "git_branch"),
                         ("timestamp", "started_at"), ("version", "cli_version")):
            if isinstance(rec.get(src), str):
                m.setdefault(dst, rec[src])


def scan_lines(inp: Input, expected: str, lenient: bool) -> tuple[Scan, LineReader]:
    """A JSONL input scanned, and the reader that counted what it skipped."""
    reader = LineReader(inp, expected, lenient)
    scan = Scan()
    scan.run_lines(reader)
    return scan, reader
