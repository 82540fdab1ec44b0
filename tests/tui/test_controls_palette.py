"""The palette lists every action once, with the key it is on now; help lists the same keys."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES, settle
from sessions import make_session

from ctxview.tui.app import CtxviewApp
from ctxview.engine.view import Settings


@pytest.mark.parametrize("size", SIZES)
async def test_every_action_once_with_its_key_in_palette_and_help(size):
    app = CtxviewApp("test.json", Settings(keep_recent=4), session=make_session(2))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.set_keymap({"ctxview.fold": "Z", "ctxview.expand": "enter,E"})
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)
        keys = {c.title: c.help for c in commands}
        assert titles.count("Quit") == 1 and keys["Quit"] == "key q/^c"
        assert keys["keep_recent +1"] == "key +" and keys["keep_recent −1"] == "key -"
        assert keys["Expand"] == "key ⏎/E" and keys["Fold/unfold removed messages"] == "key Z"
        assert keys["Open in detail view"] == "key o" and keys["Page down"] == "key pgdn/space"
        assert keys["Settings"] == "key S" and keys["Back to the panes"] == "key esc"
        # every action of the app and the panes is there (Textual's own commands besides)
        live = {b.description for _, b, _ in app.live_bindings()}
        assert live <= set(titles)
        await pilot.press("question_mark")
        await pilot.pause()
        rows = app.screen.keys
        assert ("Z", "Fold / unfold a run of removed messages (Enter unfolds too)") in rows
        assert len({description for _, description in rows}) == len(rows)   # help: each once too
