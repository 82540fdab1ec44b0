"""Atomic file writing: every export and session file goes through here.

What is written to: a regular file or a new path, never a FIFO, a device or a
directory (replacing `/dev/null` with a file, as root, is not an export), and
a symbolic link only when asked (`follow_symlink`: its target is written; by
default a link is refused, since replacing it would cut the link).

The bytes go to a private folder next to the target, `.NAME.RANDOM.PID.ctxview-tmp/`
(mkdtemp: mode 0700), holding a marker file that says which writer made it
(`ctxview-writer`: the target's name, the PID, the host) and the file being
written (`data`), which os.replace then moves over the target. NAME is cut
so that the folder's name fits the file system's NAME_MAX (255 bytes).
The folder is removed when the write ends, fails, on Ctrl+C and on SIGTERM.

One left by a writer killed outright (SIGKILL, a crash) is removed by the
next write to the same target, and only when it proves to be ctxview's own:
a real folder (not a link) owned by this user, named by this scheme, holding
nothing but the marker and `data`, the marker naming this target, this host
and a PID no longer running; `data` not one of the files the caller keeps (the
input), not hard-linked elsewhere, and open nowhere (a write lease, which the
kernel grants only on a file no one has open; where leases are not available,
not open in this process). Any other file, whatever its name, is never
removed: a regular file named like a leftover (an input, a leftover of an
older ctxview) stays.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Iterator

from ctxview.plain_number import plain_number

try:
    import fcntl
except ImportError:  # (not on Windows)
    fcntl = None  # type: ignore[assignment]

__all__ = ["TEMP_SUFFIX", "UnsafeTarget", "check_target", "write_atomic"]

TEMP_SUFFIX = ".ctxview-tmp"


class UnsafeTarget(OSError):
    """A path write_atomic must not write: a link (unless followed), a FIFO, a device, a directory."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_target(path: str | os.PathLike[str], *, follow_symlink: bool = False) -> Path:
    """The file a write to `path` replaces: `path` when it is a regular file or does not exist yet, a
    symbolic link's target with `follow_symlink`; UnsafeTarget for anything else."""
    raw = os.fspath(path)
    if os.path.basename(raw) in ("", ".", ".."):
        # pathlib drops a trailing "/" or "/.": "newdir/" would otherwise become a file named newdir
        raise UnsafeTarget(f"{raw} names a directory, not a file (give a file name)")
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


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, follow_symlink: bool = False,
                 keep: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Write `data` to `path` through a temporary file in the same folder and
    os.replace, so a reader never sees half a file and a failure leaves the
    old file whole. Text is written as UTF-8 with "\\n" line ends.
    `path` is checked first (check_target): UnsafeTarget, an OSError, for a
    link, FIFO, device or directory. `keep`: files that are never removed as
    a dead writer's leftovers, whatever they look like (the input)."""
    target = check_target(path, follow_symlink=follow_symlink)
    folder = target.parent if str(target.parent) else Path(".")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _remove_leftovers(folder, target.name, keep)
    work: str | None = None
    with _cleanup_on_sigterm():
        try:
            work = _make_workdir(folder, target.name)
            tmp = os.path.join(work, DATA_NAME)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                # created 0600; give it the mode the old file had, or the one a plain open() would.
                os.fchmod(fh.fileno(), _mode_for(target))
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        finally:
            if work is not None:
                _discard_workdir(work)


# --- the temporary folder and its marker ---------------------------------------------------------

MARKER_NAME = "ctxview-writer"
DATA_NAME = "data"
_STAMP = "ctxview atomic write 1"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_RANDOM = 8       # the characters mkdtemp puts between prefix and suffix
_PID_ROOM = 10    # digits of the largest PID a name must hold room for (Linux's is 4194304)


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _short_name(folder: Path, name: str) -> str:
    """The start of `name` that, with the dot, the random part, the PID and the suffix, fits NAME_MAX
    bytes (cut between characters). Two targets that share it are told apart by the marker."""
    room = _name_max(folder) - (2 + _RANDOM + 1 + _PID_ROOM + len(TEMP_SUFFIX))
    cut = name
    while len(os.fsencode(cut)) > room:
        cut = cut[:-1]
    return cut


def _stamp(target_name: str, pid: int) -> bytes:
    """What the marker of `pid`'s write to `target_name` holds, to the byte."""
    return (f"{_STAMP}\ntarget {os.fsencode(target_name).hex()}\npid {pid}\n"
            f"host {os.uname().nodename.encode('utf-8', 'surrogateescape').hex()}\n").encode("ascii")


def _make_workdir(folder: Path, target_name: str) -> str:
    """A new private folder for one write, its marker inside; its path."""
    pid = os.getpid()
    work = tempfile.mkdtemp(prefix=f".{_short_name(folder, target_name)}.", suffix=f".{pid}{TEMP_SUFFIX}",
                            dir=folder)
    try:
        fd = os.open(os.path.join(work, MARKER_NAME), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                     0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_stamp(target_name, pid))
    except BaseException:
        _discard_workdir(work)
        raise
    return work


def _discard_workdir(work: str) -> None:
    """Remove this write's own folder (what it made: `data` if still there, the marker, the folder)."""
    for name in (DATA_NAME, MARKER_NAME):
        try:
            os.unlink(os.path.join(work, name))
        except OSError:
            pass
    try:
        os.rmdir(work)
    except OSError:
        pass


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


def _remove_leftovers(folder: Path, name: str, keep: Iterable[str | os.PathLike[str]]) -> None:
    """Remove the folders of earlier writes to `name` whose writer is gone (killed mid-write), each
    only when it proves to be one (see the module's docstring)."""
    prefix = f".{_short_name(folder, name)}."
    try:
        entries = [e.name for e in os.scandir(folder)
                   if e.name.startswith(prefix) and e.name.endswith(TEMP_SUFFIX)]
    except OSError:
        return
    if not entries:
        return
    kept = set()
    for path in keep:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        kept.add((st.st_dev, st.st_ino))
    for entry in entries:
        pid = plain_number(entry[: -len(TEMP_SUFFIX)].rpartition(".")[2], 10)
        if pid is not None and not _alive(pid):
            try:
                _remove_if_leftover(folder, entry, name, pid, kept)
            except OSError:
                pass  # not provably ours, or gone meanwhile: left as it is


def _remove_if_leftover(folder: Path, entry: str, name: str, pid: int, kept: set[tuple[int, int]]) -> None:
    path = os.path.join(folder, entry)
    # Opened, not looked up by name each time: what is checked is what is removed from.
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)  # a link or a file: OSError
    try:
        if os.fstat(dfd).st_uid != os.geteuid():
            return
        names = set(os.listdir(dfd))
        if MARKER_NAME not in names or not names <= {MARKER_NAME, DATA_NAME}:
            return
        if _read_small(dfd, MARKER_NAME) != _stamp(name, pid):
            return
        if DATA_NAME in names and not _unlink_unused(dfd, DATA_NAME, kept):
            return
        os.unlink(MARKER_NAME, dir_fd=dfd)
    finally:
        os.close(dfd)
    os.rmdir(path)  # fails, and leaves it, if anything came into it meanwhile


def _read_small(dfd: int, name: str) -> bytes | None:
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > 4096:
            return None
        return os.read(fd, 4097)
    finally:
        os.close(fd)


def _unlink_unused(dfd: int, name: str, kept: set[tuple[int, int]]) -> bool:
    """Unlink `name` (in the folder `dfd`) if it is a regular file of this user's, not kept, not
    hard-linked elsewhere and open nowhere; whether it was."""
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1
                or (st.st_dev, st.st_ino) in kept or _open_elsewhere(fd, st)):
            return False
        os.unlink(name, dir_fd=dfd)  # under the lease: no one can open it before it is gone
        return True
    finally:
        os.close(fd)  # (releases the lease)


def _open_elsewhere(fd: int, st: os.stat_result) -> bool:
    """Whether the file `fd` reads is open anywhere else. A write lease is granted only on a file no
    other descriptor has open (any process's, this one's included) and is held until `fd` closes."""
    setlease = getattr(fcntl, "F_SETLEASE", None) if fcntl is not None else None
    if setlease is not None:
        try:
            fcntl.fcntl(fd, setlease, fcntl.F_WRLCK)
            return False
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EBUSY):
                return True
    # no leases here (another system, a file system without them): at least not open in this process
    return _open_here(fd, st)


def _open_here(own: int, st: os.stat_result) -> bool:
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd") if n.isdigit()]
    except OSError:
        return True  # cannot tell: keep it
    for fd in fds:
        if fd == own:
            continue
        try:
            other = os.fstat(fd)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


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
