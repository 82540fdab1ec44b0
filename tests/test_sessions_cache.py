"""The index cache: a warm run reads no session file; a change of size or mtime re-reads that file;
a corrupt or foreign cache is rebuilt; the directory comes from $CTXVIEW_CACHE_DIR (never the user's
cache in tests)."""

from __future__ import annotations

import os

import orjson
import pytest

from ctxview.sessions import build_index, cache_path, index_cache
from ctxview.sessions import index as index_module
from test_sessions_index import write_claude, write_codex, write_gemini


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    write_claude(home, "/home/me/a", "s1")
    write_codex(home, "r1")
    write_gemini(home, "g1", jsonl=True)
    return home


@pytest.fixture
def reads(monkeypatch):
    """The files index_file reads, in order."""
    seen: list[str] = []
    real = index_cache.index_file

    def counting(path, st=None):
        seen.append(os.path.basename(path))
        return real(path, st)

    monkeypatch.setattr(index_cache, "index_file", counting)
    return seen


def env(tmp_path, home):
    return {"HOME": str(home), index_cache.CACHE_ENV: str(tmp_path / "cache")}


def test_the_cache_directory_is_the_variable_else_platformdirs(tmp_path):
    assert cache_path({index_cache.CACHE_ENV: str(tmp_path)}) == tmp_path / "sessions-index.json"
    import platformdirs

    default = cache_path({})
    assert default.parent == __import__("pathlib").Path(platformdirs.user_cache_dir("ctxview", appauthor=False))


def test_a_warm_run_reads_no_session_file(tmp_path, home, reads):
    e = env(tmp_path, home)
    cold = build_index(env=e)
    assert len(reads) == 3 and len(cold) == 3
    reads.clear()
    warm = build_index(env=e)
    assert reads == []
    assert warm == cold
    data = orjson.loads(cache_path(e).read_bytes())
    assert data["version"] == index_cache.CACHE_VERSION and len(data["rows"]) == 3
    assert [p for p in os.listdir(cache_path(e).parent) if p != "sessions-index.json"] == []  # no temp file left


def test_a_change_of_size_or_mtime_reads_that_file_again(tmp_path, home, reads):
    e = env(tmp_path, home)
    build_index(env=e)
    codex = next(p for p in index_cache.find_files(env=e) if "rollout-" in p)
    with open(codex, "a") as f:  # grows: another turn
        f.write('{"timestamp":"2026-05-29T00:00:00.000Z","type":"turn_context","payload":{"model":"gpt-6"}}\n')
    reads.clear()
    rows = {os.path.basename(r.path): r for r in build_index(env=e)}
    assert reads == ["rollout-r1.jsonl"]
    assert rows["rollout-r1.jsonl"].model == "gpt-6" and rows["rollout-r1.jsonl"].updated == "2026-05-29T00:00:00Z"
    claude = next(p for p in index_cache.find_files(env=e) if p.endswith("s1.jsonl"))
    st = os.stat(claude)
    os.utime(claude, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same size, new mtime
    reads.clear()
    build_index(env=e)
    assert reads == ["s1.jsonl"]


@pytest.mark.parametrize("content", [b"", b"\x00garbage", b'{"version": 1}', b'{"version": 999, "rows": {}}',
                                     b"[1, 2]", b'{"version": 1, "fields": [], "rows": {"x": 1}}'])
def test_a_corrupt_or_foreign_cache_is_rebuilt(tmp_path, home, reads, content):
    e = env(tmp_path, home)
    cache_path(e).parent.mkdir(parents=True)
    cache_path(e).write_bytes(content)
    rows = build_index(env=e)
    assert len(rows) == 3 and len(reads) == 3
    data = orjson.loads(cache_path(e).read_bytes())  # written anew, valid
    assert data["version"] == index_cache.CACHE_VERSION and len(data["rows"]) == 3


def test_a_cache_entry_of_the_wrong_shape_is_read_again(tmp_path, home, reads):
    e = env(tmp_path, home)
    build_index(env=e)
    data = orjson.loads(cache_path(e).read_bytes())
    path = next(iter(data["rows"]))
    data["rows"][path] = data["rows"][path][:3]  # cut short
    cache_path(e).write_bytes(orjson.dumps(data))
    reads.clear()
    assert len(build_index(env=e)) == 3
    assert reads == [os.path.basename(path)]


def test_an_unwritable_cache_is_no_error(tmp_path, home):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    e = {"HOME": str(home), index_cache.CACHE_ENV: str(blocker / "cache")}  # a file where a folder should be
    assert len(build_index(env=e)) == 3


def test_rows_of_another_root_are_kept(tmp_path, home, reads):
    e = env(tmp_path, home)
    other = tmp_path / "other"
    other.mkdir()
    (other / "s.jsonl").write_bytes(next(home.rglob("s1.jsonl")).read_bytes())
    build_index(other, env=e)
    build_index(env=e)
    reads.clear()
    build_index(other, env=e)
    assert reads == []


def test_unreadable_rows_are_not_cached(tmp_path, home, reads, monkeypatch):
    e = env(tmp_path, home)

    def refuse(path, size):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(index_module, "_read", refuse)
    assert all(r.problem == "unreadable: Permission denied" for r in build_index(env=e))
    monkeypatch.undo()  # (the permission is back; the mtime is the same)
    monkeypatch.setattr(index_cache, "index_file", index_module.index_file)
    rows = build_index(env=e)
    assert all(r.problem is None for r in rows) and len(rows) == 3
