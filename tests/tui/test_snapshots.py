"""SVG snapshots of the main screens (pytest-textual-snapshot).

Update after a deliberate change with `pytest tests/tui/test_snapshots.py --snapshot-update`,
then look at the new SVGs before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.tui.app import CtxviewApp
from ctxview.engine.view import Settings

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "tests/fixtures/hostile.ctxview.json"
WIDE = (160, 45)


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    # The header shows the path as given; keep it relative so snapshots are portable.
    monkeypatch.chdir(ROOT)


def settled(*keys: str):
    """A run_before script: wait for loading, press keys, wait for every recompute."""

    async def run(pilot) -> None:
        app = pilot.app
        await _settle(pilot)
        for key in keys:
            await pilot.press(key)
            await _settle(pilot)
        app.screen.set_focus(None) if not keys else None

    return run


async def _settle(pilot) -> None:
    app = pilot.app
    for _ in range(100):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.busy and not any(w.is_running for w in app.workers):
            return
    raise AssertionError("app did not settle")


class TestMainScreen:
    def test_demo(self, snap_compare):
        """The bundled demo as `ctxview` opens it."""
        assert snap_compare(CtxviewApp(None, Settings(counter="swarm")), terminal_size=WIDE, run_before=settled())

    def test_narrow_terminal(self, snap_compare):
        """80×24: the controls panel is hidden, the panes share the width."""
        assert snap_compare(CtxviewApp(None, Settings(counter="swarm")), terminal_size=(80, 24), run_before=settled())


class TestHighlighting:
    def test_reminders(self, snap_compare):
        """The demo's last user turn that holds a stored reminder and gets an ephemeral one, expanded:
        the stored block is highlighted in both panes, the ephemeral one only in the prepared pane."""

        async def run(pilot) -> None:
            app = pilot.app
            await _settle(pilot)
            rows = app.row_layout.rows
            both = [i for i, r in enumerate(rows) if r.stored_reminders and r.ephemeral_spans]
            assert both, "the demo must have a message with a stored and an ephemeral reminder"
            app.set_cursor(both[-1])
            await pilot.press("enter")
            await _settle(pilot)

        app = CtxviewApp(None, Settings(counter="swarm"))
        assert snap_compare(app, terminal_size=WIDE, run_before=run)

    def test_compressed(self, snap_compare):
        """A compressed tool result expanded: badge, truncation marker and re-run hint."""
        app = CtxviewApp(None, Settings(keep_recent=2, tiers="aggressive", counter="swarm"))
        assert snap_compare(app, terminal_size=WIDE, run_before=settled("x", "x", "enter"))


class TestScreens:
    def test_help(self, snap_compare):
        assert snap_compare(CtxviewApp(None, Settings(counter="swarm")), terminal_size=WIDE, run_before=settled("question_mark"))


class TestHostile:
    def test_hostile_content(self, snap_compare):
        """Markup, ANSI/OSC escapes, NUL, C1 and bidi controls show as visible characters."""
        app = CtxviewApp(HOSTILE, Settings(keep_recent=2, counter="swarm", tiers="default"))
        assert snap_compare(app, terminal_size=WIDE, run_before=settled("down", "down", "down", "enter", "end", "enter"))


# -- the chrome at 80 columns, the settings dialog ------------------------------------------

CLAUDE_SUBAGENTS = "tests/fixtures/samples/claude-code/spotter-258c7280/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
LONG_PATH = "~/.claude/projects/-home-user-src-some-very-long-project-name/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _claude_app(settings: Settings) -> CtxviewApp:
    # The file is read from the fixture; the header shows the long path a real ~/.claude file has.
    from ctxview.formats import load_session

    return CtxviewApp(LONG_PATH, settings, session=load_session(str(ROOT / CLAUDE_SUBAGENTS)))


class TestControls:
    def test_narrow_header_and_status(self, snap_compare):
        """80×24 on a Claude Code file with sub-agents at a long ~/.claude path, budget and clearing on:
        the header keeps the file name, conversation hint, model and window; the status bar names each
        what-if setting in its shortest form and ends with the row position."""
        from ctxview.settings import ClearSettings

        app = _claude_app(Settings(counter="swarm", tiers="default", budget=50_000, clear=ClearSettings(keep=2)))
        assert snap_compare(app, terminal_size=(80, 24), run_before=settled())

    def test_settings_dialog(self, snap_compare):
        """The settings dialog at 80×24 with a bad budget typed: the error shows, Apply is disabled, and
        the last line names the view the settings would make."""

        async def run(pilot) -> None:
            await _settle(pilot)
            await pilot.press("S")
            await pilot.pause()
            dialog = pilot.app.screen
            dialog.widget("clear").value = True
            dialog.widget("old_messages").value = "truncate"
            dialog.widget("budget").value = "50k"
            for box in dialog.query("Input"):
                box.cursor_blink = False  # (a blinking cursor is on or off by the clock)
            await pilot.pause()

        app = _claude_app(Settings(counter="swarm"))
        assert snap_compare(app, terminal_size=(80, 24), run_before=run)


class TestBrowser:
    @pytest.mark.parametrize("keys", [(), ("ctrl+t",)], ids=["list", "totals"])
    def test_browser_at_80_columns(self, snap_compare, tmp_path, keys):
        """The session browser at 80×24 once the text and cost are read: the columns that fit (date,
        project cut from its start, title, tokens, cost), then the totals by project."""
        import sys

        from textual.widgets import Input

        sys.path.insert(0, str(ROOT / "tests" / "tui"))
        from test_browser_columns import browser, read

        sys.path.insert(0, str(ROOT / "tests"))
        from test_sessions_contents import write_zoo

        app = browser(write_zoo(tmp_path / "home", farm="/home/me/projects/a-rather-long-farm-name",
                                goat_day="2026-05-29"))

        async def run(pilot) -> None:
            await read(pilot)
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
            pilot.app.query_one(Input).cursor_blink = False
            await pilot.pause()

        assert snap_compare(app, terminal_size=(80, 24), run_before=run)

