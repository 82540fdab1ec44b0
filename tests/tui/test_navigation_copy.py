"""`y` copies the message under the cursor (a tool call: its input as JSON) and `Y` (the palette)
the request body as prepared, through App.copy_to_clipboard (patched here), with a notification
saying what and how big; at three sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pilot_sizes import SIZES
from test_app import new_app, settle

from ctxview.export.bodies import default_shape, dumps, to_shape
from ctxview.model import Conversation, Message, Session, ToolCall
from ctxview.tui.app import CtxviewApp
from ctxview.tui.navigation import copy_of
from test_navigation_moves import record_notes
from ctxview.engine.view import Settings

SPOTTER = (Path(__file__).parents[1] / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


def clipboard(app, monkeypatch) -> list[str]:
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    return copied




@pytest.mark.parametrize("size", SIZES)
async def test_y_copies_a_message_text_and_a_tool_input(size, monkeypatch):
    app = new_app()
    copied = clipboard(app, monkeypatch)
    said = record_notes(app)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down")               # #2: the Read result of file 0
        row = app.row_layout.rows[app.cursor]
        await pilot.press("y")
        await pilot.pause()
        assert copied == [row.stored.text]
        assert said[-1] == (f"copied #2 (stored): the text of the tool message · {len(row.stored.text):,} "
                                  f"characters, {len(row.stored.text.encode()):,} bytes (OSC 52: the terminal must "
                                  "allow it)")
        app.prepared_pane.focus()                                 # the prepared side: compressed
        await pilot.press("y")
        await pilot.pause()
        assert copied[-1] == row.prepared.text != row.stored.text and "(prepared)" in said[-1]
        await pilot.press("up")                                   # #1: the assistant's Read call
        await pilot.press("y")
        await pilot.pause()
        assert json.loads(copied[-1]) == {"file_path": "/src/file0.py"}
        assert said[-1].startswith(f"copied #1 (prepared): the input of Read as JSON · {len(copied[-1])} "
                                         "characters")


async def test_y_on_a_ghost_row_copies_the_other_side_or_says_there_is_nothing(monkeypatch):
    app = new_app(budget=3000)
    copied = clipboard(app, monkeypatch)
    said = record_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prepared_pane.focus()
        await pilot.press("home", "y")                            # #sys: not in the file
        await pilot.pause()
        assert copied == [] and said[-1] == "nothing to copy here: no message in the file"
        dropped = next(i for i, r in enumerate(app.row_layout.rows) if r.prepared is None and r.stored is not None)
        app.set_cursor(dropped)                                   # dropped by the budget: the stored text
        await pilot.press("y")
        await pilot.pause()
        row = app.row_layout.rows[dropped]
        assert row.prepared is None and copied == [copy_of(row.stored)[0]] and "(stored)" in said[-1]


@pytest.mark.parametrize("size", SIZES)
async def test_Y_copies_the_request_body_as_prepared(size, monkeypatch):
    app = CtxviewApp(str(SPOTTER), Settings(tiers="default"))
    copied = clipboard(app, monkeypatch)
    said = record_notes(app)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("Y")
        await settle(pilot)
        assert default_shape(app.session.format, app.conversation.model) == "anthropic"
        expected = dumps(to_shape(app.view, "anthropic", app.conversation.model, max_tokens=8192))
        assert copied == [expected]
        body = json.loads(copied[0])
        assert body["model"] == app.conversation.model and body["messages"][0]["role"] == "user"
        note = said[-1]
        assert note.startswith("copied the anthropic request body of request next (what-if: tiers=default) · "
                               f"{len(expected):,} characters")


async def test_the_palette_lists_the_copies_and_moves():
    app = new_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Copy the message", "Copy the request body", "Go to message #N",
                "Jump between a tool call and its result"} <= titles
        assert "Back" not in titles                     # (nowhere to go back to: listed once there is)


async def test_y_copies_text_the_clipboard_can_encode(monkeypatch):
    # a lone surrogate (JSON "\\ud800") would make copy_to_clipboard's UTF-8 encoding raise
    msgs = (Message("user", "bad \ud800 char and \x1b]0;title\x07"),
            Message("assistant", "", tool_calls=(ToolCall(id="c", name="Bash", arguments={"cmd": "x\udfff"}),)))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (Conversation("main", msgs),)))
    copied = clipboard(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down", "y", "down", "y")
        await pilot.pause()
        # (the ESC and BEL as the screen shows them: a paste into a terminal runs nothing)
        assert copied == ["bad <U+D800> char and ␛]0;title␇", '{"cmd": "x\ufffd"}']
        for text in copied:
            text.encode("utf-8")                     # what Textual does with it: no error
