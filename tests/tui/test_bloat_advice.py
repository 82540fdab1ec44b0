"""The inspector's `b`: the recommendations, once replayed and priced, ranked by dollars; one that raises the
bill is listed as such; `+`/`-` on keep_recent say when the step changes nothing."""

from __future__ import annotations

from pathlib import Path

from test_app import settle

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.modals import BloatScreen
from ctxview.engine.view import Settings

SPOTTER = (Path(__file__).parents[1] / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


async def test_the_bloat_screen_shows_what_raises_the_bill():
    app = CtxviewApp(str(SPOTTER), Settings())
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, BloatScreen)
        for _ in range(200):
            if "raises the bill" in app.screen.report.plain:
                break
            await pilot.pause(0.05)
        text = app.screen.report.plain
        assert "Not recommended: each raises the bill" in text
        assert "--tiers default --keep-recent 10" in text.split("Not recommended")[1]
        assert "saves 78,851" not in text   # the tokens alone are not shown as the advice any more


async def test_keep_recent_steps_inside_the_first_tier_say_they_change_nothing():
    app = CtxviewApp(str(SPOTTER), Settings(tiers="default", keep_recent=5))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("plus")
        await settle(pilot)
        assert app.settings.keep_recent == 6
        assert any("keep_recent 6 changes nothing" in n.message for n in app._notifications)
