"""The screen answers keys while the first view computes: the stored side scrolls and the cursor
moves under them, and the prepared side follows when the view is done."""

from __future__ import annotations

import threading

from sessions import tool_session
from test_app import SIZE, settle

from ctxview.model import Session
from ctxview.tui.app import CtxviewApp
from ctxview.engine.view import Settings


async def test_navigation_keys_work_while_the_first_view_computes():
    release = threading.Event()
    started = threading.Event()

    class SlowApp(CtxviewApp):
        calls = 0

        def _prepare(self, *args):
            SlowApp.calls += 1
            if SlowApp.calls == 1:
                started.set()
                assert release.wait(20)  # the first pipeline run holds until the keys are handled
            return super()._prepare(*args)

    session = Session(format="ctxview", source="big.json", conversations=(tool_session(pairs=60),))
    app = SlowApp("big.json", Settings(tiers="default"), session=session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(200):
                await pilot.pause()
                if app.row_layout is not None and started.is_set():
                    break
            assert app.row_layout.is_pending and app.view is None  # the first run is in flight
            await pilot.press("down", "down", "down")
            await pilot.pause()
            assert app.cursor == 3 and app.view is None
            await pilot.press("end")
            await pilot.pause()
            pane = app.stored_pane
            assert app.cursor == len(app.row_layout) - 1 and pane.scroll_y == pane.max_scroll_y > 0
            assert app.view is None and app.row_layout.is_pending  # all of it before the view came
            release.set()
            await settle(pilot)
            assert app.view is not None and not app.row_layout.is_pending
            assert app.cursor == len(app.row_layout) - 1  # the cursor kept where the keys put it
    finally:
        release.set()
