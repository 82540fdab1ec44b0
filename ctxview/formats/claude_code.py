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

from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..model import Conversation, Message, Session, Usage
from .blocks import anthropic_assistant, anthropic_user, is_reminder_only, join_texts
from .errors import LoadError
from .jsonio import Input, LineReader, load_document, open_input
from .linking import compaction_events, last_model, link_tool_results, unlinked_warning

FORMAT = "claude-code"
EXPECTED = "Claude Code transcript"

# Record types that hold no message for the model; recognised, not counted as unknown.
_QUIET_TYPES = frozenset({
    "summary", "file-history-snapshot", "progress", "queue-operation", "custom-title",
    "agent-name", "tag", "last-prompt", "pr-link", "attachment", "x-meta", "worktree-state",
})
_MESSAGE_TYPES = frozenset({"user", "assistant"})
SNIFF_TYPES = _MESSAGE_TYPES | _QUIET_TYPES | {"system"}


def sniff_record(rec: Any) -> bool:
    return (
        isinstance(rec, dict)
        and rec.get("type") in SNIFF_TYPES
        and ("uuid" in rec or "sessionId" in rec or "leafUuid" in rec or "messageId" in rec
             or isinstance(rec.get("message"), dict))
    )


def sniff_document(doc: Any) -> bool:
    if isinstance(doc, dict):
        return isinstance(doc.get("loglines"), list) or sniff_record(doc)
    if isinstance(doc, list) and doc:
        head = [r for r in doc[:20] if isinstance(r, dict)]
        return bool(head) and all(r.get("type") in SNIFF_TYPES for r in head) and any(
            isinstance(r.get("message"), dict) for r in head)
    return False


# --- one pass over the records ---------------------------------------------------------------

class _Entry:
    """One useful record, reduced to what building messages needs."""

    __slots__ = ("key", "parent", "origin", "kind", "side", "agent", "data")

    def __init__(self, key, parent, origin, kind, side, agent, data):
        self.key = key
        self.parent = parent
        self.origin = origin
        self.kind = kind      # "user", "assistant", "boundary", "node" (chain link only)
        self.side = side
        self.agent = agent
        self.data = data


class _Scan:
    def __init__(self) -> None:
        self.entries: list[_Entry] = []
        self.seen: set[str] = set()
        self.duplicates = 0
        self.unknown: dict[str, int] = {}
        self.malformed = 0
        self.malformed_notes: list[str] = []
        self.metadata: dict[str, Any] = {}
        self.summaries: dict[str, str] = {}

    def add(self, origin: str, rec: Any) -> None:
        if type(rec) is not dict:
            self._unknown(type(rec).__name__)
            return
        rtype = rec.get("type")
        uuid = rec.get("uuid")
        if uuid is not None:
            if not isinstance(uuid, str):
                uuid = str(uuid)
            if uuid in self.seen:
                self.duplicates += 1
                return
        key = uuid if uuid is not None else "#" + origin
        parent = rec.get("parentUuid")
        side = rec.get("isSidechain") is True
        if rtype == "user" or rtype == "assistant":
            msg = rec.get("message")
            if not isinstance(msg, dict):
                self._malformed(origin, "message is not an object")
                return
            self._meta(rec)
            if rtype == "user":
                data = self._user(rec, msg, origin)
            else:
                data = self._assistant(rec, msg, origin)
            if data is None:
                return
            self.entries.append(_Entry(key, parent, origin, rtype, side, rec.get("agentId"), data))
            if uuid is not None:
                self.seen.add(uuid)
        elif rtype == "system":
            if rec.get("subtype") == "compact_boundary":
                meta = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), dict) else {}
                parent = parent or rec.get("logicalParentUuid")
                tokens = meta.get("preTokens")
                data = (meta.get("trigger"), tokens if isinstance(tokens, int) else None, rec.get("timestamp"))
                self.entries.append(_Entry(key, parent, origin, "boundary", side, rec.get("agentId"), data))
                if uuid is not None:
                    self.seen.add(uuid)
            elif uuid is not None:
                self.entries.append(_Entry(key, parent, origin, "node", side, rec.get("agentId"), None))
                self.seen.add(uuid)
        elif rtype in _QUIET_TYPES:
            if rtype == "summary" and isinstance(rec.get("summary"), str):
                self.summaries[str(rec.get("leafUuid"))] = rec["summary"]
                self.metadata.setdefault("title", rec["summary"])
            elif rtype == "custom-title" and isinstance(rec.get("customTitle"), str):
                self.metadata["title"] = rec["customTitle"]
            if uuid is not None:  # progress lines sit inside the parent chain
                self.entries.append(_Entry(key, parent, origin, "node", side, rec.get("agentId"), None))
                self.seen.add(uuid)
        else:
            self._unknown(str(rtype))

    def _unknown(self, what: str) -> None:
        self.unknown[what] = self.unknown.get(what, 0) + 1

    def _malformed(self, origin: str, why: str) -> None:
        self.malformed += 1
        if len(self.malformed_notes) < 3:
            self.malformed_notes.append(f"{origin}: {why}")

    def _meta(self, rec: dict) -> None:
        m = self.metadata
        if "session_id" not in m and isinstance(rec.get("sessionId"), str):
            m["session_id"] = rec["sessionId"]
        if isinstance(rec.get("version"), str):
            m["cli_version"] = rec["version"]
        if "cwd" not in m and isinstance(rec.get("cwd"), str):
            m["cwd"] = rec["cwd"]
        if "git_branch" not in m and isinstance(rec.get("gitBranch"), str):
            m["git_branch"] = rec["gitBranch"]
        ts = rec.get("timestamp")
        if isinstance(ts, str):
            m.setdefault("started_at", ts)
            m["ended_at"] = ts

    def _user(self, rec: dict, msg: dict, origin: str):
        if "content" not in msg:
            self._malformed(origin, "user message without content")
            return None
        results, texts = anthropic_user(msg.get("content"))
        if not results and not texts and msg.get("content") not in ("", []):
            self._malformed(origin, "user message content is neither text nor blocks")
            return None
        flags = 0
        if rec.get("isMeta") is True:
            flags |= 1
        if rec.get("isCompactSummary") is True:
            flags |= 2
        return (results, join_texts(texts), flags, rec.get("uuid"), rec.get("timestamp"))

    def _assistant(self, rec: dict, msg: dict, origin: str):
        texts, thinking, calls = anthropic_assistant(msg.get("content"))
        usage = msg.get("usage")
        u = None
        if isinstance(usage, dict):
            u = Usage(
                _int(usage.get("input_tokens")),
                _int(usage.get("output_tokens")),
                _int(usage.get("cache_read_input_tokens")),
                _int(usage.get("cache_creation_input_tokens")),
            )
        mid = msg.get("id")
        model = msg.get("model")
        meta = None
        if rec.get("isApiErrorMessage") is True:
            meta = {"api_error": True}
        return (mid if isinstance(mid, str) else None, model if isinstance(model, str) else None,
                texts, thinking, calls, u, rec.get("uuid"), meta)


def _int(v: Any) -> int:
    return v if type(v) is int else 0


# --- the chain -----------------------------------------------------------------------------

def _chain(entries: list[_Entry]) -> list[_Entry]:
    """The entries on the path ending at the last message, oldest first.

    Follows parent links; where a record has no (known) parent but is not the
    first record, continues with the record just before it in the file, so
    files without links (hand-written, exported) keep their line order.
    """
    if not entries:
        return []
    pos = {e.key: i for i, e in enumerate(entries)}
    leaf = None
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].kind != "node":
            leaf = i
            break
    if leaf is None:
        return []
    visited = bytearray(len(entries))
    path: list[int] = []
    i = leaf
    lowest = leaf  # everything below `lowest` not yet visited may be the fallback
    while i is not None:
        if visited[i]:
            break
        visited[i] = 1
        path.append(i)
        p = entries[i].parent
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
    calls: set[str] = set()
    answered: set[str] = set()
    on_path: set[str] = set()
    for i in path:
        e = entries[i]
        on_path.add(e.key)
        if e.kind == "assistant":
            calls.update(c.id for c in e.data[4])
        elif e.kind == "user":
            answered.update(r[0] for r in e.data[0])
    open_calls = calls - answered
    if open_calls:
        for i, e in enumerate(entries):
            if (not visited[i] and e.kind == "user" and e.parent in on_path and e.data[0]
                    and not e.data[1] and all(r[0] in open_calls for r in e.data[0])):
                path.append(i)
                open_calls.difference_update(r[0] for r in e.data[0])
    path.sort()  # parents are written before their children: file order is model order
    return [entries[i] for i in path]


def _groups(entries: list[_Entry]) -> tuple[list[_Entry], list[tuple[str, list[_Entry]]]]:
    """Main-chain entries, and side-chain entries grouped by agent id or chain root."""
    main = [e for e in entries if not e.side]
    side: dict[str, list[_Entry]] = {}
    parent_of = {e.key: e.parent for e in entries if e.side}
    origin_of = {e.key: e.origin for e in entries if e.side}
    roots: dict[str, str] = {}
    for e in entries:
        if not e.side:
            continue
        if e.agent:
            gid = f"agent {e.agent}"
        else:
            gid = "from " + origin_of[_root(e.key, parent_of, roots)]
        side.setdefault(gid, []).append(e)
    return main, list(side.items())


def _root(key: str, parent_of: dict, cache: dict) -> str:
    trail: list[str] = []
    on_trail: set[str] = set()
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

class _Assistant:
    __slots__ = ("mid", "model", "texts", "thinking", "calls", "usage", "origin", "uuid", "meta")

    def __init__(self, data, origin):
        mid, model, texts, thinking, calls, usage, uuid, meta = data
        self.mid, self.model, self.usage, self.origin, self.uuid, self.meta = mid, model, usage, origin, uuid, meta
        self.texts, self.thinking, self.calls = list(texts), list(thinking), list(calls)

    def merge(self, data) -> None:
        _mid, model, texts, thinking, calls, usage, _uuid, meta = data
        self.texts.extend(texts)
        self.thinking.extend(thinking)
        self.calls.extend(calls)
        if usage is not None:
            self.usage = usage  # each line repeats the response's usage; the last is final
        if model and not self.model:
            self.model = model
        if meta:
            self.meta = meta

    def message(self) -> Message:
        return Message(
            role="assistant",
            content=join_texts(self.texts) or "",
            tool_calls=tuple(self.calls),
            model_id=self.model,
            usage=self.usage,
            thinking="\n\n".join(self.thinking) if self.thinking else None,
            origin=self.origin,
            id=self.mid or self.uuid,
            meta=self.meta or {},
        )


def _messages(chain: list[_Entry]) -> tuple[list[Message], list[dict]]:
    out: list[Any] = []            # Message or _Assistant builder
    open_ids: dict[str, _Assistant] = {}
    boundaries: list[tuple[int, _Entry]] = []
    summary_at: set[int] = set()
    for e in chain:
        kind = e.kind
        if kind == "assistant":
            mid = e.data[0]
            b = open_ids.get(mid) if mid else None
            if b is not None:
                b.merge(e.data)
            else:
                b = _Assistant(e.data, e.origin)
                out.append(b)
                if mid:
                    open_ids[mid] = b
        elif kind == "user":
            results, text, flags, uuid, _ts = e.data
            for tool_use_id, rtext, is_error in results:
                out.append(Message(role="tool", content=rtext, tool_call_id=tool_use_id, origin=e.origin,
                                   id=uuid, meta={"is_error": True} if is_error else {}))
            if text is not None and (text or not results):
                injected = bool(flags & 3) or is_reminder_only(text)
                if flags & 2:
                    summary_at.add(len(out))
                out.append(Message(role="user", content=text, injected=injected, origin=e.origin, id=uuid,
                                   meta={"compact_summary": True} if flags & 2 else {}))
        elif kind == "boundary":
            boundaries.append((len(out), e))
    messages = [m.message() if isinstance(m, _Assistant) else m for m in out]
    specs = []
    for index, e in boundaries:
        trigger, tokens, ts = e.data
        specs.append({"index": index, "trigger": trigger, "tokens_before": tokens, "origin": e.origin,
                      "summary_at": index if index in summary_at else None,
                      "meta": {"timestamp": ts} if ts else {}})
    return messages, specs


def _conversation(name: str, chain: list[_Entry], warnings: list[str]) -> Conversation:
    messages, specs = _messages(chain)
    messages, unlinked = link_tool_results(messages)
    for spec in specs:
        at = spec.pop("summary_at")
        spec["summary"] = messages[at].text if at is not None else None
    events = compaction_events(messages, specs)
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    return Conversation(name=name, messages=tuple(messages), system_prompt=None, model=last_model(messages),
                        events=tuple(events))


def build(scan: _Scan, name_main: str = "main") -> tuple[list[Conversation], list[str]]:
    warnings: list[str] = []
    main, sides = _groups(scan.entries)
    convs = []
    if main or not sides:
        convs.append(_conversation(name_main, _chain(main), warnings))
    for gid, group in sides:
        convs.append(_conversation(f"sidechain {gid}", _chain(group), warnings))
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
    add = scan.add
    for lineno, rec in reader:
        add(f"line {lineno}", rec)
    return scan, reader


def _records_of(doc: Any, name: str) -> Iterator[tuple[str, Any]]:
    if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):
        for i, rec in enumerate(doc["loglines"]):
            yield f"/loglines/{i}", rec
    elif isinstance(doc, list):
        for i, rec in enumerate(doc):
            yield f"/{i}", rec
    elif isinstance(doc, dict):
        yield "line 1", doc
    else:
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
        for origin, rec in _records_of(doc, inp.name):
            scan.add(origin, rec)
    if not any(e.kind in ("user", "assistant") for e in scan.entries):
        raise LoadError(inp.name, "no user or assistant records found", expected=EXPECTED)
    convs, w = build(scan)
    warnings.extend(_scan_warnings(scan, inp.name))
    warnings.extend(w)
    skipped += scan.malformed + sum(scan.unknown.values())
    # Sub-agent transcripts live next to the parent: <dir>/<session>/subagents/agent-*.jsonl
    if inp.path is not None and layout == "jsonl":
        sub_dir = inp.path.with_suffix("") / "subagents"
        if sub_dir.is_dir():
            for sub in sorted(sub_dir.glob("agent-*.jsonl")):
                sub_inp = open_input(sub)
                sub_scan, sub_reader = _scan_lines(sub_inp, lenient)
                skipped += sub_reader.skipped + sub_scan.malformed + sum(sub_scan.unknown.values())
                if sub_reader.skipped_warning():
                    warnings.append(f"{sub.name}: {sub_reader.skipped_warning()}")
                warnings.extend(_scan_warnings(sub_scan, sub.name))
                for e in sub_scan.entries:  # the whole file is one side chain
                    e.side = False
                sub_convs, sw = build(sub_scan, name_main=sub.stem)
                warnings.extend(sw)
                convs.extend(c for c in sub_convs if c.messages)
    meta = dict(scan.metadata)
    meta["duplicates_dropped"] = scan.duplicates
    if scan.unknown:
        meta["unknown_records"] = dict(scan.unknown)
    return Session(format=FORMAT, source=inp.name, conversations=tuple(convs), metadata=meta,
                   skipped=skipped, warnings=tuple(warnings))
