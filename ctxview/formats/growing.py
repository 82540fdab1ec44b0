"""A session file that may still be written to: read, then brought up to date with what changed.

`GrowingSession.poll()` compares the file with what was read of it (its stat, its first bytes and the
bytes just before where reading stopped) and names the change: none, lines appended, rewritten
(shrunk, replaced, or its bytes already read changed), gone. `refresh()` reads it again: a Claude Code
transcript only from the end of its last complete line (claude_code.Resumable: the scan goes on and the
session is rebuilt from it), every other format whole, as JSON documents are written whole. Standard
input is never followed. Nothing here watches: the caller polls (tui/follow.py, every half second).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ctxview.gcpause import paused_gc
from ctxview.model import Session
from ctxview.formats import claude_code
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import check_path, open_input, read_at
from ctxview.formats.parsing.json_lines import detect_layout
from ctxview.formats.registry import within_limits, detect_format, load_input, load_own_in_pieces

__all__ = ["APPENDED", "CHANGED", "GONE", "GrowingSession", "RELOAD", "Refresh", "REWRITTEN", "SAME"]

SAME, APPENDED, CHANGED, REWRITTEN, GONE = "same", "appended", "changed", "rewritten", "gone"
RELOAD = "reload"    # asked for by hand (the inspector's R)
HEAD_BYTES = 4096    # a file written anew from the start differs here
MARK_BYTES = 256     # a file rewritten further on differs just before where reading stopped


@dataclass(frozen=True, slots=True)
class _Seen:
    """The file as last read."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    end: int          # where reading stopped: the end of the last complete line (of the file, for a document)
    head: bytes
    mark: bytes       # the MARK_BYTES before `end`


@dataclass(frozen=True, slots=True)
class Refresh:
    """What a refresh read: the session, the change it answered (poll's, or RELOAD), whether the
    file was read whole (else only the lines appended), and what to tell the user ('' for nothing)."""

    session: Session
    change: str
    whole: bool
    notice: str


class GrowingSession:
    """A session file, read, and read again as it changes. `session` is the last one read."""

    def __init__(self, path: str | os.PathLike, format: str | None = None, lenient: bool = False) -> None:
        self.path = os.fspath(path)
        self.format = format
        self.lenient = lenient
        self.session: Session | None = None
        self._resumable: claude_code.Resumable | None = None
        self._seen: _Seen | None = None
        self.gone = False

    @property
    def appends(self) -> bool:
        """Whether appended lines are read alone (else a change reloads the file whole)."""
        return self._resumable is not None

    def load(self) -> Session:
        """Read the file whole (LoadError for bad input, as load_session)."""
        st = check_path(self.path)  # before reading: what is appended meanwhile is read next time
        inp = open_input(self.path)
        self._resumable = None
        session = load_own_in_pieces(inp, self.format)  # a big ctxview file: a document, no lines to follow
        end = st.st_size
        if session is None:
            layout = detect_layout(inp)
            if layout == "jsonl" and (self.format or detect_format(self.path)) == claude_code.FORMAT:
                with paused_gc():
                    resumable = claude_code.Resumable(inp, self.lenient)
                session = within_limits(inp, resumable.session, arguments=False)  # (checked as read)
                self._resumable, end = resumable, resumable.end
            else:
                session = load_input(inp, self.format, self.lenient, layout, own_tried=True)
        self._remember(st, end)
        self.session, self.gone = session, False
        return session

    def _remember(self, st: os.stat_result, end: int) -> None:
        self._seen = _Seen(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, end,
                           read_at(self.path, 0, HEAD_BYTES), read_at(self.path, max(end - MARK_BYTES, 0),
                                                                        min(end, MARK_BYTES)))

    def poll(self) -> str:
        """How the file changed since it was read: SAME, APPENDED (it grew, what was read unchanged),
        CHANGED (same size, newer: read whole), REWRITTEN (shrunk, replaced, the bytes read changed)
        or GONE."""
        seen = self._seen
        if seen is None:
            raise RuntimeError("poll() before load()")
        try:
            st = os.stat(self.path)
            if self.gone or (st.st_dev, st.st_ino) != (seen.dev, seen.ino) or st.st_size < seen.size:
                return REWRITTEN
            if st.st_size == seen.size and st.st_mtime_ns == seen.mtime_ns:
                return SAME
            if (read_at(self.path, 0, len(seen.head)) != seen.head
                    or read_at(self.path, seen.end - len(seen.mark), len(seen.mark)) != seen.mark):
                return REWRITTEN
        except (OSError, LoadError):
            return GONE
        if st.st_size > seen.size:
            return APPENDED
        # Touched, or rewritten in place to the same size: a transcript's lines read are the same
        # (head and mark), a document may hold anything
        return SAME if self._resumable is not None else CHANGED

    def refresh(self, change: str) -> Refresh:
        """Read what `change` (poll's, or RELOAD) calls for. A LoadError leaves `session` as it was,
        and the file is not read again until it changes from what it was when this read began (then
        whole): what was appended while the read failed (one that grew past the allowance, say)
        is read by the next refresh."""
        name = self.path
        if change == GONE:
            self.gone = True
            return Refresh(self.session, GONE, False, f"{name} is gone: showing what was read")  # type: ignore[arg-type]
        try:
            before: os.stat_result | None = os.stat(self.path)  # never more than the read below saw
        except OSError:
            before = None
        try:
            if change == APPENDED and self._resumable is not None:
                st = check_path(self.path)
                inp = open_input(self.path)
                with paused_gc():
                    session = within_limits(inp, self._resumable.appended(inp), arguments=False)
                self._remember(st, self._resumable.end)
                self.session, self.gone = session, False
                return Refresh(session, APPENDED, False, "")
            session = self.load()
        except LoadError:
            self._resumable = None
            try:
                if before is None:
                    raise FileNotFoundError(self.path)
                # A bad file is not read again until it changes; the size remembered is the one from
                # before the read (a stat now could count bytes appended since that were never read)
                self._remember(before, before.st_size)
            except (OSError, LoadError):
                self.gone = True
            raise
        notice = {APPENDED: "", REWRITTEN: f"{name} was rewritten or truncated: reloaded whole",
                  CHANGED: f"{name} changed: reloaded whole"}.get(change, f"{name}: reloaded")
        return Refresh(session, change, True, notice)
