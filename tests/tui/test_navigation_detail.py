"""The detail view's tabs, the collapsed preview of a message opening with blank lines and the
bloat screen's recommendations, at three terminal sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot_sizes import SIZES
from test_app import new_app, settle

from ctxview.model import Conversation, Message, Session
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.modals import BloatScreen, DetailScreen
from ctxview.engine.view import Settings



def block_text(pane, row: int) -> list[str]:
    return [strip.text for strip in pane.block(row)]


@pytest.mark.parametrize("size", SIZES)
async def test_the_prepared_tab_shows_the_prepared_tokens(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        # the first compressed tool result (tiers default, keep_recent 4): its sides' tokens differ
        pos = next(i for i, r in enumerate(app.row_layout.rows)
                   if r.stored is not None and r.prepared is not None and r.tokens_prepared != r.tokens_stored)
        row = app.row_layout.rows[pos]
        app.set_cursor(pos)
        await pilot.press("o")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.side == "stored"
        title = str(screen.query_one("#detail-title").render())
        assert f"{row.tokens_stored:,} tok" in title
        await pilot.press("tab")
        await pilot.pause()
        title = str(screen.query_one("#detail-title").render())
        assert screen.side == "prepared"
        assert f"{row.tokens_prepared:,} tok" in title and f"{row.tokens_stored:,} tok" not in title


@pytest.mark.parametrize("size", SIZES)
async def test_a_preview_skips_leading_blank_lines(size):
    text = "\n\n   \n\nfirst words here\nsecond line\nthird line\nfourth line"
    conv = Conversation("main", (Message("user", text), Message("assistant", "ok")))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (conv,)))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        lines = block_text(app.stored_pane, 1)
        assert "first words here" in lines[1]
        assert "second line" in lines[2] and "third line" in lines[3]
        assert "1 more lines" in lines[4]  # counted from the first line shown
        assert len(lines) == app.row_layout.heights[1]  # the layout's height agrees
        await pilot.press("down", "enter")  # expanded: every line, the blank ones too
        await pilot.pause()
        lines = block_text(app.stored_pane, 1)
        assert lines[1].strip() == "" and "first words here" in lines[5]


CLAUDE = Path(__file__).parents[2] / "sample_sessions" / "claude-code" / "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl"


@pytest.mark.parametrize("size", SIZES)
async def test_the_bloat_screen_recommends_nothing_already_applied(size):
    # (the report's rule, report.split_recommendations, in the inspector's `b` too)
    texts = {}
    for settings in (Settings(), Settings(tiers="default", keep_recent=10)):
        app = CtxviewApp(str(CLAUDE), settings)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("b")
            await settle(pilot)
            assert isinstance(app.screen, BloatScreen)
            texts[settings.tiers] = app.screen.report.plain
    assert "--tiers default --keep-recent 10" in texts["off"] and "--clear-keep 3" in texts["off"]
    assert "--tiers default --keep-recent 10" not in texts["default"] and "--clear-keep 3" in texts["default"]
