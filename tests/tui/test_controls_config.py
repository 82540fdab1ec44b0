"""config.toml in the app: the keymap (help and palette show the rebound keys), the theme, and
settings that make every view a what-if, named as one."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle, status
from sessions import make_session
from textual.widgets import Input

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.settings import SettingsDialog
from ctxview.cli.user_config import load_user_config
from ctxview.tui.keymap import binding_ids, theme_names

CONFIG = """
theme = "nord"
[keys]
ctxview.search = "f"
ctxview.settings = "f2"
ctxview.keep_recent_up = "K"
[settings]
tiers = "default"
budget = 40000
"""


def configured_app(tmp_path) -> CtxviewApp:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    config = load_user_config(path, binding_ids=binding_ids(), themes=theme_names())
    from ctxview.engine.view import Settings

    app = CtxviewApp("test.json", Settings(**config.settings), session=make_session(1))
    app.configure(config.keys, config.theme, config.what_if_note())
    return app


@pytest.mark.parametrize("size", SIZES)
async def test_the_config_rebinds_keys_sets_the_theme_and_names_the_what_if(tmp_path, size):
    app = configured_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        notes = [n.message for n in app._notifications]
        assert any("makes every view a what-if: tiers=default, budget 40,000" in n for n in notes)
        assert app.settings.label() == "what-if: tiers=default, budget 40,000"
        assert app.query_one("#title-prepared").text.plain.startswith(" what-if: tiers=default")
        assert status(app).startswith(" what-if ")
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Search"] == "key f" and commands["Settings"] == "key f2"
        assert commands["keep_recent +1"] == "key K"
        assert commands["Token budget (or off)"] == "key f2, in the settings dialog"
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = app.screen.query_one("#help-text").render().plain
        assert any(line.split()[:1] == ["f"] and "Search" in line for line in help_text.splitlines())
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("K")
        await settle(pilot)
        assert app.settings.keep_recent == 11
        await pilot.press("f")
        await pilot.pause()
        assert app.query_one("#search", Input).has_focus
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, SettingsDialog)


def test_the_config_reaches_every_inspector_the_session_browser_opens(tmp_path, monkeypatch):
    """`ctxview DIR`: the browser opens a session, Escape comes back, a second opens: each inspector
    has the config's keymap and theme (each is a new app: run_browser configures every one)."""
    import asyncio
    import json

    import ctxview.tui.browser as browser_module
    from ctxview.cli import commands as cli

    folder = tmp_path / "saved"
    folder.mkdir()
    session = folder / "s.json"
    session.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]))
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("CTXVIEW_CONFIG", str(config))
    picks = iter([str(session), str(session), None])
    browsers, seen = [], []

    class FakeBrowser:  # (the browser's own pilot tests are in test_browser.py)
        def __init__(self, root, **kw):
            self.rows, self.filter_text, self.return_code, self.theme = [], "", 0, None
            browsers.append(self)

        def run(self):
            return next(picks)

    async def drive(app: CtxviewApp) -> None:
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            await pilot.press("K")            # the config's key for keep_recent +1 (not a default key)
            await settle(pilot)
            seen.append((app.theme, app.settings.keep_recent))
            if len(seen) == 1:
                await pilot.press("escape")   # back to the browser
            else:
                await pilot.press("q")
            await pilot.pause()

    def run(self, *args, **kwargs):
        asyncio.run(drive(self))
        return self.return_code

    monkeypatch.setattr(browser_module, "BrowserApp", FakeBrowser)
    monkeypatch.setattr(CtxviewApp, "run", run)
    assert cli.main([str(folder)]) == 0
    # (the config's settings make the view a what-if: tiers=default; keep_recent starts at 10)
    assert seen == [("nord", 11), ("nord", 11)]
    assert [b.theme for b in browsers] == ["nord", "nord"]
