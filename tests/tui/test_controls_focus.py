"""Focus: Escape always returns to the pane focus came from, and the footer shows the keys that
work where focus is."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle
from sessions import make_session
from textual.widgets import Input, Select, Switch
from textual.widgets._footer import FooterKey

from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.pane import MessagePane
from ctxview.engine.view import Settings


def new_app() -> CtxviewApp:
    return CtxviewApp("test.json", Settings(keep_recent=4, tiers="default"), session=make_session(2))


def footer_actions(app) -> set[str]:
    return {key.action for key in app.screen.query(FooterKey)}


@pytest.mark.parametrize("size", SIZES)
async def test_escape_from_the_controls_returns_to_the_pane_it_came_from(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.prepared_pane.focus()
        await pilot.pause()
        for _ in range(6):                       # Tab until focus leaves the panes (the controls, >= 120)
            await pilot.press("tab")
            await pilot.pause()
            if not isinstance(app.focused, MessagePane):
                break
        if size[0] < 120:                        # no controls panel: Tab cycles the two panes
            assert isinstance(app.focused, MessagePane)
            app.query_one("#search", Input).open("")  # any other widget: the search box
            await pilot.pause()
        assert not isinstance(app.focused, MessagePane)
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.prepared_pane
        keep = app.settings.keep_recent
        await pilot.press("plus")                # the letter keys work again
        await settle(pilot)
        assert app.settings.keep_recent == keep + 1


@pytest.mark.parametrize("size", SIZES[1:])
@pytest.mark.parametrize("control", ["#ctl-budget", "#ctl-old", "#ctl-clear"])
async def test_escape_leaves_every_kind_of_control(size, control):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        widget = app.query_one(control)
        assert isinstance(widget, (Input, Select, Switch))
        widget.focus()
        await pilot.pause()
        assert app.focused is widget
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.stored_pane
        await pilot.press("t")
        await settle(pilot)
        assert app.settings.tiers == "light"      # the next preset after default


@pytest.mark.parametrize("size", SIZES)
async def test_footer_shows_the_keys_of_the_focused_widget(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        on_pane = footer_actions(app)
        assert {"next_tiers", "search", "settings"} <= on_pane and "focus_pane" not in on_pane
        app.query_one("#search", Input).open("")
        await pilot.pause()
        in_box = footer_actions(app)
        assert "focus_pane" in in_box                 # Escape, shown where it works
        assert not {"next_tiers", "search", "settings", "keep_recent"} & in_box  # typed into the box
        await pilot.press("escape")
        await pilot.pause()
        assert footer_actions(app) == on_pane


async def test_escape_closes_the_search_box_and_focus_goes_back_to_the_pane():
    app = new_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.prepared_pane.focus()
        await pilot.press("slash")
        await pilot.pause()
        assert app.query_one("#search", Input).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.prepared_pane and not app.query_one("#search").display


async def test_a_palette_command_run_from_a_text_box_still_runs():
    app = new_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.query_one("#ctl-budget", Input).focus()
        await pilot.pause()
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Next tier preset")
        await command.callback()
        await settle(pilot)
        assert app.settings.tiers == "light" and isinstance(app.focused, MessagePane)
