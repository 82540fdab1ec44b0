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
_PROGRESS = re.compile(rb'"type"\s*:\s*"progress"')  # hook and sub-agent progress: no message of this file's
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
_MESSAGE_ID = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')  # (the first id in the message: its own)
_USER_CONTENT = re.compile(rb'"content"\s*:\s*(?:"[^"]|\[\s*\{)')  # some text, or a list of parts


class ClaudeCodeCount:
    """Counts the messages of Claude Code lines given one at a time, as the loader would."""

    __slots__ = ("messages", "lines", "_responses")

    def __init__(self) -> None:
        self.messages = self.lines = 0
        self._responses: set[bytes] = set()

    def add_lines(self, lines: Iterable[bytes]) -> ClaudeCodeCount:
        for line in lines:
            self.add(line)
        return self

    def add(self, line: bytes) -> None:
        """One line, by its bytes (a parse costs ten times more): JSON strings escape their quotes,
        so `"tool_result"` or `"assistant"` with bare quotes is structure, never text."""
        if not line or (line[:1] in _BLANK and not line.strip()):
            return
        self.lines += 1
        if b'"user"' not in line and b'"assistant"' not in line:  # no user or assistant record
            return
        # (the record's own keys come before its message and data: a prefix tells its kind)
        if line.find(b'"progress"', 0, _PREFIX) >= 0 and _PROGRESS.search(line, 0, _PREFIX):
            return  # progress lines hold a sub-agent's messages
        if line.find(b'"isSidechain"', 0, _PREFIX) >= 0 and _SIDECHAIN.search(line, 0, _PREFIX):
            return  # a side chain is a conversation of its own
        if b'"message"' not in line:
            return
        results = line.count(b'"tool_result"')
        if results:
            self.messages += results
        elif b'"assistant"' in line:
            self._response(line)
        elif _USER_CONTENT.search(line):
            self.messages += 1  # a prompt (or the harness's text)

    def _response(self, line: bytes) -> None:
        """An assistant line: the lines of one response share its message id and count once."""
        at = line.find(b'"message"')
        found = _MESSAGE_ID.search(line, at)
        if found is not None:
            mid = found.group(1)
            if mid in self._responses:
                return
            self._responses.add(mid)
        self.messages += 1


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
