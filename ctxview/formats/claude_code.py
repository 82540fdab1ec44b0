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
"""

from __future__ import annotations

import dataclasses
from sys import intern as _intern
from pathlib import Path
from typing import Any, Iterable

import orjson

from ..model import ContextEvent, Conversation, Message, Session, Usage
from .blocks import (anthropic_assistant, anthropic_user, is_reminder_only, result_text,
                     thinking_block, thinking_text)
from .contract import SessionFormat
from .errors import LoadError
from .jsonio import SKIP, Input, LineReader, load_document, open_input
from .builders import anthropic_usage, message, tool_call_from
from .linking import compaction_events, last_model, unlinked_warning, usage_only_warning

FORMAT = "claude-code"
EXPECTED = "Claude Code transcript"

# Record types that hold no message for the model; recognised, not counted as unknown.
_QUIET_TYPES = frozenset({
    "summary", "file-history-snapshot", "progress", "queue-operation", "custom-title",
    "agent-name", "tag", "last-prompt", "pr-link", "attachment", "x-meta", "worktree-state",
})
_MESSAGE_TYPES = frozenset({"user", "assistant"})
SNIFF_TYPES = _MESSAGE_TYPES | _QUIET_TYPES | {"system"}


def _str(v: Any) -> str | None:
    return v if type(v) is str else None  # JSON can put a list where a name belongs: unhashable


def _key(v: Any) -> str | None:
    return v if v is None or type(v) is str else str(v)


def sniff_record(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if "type" not in rec:
        return _usage_record(rec)
    return _str(rec.get("type")) in SNIFF_TYPES and (
        "uuid" in rec or "sessionId" in rec or "leafUuid" in rec or "messageId" in rec
        or isinstance(rec.get("message"), dict))


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict):
        return isinstance(doc.get("loglines"), list) or sniff_record(doc)
    if isinstance(doc, list) and doc:
        head = [r for r in doc[:20] if isinstance(r, dict)]
        return bool(head) and all(_str(r.get("type")) in SNIFF_TYPES for r in head) and any(
            isinstance(r.get("message"), dict) for r in head)
    return False


# --- one pass over the records ---------------------------------------------------------------
# An entry is a tuple (speed: ~100k of them): key, parent, origin, kind, side, agent, data.
# origin is the JSONL line number (int) or a JSON pointer (str).
K, P, O, KIND, SIDE, AGENT, DATA = range(7)
USER, ASSISTANT, BOUNDARY, NODE, MICRO = range(5)


class _Scan:
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
        # Sub-agents seen from the parent: agent id -> its messages as agent_progress lines
        # carried them ([(origin, record)]), the Task call that started it, what it returned.
        self.progress: dict[str, list[tuple[Any, dict]]] = {}
        self.task_call: dict[str, str] = {}
        self.task_answer: dict[str, tuple[str, Any, Usage | None]] = {}

    def run_lines(self, reader: LineReader) -> None:
        """Scan a JSONL input, parsing each line here (no generator in between: the hot path)."""
        with reader.raw_lines() as lines:
            self._run(lines, orjson.loads, reader.bad_line, None)

    def run(self, records: Iterable[Any], pointer: str | None, origins: list | None = None) -> None:
        """Scan parsed records; their origin is `pointer` + index, or the line number when None,
        or origins[index] when given (records taken out of another file's lines)."""
        self._run(records, None, None, pointer, origins)

    def _run(self, items: Iterable[Any], loads: Any, bad_line: Any, pointer: str | None,
             origins: list | None = None) -> None:
        # Speed matters here (one iteration per line of a 100 MB file): names are bound
        # locally and message lines are handled first.
        entries_append = self.entries.append
        seen = self.seen
        seen_add = seen.add
        unknown = self.unknown
        decode_error = orjson.JSONDecodeError
        first_meta = True
        last_rec = None
        # Parents that already have a message child. A second one means a branch (a rewind)
        # and the chain must be walked; tool-result lines are siblings by design and don't count.
        parented: set = set()
        parented_add = parented.add
        branched = False
        sided = False
        linked = False
        assistant = _assistant
        user = _user
        n = 0
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
                    data = assistant(rec, msg, uuid)
                    kind = ASSISTANT
                else:
                    data = user(rec, msg, uuid)
                    if data is None:
                        self._malformed(origin, "user message content is missing or not text or blocks")
                        continue
                    kind = USER
                    if data[0]:
                        tur = rec.get("toolUseResult")
                        if type(tur) is dict and type(tur.get("agentId")) is str:
                            self._task_result(tur, data[0][0][0], origin)
                if first_meta:
                    self._meta(rec)
                    first_meta = False
                last_rec = rec
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
                continue
            side = rec.get("isSidechain") is True
            if rtype == "progress" or rtype == "system":
                subtype = rec.get("subtype") if rtype == "system" else None
                if subtype is None:
                    pdata = rec.get("data")
                    if type(pdata) is dict and pdata.get("type") == "agent_progress":
                        self._agent_progress(rec, pdata, origin)
                if subtype == "compact_boundary":
                    meta = rec.get("compactMetadata")
                    meta = meta if type(meta) is dict else {}
                    tokens = meta.get("preTokens")
                    data = (meta.get("trigger"), tokens if type(tokens) is int else None, rec.get("timestamp"))
                    parent = _key(rec.get("parentUuid") or rec.get("logicalParentUuid"))
                    if parent is not None:
                        linked = True
                        if parent in parented:
                            branched = True
                        else:
                            parented_add(parent)
                    entries_append((key, parent, origin, BOUNDARY, side, rec.get("agentId"), data))
                    sided = sided or side
                elif subtype == "microcompact_boundary":
                    # Old tool results cleared in place; not a break in the chain.
                    meta = rec.get("microcompactMetadata")
                    meta = meta if type(meta) is dict else {}
                    tokens, saved, ids = meta.get("preTokens"), meta.get("tokensSaved"), meta.get("compactedToolIds")
                    data = (meta.get("trigger") if type(meta.get("trigger")) is str else None,
                            tokens if type(tokens) is int else None, saved if type(saved) is int else None,
                            tuple(i for i in ids if type(i) is str) if type(ids) is list else ())
                    entries_append((key, _key(rec.get("parentUuid")), origin, MICRO, side, rec.get("agentId"), data))
                    sided = sided or side
                elif uuid is not None:  # progress and system lines sit inside the parent chain
                    entries_append((key, _key(rec.get("parentUuid")), origin, NODE, side, rec.get("agentId"), None))
                    sided = sided or side
                if uuid is not None:
                    seen_add(uuid)
            elif type(rtype) is str and rtype in _QUIET_TYPES:
                if rtype == "summary" and type(rec.get("summary")) is str:
                    self.metadata.setdefault("title", rec["summary"])
                elif rtype == "custom-title" and type(rec.get("customTitle")) is str:
                    self.metadata["title"] = rec["customTitle"]
                if uuid is not None:
                    entries_append((key, _key(rec.get("parentUuid")), origin, NODE, side, rec.get("agentId"), None))
                    sided = sided or side
                    seen_add(uuid)
            elif rtype is None and _usage_record(rec):
                # ccusage's shape: a line with message.usage and no type (Claude Code's own
                # assistant lines stripped to their usage)
                entries_append((key, None, origin, ASSISTANT, False, None, assistant(rec, rec["message"], uuid)))
                if first_meta:
                    self._meta(rec)
                    first_meta = False
                last_rec = rec
                if uuid is not None:
                    seen_add(uuid)
            else:
                name = str(rtype)
                unknown[name] = unknown.get(name, 0) + 1
        self.branched = branched
        self.sided = sided
        self.linked = self.linked or linked
        if last_rec is not None:
            if isinstance(last_rec.get("timestamp"), str):
                self.metadata["ended_at"] = last_rec["timestamp"]
            if isinstance(last_rec.get("version"), str):
                self.metadata["cli_version"] = last_rec["version"]

    def _agent_progress(self, rec: dict, pdata: dict, origin: Any) -> None:
        agent, inner = pdata.get("agentId"), pdata.get("message")
        if type(agent) is not str or not agent:
            return
        tool_id = rec.get("parentToolUseID")
        if type(tool_id) is str:
            self.task_call.setdefault(agent, tool_id)
        if type(inner) is dict and _str(inner.get("type")) in _MESSAGE_TYPES:
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
            self.malformed_notes.append(f"{_origin(origin)}: {why}")

    def _meta(self, rec: dict) -> None:
        m = self.metadata
        for src, dst in (("sessionId", "session_id"), ("cwd", "cwd"), ("gitBranch", "git_branch"),
                         ("timestamp", "started_at"), ("version", "cli_version")):
            if isinstance(rec.get(src), str):
                m.setdefault(dst, rec[src])


def _usage_record(rec: dict) -> bool:
    msg = rec.get("message")
    return type(msg) is dict and type(msg.get("usage")) is dict and msg.get("content") is None and (
        "timestamp" in rec or "requestId" in rec or "costUSD" in rec)


def _origin(origin: Any) -> str:
    return origin if type(origin) is str else f"line {origin}"


def _user(rec: dict, msg: dict, uuid: str | None):
    content = msg.get("content", _MISSING)
    flags = (1 if rec.get("isMeta") is True else 0) | (2 if rec.get("isCompactSummary") is True else 0)
    if type(content) is str:
        return (_NONE, content, flags, uuid)
    if type(content) is not list:
        return None
    results = []
    text = None
    texts = None
    for b in content:
        if type(b) is dict:
            bt = b.get("type")
            if bt == "tool_result":
                c = b.get("content")
                tid = b.get("tool_use_id")
                results.append((tid if type(tid) is str else str(tid or ""),
                                c if type(c) is str else result_text(c), b.get("is_error") is True))
                continue
            if bt == "text":
                t = b.get("text")
                if type(t) is str:
                    if text is None:
                        text = t
                    else:
                        texts = texts or [text]
                        texts.append(t)
                    continue
        r, ts = anthropic_user([b])
        results.extend(r)
        for t in ts:
            if text is None:
                text = t
            else:
                texts = texts or [text]
                texts.append(t)
    if texts is not None:
        text = "\n".join(texts)
    if not results and text is None and content:
        return None
    return (results, text, flags, uuid)


_MISSING = object()
_NONE: tuple = ()


def _assistant(rec: dict, msg: dict, uuid: str | None):
    content = msg.get("content")
    texts: Any = _NONE
    thinking: Any = _NONE
    calls: Any = _NONE
    if type(content) is list and len(content) == 1 and type(content[0]) is dict:
        # The common case: Claude Code writes one content block per line.
        b = content[0]
        bt = b.get("type")
        t = b.get("text") if bt == "text" else None
        if type(t) is str:
            texts = (t,) if t else _NONE
        elif bt == "tool_use":
            calls = (tool_call_from(b.get("id"), b.get("name"), b.get("input")),)
        elif bt == "thinking" and type(b.get("thinking")) is str:
            thinking = (thinking_block(b),)
        else:
            texts, thinking, calls = anthropic_assistant(content)
    elif content is not None:
        texts, thinking, calls = anthropic_assistant(content)
    mid = msg.get("id")
    model = msg.get("model")
    usage = msg.get("usage")
    # The model name is shared (every line repeats it); the usage becomes a Usage only for
    # the last line of a response, the one that counts.
    return (mid if type(mid) is str else None, _intern(model) if type(model) is str else None, texts, thinking,
            calls, usage if type(usage) is dict else None, uuid, rec.get("isApiErrorMessage") is True)


# --- the chain -----------------------------------------------------------------------------

def _chain(entries: list[tuple], branched: bool = True) -> list[tuple]:
    """The entries on the path ending at the last message, oldest first.

    Follows parent links; where a record has no (known) parent but is not the
    first record, continues with the record just before it in the file, so
    files without links (hand-written, exported) keep their line order.
    Without branches (no parent with two message children) that path is every
    entry in file order, so it is not walked.
    """
    if not branched:
        return entries
    n = len(entries)
    leaf = None
    for i in range(n - 1, -1, -1):
        if entries[i][KIND] != NODE:
            leaf = i
            break
    if leaf is None:
        return []
    pos = {e[K]: i for i, e in enumerate(entries)}
    visited = bytearray(n)
    path: list[int] = []
    i = leaf
    while i is not None:
        visited[i] = 1
        path.append(i)
        p = entries[i][P]
        j = pos.get(p) if p is not None else None
        if j is not None and not visited[j]:
            i = j
            continue
        # a root (or a dangling or cyclic link): fall back to file order
        k = i - 1
        while k >= 0 and visited[k]:
            k -= 1
        i = k if k >= 0 else None
    # Parallel tool calls: each result's parent is the line of its own call, so
    # all but the last result hang off the path as siblings. Take them back in.
    # Likewise the later lines of one streamed response (same message.id) can hang off
    # it when a result was written in between: the model made those calls too.
    calls: set[str] = set()
    answered: set[str] = set()
    on_path: set = set()
    mids: set[str] = set()
    for i in path:
        e = entries[i]
        on_path.add(e[K])
        if e[KIND] == ASSISTANT:
            if e[DATA][0]:
                mids.add(e[DATA][0])
        elif e[KIND] == USER:
            for r in e[DATA][0]:
                answered.add(r[0])
    if mids:
        for i, e in enumerate(entries):
            if not visited[i] and e[KIND] == ASSISTANT and e[DATA][0] in mids and e[P] in on_path:
                visited[i] = 1
                path.append(i)
                on_path.add(e[K])
    for i in path:
        e = entries[i]
        if e[KIND] == ASSISTANT:
            for c in e[DATA][4]:
                calls.add(c.id)
    open_calls = calls - answered
    if open_calls:
        for i, e in enumerate(entries):
            if (not visited[i] and e[KIND] == USER and e[P] in on_path and e[DATA][0]
                    and not e[DATA][1] and all(r[0] in open_calls for r in e[DATA][0])):
                path.append(i)
                open_calls.difference_update(r[0] for r in e[DATA][0])
    path.sort()  # parents are written before their children: file order is model order
    return [entries[i] for i in path]


def _groups(entries: list[tuple], all_main: bool,
            linked: bool = True) -> tuple[list[tuple], list[tuple[str, list[tuple]]]]:
    """Main-chain entries, and side-chain entries grouped by conversation name: agent-<id>
    (the name of the sub-agent's own file), else by chain root; without any parent link in
    the file, side entries of no agent are one side chain in file order."""
    if all_main:
        return entries, []
    main = [e for e in entries if not e[SIDE]]
    if len(main) == len(entries):
        return main, []
    side: dict[str, list[tuple]] = {}
    parent_of = {e[K]: e[P] for e in entries if e[SIDE]}
    origin_of = {e[K]: e[O] for e in entries if e[SIDE]}
    roots: dict = {}
    for e in entries:
        if not e[SIDE]:
            continue
        if e[AGENT]:
            gid = f"agent-{e[AGENT]}"
        elif not linked:
            gid = "sidechain"
        else:
            gid = "sidechain from " + _origin(origin_of[_root(e[K], parent_of, roots)])
        side.setdefault(gid, []).append(e)
    return main, list(side.items())


def _root(key: Any, parent_of: dict, cache: dict) -> Any:
    trail: list = []
    on_trail: set = set()
    k = key
    while True:
        if k in cache:
            root = cache[k]
            break
        p = parent_of.get(k)
        if p is None or p not in parent_of or p in on_trail or p == k:
            root = k
            break
        trail.append(k)
        on_trail.add(k)
        k = p
    for t in trail:
        cache[t] = root
    cache[k] = root
    return root


# --- messages ------------------------------------------------------------------------------



def _assistant_message(parts: list) -> Message:
    """One assistant message from its lines' data (parts[0] is the first line's origin).

    The lines of one streamed response each hold one block: texts, thinking and
    calls are joined in line order; each line repeats the response's usage, so the
    last one is final; the first model named wins.
    """
    origin = parts[0]
    first = parts[1]
    mid, model, texts, thinking, calls, usage, uuid, error = first
    if len(parts) > 2:
        texts, thinking, calls = list(texts), list(thinking), list(calls)
        for data in parts[2:]:
            if data[2]:
                texts.extend(data[2])
            if data[3]:
                thinking.extend(data[3])
            if data[4]:
                calls.extend(data[4])
            if data[5] is not None:
                usage = data[5]
            if data[1] and not model:
                model = data[1]
            error = error or data[7]
    meta: dict = {"api_error": True} if error else {}
    if thinking:
        # the blocks as recorded, signatures included, so that an export can send them back
        meta["thinking_blocks"] = thinking if type(thinking) is tuple else tuple(thinking)
    return message(
        role="assistant", content=(texts[0] if len(texts) == 1 else "\n".join(texts)) if texts else "",
        tool_calls=calls if type(calls) is tuple else tuple(calls), model_id=model,
        usage=None if usage is None else anthropic_usage(usage), thinking=thinking_text(thinking) if thinking else None,
        origin=origin if type(origin) is str else "line " + str(origin), id=mid or uuid, meta=meta,
    )


def _messages(chain: list[tuple]) -> tuple[list[Message], list[dict], int]:
    """Messages in model order (tool results named after their calls), compaction specs, unlinked count."""
    out: list[Any] = []            # a Message, or an assistant message's parts (a list) to join at the end
    out_append = out.append
    open_ids: dict[str, list] = {}
    names: dict[str, str] = {}
    boundaries: list[tuple[int, tuple]] = []
    summary_at: set[int] = set()
    unlinked = 0
    for e in chain:
        kind = e[KIND]
        if kind == ASSISTANT:
            data = e[DATA]
            mid = data[0]
            if mid:
                parts = open_ids.get(mid)
                if parts is None:
                    parts = open_ids[mid] = [e[O], data]
                    out_append(parts)
                else:
                    parts.append(data)
            else:
                out_append([e[O], data])
            for c in data[4]:
                names[c.id] = c.name
        elif kind == USER:
            results, text, flags, uuid = e[DATA]
            origin = e[O]
            if type(origin) is not str:
                origin = "line " + str(origin)
            for tool_use_id, rtext, is_error in results:
                name = names.get(tool_use_id)
                if name is None:
                    unlinked += 1
                out_append(message(role="tool", content=rtext, tool_call_id=tool_use_id, tool_name=name, origin=origin,
                                   id=uuid, meta={"is_error": True} if is_error else {}))
            if text is not None and (text or not results):
                injected = bool(flags & 3) or is_reminder_only(text)
                if flags & 2:
                    summary_at.add(len(out))
                out_append(message(role="user", content=text, injected=injected, origin=origin, id=uuid,
                                   meta={"compact_summary": True} if flags & 2 else {}))
        elif kind == BOUNDARY or kind == MICRO:
            boundaries.append((len(out), e))
    messages = [m if type(m) is not list else _assistant_message(m) for m in out]
    specs = []
    for index, e in boundaries:
        if e[KIND] == MICRO:
            trigger, tokens, saved, ids = e[DATA]
            specs.append({"kind": "microcompaction", "index": index, "trigger": trigger, "tokens_before": tokens,
                          "origin": _origin(e[O]), "tool_ids": ids,
                          "meta": {"tokens_saved": saved, "tool_ids": list(ids)}})
            continue
        trigger, tokens, ts = e[DATA]
        specs.append({"index": index, "trigger": trigger, "tokens_before": tokens, "origin": _origin(e[O]),
                      "summary": messages[index].text if index in summary_at else None,
                      "meta": {"timestamp": ts} if ts else {}})
    return messages, specs, unlinked


def _conversation(name: str, chain: list[tuple], warnings: list[str]) -> Conversation:
    messages, specs, unlinked = _messages(chain)
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    events = compaction_events(messages, [s for s in specs if "kind" not in s])
    for spec in specs:
        if spec.get("kind") == "microcompaction":
            ids = set(spec["tool_ids"])
            cleared = tuple(m for m in messages[:spec["index"]] if m.role == "tool" and m.tool_call_id in ids)
            events.append(ContextEvent(kind="microcompaction", index=spec["index"], trigger=spec["trigger"],
                                       tokens_before=spec["tokens_before"], replaced=cleared, origin=spec["origin"],
                                       meta=spec["meta"]))
    events.sort(key=lambda ev: ev.index)
    return Conversation(name=name, messages=tuple(messages), system_prompt=None, model=last_model(messages),
                        events=tuple(events))


def build(scan: _Scan, name_main: str = "main", all_main: bool = False) -> tuple[list[Conversation], list[str]]:
    warnings: list[str] = []
    main, sides = _groups(scan.entries, all_main or not scan.sided, scan.linked)
    # Without a single parent link (hand-written files, claude-code-log's fixtures) there is
    # no chain to follow: file order is the conversation.
    linked = scan.linked
    convs = []
    if main or not sides:
        convs.append(_conversation(name_main, _chain(main, linked and (scan.branched or bool(sides))), warnings))
    for gid, group in sides:
        convs.append(_conversation(gid, _chain(group, linked), warnings))
    return convs, warnings


def _scan_warnings(scan: _Scan, name: str) -> list[str]:
    out = []
    if scan.unknown:
        total = sum(scan.unknown.values())
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(scan.unknown.items()))
        out.append(f"{name}: skipped {total} record(s) of unknown type ({kinds})")
    if scan.malformed:
        out.append(f"{name}: skipped {scan.malformed} malformed record(s) ({'; '.join(scan.malformed_notes)})")
    if scan.duplicates:
        out.append(f"{name}: dropped {scan.duplicates} repeated record(s) (same uuid)")
    return out


def _scan_lines(inp: Input, lenient: bool) -> tuple[_Scan, LineReader]:
    reader = LineReader(inp, EXPECTED, lenient)
    scan = _Scan()
    scan.run_lines(reader)
    return scan, reader


def _records_of(doc: Any, name: str) -> tuple[list, str | None]:
    """The records of a JSON document, and the JSON pointer their index follows (None: one record, line 1)."""
    if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):
        return doc["loglines"], "/loglines/"
    if isinstance(doc, list):
        return doc, "/"
    if isinstance(doc, dict):
        return [doc], None
    raise LoadError(name, "expected an object with \"loglines\" or one record per line", expected=EXPECTED)


def load(inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
    skipped = 0
    warnings: list[str] = []
    if layout == "jsonl":
        scan, reader = _scan_lines(inp, lenient)
        skipped = reader.skipped
        if reader.skipped_warning():
            warnings.append(reader.skipped_warning())
    else:
        if doc is None:
            doc = load_document(inp, EXPECTED)
        scan = _Scan()
        scan.run(*_records_of(doc, inp.name))
    if not any(e[KIND] <= ASSISTANT for e in scan.entries):
        raise LoadError(inp.name, "no user or assistant records found", expected=EXPECTED)
    convs, w = build(scan)
    warnings.extend(_scan_warnings(scan, inp.name))
    warnings.extend(w)
    skipped += scan.malformed + sum(scan.unknown.values())
    subagents: list[Conversation] = []
    # Sub-agent transcripts live next to the parent: <dir>/<session>/subagents/agent-*.jsonl
    if inp.path is not None and layout == "jsonl":
        sub_dir = inp.path.with_suffix("") / "subagents"
        if sub_dir.is_dir():
            for sub in sorted(sub_dir.glob("agent-*.jsonl")):
                try:
                    sub_inp = open_input(sub)
                except LoadError as err:
                    if "empty" not in err.message:
                        raise
                    warnings.append(f"{sub.name}: sub-agent file is empty")
                    continue
                sub_scan, sub_reader = _scan_lines(sub_inp, lenient)
                skipped += sub_reader.skipped + sub_scan.malformed + sum(sub_scan.unknown.values())
                if sub_reader.skipped_warning():
                    warnings.append(f"{sub.name}: {sub_reader.skipped_warning()}")
                warnings.extend(_scan_warnings(sub_scan, sub.name))
                # the whole file is the sub-agent's side chain: one conversation
                sub_convs, sw = build(sub_scan, name_main=sub.stem, all_main=True)
                warnings.extend(sw)
                subagents.extend(c for c in sub_convs if c.messages)
    # The sub-agent's own file is the whole of it: it replaces a side chain of the same agent.
    own = {c.name for c in subagents}
    convs = [c for c in convs if c.name not in own] + subagents
    names = {c.name for c in convs}
    for agent, items in scan.progress.items():
        if f"agent-{agent}" not in names:
            rebuilt = _from_progress(agent, items, scan.task_answer.get(agent), warnings)
            if rebuilt.messages:
                convs.append(rebuilt)
    task_call, calls = scan.task_call, _task_calls(convs, set(scan.task_call.values()))
    if inp.path is not None and not task_call:
        task_call, calls = _from_parent(inp.path, [c.name[len("agent-"):] for c in convs if c.name.startswith("agent-")])
    convs = _labelled(convs, task_call, calls)
    for conv in convs:
        w = usage_only_warning(conv.name, conv.messages)
        if w:
            warnings.append(w)
    meta = dict(scan.metadata)
    meta["duplicates_dropped"] = scan.duplicates
    if scan.unknown:
        meta["unknown_records"] = dict(scan.unknown)
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta,
                   skipped=skipped, warnings=tuple(warnings))


# --- sub-agents ----------------------------------------------------------------------------

def _from_progress(agent: str, items: list[tuple[Any, dict]], answer: tuple[str, Any, Usage | None] | None,
                   warnings: list[str]) -> Conversation:
    """A sub-agent's conversation rebuilt from the parent's agent_progress lines, for when its
    own file is absent. Those lines carry the prompt, the tool calls and their results; the
    text of a response can be missing from them (Claude Code 2.1 sends only some lines), so
    the final answer is taken from what the Task call returned, where the parent holds it."""
    name = f"agent-{agent}"
    sub = _Scan()
    sub.run([rec for _, rec in items], None, [origin for origin, _ in items])
    convs, w = build(sub, name_main=name, all_main=True)
    warnings.extend(w)
    conv = convs[0]
    messages = conv.messages
    if answer is not None and answer[0] and not (messages and messages[-1].role == "assistant"
                                                  and messages[-1].text == answer[0]):
        messages = messages + (message(role="assistant", content=answer[0], origin=_origin(answer[1]),
                                       usage=answer[2], meta={"rebuilt_from": "task_result"}),)
    return Conversation(name=name, messages=messages, model=conv.model or last_model(messages), events=conv.events,
                        metadata={"rebuilt_from": "agent_progress"})


def _task_calls(convs: list[Conversation], wanted: set[str]) -> dict[str, tuple[str, Any]]:
    """The tool calls with the wanted ids: id -> (conversation name, ToolCall)."""
    calls: dict[str, tuple[str, Any]] = {}
    if wanted:
        for conv in convs:
            if conv.name.startswith("agent-"):
                continue
            for m in conv.messages:
                for c in m.tool_calls:
                    if c.id in wanted:
                        calls[c.id] = (conv.name, c)
    return calls


def _labelled(convs: list[Conversation], task_call: dict[str, str],
              calls: dict[str, tuple[str, Any]]) -> list[Conversation]:
    """Sub-agent conversations (agent-<id>) with a label, their kind, and the Task call in the
    main conversation that started them (metadata["parent_tool_call_id"]) where the file shows it."""
    out = []
    for conv in convs:
        if not conv.name.startswith("agent-"):
            out.append(conv)
            continue
        agent = conv.name[len("agent-"):]
        meta = dict(conv.metadata)
        if agent.startswith("acompact"):
            meta["kind"] = "compaction"
            meta["label"] = "compaction (writes the summary that replaces the conversation)"
        else:
            meta["kind"] = "subagent"
        call_id = task_call.get(agent)
        if call_id is not None:
            meta["parent_tool_call_id"] = call_id
            found = calls.get(call_id)
            if found is not None:
                meta["parent"] = found[0]
                args = found[1].arguments
                label = args.get("description") or args.get("subagent_type")
                if isinstance(label, str) and label and "label" not in meta:
                    meta["label"] = label
        out.append(dataclasses.replace(conv, metadata=meta))
    return out


def _parent_file(path: Path) -> Path | None:
    """<dir>/<session>.jsonl, the parent of <dir>/<session>/subagents/agent-<id>.jsonl."""
    if path.parent.name != "subagents" or not path.name.startswith("agent-"):
        return None
    parent = path.parent.parent.with_suffix(".jsonl")
    return parent if parent.is_file() else None


def _records_naming(data: bytes, needle: str) -> list[Any]:
    """The parsed lines of a JSONL text that contain `needle` (the others are not parsed)."""
    out = []
    key = needle.encode()
    at = data.find(key)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        try:
            out.append(orjson.loads(data[start:end]))
        except orjson.JSONDecodeError:
            pass
        at = data.find(key, end)
    return out


def _from_parent(path: Path, agents: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, Any]]]:
    """For a sub-agent file opened alone: the Task calls that started its agents, read from the
    parent transcript next to it (only the lines naming the agent, and those naming its call)."""
    parent = _parent_file(path)
    if parent is None or not agents:
        return {}, {}
    try:
        data = parent.read_bytes()
    except OSError:
        return {}, {}
    scan = _Scan()
    for agent in agents:
        scan.run(_records_naming(data, agent), "/")
    calls: dict[str, tuple[str, Any]] = {}
    for call_id in set(scan.task_call.values()):
        for rec in _records_naming(data, call_id):
            msg = rec.get("message") if type(rec) is dict and rec.get("type") == "assistant" else None
            if type(msg) is dict:
                for c in anthropic_assistant(msg.get("content"))[2]:
                    if c.id == call_id:
                        calls[call_id] = ("main", c)
    return scan.task_call, calls


class ClaudeCodeFormat(SessionFormat):
    name = FORMAT
    description = "Claude Code transcript (JSONL, or web export {\"loglines\": [...]})"
    expected = EXPECTED
    specificity = 40
    sniff_record = staticmethod(sniff_record)
    sniff_document = staticmethod(sniff_document)
    load = staticmethod(load)


SESSION_FORMAT = ClaudeCodeFormat()
