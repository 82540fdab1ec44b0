"""Input files: checking that a path is a readable regular file, opening it read-only, and standard input.

Files are opened read-only ("rb") and never written. A file is read no further
than its size at the check plus GROWTH_ALLOWANCE (a live transcript may grow);
standard input is held whole up to MAX_STDIN_BYTES. Every failure is a LoadError.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from ctxview.formats.errors import LoadError

__all__ = ["GROWTH_ALLOWANCE", "Input", "MAX_STDIN_BYTES", "READ_BUFFER", "ReadMeter", "check_path", "open_input",
           "open_read_only", "read_at", "read_stdin", "same_file", "writes_over_input"]

READ_BUFFER = 1 << 20
MAX_STDIN_BYTES = 1 << 30         # standard input is held whole: at most 1 GiB
GROWTH_ALLOWANCE = 64 << 20       # a file may grow by this much while it is read (a live transcript)


@dataclass
class Input:
    """An input file (or stdin's bytes), checked to be readable."""

    name: str                      # shown in messages
    path: Path | None = None       # None for stdin
    data: bytes | None = None      # stdin's content
    size: int = 0

    def open(self, peek: bool = False) -> BinaryIO:
        """The file, read-only. A ReadMeter watching is told how far the read gets, unless it is a
        `peek` at the start (what the file is: a progress figure would show that read as the load's)."""
        if self.data is not None:
            return io.BytesIO(self.data)
        # read-only, always; a 1 MB buffer reads a big file in a tenth of the system calls
        fd = _open_regular(self.name, self.path)
        meter = None if peek else _METER.get()
        return io.BufferedReader(_CappedFile(fd, self.name, self.size + GROWTH_ALLOWANCE, meter, self.size),
                                 READ_BUFFER)

    def head(self, size: int = 65536) -> bytes:
        if self.data is not None:
            return self.data[:size]
        with self.open(peek=True) as f:
            return f.read(size)


class ReadMeter:
    """How far into its file the read going on in another thread is, for a progress figure.

    A loader running inside `watching()` (in its own thread) opens its file through Input.open(),
    which hands the meter to the file: each buffer fill (1 MB) writes where the read got to. The
    thread showing the figure reads `done` and `size`, two ints, and never touches the file."""

    __slots__ = ("done", "size")

    def __init__(self) -> None:
        self.done = 0   # bytes from the start of the file to where the latest read got
        self.size = 0   # the size of the file being read (0: none yet)

    @contextmanager
    def watching(self) -> Iterator[ReadMeter]:
        token = _METER.set(self)
        try:
            yield self
        finally:
            _METER.reset(token)

    def percent(self) -> int | None:
        """The whole percent of the file read so far (0 to 100), or None when no file is being read."""
        return min(self.done * 100 // self.size, 100) if self.size > 0 else None

    def _opened(self, size: int) -> None:
        self.done, self.size = 0, size


_METER: ContextVar[ReadMeter | None] = ContextVar("ctxview_read_meter", default=None)


class _CappedFile(io.FileIO):
    """A file read no further than `limit` bytes: one that grows without end while it is read (something
    appending to it, a file system that makes up content) is cut off with a LoadError instead of filling
    memory or never ending. The check runs once per buffer fill (1 MB), not per line; so does the
    report to a ReadMeter, when one watches."""

    def __init__(self, fd: int, shown: str, limit: int, meter: ReadMeter | None = None, size: int = 0) -> None:
        super().__init__(fd, "rb", closefd=True)
        self._shown, self._limit, self._meter = shown, limit, meter
        if meter is not None:
            meter._opened(size)

    def _check(self) -> None:
        at = self.tell()
        if self._meter is not None:
            self._meter.done = at
        if at > self._limit:
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


def open_read_only(path: str | os.PathLike) -> io.FileIO:
    """The regular file `path`, opened read-only and unbuffered (to read into a buffer of one's own);
    LoadError when it is not one or cannot be opened."""
    name = os.fspath(path)
    return io.FileIO(_open_regular(name, None), "rb", closefd=True)


def read_at(path: str | os.PathLike, offset: int, size: int) -> bytes:
    """Up to `size` bytes of the regular file `path` from `offset`, read-only (what a follower
    compares with what it read before); LoadError when it cannot be read."""
    name = os.fspath(path)
    fd = _open_regular(name, None)
    try:
        return os.pread(fd, size, offset)
    except OSError as exc:
        raise _os_error(name, exc) from None
    finally:
        os.close(fd)


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


_ZIP_MAGIC = b"PK\x03\x04"   # (inspect_eval_zip.ZIP_MAGIC, which reads its archives through this module)


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
            if total == 0 and piece.startswith(_ZIP_MAGIC):   # (an archive is read by seeking in it)
                raise LoadError("<stdin>", "a zip archive (an Inspect AI .eval log?) cannot be read from standard "
                                           "input: give its path")
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



def same_file(target: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether `target` names the file `path`, however named (another path, a link, a hard link)."""
    try:
        if Path(target).resolve() == Path(path).resolve():
            return True
        return os.path.samefile(target, path)
    except (OSError, RuntimeError):
        return False


def writes_over_input(target: str | os.PathLike, inputs: Iterable[str | os.PathLike | None]) -> bool:
    """Whether writing `target` would overwrite a file the session was read from: one of `inputs` (the
    session file, a capture log), a file in a session file's companion folder (`NAME/` beside
    `NAME.jsonl`: Claude Code keeps sub-agent transcripts and tool outputs there, and reads them with the
    session), or the transcript a sub-agent file belongs to."""
    try:
        where = Path(target).resolve()
    except (OSError, RuntimeError):
        return False
    for source in inputs:
        if source is None or str(source) == "-":
            continue
        if same_file(where, source):
            return True
        path = Path(source).resolve()
        companion = path.with_suffix("")
        if companion != path and companion.is_dir() and companion in where.parents:
            return True
        if path.parent.name == "subagents" and where == path.parent.parent.with_suffix(".jsonl"):
            return True
    return False
