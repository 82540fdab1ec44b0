"""The session browser on hostile input: a cache of the wrong types, file times outside the calendar,
and a filter over many sessions (the work each key costs is bounded: counted, not timed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson

from ctxview.sessions import SessionRow, cache_path, index_cache
from ctxview.sessions import columns as columns_module
from ctxview.sessions.index import ROW_FIELDS
from ctxview.tui.browser import BATCH, BrowserApp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_sessions_index import write_claude, write_codex, write_gemini  # noqa: E402

SIZE = (160, 30)


def _home(tmp_path) -> Path:
    home = tmp_path / "home"
    write_claude(home, "/home/me/a", "s1")
    write_codex(home, "r1")
    write_gemini(home, "g1", jsonl=True)
    return home


async def _indexed(pilot) -> BrowserApp:
    for _ in range(300):
        await pilot.pause()
        if not pilot.app.indexing:
            await pilot.pause()
            return pilot.app
    raise AssertionError("the index did not finish")


async def test_a_cache_of_the_wrong_types_neither_kills_the_browser_nor_is_used(tmp_path):
    home = _home(tmp_path)
    env = {"HOME": str(home), index_cache.CACHE_ENV: str(tmp_path / "cache")}
    index_cache.build_index(env=env)
    data = orjson.loads(cache_path(env).read_bytes())
    for entry in data["rows"].values():
        entry[2 + ROW_FIELDS.index("title")] = 5
        entry[2 + ROW_FIELDS.index("updated")] = "\x1b]0;PWNED\x07"
    cache_path(env).write_bytes(orjson.dumps(data))
    app = BrowserApp(None, env=env, cache=True)
    async with app.run_test(size=SIZE) as pilot:
        await _indexed(pilot)
        assert app.is_running and len(app.shown) == 3
        assert sorted(r.title for r in app.shown) == ["prompt of g1", "prompt of r1", "prompt of s1"]
        assert all(r.updated and "\x1b" not in r.updated for r in app.shown)
        notices = [n.message for n in app._notifications]
        assert any("3 rows of the wrong shape" in m for m in notices), notices


class _Stat:
    def __init__(self, st: os.stat_result, mtime_ns: int) -> None:
        self.st_mode, self.st_size, self.st_mtime_ns = st.st_mode, st.st_size, mtime_ns


async def test_a_file_time_outside_the_calendar_hides_no_session(tmp_path, monkeypatch):
    home = _home(tmp_path)
    empty = home / ".claude" / "projects" / "-home-me-a" / "empty.jsonl"
    empty.write_bytes(b"")
    real_stat = os.stat

    def stat(path, *args, **kw):
        st = real_stat(path, *args, **kw)
        return _Stat(st, int(3.2e22)) if str(path).endswith("empty.jsonl") else st

    monkeypatch.setattr(os, "stat", stat)
    app = BrowserApp(None, env={"HOME": str(home)}, cache=False)
    async with app.run_test(size=SIZE) as pilot:
        await _indexed(pilot)
        assert len(app.shown) == 4 and app.table.row_count == 4
        assert not [n for n in app._notifications if "cannot list" in (n.title or "")]


def _rows(n: int) -> list[SessionRow]:
    return [SessionRow(f"/s/{i:06d}.jsonl", "claude-code", f"/home/me/src/app{i % 37}", f"Task {i}: fix the parser",
                       "2026-05-28T20:26:40Z", "2026-05-28T20:26:40Z", 10, False, 1000, 1, "claude-sonnet-4-5", 100)
            for i in range(n)]


async def test_filtering_many_sessions_costs_a_few_batches_a_key(monkeypatch):
    made: list[int] = []
    real_hay = columns_module._hay
    monkeypatch.setattr(columns_module, "_hay", lambda row: made.append(1) or real_hay(row))
    rows = _rows(20 * BATCH)
    app = BrowserApp(rows=rows, cache=False, env={"HOME": "/nonexistent"})
    app._index = lambda: None  # (the rows are given)
    added: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        real_add = app.table.add_rows
        app.table.add_rows = lambda cells: added.append(len(cells := list(cells))) or real_add(cells)
        for ch in "app3 task":
            await pilot.press(ch)
        await pilot.press("ctrl+end")  # the last session the filter keeps: far down the whole list
        await pilot.pause()
        chosen = app.current
        assert chosen is app.shown[-1] and int(chosen.path[3:9]) > 10 * BATCH
        for _ in "app3 task":
            await pilot.press("backspace")
        await pilot.pause()
        assert app.filter_text == "" and len(app.shown) == len(rows)
        assert app.current is chosen  # the cursor stays on the session
        assert app.table.row_count <= 3 * BATCH  # the table holds a window of the list, not all above it
        assert max(added) <= 2 * BATCH
        assert len(made) == len(rows)  # each row's text made once, however many keys
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert app.current is rows[0] and app.cursor_index == 0
        await pilot.press("up")  # (no row above the first)
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.current is rows[20]


async def test_a_window_far_down_grows_upward_when_scrolled_to_its_top():
    rows = _rows(20 * BATCH)
    far = rows[15 * BATCH]
    app = BrowserApp(rows=rows, selected=far.path, cache=False, env={"HOME": "/nonexistent"})
    app._index = lambda: None
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.current is far and app.offset == 14 * BATCH and app.table.row_count <= 2 * BATCH
        app.table.scroll_to(y=0, animate=False)  # the mouse wheel, up to the window's first row
        for _ in range(5):
            await pilot.pause()
        assert app.offset == 13 * BATCH and app.current is far  # a batch above, the cursor kept
        assert app.table.row_count <= 3 * BATCH and app.table.scroll_y >= BATCH - 5
