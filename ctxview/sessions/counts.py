"""Message counts for the index, as the loaders count messages.

Claude Code (formats/claude_code): a user line is one message per tool result, or one for its text;
the lines of one streamed response (one `message.id`) are one assistant message; progress,
snapshot, summary, system and side-chain lines are none. One marker per line cannot tell these
apart (a progress line holds a sub-agent's messages, a response is split over several lines, JSON
may have spaces after its colons), so each line is classified, by its bytes: a parse would cost
ten times as much. Not followed: the loader's parent chain (a rewound branch still counts) and a
resumed session's repeated lines (the loader drops them by uuid).

A file larger than the index's reads is counted line by line up to SCAN_BYTES (a sample of its
head and tail is no guide: a transcript's first and last 64 KiB can hold four lines and no message
while the middle holds hundreds), the rest scaled by bytes; such a count is shown as an estimate.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Iterable, Iterator

__all__ = ["SCAN_BYTES", "ClaudeCodeCount", "file_lines"]

SCAN_BYTES = 32 * 1024 * 1024  # counted line by line; beyond, scaled by bytes (and the most held at once)
_CHUNK = 1 << 20

_BLANK = (b" ", b"\t", b"\r")
_PREFIX = 4096
_FIRST_TYPE = re.compile(rb'"type"\s*:\s*"([\w-]{1,40})"')
_USER_KINDS = frozenset({b"user", b"tool_result"})
_ASSISTANT_KINDS = frozenset({b"assistant", b"message"})
_PART_KINDS = frozenset({b"text", b"image", b"thinking", b"tool_use"})  # (a message written before its type)
_SIDECHAIN_TRUE = re.compile(rb'\s*:\s*true')
_MESSAGE_ID = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')  # (the first id in the message: its own)
_USER_CONTENT = re.compile(rb'"content"\s*:\s*(?:"[^"]|\[\s*\{)')  # some text, or a list of parts


class ClaudeCodeCount:
    """Counts the messages of Claude Code lines given one at a time, as the loader would."""

    __slots__ = ("messages", "lines", "_responses")

    def __init__(self) -> None:
        self.messages = self.lines = 0
        self._responses: set[bytes] = set()

    def add_lines(self, lines: Iterable[bytes]) -> ClaudeCodeCount:
        """Count these lines, each by its bytes (a parse costs ten times more): JSON strings escape
        their quotes, so `"tool_result"` or `"assistant"` with bare quotes is structure, never text.
        A line's first `"type"` tells its kind (Claude Code writes a record's own keys before its
        message or data: `"type":"progress"`, `"type":"user"`, or an assistant message's
        `"type":"message"`). One loop, no call per line: a transcript has a line per tool call."""
        n, seen, response = self.messages, self.lines, self._response
        for line in lines:
            if not line or (line[:1] in _BLANK and not line.strip()):
                continue
            seen += 1
            kind = _FIRST_TYPE.search(line, 0, _PREFIX)
            kind = kind.group(1) if kind is not None else None
            if kind in _PART_KINDS:
                kind = b"assistant" if b'"assistant"' in line else b"user"
            elif kind not in _USER_KINDS and kind not in _ASSISTANT_KINDS:
                continue  # progress (a sub-agent's messages), snapshots, summaries, system lines
            at = line.find(b'"isSidechain"', 0, _PREFIX)
            if at >= 0 and _SIDECHAIN_TRUE.match(line, at + 13):
                continue  # a side chain is a conversation of its own
            if kind in _ASSISTANT_KINDS and b'"assistant"' in line:
                n += response(line)
                continue
            results = line.count(b'"tool_result"')
            if results:
                n += results
            elif b'"user"' in line and _USER_CONTENT.search(line):
                n += 1  # a prompt (or the harness's text)
        self.messages, self.lines = n, seen
        return self

    def add(self, line: bytes) -> None:
        self.add_lines((line,))

    def _response(self, line: bytes) -> int:
        """An assistant line's new messages: the lines of one response share its message id (1, then 0)."""
        found = _MESSAGE_ID.search(line, line.find(b'"message"'))
        if found is not None:
            mid = found.group(1)
            if mid in self._responses:
                return 0
            self._responses.add(mid)
        return 1


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
