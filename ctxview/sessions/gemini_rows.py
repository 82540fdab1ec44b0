"""Gemini CLI's chats as index rows: the newer JSON lines (a metadata line, message records, `$set`
updates), the older one-document files, and a document larger than the index's reads (its fields
found by pattern).

Gemini CLI (google-gemini/gemini-cli, chatRecordingService) writes a message again when it changes:
in a file that fits the reads, messages are counted by their distinct ids.
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING, Any

import orjson

from ctxview.sessions.row_values import iso as _iso
from ctxview.sessions.row_values import one_line as _one_line
from ctxview.sessions.row_values import prompt as _prompt
from ctxview.sessions.row_values import text_of as _text_of
from ctxview.sessions.sample import Sample, marker_count
from ctxview.sessions.sample import records as _records

if TYPE_CHECKING:
    from ctxview.sessions.index import SessionRow

__all__ = ["GEMINI_HEAD", "big_document", "gemini_document", "gemini_lines"]

_GEMINI_RECORD = re.compile(rb'\n\{\s*"id"\s*:\s*"')


def _gemini_project(path: str) -> str | None:
    """Gemini CLI's project: the folder `.project_root` in `tmp/<project>/` names, else that folder's name."""
    folder = os.path.dirname(os.path.dirname(path))
    marker = os.path.join(folder, ".project_root")
    try:
        if not stat.S_ISREG(os.stat(marker).st_mode):
            raise OSError("not a regular file")
        with open(marker, "rb") as f:
            root = f.read(4096).decode("utf-8", "replace").strip()
        if root:
            return root
    except OSError:
        pass
    return os.path.basename(folder) or None


def _gemini_message(row: SessionRow, msg: Any, first: bool) -> str | None:
    """Read one Gemini CLI message record into `row`; the user's prompt when it is one."""
    if not isinstance(msg, dict):
        return None
    if msg.get("type") == "gemini":
        if isinstance(msg.get("model"), str):
            row.model = msg["model"]
        tokens = msg.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            row.tokens = tokens["input"]
    if first and msg.get("type") == "user":
        text = _text_of(msg.get("content"))
        if text is not None and not text.lstrip().startswith(("/", "?")):  # slash commands, as gemini-cli skips
            return _prompt(text)
    return None


def _gemini_meta(row: SessionRow, meta: dict) -> None:
    row.started = row.started or _iso(meta.get("startTime"))
    row.updated = _iso(meta.get("lastUpdated")) or row.updated
    if isinstance(meta.get("summary"), str) and meta["summary"].strip():
        row.title = _one_line(meta["summary"])


def gemini_lines(row: SessionRow, sample: Sample) -> None:
    """Newer Gemini CLI: a metadata line, message records (rewritten by id), `$set` updates, `$rewindTo`."""
    prompt = None
    for rec in _records(sample.head_lines()):
        if not isinstance(rec, dict):
            continue
        if "sessionId" in rec and "projectHash" in rec:
            _gemini_meta(row, rec)
        elif isinstance(rec.get("id"), str):
            row.started = row.started or _iso(rec.get("timestamp"))
            prompt = _gemini_message(row, rec, True)
            if prompt:
                break
    model, tokens, updated, summary = None, None, None, None
    for rec in _records(sample.tail_lines_backward()):  # the latest record of each kind wins
        if not isinstance(rec, dict):
            continue
        meta = rec.get("$set")
        if isinstance(meta, dict):
            updated = updated or _iso(meta.get("lastUpdated"))
            if summary is None and isinstance(meta.get("summary"), str) and meta["summary"].strip():
                summary = _one_line(meta["summary"])
        elif isinstance(rec.get("id"), str):
            updated = updated or _iso(rec.get("timestamp"))
            if rec.get("type") == "gemini":
                if model is None and isinstance(rec.get("model"), str):
                    model = rec["model"]
                if tokens is None and isinstance(rec.get("tokens"), dict) and isinstance(rec["tokens"].get("input"), int):
                    tokens = rec["tokens"]["input"]
        if updated and model and tokens is not None:  # (a summary, when there is one, is in the last lines)
            break
    row.model, row.tokens = model or row.model, tokens if tokens is not None else row.tokens
    row.updated = max(filter(None, (row.updated, updated)), default=None)
    row.title = summary or row.title or prompt
    row.project = _gemini_project(row.path)
    if sample.whole:  # a message is written again when it changes (gemini-cli's chatRecordingService): count ids
        row.messages = len(set(_GEMINI_RECORD_ID.findall(sample.head)))
    else:
        row.messages, row.messages_estimated = marker_count(sample, _GEMINI_RECORD)  # (after the metadata)


def gemini_document(row: SessionRow, doc: dict) -> None:
    """Older Gemini CLI: one JSON document, {sessionId, projectHash, startTime, lastUpdated, messages, summary}."""
    _gemini_meta(row, doc)
    messages = doc.get("messages") if isinstance(doc.get("messages"), list) else []
    prompt = None
    for msg in messages:
        found = _gemini_message(row, msg, prompt is None)
        prompt = prompt or found
    row.title = row.title or prompt
    row.project = _gemini_project(row.path)
    row.messages = sum(1 for m in messages if isinstance(m, dict) and m.get("type") in ("user", "gemini"))


_GEMINI_RECORD_ID = re.compile(rb'\n\{\s*"id"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
GEMINI_HEAD = re.compile(rb'^\s*\{\s*"sessionId"\s*:')
_STRING = rb'"((?:[^"\\]|\\.){0,2000})"'
_FIELD = re.compile(rb'"(startTime|lastUpdated|summary)"\s*:\s*' + _STRING)
_USER_TEXT = re.compile(rb'"type":\s*"user",\s*"content":\s*(?:\[\s*\{\s*"text":\s*)?' + _STRING)
_MODEL = re.compile(rb'"model":\s*' + _STRING)
_INPUT_TOKENS = re.compile(rb'"tokens":\s*\{\s*"input":\s*(\d{1,15})')


def _json_string(raw: bytes) -> str | None:
    try:
        return orjson.loads(b'"' + raw + b'"')
    except orjson.JSONDecodeError:
        return None


def big_document(row: SessionRow, sample: Sample, head: bytes, tail: bytes) -> None:
    """A JSON document larger than the two reads: Gemini CLI's fields found by pattern, or a ctxview file."""
    if GEMINI_HEAD.match(head):
        row.format = "gemini"
        for chunk in (head, tail):
            for key, raw in _FIELD.findall(chunk):
                _gemini_meta(row, {key.decode(): _json_string(raw)})
        for raw in _USER_TEXT.findall(head):
            title = _prompt(_json_string(raw))
            if title and not title.startswith(("/", "?")):
                row.title = row.title or title
                break
        models = _MODEL.findall(tail)
        row.model = _json_string(models[-1]) if models else None
        tokens = _INPUT_TOKENS.findall(tail)
        row.tokens = int(tokens[-1]) if tokens else None
        row.project = _gemini_project(row.path)
        row.messages = round((head.count(b'"type": "user"') + head.count(b'"type":"user"')
                              + head.count(b'"type": "gemini"') + head.count(b'"type":"gemini"')
                              + tail.count(b'"type": "user"') + tail.count(b'"type":"user"')
                              + tail.count(b'"type": "gemini"') + tail.count(b'"type":"gemini"'))
                             * sample.size / (len(head) + len(tail)))
        row.messages_estimated = True
    elif re.search(rb'"format"\s*:\s*"ctxview"', head[:4096]):
        row.format = "ctxview"
