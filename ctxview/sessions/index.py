"""One row per session file, from its first and last 64 KiB (sample.py): never a full parse.

The head gives the start (first timestamp), the project (Claude Code's `cwd`, Codex's
session_meta, Gemini CLI's `.project_root`) and the title (a recorded title or summary, else
the first prompt the user typed, skipping the lines the harness injected); the tail gives the
last activity, the model and the context of the last request where its usage is recorded.
Only the lines these need are parsed. The message count is the loader's (counts.py): for Claude
Code, each line classified by its bytes (a file larger than the reads is scanned whole for it, up
to SCAN_BYTES, then estimated: `≈`); for the others, their message records, counted in a file that
fits in the two reads and estimated from them beyond (`≈`).

A file that cannot be read, is empty or half written is still a row, with a `problem`; a
JSON file that is no session gets `format=None` and is left out of the lists.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, fields
from itertools import islice
from typing import Any

from ctxview.sessions.counts import SCAN_BYTES, ClaudeCodeCount, file_lines
from ctxview.sessions.gemini_rows import GEMINI_HEAD, big_document, gemini_document, gemini_lines
from ctxview.sessions.row_values import iso as _iso
from ctxview.sessions.row_values import iso_from_ns
from ctxview.sessions.row_values import one_line as _one_line
from ctxview.sessions.row_values import prompt as _prompt
from ctxview.sessions.row_values import text_of as _text_of
from ctxview.sessions.sample import HEAD_BYTES, TAIL_BYTES, Sample, marker_count, open_regular, read_sample
from ctxview.sessions.sample import records as _records

__all__ = ["HEAD_BYTES", "TAIL_BYTES", "SessionRow", "decode_claude_project", "index_file", "iso_from_ns"]

_read = read_sample  # (a name tests replace)

UNKNOWN_FORMAT = "?"  # a row listed for its problem, whose format could not be told


@dataclass(slots=True)
class SessionRow:
    """What the browser lists for one file (times ISO 8601, UTC; text as recorded: sanitise to show)."""

    path: str
    format: str | None            # "claude-code", "codex", "gemini", another loader's name; None: not a session
    project: str | None = None
    title: str | None = None
    started: str | None = None
    updated: str | None = None
    messages: int | None = None
    messages_estimated: bool = False  # the count is extrapolated from the head and tail
    size_bytes: int = 0
    mtime_ns: int = 0
    model: str | None = None
    tokens: int | None = None     # the context of the last request with recorded usage
    problem: str | None = None    # unreadable, empty, half written: shown with a marker

    @property
    def listed(self) -> bool:
        return self.format is not None or self.problem is not None

    @property
    def sort_key(self) -> str:
        return self.updated or iso_from_ns(self.mtime_ns) or ""

    def as_list(self) -> list:
        return [getattr(self, name) for name in ROW_FIELDS]

    def as_json(self) -> dict[str, Any]:
        """`ctxview sessions --json`'s object (the mtime is in `updated` when nothing else is)."""
        return {name: getattr(self, name) for name in ROW_FIELDS if name != "mtime_ns"}


ROW_FIELDS = tuple(f.name for f in fields(SessionRow))


# --- helpers ------------------------------------------------------------------------

def decode_claude_project(folder: str) -> str:
    """Claude Code's project folder name as the path it stands for, best effort: it writes the
    path with every `/` (and `.`, `_`, space) as `-`, so `-home-me-src-app` → `/home/me/src/app`."""
    if folder.startswith("-"):
        return "/" + folder[1:].replace("-", "/")
    return folder


# --- the formats --------------------------------------------------------------------

def _claude_code(row: SessionRow, sample: Sample) -> None:
    title = summary = None
    for rec in _records(sample.head_lines()):
        if not isinstance(rec, dict):
            continue
        kind = rec.get("type")
        row.started = row.started or _iso(rec.get("timestamp"))
        if row.project is None and isinstance(rec.get("cwd"), str):
            row.project = rec["cwd"]
        if kind == "summary" and isinstance(rec.get("summary"), str):
            summary = summary or _one_line(rec["summary"])
        elif kind == "custom-title" and isinstance(rec.get("customTitle"), str):
            summary = _one_line(rec["customTitle"])
        elif (kind == "user" and title is None and not rec.get("isMeta") and not rec.get("isCompactSummary")
              and isinstance(rec.get("message"), dict)):
            title = _prompt(_text_of(rec["message"].get("content")))
        if row.started and row.project and title:
            break
    renamed = False
    for rec in _records(sample.tail_lines_backward()):
        if not isinstance(rec, dict):
            continue
        row.updated = row.updated or _iso(rec.get("timestamp"))
        if rec.get("type") == "custom-title" and isinstance(rec.get("customTitle"), str) and not renamed:
            summary, renamed = _one_line(rec["customTitle"]), True  # the latest name the user gave
        message = rec.get("message")
        if rec.get("type") == "assistant" and isinstance(message, dict):
            model = message.get("model")
            if row.model is None and isinstance(model, str) and model != "<synthetic>":
                row.model = model
            usage = message.get("usage")
            if row.tokens is None and isinstance(usage, dict):
                row.tokens = _sum_ints(usage, "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        if row.updated and row.model and row.tokens is not None:
            break
    if row.project is None:
        row.project = decode_claude_project(os.path.basename(os.path.dirname(row.path)))
    row.title = summary or title
    row.messages, row.messages_estimated = _claude_code_count(row.path, sample)


def _claude_code_count(path: str, sample: Sample) -> tuple[int | None, bool]:
    """The loader's message count: of the lines read when they are the file, else of the whole file
    line by line (its head and tail are no sample of its middle), scaled beyond SCAN_BYTES."""
    if sample.whole:
        return ClaudeCodeCount().add_lines(sample.head_lines()).messages, False
    try:
        f, _ = open_regular(path)
        with f:
            count = ClaudeCodeCount().add_lines(file_lines(f))
    except OSError:
        return None, False
    if sample.size > SCAN_BYTES:
        return round(count.messages * sample.size / SCAN_BYTES), True
    return count.messages, False


# (JSON written with spaces after its colons, as Python's json.dumps does, counts the same)
_CODEX_ITEM = re.compile(rb'"type"\s*:\s*"response_item"')
_CODEX_REASONING = re.compile(rb'"type"\s*:\s*"reasoning"')


def _sum_ints(d: dict, *keys: str) -> int | None:
    values = [d.get(k) for k in keys]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(ints) if ints else None


def _codex(row: SessionRow, sample: Sample) -> None:
    typed = prompt = None
    for rec in _records(sample.head_lines()):
        if not isinstance(rec, dict) or not isinstance(rec.get("payload"), dict):
            continue
        payload, kind = rec["payload"], rec.get("type")
        if kind == "session_meta":
            row.started = _iso(payload.get("timestamp")) or _iso(rec.get("timestamp"))
            if isinstance(payload.get("cwd"), str):
                row.project = payload["cwd"]
        else:
            row.started = row.started or _iso(rec.get("timestamp"))
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            row.model = payload["model"]
        elif kind == "event_msg" and payload.get("type") == "user_message" and typed is None:
            typed = _prompt(payload.get("message") if isinstance(payload.get("message"), str) else None)
        elif (kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "user"
              and prompt is None):
            prompt = _prompt(_text_of(payload.get("content")))
        if typed and row.project and row.model:
            break
    row.title = typed or prompt
    for rec in _records(sample.tail_lines_backward()):
        if not isinstance(rec, dict) or not isinstance(rec.get("payload"), dict):
            continue
        payload, kind = rec["payload"], rec.get("type")
        row.updated = row.updated or _iso(rec.get("timestamp"))
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            row.model = payload["model"]  # the latest turn's model
            break
        if kind == "event_msg" and payload.get("type") == "token_count" and row.tokens is None:
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            if isinstance(last, dict):
                row.tokens = _sum_ints(last, "input_tokens")
        if row.updated and row.tokens is not None and row.model:
            break
    # (the loader makes a message of every response item but a reasoning one)
    items, row.messages_estimated = marker_count(sample, _CODEX_ITEM)
    row.messages = max(items - marker_count(sample, _CODEX_REASONING)[0], 0)


# --- sniffing -----------------------------------------------------------------------

_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot", "custom-title"})


def _agent_format(rec: dict) -> str | None:
    """Which of the three agents wrote this record, if one did."""
    kind = rec.get("type")
    if kind in _CODEX_TYPES and isinstance(rec.get("payload"), dict):
        return "codex"
    if "sessionId" in rec and "projectHash" in rec:
        return "gemini"
    if kind in _CLAUDE_TYPES and ("uuid" in rec or "leafUuid" in rec or "messageId" in rec or "sessionId" in rec):
        return "claude-code"
    return None


def _jsonl_format(records: list[dict]) -> str | None:
    return next(filter(None, map(_agent_format, records)), None) or _other_format(records, lines=True)


def _other_format(records: list[Any], lines: bool) -> str | None:
    """The name another loader gives these records (or this document), by the loaders' own sniffers."""
    from ctxview.formats.registry import REGISTERED  # only for files none of the three agents wrote

    best, votes = None, 0
    for fmt in sorted(REGISTERED, key=lambda f: -f.specificity):
        try:
            n = sum(1 for r in records if fmt.sniff_record(r)) if lines else int(fmt.sniff_document(records[0]))
        except Exception:  # noqa: BLE001 - a sniffer never raises; a file never stops the index
            n = 0
        if n > votes:
            best, votes = fmt.name, n
    return best


def _problem(path: str, size: int, mtime_ns: int, text: str) -> SessionRow:
    return SessionRow(path, None, size_bytes=size, mtime_ns=mtime_ns, problem=text)


def index_file(path: str, st: os.stat_result | None = None) -> SessionRow:
    """The row of one file (never raises for what the file holds or whether it can be read)."""
    try:
        st = st or os.stat(path)
    except OSError as exc:
        return _problem(path, 0, 0, f"unreadable: {exc.strerror or exc}")
    size, mtime_ns = st.st_size, st.st_mtime_ns
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the open, a device never end
        return _problem(path, 0, mtime_ns, "not a regular file")
    if size == 0:
        return _problem(path, 0, mtime_ns, "empty file")
    try:
        head, tail = _read(path, size)
    except OSError as exc:
        return _problem(path, size, mtime_ns, f"unreadable: {exc.strerror or exc}")
    row = SessionRow(path, None, size_bytes=size, mtime_ns=mtime_ns)
    # (JSON lines are not tried as one document: the failed parse and its exception cost more than the rest)
    sample = Sample(head, tail, size, document=path.endswith(".json") or head.rstrip().count(b"\n") == 0)
    try:
        _fill(row, sample, head, tail)
    except (ValueError, TypeError, AttributeError, KeyError, ArithmeticError, RecursionError) as exc:
        # a shape no branch expected: the row says so, the index goes on
        row.problem = f"could not index: {type(exc).__name__}"
    if sample.half_written and row.format is not None:
        row.problem = "last line incomplete (still being written?)"
    row.updated = row.updated or iso_from_ns(mtime_ns)
    return row


def _fill(row: SessionRow, sample: Sample, head: bytes, tail: bytes) -> None:
    first = next((line for line in sample.head_lines() if line.strip()), b"")  # (a big document's opening)
    doc = sample.doc  # one JSON document (possibly pretty-printed over many lines)
    if doc is not None and (not isinstance(doc, dict) or b"\n" in head.strip() or row.path.endswith(".json")):
        if isinstance(doc, dict) and "sessionId" in doc and isinstance(doc.get("messages"), list):
            row.format = "gemini"
            gemini_document(row, doc)
        else:
            row.format = _other_format([doc], lines=False)
            if isinstance(doc, dict) and isinstance(doc.get("title"), str):
                row.title = _one_line(doc["title"])
        return
    records = []
    for rec in _records(islice(sample.head_lines(), 50)):
        if isinstance(rec, dict):
            records.append(rec)
            if _agent_format(rec):
                break
    if not records:
        if not sample.whole and first.lstrip().startswith((b"{", b"[")):
            big_document(row, sample, head, tail)
            return
        if row.path.endswith(".jsonl") or sample.half_written:
            row.format, row.problem = UNKNOWN_FORMAT, "no complete JSON line (half written?)"
        elif GEMINI_HEAD.match(head):
            row.format, row.problem = "gemini", "not valid JSON (half written?)"
        return
    row.format = _jsonl_format(records)
    if row.format == "claude-code":
        _claude_code(row, sample)
    elif row.format == "codex":
        _codex(row, sample)
    elif row.format == "gemini":
        gemini_lines(row, sample)
    elif row.format is not None:  # another loader's lines: what a message is, only its loader knows
        row.started = next(filter(None, (_iso(r.get("timestamp")) for r in records)), None)
