"""The settings dialog: every setting at every width, checked as typed, Apply/Cancel/Escape."""

from __future__ import annotations

import pytest
from pilot_sizes import NARROW_FIRST, SIZES, settle, status
from sessions import make_session
from textual.command import CommandPalette

from ctxview.settings import ClearSettings
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.settings import FIELDS, SettingsDialog, read_settings
from ctxview.engine.view import Settings


def new_app(**settings) -> CtxviewApp:
    return CtxviewApp("test.json", Settings(keep_recent=4, **settings), session=make_session(1))


async def open_dialog(pilot) -> SettingsDialog:
    await pilot.press("S")
    await pilot.pause()
    assert isinstance(pilot.app.screen, SettingsDialog)
    return pilot.app.screen


def errors(dialog) -> str:
    box = dialog.query_one("#settings-errors")
    return box.render().plain if box.display else ""


@pytest.mark.parametrize("size", SIZES)
async def test_budget_clearing_and_old_messages_apply_as_a_named_what_if(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert app.settings.view == "as-sent"
        dialog = await open_dialog(pilot)
        for name in FIELDS:                                    # every field is on screen or scrolls there
            widget = dialog.widget(name)
            widget.scroll_visible(animate=False)
            await pilot.pause()
            assert widget.region.height >= 1 and widget.region.right <= size[0], name
        dialog.widget("budget").value = "50,000"
        dialog.widget("clear").value = True
        dialog.widget("clear_keep").value = "2"
        dialog.widget("clear_trigger").value = "1000"
        dialog.widget("clear_exclude").value = "Read, Grep"
        dialog.widget("clear_inputs").value = True
        dialog.widget("old_messages").value = "truncate"
        await pilot.pause()
        label = dialog.query_one("#settings-label").render().plain
        assert label.startswith("view: what-if: ") and "budget 50,000" in label and "clearing (keep 2)" in label
        await pilot.click("#settings-apply")
        await settle(pilot)
        assert not isinstance(app.screen, SettingsDialog)
        s = app.settings
        assert s.budget == 50_000 and s.old_messages == "truncate"
        assert s.clear == ClearSettings(keep=2, trigger=1000, exclude=("Read", "Grep"), clear_inputs=True)
        assert app.view.view_label == s.label() and s.label().startswith("what-if: ")
        assert app.query_one("#title-prepared").text.plain.startswith(" what-if: ")
        text = status(app)
        assert text.startswith(" what-if ") and ("b=50k" in text or "budget 50" in text)
        assert "row 1/" in text


@pytest.mark.parametrize("size", SIZES)
async def test_bad_values_show_in_the_dialog_and_apply_refuses_them(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        dialog = await open_dialog(pilot)
        dialog.widget("budget").value = "lots"
        dialog.widget("keep_recent").value = "-3"
        dialog.widget("tiers").value = "5:full,3:100"
        await pilot.pause()
        shown = errors(dialog)
        assert "budget: expected a whole number, not 'lots'" in shown
        assert "keep_recent: expected a whole number, not '-3'" in shown
        assert "tier 2 has age 3 after 5" in shown                 # Settings.problems(), tier numbers from 1
        assert dialog.query_one("#settings-apply").disabled
        dialog.apply()                                              # Enter in a field: refused, not a crash
        await pilot.pause()
        assert isinstance(app.screen, SettingsDialog)
        dialog.widget("budget").value = "0"
        dialog.widget("keep_recent").value = "4"
        dialog.widget("tiers").value = "off"
        await pilot.pause()
        assert errors(dialog) == "budget must be a whole number ≥ 1, not 0"
        dialog.widget("budget").value = ""                          # empty: no budget
        await pilot.pause()
        assert errors(dialog) == "" and not dialog.query_one("#settings-apply").disabled
        await pilot.press("enter")                                  # in a field: Apply; nothing changed
        await settle(pilot)
        assert not isinstance(app.screen, SettingsDialog) and app.settings == Settings(keep_recent=4)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("how", ["escape", "cancel"])
async def test_escape_and_cancel_change_nothing(size, how):
    app = new_app(budget=9000)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        before = app.settings
        dialog = await open_dialog(pilot)
        assert dialog.widget("budget").value == "9000"              # the dialog starts from the settings
        dialog.widget("budget").value = "123"
        dialog.widget("old_messages").value = "remove"
        await pilot.pause()
        if how == "escape":
            await pilot.press("escape")
        else:
            dialog.query_one("#settings-cancel").press()
        await settle(pilot)
        assert not isinstance(app.screen, SettingsDialog) and app.settings == before


@pytest.mark.parametrize("size", NARROW_FIRST)
@pytest.mark.parametrize("query, field", [("settings", "keep_recent"), ("budget", "budget"),
                                          ("clearing", "clear"), ("old messages", "old_messages")])
async def test_the_palette_finds_the_dialog_by_each_setting(size, query, field):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*query)
        for _ in range(20):
            await pilot.pause(0.05)
            if app.screen.query("CommandList Option") or app.screen.query_one("CommandList").option_count:
                break
        assert app.screen.query_one("CommandList").option_count >= 1   # not "No matches found"
        await pilot.press("enter")
        for _ in range(20):
            await pilot.pause(0.05)
            if isinstance(app.screen, SettingsDialog):
                break
        assert isinstance(app.screen, SettingsDialog)
        assert app.screen.focused is app.screen.widget(field)


def test_read_settings_keeps_what_the_fields_do_not_show():
    base = Settings(request=5, counter="swarm", clear=ClearSettings(placeholder="[gone]"))
    values = {"keep_recent": "10", "tiers": "10:full,20:1000,40:500,60:200,*:100", "compression": True,
              "budget": "", "clear": True, "clear_keep": "3", "clear_trigger": "", "clear_min_saving": "500",
              "clear_exclude": " Bash ,, Read ", "clear_inputs": False, "old_messages": "keep",
              "summarize_before": "", "embed_ephemeral": True}
    settings, problems = read_settings(base, values)
    assert problems == []
    assert settings.tiers == "default"                                  # the preset written out
    assert settings.request == 5 and settings.counter == "swarm"
    assert settings.clear == ClearSettings(keep=3, min_saving=500, exclude=("Bash", "Read"), placeholder="[gone]")


async def test_clearing_on_with_its_switches_off_is_valid():
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        dialog = await open_dialog(pilot)
        dialog.widget("clear").value = True                       # inputs off, ephemeral on: plain bools
        await pilot.pause()
        assert errors(dialog) == "" and not dialog.widget("clear_keep").disabled
        await pilot.click("#settings-apply")
        await settle(pilot)
        assert app.settings.clear == ClearSettings() and app.settings.label() == "what-if: clearing (keep 3)"
