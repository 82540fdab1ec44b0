"""The tier editor at every size: 1-based tier numbers, a written-out preset named as the preset."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle, status
from sessions import make_session
from textual.widgets import Input

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.modals import TierEditor
from ctxview.engine.view import Settings


def new_app() -> CtxviewApp:
    return CtxviewApp("test.json", Settings(keep_recent=4, tiers="default"), session=make_session(1))


async def open_editor(pilot) -> Input:
    """Settle, press e; the editor's input."""
    await settle(pilot)
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(pilot.app.screen, TierEditor)
    return pilot.app.screen.query_one("#tier-input", Input)


@pytest.mark.parametrize("size", SIZES)
async def test_unchanged_default_spec_applies_as_default(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        box = await open_editor(pilot)
        assert box.value == "10:full,20:1000,40:500,60:200,*:100"      # the preset written out
        preview = app.screen.query_one("#tier-preview").render().plain
        assert preview.splitlines()[0] == "tier 1: ages 0-10 → full"   # numbered from 1
        await pilot.press("enter")                                     # applied unchanged
        await settle(pilot)
        assert not isinstance(app.screen, TierEditor)
        assert app.settings.tiers == "default"
        assert "custom" not in status(app) and "default" in status(app)


@pytest.mark.parametrize("size", SIZES)
async def test_editor_errors_and_preview_use_the_same_tier_numbers(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        box = await open_editor(pilot)
        box.value = "5:full,3:100,*:50"
        await pilot.pause()
        error = app.screen.query_one("#tier-preview").render().plain
        assert "tier 2 has age 3 after 5" in error                    # the second tier, as typed
        box.value = "5:full,9:100,*:50"
        await pilot.pause()
        lines = app.screen.query_one("#tier-preview").render().plain.splitlines()
        assert [line.split(":")[0] for line in lines] == ["tier 1", "tier 2", "tier 3"]
        await pilot.press("enter")
        await settle(pilot)
        assert app.settings.tiers == "5:full,9:100,*:50"
        badges = [c for row in app.view.rows for c in row.changes if c.action == "compressed"]
        assert badges, "the spec must compress something in the test session"
        # the badge of a result in the second tier (ages 6-9) reads t2, as the editor's "tier 2"
        from ctxview.tui.render import badge_label

        second = [c for c in badges if c.age is not None and 6 <= c.age <= 9]
        assert second and {badge_label(c) for c in second} == {f"compressed t2 age {c.age}" for c in second}
