"""The hostile corpus (tests/hostile/make_corpus.py) through the real `ctxview` command.

Every case runs as a subprocess in the corpus folder and must: exit with its status; print no
traceback; on failure end with exactly one line `ctxview: error: ...` holding the expected words
(after at most ctxview's own warnings), on stderr; let no terminal-active or invisible character
from the input reach stdout or stderr raw; write strict JSON where JSON is asked for; leave its
protected files as they were.

The subprocess timeout is a guard that turns a hang into a failure instead of a stuck run; the
speed of each scan is measured by ratios in test_hostile_scans.py, not here.
"""

from __future__ import annotations

import errno
import json
import os
import pty
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

from make_corpus import EVIL_NAME, LONG_NAME, MARKERS, Case, write_corpus  # noqa: E402

from ctxview.sanitize import UNSAFE  # noqa: E402

HANG_GUARD = 120  # seconds; see the module docstring
CTXVIEW = [sys.executable, "-m", "ctxview"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return folder, {c.name: c for c in write_corpus(folder)}


def _cases() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return [c.name for c in write_corpus(tmp)]


CASE_NAMES = _cases()


def _snapshot(folder: Path, names) -> dict:
    out = {}
    for name in names:
        p = folder / name
        st = os.lstat(p)
        data = os.readlink(p) if stat.S_ISLNK(st.st_mode) else p.read_bytes()
        out[name] = (stat.S_IFMT(st.st_mode), data)
    return out


def _read_all(fd: int, into: list) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as exc:  # EIO: the other side closed
            if exc.errno == errno.EIO:
                return
            raise
        if not chunk:
            return
        into.append(chunk)


def run_case(folder: Path, case: Case) -> tuple[int, bytes, str]:
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color", "NO_COLOR": ""}
    env.pop("NO_COLOR")
    stdin = subprocess.DEVNULL
    if case.stdin is not None:
        stdin = open(case.stdin if case.stdin.startswith("/") else folder / case.stdin, "rb")  # noqa: SIM115
    try:
        if case.stdout == "tty":
            master, slave = pty.openpty()
            got: list[bytes] = []
            reader = threading.Thread(target=_read_all, args=(master, got))
            reader.start()
            proc = subprocess.run(CTXVIEW + case.args, cwd=folder, stdin=stdin, stdout=slave,
                                  stderr=subprocess.PIPE, env=env, timeout=HANG_GUARD)
            os.close(slave)
            reader.join()
            os.close(master)
            return proc.returncode, b"".join(got), proc.stderr.decode("utf-8", "replace")
        if case.stdout == "full":
            with open("/dev/full", "wb") as full:
                proc = subprocess.run(CTXVIEW + case.args, cwd=folder, stdin=stdin, stdout=full,
                                      stderr=subprocess.PIPE, env=env, timeout=HANG_GUARD)
            return proc.returncode, b"", proc.stderr.decode("utf-8", "replace")
        if case.stdout == "broken pipe":
            read_end, write_end = os.pipe()
            os.close(read_end)  # as `| head -0` leaves it: every write is EPIPE
            try:
                proc = subprocess.run(CTXVIEW + case.args, cwd=folder, stdin=stdin, stdout=write_end,
                                      stderr=subprocess.PIPE, env=env, timeout=HANG_GUARD)
            finally:
                os.close(write_end)
            return proc.returncode, b"", proc.stderr.decode("utf-8", "replace")
        if case.stdout == "closed":
            # fd 1 closed in the child before exec, as `ctxview ... >&-` does
            proc = subprocess.run(CTXVIEW + case.args, cwd=folder, stdin=stdin, stderr=subprocess.PIPE,
                                  env=env, timeout=HANG_GUARD, preexec_fn=lambda: os.close(1))
            return proc.returncode, b"", proc.stderr.decode("utf-8", "replace")
        proc = subprocess.run(CTXVIEW + case.args, cwd=folder, stdin=stdin, capture_output=True, env=env,
                              timeout=HANG_GUARD)
        return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()


@pytest.mark.parametrize("name", CASE_NAMES)
def test_hostile_case(corpus, name):
    folder, cases = corpus
    case = cases[name]
    before = _snapshot(folder, case.unchanged)
    code, out, err = run_case(folder, case)

    assert "Traceback" not in err, err[-2000:]
    assert code == case.exit, f"exit {code}, expected {case.exit}; stderr: {err[-500:]}"
    lines = err.splitlines()
    if case.error is not None:
        # one error line, last; before it at most ctxview's own notes (prepare warns of a missing model)
        errors = [line for line in lines if line.startswith("ctxview: error: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], err[-1000:]
        assert all(line.startswith(("ctxview: warning: ", "ctxview: note: ")) for line in lines[:-1]), err[-1000:]
        assert case.error in errors[0], errors[0]
    else:
        assert all(not line.startswith("ctxview: error:") for line in lines), err
    # Nothing from the input reaches a terminal raw: stderr holds no unsafe character at all.
    assert UNSAFE.search(err) is None, repr(err[:300])
    text = out.decode("utf-8", "replace")
    if case.stdout == "tty":
        # Rich writes its own colours on a terminal: check for the payload's sequences and characters.
        for marker in MARKERS:
            assert marker not in text, repr(marker)
    else:
        assert UNSAFE.search(text) is None, repr(text[:300])
    if case.stdout == "json":
        orjson.loads(out)  # strict: no NaN, no Infinity, no lone surrogate (orjson refuses them all)
    assert _snapshot(folder, case.unchanged) == before
    if case.after:
        AFTER[case.after](folder, out, err)


def _replacement_char(folder, out, err):
    assert "a\ufffdb \ufffd" in out.decode()


def _nan_as_null(folder, out, err):
    doc = orjson.loads(out)
    text = json.dumps(doc)
    assert "NaN" not in text and "Infinity" not in text
    assert '"a": null' in text.replace('\\"', '"') or '"a": null' in text


def _wrote_evil_name(folder, out, err):
    assert (folder / (EVIL_NAME + ".out.json")).is_file()  # the name as given
    assert "wrote" in err and "␛]0;PWNED␇<U+202E>" in err  # shown sanitized


def _link_target_written(folder, out, err):
    assert os.path.islink(folder / "link.json")
    assert orjson.loads((folder / "link-target.json").read_bytes())["messages"]


def _dev_null_intact(folder, out, err):
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _fifo_intact(folder, out, err):
    assert stat.S_ISFIFO(os.lstat(folder / "out.fifo").st_mode)


def _stale_temp_removed(folder, out, err):
    left = [p.name for p in folder.iterdir() if p.name.startswith(".stale-target.json.")]
    assert left == [], left
    assert orjson.loads((folder / "stale-target.json").read_bytes())["messages"]


def _no_newdir(folder, out, err):
    assert not os.path.lexists(folder / "newdir")


def _long_name_written(folder, out, err):
    assert orjson.loads((folder / LONG_NAME).read_bytes())["messages"]
    assert [p.name for p in folder.iterdir() if p.name.startswith(".n")] == []  # no temporary left


def _cost_of_10_27(folder, out, err):
    doc = orjson.loads(out)
    assert doc["cost"]["usd"] == 1e27 and doc["usage"]["input"] == 10**18, (doc["usage"], doc["cost"])


AFTER = {
    "cost of 10^27": _cost_of_10_27,
    "no newdir": _no_newdir,
    "long name written": _long_name_written,
    "replacement char": _replacement_char,
    "nan as null": _nan_as_null,
    "wrote evil name": _wrote_evil_name,
    "link target written": _link_target_written,
    "dev null intact": _dev_null_intact,
    "fifo intact": _fifo_intact,
    "stale temp removed": _stale_temp_removed,
}


def test_every_class_of_the_issue_has_cases(corpus):
    _, cases = corpus
    by_class: dict[str, int] = {}
    for case in cases.values():
        by_class[case.cls] = by_class.get(case.cls, 0) + 1
    assert set(by_class) == {"hang", "special", "limits", "crash", "escape", "write"}
    assert min(by_class.values()) >= 5, by_class


# --- signals during -o: the temporary file goes ------------------------------------------------

# Deterministic: the child takes Ctrl+C as an interactive Python does even when it was started with
# SIGINT ignored (a background job, `nohup`, some test runners: Python then installs no handler and the
# signal did nothing, the write went through); the signal goes to the main thread itself
# (pthread_kill), and the call after it runs its handler before fsync returns.
_KILL_DURING_WRITE = """
import os, signal, sys, threading
import ctxview.atomic as atomic
from ctxview.cli.commands import main

signal.signal(signal.SIGINT, signal.default_int_handler)

def handled():  # a call into Python code: the interpreter runs a pending handler here
    pass

def fsync(fd):  # the moment the temporary file is written and not yet renamed
    signal.pthread_kill(threading.main_thread().ident, signal.{sig})
    handled()
    raise AssertionError("the signal was not handled")  # a handled signal never lets it get here

atomic.os.fsync = fsync
sys.exit(main(["prepare", sys.argv[1], "-o", sys.argv[2]]))
"""


@pytest.mark.parametrize("sig, status", [("SIGTERM", 128 + 15), ("SIGINT", 130), ("SIGKILL", -9)])
def test_a_signal_during_prepare_o(tmp_path, sig, status):
    source = tmp_path / "in.json"
    source.write_text(json.dumps([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]))
    target = tmp_path / "out.json"
    target.write_text("old")
    code = _KILL_DURING_WRITE.replace("{sig}", sig)
    proc = subprocess.run([sys.executable, "-c", code, str(source), str(target)], capture_output=True,
                          timeout=HANG_GUARD, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.returncode == status, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert target.read_text() == "old"  # the old file whole
    temps = [p.name for p in tmp_path.iterdir() if p.name.endswith(".ctxview-tmp")]
    if sig == "SIGKILL":
        # nothing can clean up after SIGKILL; the next write to the same target does
        assert len(temps) == 1
        assert subprocess.run(CTXVIEW + ["prepare", str(source), "-o", str(target)], capture_output=True,
                              timeout=HANG_GUARD).returncode == 0
        temps = [p.name for p in tmp_path.iterdir() if p.name.endswith(".ctxview-tmp")]
    assert temps == []


def test_sigterm_handler_is_restored_after_a_write(tmp_path):
    from ctxview.atomic import write_atomic

    before = signal.getsignal(signal.SIGTERM)
    write_atomic(tmp_path / "x.json", "{}")
    assert signal.getsignal(signal.SIGTERM) is before


def test_leftovers_of_live_processes_and_other_targets_are_kept(tmp_path):
    from ctxview.atomic import write_atomic

    mine = tmp_path / f".x.json.abc.{os.getpid()}.ctxview-tmp"  # a live PID: maybe being written now
    other = tmp_path / ".y.json.abc.1.ctxview-tmp"               # another target's
    unrelated = tmp_path / ".x.json.notes"
    for p in (mine, other, unrelated):
        p.write_text("keep")
    write_atomic(tmp_path / "x.json", "{}")
    assert mine.exists() and other.exists() and unrelated.exists()


# --- in-process: caps that would take a gigabyte through a subprocess ---------------------------

class _Stdin:
    def __init__(self, chunk: bytes):
        self.chunk = chunk
        self.reads = 0

    def read(self, n: int) -> bytes:  # an endless pipe
        self.reads += 1
        return (self.chunk * (n // len(self.chunk) + 1))[:n]


def test_endless_stdin_is_cut_off_at_the_cap(monkeypatch, capsys):
    from ctxview.cli import commands as cli
    from ctxview.formats import inputs

    monkeypatch.setattr(inputs, "MAX_STDIN_BYTES", 3 << 20)
    fake = _Stdin(b'{"role": "user", "content": "yes"}\n')
    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": fake})())
    assert cli.main(["report", "-"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "standard input is larger than 3 MiB" in err
    assert fake.reads <= 5  # read a MiB at a time, stopped at the cap


def test_nul_on_stdin_names_its_line_and_column():
    from ctxview.formats import LoadError
    from ctxview.formats.parsing.jsonio import READ_BUFFER, read_stdin

    import io

    data = b"a\n" * (READ_BUFFER // 2) + b"xyz\0"  # the NUL in the second piece read
    with pytest.raises(LoadError) as exc:
        read_stdin(io.BytesIO(data))
    assert (exc.value.line, exc.value.column) == (READ_BUFFER // 2 + 1, 4)


def test_a_file_that_grows_while_read_is_cut_off(tmp_path, monkeypatch):
    from ctxview.formats import LoadError, load_session
    from ctxview.formats import inputs

    line = b'{"type":"user","uuid":"u%d","parentUuid":null,"message":{"role":"user","content":"hi"}}\n'
    p = tmp_path / "growing.jsonl"
    p.write_bytes(line % 0 + line % 1)
    monkeypatch.setattr(inputs, "GROWTH_ALLOWANCE", 1 << 20)
    real_open = inputs.open_input

    def open_then_grow(path):  # what `something >> file` does between the stat and the read
        inp = real_open(path)
        with open(p, "ab") as f:
            f.write(b"".join(line % i for i in range(2, 40_000)))  # 3.5 MB more
        return inp

    monkeypatch.setattr("ctxview.formats.registry.open_input", open_then_grow)
    with pytest.raises(LoadError, match="grew by more than 1 MiB while it was read"):
        load_session(p)
