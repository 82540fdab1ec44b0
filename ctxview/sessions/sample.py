"""What the index reads of a session file: its first and last 64 KiB (the whole file when it fits),
as complete lines, forward from the start and backward from the end; and how it opens a file (only
a regular file, never waiting on a FIFO).

A JSON-lines file whose first line is longer than the head (a big pasted prompt, a large first
tool result) has its head read on to the end of that line, up to FIRST_LINE_BYTES, so that it is
not taken for a half-written file.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any, BinaryIO, Iterable, Iterator

import orjson

from ctxview.formats.parsing.json_decode import loads

__all__ = ["FIRST_LINE_BYTES", "HEAD_BYTES", "TAIL_BYTES", "Sample", "file_kind", "marker_count", "open_regular",
           "read_sample", "records"]

HEAD_BYTES = TAIL_BYTES = 64 * 1024
FIRST_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 20

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a named pipe (FIFO)")."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str]) -> tuple[BinaryIO, os.stat_result]:
    """The regular file `path` opened for reading, and its status. O_NONBLOCK: a FIFO (or a link to
    one) must not make the open wait for a writer; a device is refused before any read. OSError
    otherwise, its strerror saying what the file is."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, f"{file_kind(st.st_mode)}, not a regular file")
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


class Sample:
    """The head and tail of a file (the whole file when it fits), read as complete lines on demand:
    forward from the start, backward from the end."""

    def __init__(self, head: bytes, tail: bytes, size: int, document: bool = True) -> None:
        self.size, self.head, self.tail = size, head, tail
        self.whole = tail == b"" and len(head) == size
        self.half_written = False
        self.doc: Any = None  # the file as one JSON document, when it fits the read and is one
        if self.whole:
            self._t, self._h_end, self._t_start, self._t_end = head, len(head), 0, len(head)
            if document:
                try:
                    self.doc = loads(head)
                    return
                except orjson.JSONDecodeError:
                    pass
        else:  # the head's last piece and the tail's first are cut
            self._t, self._h_end = tail, head.rfind(b"\n") + 1
            self._t_start, self._t_end = (tail.find(b"\n") + 1) or len(tail), len(tail)
        buf, end = self._t, self._t_end
        while end > self._t_start and buf[end - 1] in b" \t\r\n":
            end -= 1
        start = max(buf.rfind(b"\n", self._t_start, end) + 1, self._t_start)
        if buf.startswith(b"{", start):  # no newline after a record: complete, or still being written
            try:
                loads(buf[start:end])
            except orjson.JSONDecodeError:
                self.half_written = True
                self._t_end = start
                if self.whole:
                    self._h_end = start

    def head_lines(self) -> Iterator[bytes]:
        buf, pos, end = self.head, 0, self._h_end
        while pos < end:
            nl = buf.find(b"\n", pos, end)
            if nl < 0:
                nl = end
            yield buf[pos:nl]
            pos = nl + 1

    def tail_lines_backward(self) -> Iterator[bytes]:
        buf, start, end = self._t, self._t_start, self._t_end
        while end > start:
            nl = buf.rfind(b"\n", start, end)
            yield buf[max(nl + 1, start):end]
            end = max(nl, start)
            if nl < 0:
                break


def read_sample(path: str, size: int) -> tuple[bytes, bytes]:
    """The file's head and tail; the whole file as the head (and no tail) when it fits in both."""
    f, _ = open_regular(path)
    with f:
        head = f.read(HEAD_BYTES)
        if size > HEAD_BYTES + TAIL_BYTES and path.endswith(".jsonl") and b"\n" not in head:
            head = _through_first_line(f, head)
        if size <= len(head) + TAIL_BYTES:
            return head + f.read(max(size - len(head), 0)), b""
        f.seek(size - TAIL_BYTES)
        return head, f.read(TAIL_BYTES)


def _through_first_line(f: BinaryIO, head: bytes) -> bytes:
    """`head` read on to the end of the first line and a head's worth beyond (a first line longer
    than FIRST_LINE_BYTES: that much, no line)."""
    pieces, got = [head], len(head)
    while got < FIRST_LINE_BYTES:
        chunk = f.read(min(_CHUNK, FIRST_LINE_BYTES - got))
        if not chunk:
            break
        pieces.append(chunk)
        got += len(chunk)
        nl = chunk.find(b"\n")
        if nl >= 0:
            pieces.append(f.read(max(HEAD_BYTES - (len(chunk) - nl - 1), 0)))
            break
    return b"".join(pieces)


def records(lines: Iterable[bytes]) -> Iterator[Any]:
    for line in lines:
        if line.strip():
            try:
                yield loads(line)
            except orjson.JSONDecodeError:
                continue


def marker_count(sample: Sample, marker: re.Pattern[bytes]) -> tuple[int, bool]:
    """Message records, by a marker that starts each: counted when the sample is the file, else
    scaled from the head and tail to the file's size."""
    n = len(marker.findall(sample.head)) + len(marker.findall(sample.tail))
    if sample.whole or not (sample.head or sample.tail):  # (or cut to nothing since its size was read)
        return n, False
    return round(n * sample.size / (len(sample.head) + len(sample.tail))), True
