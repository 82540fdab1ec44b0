"""Notifications as a user meets them: never over the status bar or the footer, wide enough to
read at 80 columns; and the one that says why the demo opens as a what-if."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle, status
from test_navigation_moves import record_notes

from ctxview.model import Conversation, Message, Session
from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.chrome import StatusBar
from ctxview.engine.view import Settings
from textual.widgets import Footer
from textual.widgets._toast import Toast


def overlaps(a, b) -> bool:
    return a.overlaps(b) if hasattr(a, "overlaps") else bool(a.intersection(b).area)


@pytest.mark.parametrize("size", SIZES)
async def test_a_notification_covers_neither_the_status_bar_nor_the_footer(size):
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (
        Conversation("main", (Message("user", "hi"), Message("assistant", "hello"))),)))
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        app.notify("no system reminders in this conversation, nothing to jump to", title="loaded with warnings")
        for _ in range(20):
            await pilot.pause(0.05)
            toasts = list(app.screen.query(Toast))
            if toasts and all(t.region.area for t in toasts):
                break
        assert toasts
        bar, footer = app.query_one(StatusBar).region, app.query_one(Footer).region
        for toast in toasts:
            assert toast.region.area and not overlaps(toast.region, bar) and not overlaps(toast.region, footer)
            assert toast.region.width >= min(40, size[0] // 2)           # readable, not a sliver
        assert "row" in status(app)                                      # the status bar still shows


async def test_the_demo_says_why_it_opens_as_a_what_if():
    app = CtxviewApp(None, Settings())
    said = record_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert status(app).strip().startswith("what-if")
        assert any("saved settings" in s and "as sent" in s for s in said)


async def test_a_file_without_saved_settings_opens_as_sent_without_that_note():
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (
        Conversation("main", (Message("user", "hi"), Message("assistant", "hello"))),)))
    said = record_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert status(app).strip().startswith("as sent")
        assert not any("saved settings" in s for s in said)
