"""Reading JSON lines: the layout of an input (one document or JSON lines), and its lines one at a time.

JSONL is streamed line by line so a multi-GB transcript is never held in memory
as bytes; a file above STREAM_ABOVE is read in bounded pieces so that one
endless line fails early. A malformed line is a LoadError with its line number
and the --lenient hint, or skipped and counted when lenient. A last line with no
newline that does not parse is one still being written (a live session): it is
left out and said so, never an error. A reader can go on from where it ended
(`resume`), reading only what was appended since.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

import orjson

from ctxview.formats.errors import LENIENT_HINT, LoadError
from ctxview.formats.inputs import Input
from ctxview.formats.parsing.json_decode import BOM, UTF16_BOMS, decode_json, loads

__all__ = ["CHUNK_BYTES", "LAYOUT_PROBE", "LineReader", "MAX_LINE_BYTES", "SKIP", "STREAM_ABOVE", "detect_layout"]

MAX_LINE_BYTES = 1 << 30          # one JSONL line: 1 GiB
STREAM_ABOVE = 256 << 20          # JSONL files bigger than this are read in bounded pieces
CHUNK_BYTES = 16 << 20
LAYOUT_PROBE = 1 << 20            # detect_layout reads at most this much of a line at first


@dataclass
class LineReader:
    """Streams (line number, parsed value) from a JSONL input.

    Blank lines are ignored. A malformed line raises LoadError unless
    `lenient`, in which case it is skipped and counted in `skipped`, and
    the first few reasons are kept in `skipped_notes`. A last line still
    being written is left out either way (`partial`: its size in bytes).

    After a read to the end, `end` is the byte offset just past the last
    complete line and `line` that line's number; `resume()` sets `start` and
    `first_line` there, so that the next read (of an `inp` opened anew, the
    file having grown) yields only the lines appended since, numbered on.
    """

    inp: Input
    expected: str
    lenient: bool = False
    skipped: int = 0
    skipped_notes: list[str] = field(default_factory=list)
    first_error: LoadError | None = None
    start: int = 0                  # the byte offset the next read starts at
    first_line: int = 1             # the number of the line at `start`
    end: int = 0                    # after a read: just past the last complete line
    line: int = 0                   # after a read: the number of the last complete line
    partial: int = 0                # after a read: bytes of a last line still being written (0: none)
    partial_line: int = 0           # and its number
    unterminated: bool = False      # after a read: the last line parsed but has no newline yet
    peek: bool = False              # a look at the first lines only (Input.open: no progress figure)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        loads = orjson.loads
        bad_line = self.bad_line
        with self.raw_lines() as lines:
            lineno = self.first_line - 1
            for raw in lines:
                lineno += 1
                try:
                    value = loads(raw)
                except orjson.JSONDecodeError:
                    value = bad_line(raw, lineno)
                    if value is SKIP:
                        continue
                yield lineno, value
            self.read_to(lineno)

    @contextmanager
    def raw_lines(self) -> Iterator[Iterator[bytes]]:
        """The input's lines as bytes, from `start`. Loaders on a hot path iterate these
        themselves, number them from `first_line`, parse with orjson.loads, hand failures
        to bad_line() and, having read them all, call read_to(the last line's number)."""
        f = self.inp.open(peek=self.peek)
        self.partial = 0
        try:
            if self.start:
                f.seek(self.start)
                if self.unterminated and f.peek(1)[:1] == b"\n":
                    f.read(1)  # the newline of the line read last time: not a line of its own
            if self.inp.size <= STREAM_ABOVE:
                yield iter(f)  # the fast path: no line can be too long to hold
            else:
                yield _bounded_lines(f, self.inp.name, self.expected, self.first_line - 1)
            self.end = f.tell() - self.partial
            self.unterminated = False
            if self.end > self.start and not self.partial:
                f.seek(self.end - 1)
                self.unterminated = f.read(1) != b"\n"
        finally:
            f.close()

    def read_to(self, lineno: int) -> None:
        """The consumer of raw_lines() read every line, the last numbered `lineno`."""
        self.line = lineno - 1 if self.partial else lineno

    def resume(self) -> None:
        """Make the next read start after the last complete line of this one."""
        self.start, self.first_line = self.end, self.line + 1

    def bad_line(self, raw: bytes, lineno: int) -> Any:
        """A line orjson refused: a blank line or BOM (fine), a last line still being
        written (SKIP, noted in `partial`), else a LoadError (or SKIP, counted, when lenient)."""
        if raw.isspace():
            return SKIP
        name, expected = self.inp.name, self.expected
        try:
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[3:]
                if raw.isspace():
                    return SKIP
                return decode_json(raw, name, lineno, expected)
            if lineno == 1 and raw[:2] in UTF16_BOMS:
                raise LoadError(name, "file is UTF-16 encoded; ctxview reads UTF-8", line=1, column=1,
                                expected=expected)
            if len(raw) > MAX_LINE_BYTES:
                # Don't try to hold a longer line; the rest of the file can't be trusted either.
                raise LoadError(name, "line longer than 1 GiB", line=lineno, expected=expected)
            nul = raw.find(b"\0")
            if nul >= 0:
                raise LoadError(name, "NUL byte in text (is this a binary file?)",
                                line=lineno, column=nul + 1, expected=expected)
            return decode_json(raw, name, lineno, expected)
        except LoadError as err:
            if "longer than" in err.message:
                raise
            if not raw.endswith(b"\n") and err.message.startswith(_HALF_WRITTEN):
                # No newline yet: the writer is still at it (the file iterator
                # yields such a line only at the end of the file).
                self.partial, self.partial_line = len(raw), lineno
                return SKIP
            if not self.lenient:
                raise LoadError(err.path, err.message, line=err.line, column=err.column, expected=err.expected,
                                hint=LENIENT_HINT) from None
            self.skipped += 1
            if self.first_error is None:
                self.first_error = err
            if len(self.skipped_notes) < 3:
                self.skipped_notes.append(f"line {lineno}: {err.message}")
            return SKIP

    def skipped_warning(self) -> str | None:
        if not self.skipped:
            return None
        noun = "line" if self.skipped == 1 else "lines"
        return f"skipped {self.skipped} malformed {noun} ({'; '.join(self.skipped_notes)})"

    def partial_warning(self) -> str | None:
        if not self.partial:
            return None
        return f"last line still being written (line {self.partial_line:,}, {self.partial:,} bytes): left out"

    def warn_skipped(self, warnings: list[str], prefix: str = "") -> None:
        """Add to a loader's `warnings` what was left out: a last line still being written, lines skipped."""
        for note in (self.partial_warning(), self.skipped_warning()):
            if note:
                warnings.append(prefix + note)


SKIP = object()

# What orjson says of a line cut short (a multi-byte character cut in two included).
_HALF_WRITTEN = ("invalid JSON", "invalid UTF-8")


def _bounded_lines(f: BinaryIO, name: str, expected: str, lineno: int = 0) -> Iterator[bytes]:
    """Lines of a big file, read in pieces so that a file that is one endless
    line (a binary, a sparse file) fails early instead of filling memory.
    `lineno`: the number of the line before the first one read."""
    chunk = CHUNK_BYTES
    while True:
        raw = f.readline(chunk)
        if not raw:
            return
        lineno += 1
        if len(raw) == chunk and not raw.endswith(b"\n"):
            parts = [raw]
            total = len(raw)
            while True:
                piece = parts[-1]
                nul = piece.find(b"\0")
                if nul >= 0:
                    raise LoadError(name, "NUL byte in text (is this a binary file?)", line=lineno,
                                    column=total - len(piece) + nul + 1, expected=expected)
                if total > MAX_LINE_BYTES:
                    raise LoadError(name, "line longer than 1 GiB", line=lineno, expected=expected)
                if piece.endswith(b"\n"):
                    break
                more = f.readline(chunk)
                if not more:
                    break
                parts.append(more)
                total += len(more)
            raw = b"".join(parts)
        yield raw  # bad_line() result for a line to leave out


def detect_layout(inp: Input) -> str:
    """"jsonl" when the input is JSON values one per line, else "json".

    A file whose first non-blank line is a complete JSON value followed by
    another non-blank line is JSONL; so is a file whose first line is broken
    but whose next line is a complete object (a corrupt first record). A
    pretty-printed document has neither. A one-line document is recognised
    without reading its line into memory.
    """
    probe = LAYOUT_PROBE
    with inp.open(peek=True) as f:
        first = b""
        while not first.strip():
            first = f.readline(probe)
            if not first:
                return "json"
        if first.startswith(BOM):
            first = first[3:]
        if b"\0" in first:
            return "jsonl"  # binary: the line reader stops at the NUL with its line and column
        if not first.endswith(b"\n") and len(first) >= probe:
            # A long first line: look past it for a second one without holding it.
            if not _rest_of_line_then_more(f):
                return "json"
            f.seek(0)
            first = b""
            while not first.strip():
                first = f.readline(MAX_LINE_BYTES + 1)
            if len(first) > MAX_LINE_BYTES:
                return "jsonl"  # the line reader refuses it with its line number
            first = first[3:] if first.startswith(BOM) else first
        second = f.readline(probe)
        while second and not second.strip():
            second = f.readline(probe)
        if not second:
            return "json"
    if _parses(first):
        return "jsonl"
    return "jsonl" if second.lstrip()[:1] == b"{" and _parses(second) else "json"


def _rest_of_line_then_more(f: BinaryIO) -> bool:
    """Skip to the end of the current line; True if anything but whitespace follows."""
    chunk_size = 1 << 20
    while True:
        chunk = f.read(chunk_size)
        if not chunk:
            return False
        nl = chunk.find(b"\n")
        if nl >= 0:
            rest = chunk[nl + 1:]
            break
    while True:
        if rest.strip():
            return True
        rest = f.read(chunk_size)
        if not rest:
            return False


def _parses(raw: bytes) -> bool:
    try:
        loads(raw)
        return True
    except orjson.JSONDecodeError:
        return False
