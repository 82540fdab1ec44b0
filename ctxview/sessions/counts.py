"""Message counts for the index, as the loaders count messages.

Claude Code (formats/claude_code): a user line is one message per tool result plus one for its text,
the lines of one streamed response (one `message.id`) are one assistant message, and progress,
snapshot, summary, system and side-chain lines are none; a line repeated by a resumed session (same
uuid) counts once. Bytes alone cannot tell these apart (a progress line holds a sub-agent's
messages, a response is split over several lines, JSON may have spaces after its colons), so the
lines that can hold a message are parsed; a line longer than PARSE_BYTES (a big tool result) is
classified by its bytes instead, which is nearly as good and costs no parse.

A file larger than the index's reads is counted line by line up to SCAN_BYTES (a sample of its
head and tail is no guide: a transcript's first and last 64 KiB can hold four lines and no message
while the middle holds hundreds), the rest scaled by bytes; such a count is shown as an estimate.
"""

from __future__ import annotations

import re
from typing import Any, BinaryIO, Iterable, Iterator

import orjson

__all__ = ["PARSE_BYTES", "SCAN_BYTES", "ClaudeCodeCount", "file_lines"]

SCAN_BYTES = 32 * 1024 * 1024  # counted line by line; beyond, scaled by bytes (and the most held at once)
PARSE_BYTES = 16 * 1024        # longer lines are classified by their bytes
_CHUNK = 1 << 20

_BLANK = (b" ", b"\t", b"\r")
_PROGRESS = re.compile(rb'"type"\s*:\s*"progress"')  # hook and sub-agent progress: no message of this file's
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
_TOOL_RESULT = re.compile(rb'"type"\s*:\s*"tool_result"')
_ASSISTANT = re.compile(rb'"role"\s*:\s*"assistant"')
_MESSAGE_ID = re.compile(rb'"id"\s*:\s*"(msg_[^"\\]{1,200})"')


class ClaudeCodeCount:
    """Counts the messages of Claude Code lines given one at a time, as the loader would."""

    __slots__ = ("messages", "lines", "_responses", "_uuids")

    def __init__(self) -> None:
        self.messages = self.lines = 0
        self._responses: set[str] = set()
        self._uuids: set[str] = set()

    def add_lines(self, lines: Iterable[bytes]) -> ClaudeCodeCount:
        for line in lines:
            self.add(line)
        return self

    def add(self, line: bytes) -> None:
        if not line or (line[:1] in _BLANK and not line.strip()):
            return
        self.lines += 1
        if b'"user"' not in line and b'"assistant"' not in line:  # (no user or assistant record)
            return
        if len(line) > PARSE_BYTES:
            self._add_big(line)
            return
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        if type(rec) is not dict or rec.get("isSidechain") is True:
            return
        kind, message = rec.get("type"), rec.get("message")
        if kind not in ("user", "assistant") or type(message) is not dict:
            return
        uuid = rec.get("uuid")
        if type(uuid) is str:
            if uuid in self._uuids:
                return
            self._uuids.add(uuid)
        if kind == "assistant":
            mid = message.get("id")
            self._response(mid if type(mid) is str else None)
        else:
            self.messages += _user_messages(message.get("content"))

    def _response(self, mid: str | None) -> None:
        if mid is not None:
            if mid in self._responses:
                return
            self._responses.add(mid)
        self.messages += 1

    def _add_big(self, line: bytes) -> None:
        """A long line, by its bytes: a structural `"type":"tool_result"` is one (JSON strings escape
        their quotes, so text never matches), an assistant's response counts once by its id."""
        if _PROGRESS.search(line) or _SIDECHAIN.search(line[:2000]):
            return
        results = len(_TOOL_RESULT.findall(line))
        if results:
            self.messages += results
        elif _ASSISTANT.search(line):
            found = _MESSAGE_ID.search(line)
            self._response(found.group(1).decode("ascii", "replace") if found else None)
        else:
            self.messages += 1  # a long prompt


def _user_messages(content: Any) -> int:
    """A user line's messages: one per tool result, and one for its text (or for a line of nothing else)."""
    if type(content) is str:
        return 1
    if type(content) is not list or not content:
        return 0
    results = sum(1 for b in content if type(b) is dict and b.get("type") == "tool_result")
    return results + (1 if len(content) > results or not results else 0)


def file_lines(f: BinaryIO, limit: int = SCAN_BYTES) -> Iterator[bytes]:
    """The file's lines from the start, up to `limit` bytes (the last one may be cut there), read a
    chunk at a time."""
    f.seek(0)
    read = 0
    pending: list[bytes] = []  # the pieces of a line longer than a chunk (no quadratic joining)
    while read < limit:
        chunk = f.read(min(_CHUNK, limit - read))
        if not chunk:
            break
        read += len(chunk)
        first_nl = chunk.find(b"\n")
        if first_nl < 0:
            pending.append(chunk)
            continue
        if pending:
            pending.append(chunk[:first_nl])
            yield b"".join(pending)
            pending = []
        else:
            yield chunk[:first_nl]
        lines = chunk[first_nl + 1:].split(b"\n")
        last = lines.pop()
        yield from lines
        if last:
            pending.append(last)
    if pending:
        yield b"".join(pending)
