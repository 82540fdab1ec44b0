"""Reading JSON and JSONL input safely: one place for every byte-level check.

Files are opened read-only ("rb") and never written. JSONL is streamed line
by line so a multi-GB transcript is never held in memory as bytes; a JSON
document is read whole (it has to be parsed whole anyway) up to a size cap.
Every failure becomes a LoadError naming the file, line and column.
"""

from __future__ import annotations

import io
import json
from contextlib import contextmanager
import os
import re
import secrets
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

import orjson

from .errors import LoadError

__all__ = [
    "document_only",
    "BOM",
    "check_path",
    "Input",
    "LineReader",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_STDIN_BYTES",
    "GROWTH_ALLOWANCE",
    "SKIP",
    "decode_json",
    "detect_layout",
    "load_document",
    "open_input",
    "parse_in_pieces",
    "read_stdin",
]

BOM = b"\xef\xbb\xbf"
MAX_LINE_BYTES = 1 << 30          # one JSONL line: 1 GiB
MAX_DOCUMENT_BYTES = 2 << 30      # one whole JSON document: 2 GiB
STREAM_ABOVE = 256 << 20          # JSONL files bigger than this are read in bounded pieces
CHUNK_BYTES = 16 << 20
LAYOUT_PROBE = 1 << 20            # detect_layout reads at most this much of a line at first
READ_BUFFER = 1 << 20
PIECE_BYTES = 1 << 20             # parse_in_pieces: about this much of an array at a time
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


MAX_STDIN_BYTES = 1 << 30         # standard input is held whole: at most 1 GiB
GROWTH_ALLOWANCE = 64 << 20       # a file may grow by this much while it is read (a live transcript)


@dataclass
class Input:
    """An input file (or stdin's bytes), checked to be readable."""

    name: str                      # shown in messages
    path: Path | None = None       # None for stdin
    data: bytes | None = None      # stdin's content
    size: int = 0

    def open(self) -> BinaryIO:
        if self.data is not None:
            return io.BytesIO(self.data)
        # read-only, always; a 1 MB buffer reads a big file in a tenth of the system calls
        fd = _open_regular(self.name, self.path)
        return io.BufferedReader(_CappedFile(fd, self.name, self.size + GROWTH_ALLOWANCE), READ_BUFFER)

    def head(self, size: int = 65536) -> bytes:
        if self.data is not None:
            return self.data[:size]
        with self.open() as f:
            return f.read(size)


class _CappedFile(io.FileIO):
    """A file read no further than `limit` bytes: one that grows without end while it is read (something
    appending to it, a file system that makes up content) is cut off with a LoadError instead of filling
    memory or never ending. The check runs once per buffer fill (1 MB), not per line."""

    def __init__(self, fd: int, shown: str, limit: int) -> None:
        super().__init__(fd, "rb", closefd=True)
        self._shown, self._limit = shown, limit

    def _check(self) -> None:
        if self.tell() > self._limit:
            raise LoadError(self._shown, f"the file grew by more than {GROWTH_ALLOWANCE >> 20} MiB while it was "
                                         "read (is something still writing to it?)")

    def readinto(self, buffer) -> int | None:  # type: ignore[override]
        n = super().readinto(buffer)
        self._check()
        return n

    def read(self, size: int = -1) -> bytes | None:  # type: ignore[override]
        if size is None or size < 0:
            return self.readall()
        data = super().read(size)
        self._check()
        return data

    def readall(self) -> bytes:  # FileIO's own would read to the end in one go, past the limit
        parts = []
        while True:
            data = super().read(READ_BUFFER)
            self._check()
            if not data:
                return b"".join(parts)
            parts.append(data)


_KINDS = ((stat.S_ISDIR, "is a directory, not a session file"),
          (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file (give a pipe as standard input: - < FILE)"),
          (stat.S_ISCHR, "is a character device, not a regular file"),
          (stat.S_ISBLK, "is a block device, not a regular file"),
          (stat.S_ISSOCK, "is a socket, not a regular file"))


def _not_regular(name: str, mode: int) -> LoadError | None:
    if stat.S_ISREG(mode):
        return None
    reason = next((text for test, text in _KINDS if test(mode)), "is not a regular file")
    return LoadError(name, reason)


def _open_regular(name: str, path: Path | None) -> int:
    """A read-only descriptor of the regular file `path`. O_NONBLOCK: should the path have become a FIFO
    since it was checked, opening it must not wait for a writer; fstat then refuses it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path if path is not None else name, flags)
    except OSError as exc:  # raced with a delete or chmod
        raise _os_error(name, exc) from None
    try:
        bad = _not_regular(name, os.fstat(fd).st_mode)
        if bad is not None:
            raise bad
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_path(path: str | os.PathLike) -> os.stat_result:
    """Refuse, without opening it, what cannot be a session file: a missing path, a directory, a FIFO
    (opening one for reading waits for a writer), a device, a socket. The path's stat when it is a
    regular file."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as exc:
        raise _os_error(name, exc) from None
    bad = _not_regular(name, st.st_mode)
    if bad is not None:
        raise bad
    return st


def read_stdin(stream: BinaryIO, limit: int | None = None) -> bytes:
    """Standard input, whole, read a piece at a time: a NUL byte (binary data, /dev/zero) stops it at
    once, and more than `limit` bytes (MAX_STDIN_BYTES; an endless pipe) is an error, not a MemoryError."""
    limit = MAX_STDIN_BYTES if limit is None else limit
    parts: list[bytes] = []
    total = lines = 0
    while True:
        piece = stream.read(min(READ_BUFFER, limit + 1 - total))
        if not piece:
            break
        nul = piece.find(b"\0")
        if nul >= 0:
            before = piece[:nul]
            line_start = before.rfind(b"\n") + 1
            column = nul - line_start + 1 if line_start else total + nul - _last_line_start(parts, total) + 1
            raise LoadError("<stdin>", "NUL byte in text (is this a binary file?)",
                            line=lines + before.count(b"\n") + 1, column=column)
        lines += piece.count(b"\n")
        parts.append(piece)
        total += len(piece)
        if total > limit:
            raise LoadError("<stdin>", f"standard input is larger than {limit >> 20:,} MiB, the limit for stdin "
                                       "(save it to a file: JSONL files are streamed)")
    return b"".join(parts)


def _last_line_start(parts: list[bytes], total: int) -> int:
    """Where the line running into the next piece starts, counted from the start of stdin."""
    pos = total
    for part in reversed(parts):
        pos -= len(part)
        nl = part.rfind(b"\n")
        if nl >= 0:
            return pos + nl + 1
    return 0


def open_input(path: str | os.PathLike | None) -> Input:
    """Check that `path` names a readable regular file ("-": read stdin). FIFOs, devices and other
    special files are refused at once, never opened for reading."""
    if path is None or str(path) == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise LoadError("<stdin>", "standard input is not readable")
        data = read_stdin(stream)
        if not data.strip():
            raise LoadError("<stdin>", "standard input is empty")
        return Input("<stdin>", None, data, len(data))
    name = os.fspath(path)
    p = Path(name)
    check_path(name)
    fd = _open_regular(name, p)
    try:
        st = os.fstat(fd)
        first = os.read(fd, 4096)
    except OSError as exc:
        raise _os_error(name, exc) from None
    finally:
        os.close(fd)
    if st.st_size == 0:
        raise LoadError(name, "file is empty")
    if not first.strip() and st.st_size <= 4096:
        raise LoadError(name, "file holds only whitespace")
    return Input(name, p, None, st.st_size)


def _os_error(name: str, exc: OSError) -> LoadError:
    import errno

    reason = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "is a directory, not a session file",
        errno.ENOTDIR: "no such file (a parent is not a directory)",
        errno.ELOOP: "too many levels of symbolic links",
        errno.ENAMETOOLONG: "file name too long",
    }.get(exc.errno, exc.strerror or type(exc).__name__)
    return LoadError(name, f"cannot read: {reason}")


def _utf8_error_column(raw: bytes) -> int | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start + 1
    return None


def decode_json(raw: bytes, name: str, line: int | None, expected: str, line_offset: int = 0) -> Any:
    """Parse `raw` with orjson; every failure becomes a LoadError.

    `line` is the JSONL line number (None for a whole document, where the
    error's own line is used).
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        msg = exc.msg
        if "surrogate" in msg and _utf8_error_column(raw) is None:
            # Escaped lone surrogates ("\ud800") are valid JSON that orjson refuses;
            # JavaScript writers (Claude Code) produce them. The stdlib accepts them.
            try:
                return json.loads(raw)
            except RecursionError:
                msg = "JSON nested too deeply"
            except ValueError as exc2:
                msg = str(exc2)
        err_line = line if line is not None else exc.lineno
        col: int | None = exc.colno
        if "depth limit" in msg or "recursion" in msg.lower():
            text = "JSON nested deeper than 1024 levels"
        elif "UTF-8" in msg and "BOM" not in msg:
            bad = _utf8_error_column(raw)
            if bad is not None:
                if line is None:
                    before = raw[: bad - 1]
                    err_line = before.count(b"\n") + 1
                    col = bad - (before.rfind(b"\n") + 1)
                else:
                    col = bad
            text = "invalid UTF-8 (the file must be UTF-8 text)"
        elif "zero-length" in msg:
            text = "empty JSON document"
            col = None
        else:
            text = f"invalid JSON: {_plain(msg)}"
        raise LoadError(name, text, line=err_line, column=col, expected=expected) from None


def _plain(msg: str) -> str:
    # orjson says "unexpected character, expected ',' or '}'"; keep the useful part.
    if msg.startswith("unexpected character, "):
        return msg[len("unexpected character, "):]
    return msg


def document_only(inp: Input, layout: str, doc: Any, what: str, expected: str) -> Any:
    """The parsed document of a format that is one JSON document (`what`, e.g.
    "an Anthropic request"): `doc` when the sniffer already parsed it, else
    read now; JSON lines are refused with a line-1 error."""
    if layout == "jsonl":
        raise LoadError(inp.name, f"found JSON lines; {what} is one JSON document", line=1, expected=expected)
    return load_document(inp, expected) if doc is None else doc


def load_document(inp: Input, expected: str) -> Any:
    """Read and parse a whole JSON document (BOM accepted and skipped)."""
    if inp.size > MAX_DOCUMENT_BYTES:
        gb = inp.size / (1 << 30)
        raise LoadError(
            inp.name,
            f"{gb:.1f} GB is too large for one JSON document (limit 2 GB; JSONL files are streamed)",
            expected=expected,
        )
    data = _strip_bom(_read_all(inp), inp.name, expected)
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        col = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise LoadError(inp.name, "NUL byte in text (is this a binary file?)", line=line, column=col, expected=expected)
    if not data or data.isspace():
        raise LoadError(inp.name, "file is empty", expected=expected)
    return decode_json(data, inp.name, None, expected)


def _read_all(inp: Input) -> bytes:
    if inp.data is not None:
        return inp.data
    with inp.open() as f:
        return f.read()


# Where one object of an array may end and the next begin. The next one's first key makes
# it rarer inside strings, where a quote is escaped (JSON text in a tool's output: {\"a\"...).
_OBJECT_SEPARATOR = re.compile(rb'\}\s*(,)\s*\{\s*"')
_PIECE_TRIES = 64  # cuts tried per piece (inside a list of objects in a message, say) before parsing whole
_AFTER_DOCUMENT = "unexpected content after document"  # orjson's message when a value ends early


def parse_in_pieces(inp: Input, key: str, depth: int,
                    take: Callable[[int, int, list], None]) -> tuple[Any, list[str]] | None:
    """Parse a document whose arrays of objects under `key` hold most of its bytes a piece
    of an array at a time, so that neither the file's bytes nor the parsed objects of a
    whole array are ever held at once: `take(k, first, items)` is given items `first`,
    `first + 1`, ... of the k-th such array (in document order) to turn into what is kept;
    the parsed items are dropped after.

    Returns the rest of the document, where the k-th array is `[markers[k]]`, and the
    markers; or None when the document does not read this way (invalid, or not shaped so):
    the caller then parses it whole, which also gives the error. `depth`: how many
    containers hold those arrays, so that pieces hit orjson's depth limit as a whole parse
    would; the caller checks that the markers are where such arrays belong.

    Why this is exact: a piece is cut where one object may end and the next begin, and is
    kept only when it parses on its own; a cut inside a string or a nested value leaves
    something open, so it does not. The pieces and the rest then parse as the whole would.
    """
    if inp.size > MAX_DOCUMENT_BYTES:
        return None
    key_at = re.compile(rb'"%s"\s*:\s*\[' % re.escape(key.encode()))
    token = f"ctxview-piece-{secrets.token_hex(8)}"
    markers: list[str] = []
    rest: list[bytes] = []  # the document outside those arrays
    with inp.open() as f:
        ahead = _ReadAhead(f)
        if ahead.data[:2] in _UTF16_BOMS:
            return None
        pos = 3 if ahead.data.startswith(BOM) else 0
        while (found := ahead.search(key_at, pos)) is not None:
            k = len(markers)
            markers.append(f"{token}-{k}")
            rest += (ahead.data[pos:found.end()], orjson.dumps(markers[k]))
            start, first = found.end(), 0
            while True:
                ahead.drop(start)  # what is parsed is let go
                piece = _piece(ahead, depth)
                if piece is None:
                    return None
                items, end, last = piece
                take(k, first, items)
                first += len(items)
                del items, piece
                if last:
                    break
                start = end + 1
            pos = end  # the array's "]"
        if not markers:
            return None
        rest += (ahead.data[pos:], f.read())
    skeleton = b"".join(rest)
    del rest
    if skeleton.count(token.encode()) != len(markers):
        return None  # the file holds the token itself: no telling which is ours
    try:
        return orjson.loads(skeleton), markers
    except orjson.JSONDecodeError:
        return None


class _ReadAhead:
    """A file's bytes from some point on (`data`), read a block at a time as searches need."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.data = f.read(PIECE_BYTES)

    def search(self, pattern: re.Pattern, pos: int) -> re.Match | None:
        """The first match of `pattern` from `pos` on, reading on until there is one or the
        file ends (one across the end of what was read may be passed over: no harm here)."""
        while (found := pattern.search(self.data, pos)) is None:
            more = self.f.read(max(PIECE_BYTES, len(self.data)))  # doubling: one huge item is read in linear time
            if not more:
                return None
            pos = max(pos, len(self.data) - 256)  # what was searched already
            self.data += more
        return found

    def drop(self, n: int) -> None:
        """Let go of the first `n` bytes (positions shift down by n)."""
        self.data = self.data[n:]


def _piece(ahead: _ReadAhead, depth: int) -> tuple[list, int, bool] | None:
    """The items at the start of `ahead.data` (the first of an array, or those after a ","),
    about PIECE_BYTES of them: (items, where they end, whether that is the array's end)."""
    search = PIECE_BYTES
    for _ in range(_PIECE_TRIES):
        sep = ahead.search(_OBJECT_SEPARATOR, search)
        data = ahead.data
        end = sep.start(1) if sep is not None else len(data)
        text = data[:end]
        items = _items(text, depth) if sep is not None else None
        if items is not None:
            return items, end, False
        # Not whole items: the array ended inside the piece (its "]" and what follows came
        # along), or the cut was inside a string or a nested value (cut further on).
        try:
            orjson.loads(b"[" + text + b"]")
            return None  # the document ends inside the array, or is nested too deeply
        except orjson.JSONDecodeError as exc:
            if exc.msg == _AFTER_DOCUMENT:
                # the array's "]" is the last one before what follows; exc.pos counts characters
                chars = text.decode(errors="surrogateescape")[:exc.pos - 1]
                end = data.rfind(b"]", 0, len(chars.encode(errors="surrogateescape")))
                items = _items(data[:end], depth) if end >= 0 else None
                return None if items is None else (items, end, True)
        if sep is None:
            return None
        search = end + 1
    return None


def _items(text: bytes, depth: int) -> list | None:
    """`text` parsed as the items of an array held in `depth` containers; None unless it
    is exactly a run of whole items."""
    try:
        value = orjson.loads(b"[" * (depth + 1) + text + b"]" * (depth + 1))
    except orjson.JSONDecodeError:
        return None
    for _ in range(depth):
        if len(value) != 1:  # brackets in `text` closed ours and opened others
            return None
        value = value[0]
    return value if type(value) is list else None


def _strip_bom(data: bytes, name: str, expected: str) -> bytes:
    if data.startswith(BOM):
        return data[3:]
    if data[:2] in _UTF16_BOMS:
        raise LoadError(name, "file is UTF-16 encoded; ctxview reads UTF-8", line=1, column=1, expected=expected)
    return data


@dataclass
class LineReader:
    """Streams (line number, parsed value) from a JSONL input.

    Blank lines are ignored. A malformed line raises LoadError unless
    `lenient`, in which case it is skipped and counted in `skipped`, and
    the first few reasons are kept in `skipped_notes`.
    """

    inp: Input
    expected: str
    lenient: bool = False
    skipped: int = 0
    skipped_notes: list[str] = field(default_factory=list)
    first_error: LoadError | None = None

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        loads = orjson.loads
        bad_line = self.bad_line
        with self.raw_lines() as lines:
            lineno = 0
            for raw in lines:
                lineno += 1
                try:
                    value = loads(raw)
                except orjson.JSONDecodeError:
                    value = bad_line(raw, lineno)
                    if value is SKIP:
                        continue
                yield lineno, value

    @contextmanager
    def raw_lines(self) -> Iterator[Iterator[bytes]]:
        """The input's lines as bytes. Loaders on a hot path iterate these
        themselves, parse with orjson.loads and hand failures to bad_line()."""
        f = self.inp.open()
        try:
            if self.inp.size <= STREAM_ABOVE:
                yield iter(f)  # the fast path: no line can be too long to hold
            else:
                yield _bounded_lines(f, self.inp.name, self.expected)
        finally:
            f.close()

    def bad_line(self, raw: bytes, lineno: int) -> Any:
        """A line orjson refused: a blank line or BOM (fine), else a LoadError
        (or SKIP, counted, when lenient)."""
        if raw.isspace():
            return SKIP
        name, expected = self.inp.name, self.expected
        try:
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[3:]
                if raw.isspace():
                    return SKIP
                return decode_json(raw, name, lineno, expected)
            if lineno == 1 and raw[:2] in _UTF16_BOMS:
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
            if not self.lenient or "longer than" in err.message:
                raise
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


SKIP = object()


def _bounded_lines(f: BinaryIO, name: str, expected: str) -> Iterator[bytes]:
    """Lines of a big file, read in pieces so that a file that is one endless
    line (a binary, a sparse file) fails early instead of filling memory."""
    lineno = 0
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
    with inp.open() as f:
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
        orjson.loads(raw)
        return True
    except orjson.JSONDecodeError:
        return False
