"""What the controls and header pilot tests share: the three terminal sizes, settling, the bars' text."""

from __future__ import annotations

import pytest

from ctxview.tui.widgets.chrome import HeaderBar, StatusBar

# The sizes every control must work at: narrow (no controls panel), medium, wide.
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40"),
         # the wide layout is the one least likely to break: CI's second pass runs it (pytest -m slow)
         pytest.param((200, 50), id="200x50", marks=pytest.mark.slow)]
# For what does not depend on the layout (the palette's search): the narrowest here, every size in CI.
NARROW_FIRST = [SIZES[0], pytest.param((120, 40), id="120x40", marks=pytest.mark.slow), SIZES[2]]


async def settle(pilot) -> None:
    """Wait until every worker is done and the screen has caught up."""
    app = pilot.app
    for _ in range(50):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.busy and not any(w.is_running for w in app.workers):
            return
    raise AssertionError("workers did not settle")


def status(app) -> str:
    return app.query_one(StatusBar).render().plain


def header(app) -> str:
    return app.query_one(HeaderBar).render().plain
