"""Atomic file writing: every export and session file goes through here.

What is written to: a regular file or a new path, never a FIFO, a device or a
directory (replacing `/dev/null` with a file, as root, is not an export), and
a symbolic link only when asked (`follow_symlink`: its target is written; by
default a link is refused, since replacing it would cut the link).

The temporary file is `.NAME.RANDOM.PID.ctxview-tmp` next to the target. It is
removed when the write fails, on Ctrl+C and on SIGTERM; one left by a process
that was killed outright (SIGKILL, a crash) is recognised by its name and the
dead PID in it and removed by the next write to the same target, so such
leftovers never pile up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Iterator

__all__ = ["TEMP_SUFFIX", "UnsafeTarget", "check_target", "write_atomic"]

TEMP_SUFFIX = ".ctxview-tmp"


class UnsafeTarget(OSError):
    """A path write_atomic must not write: a link (unless followed), a FIFO, a device, a directory."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_target(path: str | os.PathLike[str], *, follow_symlink: bool = False) -> Path:
    """The file a write to `path` replaces: `path` when it is a regular file or does not exist yet, a
    symbolic link's target with `follow_symlink`; UnsafeTarget for anything else."""
    target = Path(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(st.st_mode):
        if not follow_symlink:
            raise UnsafeTarget(f"{target} is a symbolic link; refusing to replace it "
                               "(--follow-symlink writes to the file it points to)")
        target = Path(os.path.realpath(target))
        try:
            st = os.stat(target)
        except FileNotFoundError:
            return target  # a dangling link: its target is created
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise UnsafeTarget(f"{target} is {kind}; ctxview writes only regular files or new paths")
    return target


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, follow_symlink: bool = False) -> None:
    """Write `data` to `path` through a temporary file in the same folder and
    os.replace, so a reader never sees half a file and a failure leaves the
    old file whole. Text is written as UTF-8 with "\\n" line ends.
    `path` is checked first (check_target): UnsafeTarget, an OSError, for a
    link, FIFO, device or directory."""
    target = check_target(path, follow_symlink=follow_symlink)
    folder = target.parent if str(target.parent) else Path(".")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _remove_leftovers(folder, target.name)
    tmp = None
    with _cleanup_on_sigterm():
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".{os.getpid()}{TEMP_SUFFIX}", dir=folder)
            with os.fdopen(fd, "wb") as fh:
                # mkstemp makes the file 0600; give it the mode the old file had,
                # or the one a plain open() would.
                os.fchmod(fh.fileno(), _mode_for(target))
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            raise


class _Terminated(SystemExit):
    """SIGTERM during a write: unwinds like Ctrl+C (the temporary file is removed), then exits 128+15."""


@contextlib.contextmanager
def _cleanup_on_sigterm() -> Iterator[None]:
    # A signal handler can only be set from the main thread; the inspector writes from a worker.
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _remove_leftovers(folder: Path, name: str) -> None:
    """Remove temporary files of earlier writes to `name` whose process is gone (killed mid-write)."""
    prefix = f".{name}."
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        pid_text = entry.name[: -len(TEMP_SUFFIX)].rpartition(".")[2]
        if pid_text.isdigit() and not _alive(int(pid_text)):
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another write of ours, maybe in another thread
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process: leave its file alone
    return True


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
