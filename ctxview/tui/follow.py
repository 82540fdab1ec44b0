"""Following the open file: a timer polls it, a thread worker reads what changed.

Polling (toolong polls too on Linux: its PollWatcher reads the open descriptor every
50 ms) rather than a file-watching library such as watchfiles: one stat every half
second costs nothing, works on every file system (inotify misses changes made over
network mounts) and needs no dependency; and the stat and the few bytes
`GrowingSession.poll` compares are what tell an append from a rewrite anyway. What changed is read by `follow_job` in a thread worker,
one read at a time: appended lines alone where the format allows
(formats/growing.py), else the file whole. The app applies the new session
(`FileChanged`) as it applies a load, the view staying where the user is.
Standard input and the bundled demo are not followed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from textual.message import Message as TMessage

from ctxview.tui.failures import one_line

if TYPE_CHECKING:
    from ctxview.formats.growing import GrowingSession, Refresh
    from ctxview.model import Session

__all__ = ["FOLLOW_INTERVAL", "FileChanged", "FileFollower", "FollowFailed", "follow_job", "followable"]

FOLLOW_INTERVAL = 0.5   # seconds between two polls (CtxviewApp(follow_interval=...) for tests)

Post = Callable[[TMessage], object]


@dataclass
class FileChanged(TMessage):
    """The file was read again (or is gone: `refresh.change` is GONE and the session the old one)."""

    refresh: Refresh


@dataclass
class FollowFailed(TMessage):
    """Reading the changed file failed (one line): the session shown stays."""

    error: str


def followable(path: str | None) -> bool:
    """Whether a path given on the command line is a file to follow (not the demo, not stdin)."""
    return path is not None and path != "-"


def follow_job(post: Post, follower: FileFollower, change: str) -> None:
    """Read what `change` calls for; post FileChanged, or FollowFailed."""
    try:
        refresh = follower.growing.refresh(change)  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - a bad line appended: one line, the session shown stays
        post(FollowFailed(one_line(exc)))
        return
    post(FileChanged(refresh))


class FileFollower:
    """The file the app follows. The load worker reads it first (`load`: the loaders are imported
    there, off the UI thread); then `poll`, on the app's timer, starts `read(change)` (the app's
    thread worker running follow_job) for a change, never while a read is in flight."""

    def __init__(self, path: str, fmt: str | None, lenient: bool, read: Callable[[str], None]) -> None:
        self.path, self.fmt, self.lenient = path, fmt, lenient
        self.growing: GrowingSession | None = None
        self._read = read
        self.reading = False
        self.timer: Any = None

    def load(self) -> Session:
        from ctxview.formats.growing import GrowingSession

        growing = GrowingSession(self.path, self.fmt, self.lenient)
        session = growing.load()
        # Polled only once read: the timer may run while this load does (a big transcript's history
        # is read after its tail is on screen, and the tail starts the timer).
        self.growing = growing
        return session

    def poll(self) -> None:
        from ctxview.formats.growing import GONE, SAME

        growing = self.growing
        if self.reading or growing is None:
            return
        change = growing.poll()
        if change == SAME or (change == GONE and growing.gone):
            return  # (a vanished file is said once)
        self.read(change)

    def reload(self) -> None:
        """`R`: read the file whole."""
        from ctxview.formats.growing import RELOAD

        if not self.reading and self.growing is not None:
            self.read(RELOAD)

    def read(self, change: str) -> None:
        self.reading = True
        self._read(change)

    def done(self) -> None:
        """The read started last is over (FileChanged or FollowFailed arrived)."""
        self.reading = False
