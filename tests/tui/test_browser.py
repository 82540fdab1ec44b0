"""The session browser through Textual's pilot: it lists, filters, opens with Enter, and comes back
from the inspector with Escape at the same row. The sessions are written under tmp_path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, ProgressBar

from ctxview.tui import launch
from ctxview.tui.app import CtxviewApp
from ctxview.tui.browser import BrowserApp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_sessions_index import write_claude, write_codex, write_gemini  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

SIZE = (160, 30)


@pytest.fixture
def root(tmp_path):
    home = tmp_path / "sessions"
    write_claude(home, "/home/me/a", "s1")
    write_codex(home, "r1")
    write_gemini(home, "g1", jsonl=True)  # its last message is the newest (the other two end at the same second)
    return home


async def indexed(pilot) -> BrowserApp:
    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        if not app.indexing:
            await pilot.pause()
            return app
    raise AssertionError("the index did not finish")


async def typed(pilot, text: str) -> None:
    await pilot.press(*text)
    await pilot.pause()


def in_home(root: Path) -> BrowserApp:
    return BrowserApp(None, env={"HOME": str(root)}, cache=False)


def names(app: BrowserApp) -> list[str]:
    return [os.path.basename(r.path) for r in app.shown]


async def test_lists_newest_first_and_hides_the_progress_bar(root):
    app = in_home(root)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        assert names(app) == ["session-g1.jsonl", "s1.jsonl", "rollout-r1.jsonl"]  # by their recorded times
        assert [r.updated for r in app.shown] == ["2026-05-28T20:26:58Z", "2026-05-28T20:26:55Z",
                                                  "2026-05-28T20:26:55Z"]
        assert app.table.row_count == 3
        assert not app.query_one("#progress", ProgressBar).display
        assert "3 sessions" in str(app.query_one("#status").render())


async def test_typing_filters_and_enter_opens(root):
    app = in_home(root)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        await typed(pilot, "codex")
        assert app.filter_text == "codex" and names(app) == ["rollout-r1.jsonl"]
        assert app.table.row_count == 1
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == str(next(root.rglob("rollout-r1.jsonl")))


async def test_filter_words_all_match_any_field(root):
    app = in_home(root)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        await typed(pilot, "gemini proj")
        assert names(app) == ["session-g1.jsonl"]
        await pilot.press("escape")  # clears the filter
        await pilot.pause()
        assert app.filter_text == "" and len(app.shown) == 3
        await pilot.press("escape")  # with nothing to clear: does not quit
        await pilot.pause()
        assert app.is_running and len(app.shown) == 3
        await pilot.press("ctrl+q")  # quits
        await pilot.pause()
    assert app.return_value is None


async def test_escape_in_the_inspector_comes_back_to_the_same_row(root):
    next(root.rglob("session-g1.jsonl")).unlink()  # (Gemini CLI's loader is another branch's work)
    first = in_home(root)
    async with first.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
    chosen = first.return_value
    assert chosen is not None and chosen.endswith("rollout-r1.jsonl")

    inspector = CtxviewApp(chosen, browsing=True)
    async with inspector.run_test(size=(140, 40)) as pilot:
        for _ in range(100):
            await pilot.pause()
            if inspector.view is not None:
                break
        assert inspector.error is None and inspector.session.format == "codex"
        await pilot.press("escape")
        await pilot.pause()
    assert inspector.went_back

    again = BrowserApp(None, rows=first.rows, filter_text=first.filter_text, selected=chosen, cache=False,
                       env={"HOME": str(root)})
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.table.cursor_row == 1 and again.current.path == chosen  # at once, from the rows kept
        await indexed(pilot)
        assert again.table.cursor_row == 1 and again.current.path == chosen  # and after the index is fresh


async def test_escape_in_the_inspector_alone_does_not_quit():
    from ctxview.formats import DEMO_PATH

    app = CtxviewApp(str(DEMO_PATH))
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(100):
            await pilot.pause()
            if app.view is not None:
                break
        await pilot.press("escape")
        await pilot.pause()
        assert not app.went_back and app.is_running


async def test_hostile_text_is_plain_visible_text(tmp_path):
    import json

    folder = tmp_path / "-p"
    folder.mkdir()
    line = {"type": "user", "uuid": "u", "cwd": "/p", "message": {"role": "user",
            "content": "\x1b[31m[bold red]boom[/] \u202eevil"}}
    (folder / "x.jsonl").write_text(json.dumps(line) + "\n")
    app = BrowserApp(str(tmp_path), cache=False)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        title = app.table.get_cell_at((0, app.table.get_column_index("title")))
        assert isinstance(title, Text) and not title.spans  # not markup: no styles from the text
        assert title.plain == "␛[31m[bold red]boom[/] <U+202E>evil"


async def test_problem_rows_are_marked(tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    app = BrowserApp(str(tmp_path), cache=False)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        title = app.table.get_cell_at((0, app.table.get_column_index("title"))).plain
        assert title.startswith("⚠ empty file")
        assert "⚠ 1 with a problem" in str(app.query_one("#status").render())


def test_the_launcher_goes_back_and_forth(monkeypatch):
    """run_browser's loop: the browser's choice opens the inspector; Escape there (went_back) starts a
    browser with the same rows, filter and row; a failed opening comes back with its error; quitting the
    inspector ends it all."""
    import ctxview.tui.app as app_module
    import ctxview.tui.browser as browser_module

    browsers, inspectors = [], []
    picks = iter(["/s/a.jsonl", "/s/b.jsonl", "/s/c.jsonl"])
    outcomes = iter([("back", None), ("error", "b.jsonl:3: invalid JSON"), ("quit", None)])

    class FakeBrowser:
        def __init__(self, root, **kw):
            browsers.append((root, kw))
            self.rows, self.filter_text, self.return_code = ["row"], f"filter{len(browsers)}", 0

        def run(self):
            return next(picks)

    class FakeInspector:
        def __init__(self, path, settings, **kw):
            inspectors.append((path, kw["browsing"]))
            outcome, self.error = next(outcomes)
            self.went_back, self.return_code = outcome == "back", 0

        def run(self):
            return 0

    monkeypatch.setattr(browser_module, "BrowserApp", FakeBrowser)
    monkeypatch.setattr(app_module, "CtxviewApp", FakeInspector)
    assert launch.run_browser("/s", settings=None) == 0
    assert inspectors == [("/s/a.jsonl", True), ("/s/b.jsonl", True), ("/s/c.jsonl", True)]
    assert [b[1]["selected"] for b in browsers] == [None, "/s/a.jsonl", "/s/b.jsonl"]
    assert [b[1]["filter_text"] for b in browsers] == ["", "filter1", "filter2"]
    assert [b[1]["notice"] for b in browsers] == [None, None, "b.jsonl:3: invalid JSON"]
    assert all(b[0] == "/s" for b in browsers) and browsers[1][1]["rows"] == ["row"]


async def test_many_rows_are_added_a_batch_at_a_time(tmp_path):
    import bench_sessions as tree
    from ctxview.tui.browser import BATCH

    tree.make_tree(tmp_path, BATCH + 50)
    # (the list alone: reading 150 sessions whole, some of a MiB, is the contents tests' business)
    app = BrowserApp(None, env={"HOME": str(tmp_path)}, cache=False, contents=False)
    async with app.run_test(size=SIZE) as pilot:
        await indexed(pilot)
        assert len(app.shown) == BATCH + 50 and app.table.row_count == BATCH  # the first batch only
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert app.table.row_count == BATCH + 50 and app.current is app.shown[-1]
        await typed(pilot, "src/app7")  # sessions 7, 44, 81, ... 229 (project i % 37)
        assert sorted(int(r.title.split(":")[0][5:]) for r in app.shown) == list(range(7, BATCH + 50, 37))
        assert {r.project for r in app.shown} == {"/home/me/src/app7"}
        assert app.table.row_count == len(app.shown)
    rows = app.rows
    far = rows[BATCH + 20].path  # a row past the first batch: coming back there loads up to it
    again = BrowserApp(None, rows=rows, selected=far, cache=False, env={"HOME": str(tmp_path)})
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.table.cursor_row == BATCH + 20 and again.current.path == far


async def test_escape_closes_the_search_and_dialogs_before_it_goes_back():
    from ctxview.formats import DEMO_PATH
    from ctxview.tui.screens.modals import HelpScreen

    app = CtxviewApp(str(DEMO_PATH), browsing=True)
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(100):
            await pilot.pause()
            if app.view is not None:
                break
        await pilot.press("slash", "escape")  # the search box closes
        await pilot.pause()
        assert not app.went_back and app.is_running
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")  # the help closes
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen) and not app.went_back
        await pilot.press("escape")  # back to the list
        await pilot.pause()
    assert app.went_back


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
async def test_a_notification_leaves_the_status_line_and_the_footer_visible(root, size):
    from textual.widgets import Footer
    from textual.widgets._toast import Toast

    app = in_home(root)
    async with app.run_test(size=size, notifications=True) as pilot:
        await indexed(pilot)
        await pilot.press("escape")  # nothing to clear: the note that ctrl+q quits
        for _ in range(20):
            await pilot.pause(0.05)
            toasts = list(app.screen.query(Toast))
            if toasts and all(t.region.area for t in toasts):
                break
        assert toasts and app.is_running
        status, footer = app.query_one("#status").region, app.query_one(Footer).region
        for toast in toasts:
            assert toast.region.area and toast.region.bottom <= status.y < footer.y
