"""The session browser's columns, orders, text search and totals, through Textual's pilot at the
three sizes: the columns that fit chosen by importance, ctrl+s / ctrl+r / a header click to sort,
ctrl+f to search the sessions' text, ctrl+t for the totals by project and by day."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctxview.tui.browser import BrowserApp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_sessions_contents import write_zoo  # noqa: E402

from pilot_sizes import SIZES  # noqa: E402  (80×24 and 120×40; 200×50 in CI's second pass)


@pytest.fixture
def home(tmp_path):
    # (the goat's the newest; the otter's reply longer than the goat's, so no two files are one size)
    return write_zoo(tmp_path / "home", goat_day="2026-05-29", otter_says="river.py under the old bridge by the mill")


def browser(home: Path) -> BrowserApp:
    return BrowserApp(None, env={"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}, cache=False)


async def read(pilot) -> BrowserApp:
    """Wait for the index and the contents pass (text and cost)."""
    app = pilot.app
    for _ in range(400):
        await pilot.pause(0.02)
        if not app.indexing and app.cost and app.contents_done is None:
            await pilot.pause()
            return app
    raise AssertionError("the contents pass did not finish")


def names(app: BrowserApp) -> list[str]:
    return [os.path.basename(r.path).removesuffix(".jsonl") for r in app.shown]


def headers(app: BrowserApp) -> list[str]:
    return [str(c.label) for c in app.table.ordered_columns]


def status(app: BrowserApp) -> str:
    return str(app.query_one("#status").render())


@pytest.mark.parametrize("size", SIZES)
async def test_the_columns_fit_the_width_and_the_cost_is_read(home, size):
    app = browser(home)
    async with app.run_test(size=size) as pilot:
        await read(pilot)
        columns = app.table.ordered_columns
        assert sum(c.get_render_width(app.table) for c in columns) <= size[0]
        assert headers(app)[:2] == ["last activity", "project"] and "cost" in headers(app)
        if size[0] >= 160:
            assert headers(app)[-2:] == ["format", "model"]
        cost_at = headers(app).index("cost")
        cells = {names(app)[k]: str(app.table.get_row_at(k)[cost_at]) for k in range(3)}
        assert cells == {"walrus": "$0.90", "otter": "$0.18", "goat": "$0.07"}   # ($0.075: rounded to the cent)


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_s_sorts_ctrl_r_reverses_and_a_header_click_sorts(home, size):
    app = browser(home)
    async with app.run_test(size=size) as pilot:
        await read(pilot)
        assert names(app) == ["goat", "otter", "walrus"]          # newest first
        by_size = names(app)
        by_size.sort(key=lambda n: os.path.getsize(next(r.path for r in app.shown if r.path.endswith(f"/{n}.jsonl"))),
                     reverse=True)
        assert by_size[0] == "walrus"
        await pilot.press("ctrl+s")                                 # date → size
        assert app.sort == "size" and names(app) == by_size
        assert "size ↓" in headers(app) and "by size ↓" in status(app)
        await pilot.press("ctrl+r")
        assert names(app) == by_size[::-1] and "size ↑" in headers(app)
        for _ in range(3):
            await pilot.press("ctrl+s")                             # size → msgs → tokens → cost
        assert app.sort == "cost" and names(app) == ["walrus", "otter", "goat"]
        # a click on the project's header sorts A to Z, a second Z to A
        await pilot.click("#table", offset=(headers_x(app, "project"), 0))
        await pilot.pause()
        assert app.sort == "project" and names(app)[-1] == "walrus" and names(app)[0] == "goat"
        await pilot.click("#table", offset=(headers_x(app, "project ↓"), 0))
        await pilot.pause()
        assert app.reverse and names(app)[0] in ("walrus", "otter")


def headers_x(app: BrowserApp, label: str) -> int:
    x = 0
    for column in app.table.ordered_columns:
        if str(column.label) == label:
            return x + 1
        x += column.get_render_width(app.table)
    raise AssertionError(f"no column {label!r} in {headers(app)}")


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_f_searches_the_sessions_text(home, size):
    app = browser(home)
    async with app.run_test(size=size) as pilot:
        await read(pilot)
        await pilot.press("ctrl+f", *"rive")                        # in the otter's reply alone
        await pilot.pause()
        assert names(app) == ["otter"] and status(app).startswith("text search · 1 of 3 sessions")
        await pilot.press("ctrl+f")                                  # back to the filter: no title holds it
        await pilot.pause()
        assert names(app) == []
        await pilot.press("escape", "ctrl+f", *"the")
        await pilot.pause()
        assert sorted(names(app)) == ["goat", "otter", "walrus"]
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value is not None and app.return_value.endswith(".jsonl")


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_t_totals_by_project_then_day_and_enter_lists_a_project(home, size):
    app = browser(home)
    async with app.run_test(size=size) as pilot:
        await read(pilot)
        await pilot.press("ctrl+t")
        assert app.view == "project" and headers(app)[0] == "project" and "cost" in headers(app)
        rows = [[str(c) for c in app.table.get_row_at(k)] for k in range(app.table.row_count)]
        assert [r[0] for r in rows] == ["/home/me/zoo", "/home/me/farm"]       # the dearest first
        assert rows[0][headers(app).index("cost")].strip() == "$1.08"
        assert status(app).startswith("totals by project: 2")
        await pilot.press("ctrl+t")
        assert app.view == "day"
        assert [str(app.table.get_row_at(k)[0]) for k in range(3)] == ["2026-05-29", "2026-05-28", "2026-05-27"]
        await pilot.press("ctrl+t", "ctrl+t", "down", "enter")       # list → project → the farm's sessions
        await pilot.pause()
        assert app.view == "list" and app.filter_text == "/home/me/farm" and names(app) == ["goat"]
        assert app.is_running


async def test_enter_on_the_project_already_filtered_lists_it(home):
    app = browser(home)
    async with app.run_test(size=(120, 40)) as pilot:
        await read(pilot)
        await pilot.press(*"/home/me/zoo", "ctrl+t", "enter")
        await pilot.pause()
        assert app.view == "list" and sorted(names(app)) == ["otter", "walrus"]
        assert headers(app)[0] == "last activity" and app.table.row_count == 2
