"""Hostile input to the session index (`ctxview sessions`, the browser's list): the index cache, file
names and times, deep trees, long first lines, message counts. Every input is made here, at test time.

The cache cases that once hung or ate memory run as subprocesses with a hang guard (a timeout that
turns a hang into a failure, not a speed limit) and an address-space limit (reading /dev/zero or a
1 GiB file ends in MemoryError instead of taking the machine's memory).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ctxview.export.bodies import dumps
from ctxview.formats.registry import load_session
from ctxview.sessions import build_index, cache_path, index_cache, index_file
from ctxview.sessions.columns import cells, table
from ctxview.sessions.index import HEAD_BYTES, ROW_FIELDS, TAIL_BYTES
from test_sessions_cache import env, home  # noqa: F401 (home: a fixture)
from test_sessions_index import by_name, write_claude

HANG_GUARD = 120  # seconds; see the module docstring
MEMORY = 1 << 30  # bytes of address space for the subprocess (ctxview sessions needs ~300 MiB)
FIXTURES = Path(__file__).parent / "fixtures" / "samples" / "claude-code"
SPOTTER = FIXTURES / "spotter-258c7280" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_sessions(args: list[str], e: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")}
    full.update(e, COLUMNS="200")  # (the places follow HOME)
    return subprocess.run([sys.executable, "-m", "ctxview", "sessions", *args], capture_output=True, env=full,
                          timeout=HANG_GUARD, preexec_fn=_limit_memory)


def _no_traceback(proc: subprocess.CompletedProcess) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return err


# --- the cache file: special files and sizes ----------------------------------------------------

def _cache_fifo(where: Path) -> None:
    os.mkfifo(where)


def _cache_dev_zero(where: Path) -> None:
    os.symlink("/dev/zero", where)


def _cache_sparse(where: Path) -> None:
    with open(where, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of holes: no disk used


@pytest.mark.parametrize("make, said", [(_cache_fifo, "named pipe"), (_cache_dev_zero, "character device"),
                                        (_cache_sparse, "more than a cache can be")],
                         ids=["fifo", "link-to-dev-zero", "sparse-1GiB"])
def test_a_cache_that_is_no_cache_file_is_passed_over_in_one_line(tmp_path, home, make, said):
    e = env(tmp_path, home)
    where = cache_path(e)
    where.parent.mkdir(parents=True)
    make(where)
    proc = run_sessions([], e)
    err = _no_traceback(proc)
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "3 sessions" in out and "prompt of s1" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxview: warning: session index cache") and said in lines[0]
    if make is not _cache_sparse:  # never replaced: it is no file of ctxview's
        assert not where.is_file() or where.is_symlink()


# --- the cache file: rows of the wrong type or for another file ---------------------------------

def _cached(e) -> dict:
    return orjson.loads(cache_path(e).read_bytes())


FIELD = {name: i + 2 for i, name in enumerate(ROW_FIELDS)}  # (after size and mtime)

BAD_VALUES = [("title", 5), ("size_bytes", "1"), ("messages", "12"), ("tokens", [1]), ("format", {"a": 1}),
              ("updated", "\x1b]0;PWNED\x07"), ("started", "2026-01-01T00:00:00Z\x1b[2J"), ("messages_estimated", 1),
              ("model", ["gpt"]), ("mtime_ns", "0")]


@pytest.mark.parametrize("field, value", BAD_VALUES, ids=[f"{f}={v!r}" for f, v in BAD_VALUES])
def test_a_cached_field_of_the_wrong_type_is_dropped_and_read_again(tmp_path, home, field, value):
    e = env(tmp_path, home)
    fresh = build_index(env=e)
    data = _cached(e)
    key = next(k for k in data["rows"] if k.endswith("s1.jsonl"))
    data["rows"][key][FIELD[field]] = value
    cache_path(e).write_bytes(orjson.dumps(data))
    notices: list[str] = []
    rows = build_index(env=e, notice=notices.append)
    assert rows == fresh  # the row rebuilt from its file
    assert len(notices) == 1 and "1 row of the wrong shape" in notices[0]
    shown = table(rows)
    assert "\x1b" not in shown and "\x07" not in shown
    dumps([r.as_json() for r in rows])  # (the --json output)
    assert _cached(e)["rows"][key] == [*fresh_entry(fresh, key)]  # and the cache is mended


def fresh_entry(rows, key):
    row = next(r for r in rows if r.path == key)
    return [row.size_bytes, row.mtime_ns, *row.as_list()]


def test_a_cached_row_is_only_used_for_the_file_it_is_keyed_by(tmp_path, home):
    e = env(tmp_path, home)
    fresh = build_index(env=e)
    data = _cached(e)
    claude = next(k for k in data["rows"] if k.endswith("s1.jsonl"))
    codex = next(k for k in data["rows"] if k.endswith("rollout-r1.jsonl"))
    forged = list(data["rows"][codex])  # the Codex row, size and mtime made the Claude file's
    forged[0], forged[1] = data["rows"][claude][0], data["rows"][claude][1]
    forged[FIELD["size_bytes"]], forged[FIELD["mtime_ns"]] = forged[0], forged[1]
    data["rows"][claude] = forged
    cache_path(e).write_bytes(orjson.dumps(data))
    notices: list[str] = []
    rows = build_index(env=e, notice=notices.append)
    assert sorted(r.path for r in rows) == sorted(r.path for r in fresh)  # each file once, none twice
    assert rows == fresh and len(notices) == 1


def test_a_timestamp_with_an_escape_never_reaches_the_terminal(tmp_path, home):
    e = env(tmp_path, home)
    build_index(env=e)
    data = _cached(e)
    for entry in data["rows"].values():
        entry[FIELD["updated"]] = "\x1b]0;PWNED\x07\x1b[2J"
    cache_path(e).write_bytes(orjson.dumps(data))
    proc = run_sessions([], e)
    _no_traceback(proc)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout
    assert b"\x1b" not in proc.stderr


# --- file names and times -----------------------------------------------------------------------

def _latin1_tree(tmp_path) -> Path:
    """Sessions of which one has a name that is not UTF-8, and one is in a Latin-1 project folder."""
    root = tmp_path / "tree"
    good = write_claude(root, "/home/me/a", "good")
    data = good.read_bytes()
    folder = os.fsencode(good.parent)
    with open(folder + b"/caf\xe9-session.jsonl", "wb") as f:
        f.write(data)
    latin = os.fsencode(root / ".claude" / "projects") + b"/-home-caf\xe9-src"
    os.makedirs(latin)
    with open(latin + b"/s2.jsonl", "wb") as f:
        f.write(data)
    return root


@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_a_file_name_that_is_not_utf8_hides_no_session(tmp_path, json_out):
    root = _latin1_tree(tmp_path)
    e = {"HOME": str(root), index_cache.CACHE_ENV: str(tmp_path / "cache")}
    for _ in range(2):  # cold, then with the cache the first run wrote
        proc = run_sessions(["--json"] if json_out else [], e)
        _no_traceback(proc)
        assert proc.returncode == 0
        if json_out:
            rows = json.loads(proc.stdout)
            assert len(rows) == 3 and sum("caf\ufffd" in r["path"] for r in rows) == 2
        else:
            out = proc.stdout.decode("utf-8")  # valid UTF-8 (a name's bad byte would show as <U+DCE9>)
            assert "3 sessions" in out and out.count("prompt of good") == 3


class _Stat:
    def __init__(self, st: os.stat_result, mtime_ns: int) -> None:
        self.st_mode, self.st_size, self.st_mtime_ns = st.st_mode, st.st_size, mtime_ns


@pytest.mark.parametrize("mtime_ns", [int(3.2e22), -int(3.2e22)], ids=["year-1e6", "negative-huge"])
def test_a_time_outside_the_calendar_hides_no_session(tmp_path, home, monkeypatch, mtime_ns):
    project = home / ".claude" / "projects" / "-home-me-a"
    odd = project / "odd.jsonl"  # no timestamp inside: the file's time is its date
    odd.write_text('{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}\n')
    empty = project / "empty.jsonl"
    empty.write_bytes(b"")
    real_stat = os.stat

    def stat(path, *args, **kw):
        st = real_stat(path, *args, **kw)
        return _Stat(st, mtime_ns) if str(path).endswith(("odd.jsonl", "empty.jsonl")) else st

    monkeypatch.setattr(os, "stat", stat)
    rows = by_name(build_index(env={"HOME": str(home)}, cache=False))
    assert set(rows) == {"s1.jsonl", "rollout-r1.jsonl", "session-g1.jsonl", "odd.jsonl", "empty.jsonl"}
    assert rows["odd.jsonl"].updated is None and rows["odd.jsonl"].format == "claude-code"
    assert cells(rows["odd.jsonl"])[0] == "?"  # an unknown date
    assert "5 sessions" in table(list(rows.values()))


def test_a_tree_1500_folders_deep_is_walked(tmp_path):
    deep = tmp_path / "deep"
    folder = str(deep)
    for _ in range(1501):  # (os.makedirs recurses too)
        os.mkdir(folder)
        folder += "/d"
    folder = folder[:-2]
    src = write_claude(tmp_path / "src", "/p", "bottom")
    with open(os.path.join(folder, "bottom.jsonl"), "wb") as f:
        f.write(src.read_bytes())
    try:
        rows = build_index(deep, cache=False)
        assert [os.path.basename(r.path) for r in rows] == ["bottom.jsonl"] and rows[0].problem is None
    finally:  # (pytest's clean-up of tmp_path recurses: the tree is taken down here, bottom up)
        os.unlink(os.path.join(folder, "bottom.jsonl"))
        while folder != str(tmp_path):
            os.rmdir(folder)
            folder = os.path.dirname(folder)


def test_a_first_line_longer_than_the_head_is_no_half_written_file(tmp_path):
    prompt = "Explain this log: " + "x" * (HEAD_BYTES + 20_000)
    path = write_claude(tmp_path, "/p", "long", n=60, result_chars=2000)
    lines = path.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[3])  # the typed prompt becomes the first line, longer than the head
    first["message"]["content"] = prompt
    path.write_bytes(json.dumps(first, separators=(",", ":")).encode() + b"\n" + b"".join(lines[4:]))
    assert path.stat().st_size > HEAD_BYTES + TAIL_BYTES and b"\n" not in path.read_bytes()[:HEAD_BYTES]
    row = index_file(str(path))
    assert row.problem is None and row.format == "claude-code"
    assert row.title.startswith("Explain this log: xxx")
    assert row.messages == len(load_session(str(path)).conversations[0].messages)


# --- message counts, on real Claude Code transcripts --------------------------------------------

@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")) + [SPOTTER], ids=lambda p: p.name)
def test_claude_code_message_counts_are_the_loaders(path):
    row = index_file(str(path))
    loaded = len(load_session(str(path)).conversations[0].messages)
    assert abs(row.messages - loaded) <= max(1, loaded // 20), (row.messages, loaded)


def test_a_big_transcript_is_counted_not_extrapolated(tmp_path):
    # 1,863 lines, 344 messages: progress lines have uuids too, and a response is split over lines
    row = index_file(str(SPOTTER))
    assert row.messages == len(load_session(str(SPOTTER)).conversations[0].messages) == 344


def test_json_with_spaces_after_its_colons_counts_the_same(tmp_path):
    src = FIXTURES / "agentlogs-todos.jsonl"
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(json.loads(line)) + "\n" for line in src.read_text().splitlines()))
    assert b'"uuid": "' in spaced.read_bytes()
    assert index_file(str(spaced)).messages == index_file(str(src)).messages == 12
