"""Going places: `g` to message #N, `%` between a tool call and its result, Enter on a Task call into
the sub-agent's conversation and Escape back to the same place; at three sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot_sizes import SIZES
from test_app import new_app, settle

from ctxview.model import Conversation, Message, Session, ToolCall
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.dialogs import GotoScreen
from ctxview.tui.screens.modals import ConversationPicker
from ctxview.engine.view import Settings

SPOTTER = (Path(__file__).parents[1] / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


def record_notes(app) -> list[str]:
    """Every notification's message, as it is made (the app's own list drops expired ones)."""
    said: list[str] = []
    show = app.notify

    def notify(message, *args, **kwargs):
        said.append(message)
        return show(message, *args, **kwargs)

    app.notify = notify
    return said


async def goto(pilot, answer: str) -> None:
    await pilot.press("g")
    await pilot.pause()
    assert isinstance(pilot.app.screen, GotoScreen)
    pilot.app.screen.query_one("#goto-input").value = answer
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
async def test_g_goes_to_a_message_number(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await goto(pilot, "17")
        assert app.row_layout.rows[app.cursor].index == 17
        top = app.row_layout.row_top(app.cursor)
        assert app.stored_pane.scroll_y <= top < app.stored_pane.scroll_y + app.stored_pane.size.height
        await goto(pilot, "#3")
        assert app.row_layout.rows[app.cursor].index == 3
        await goto(pilot, "sys")
        assert app.cursor == 0
        await pilot.press("g", "escape")                              # cancelled: nowhere
        await pilot.pause()
        assert app.cursor == 0 and not isinstance(app.screen, GotoScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_g_with_bad_input_is_a_notice(size):
    app = new_app()
    said = record_notes(app)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        await goto(pilot, "abc")
        assert said[-1] == "not a message number: 'abc' (this conversation has #0–#25, or sys)"
        await goto(pilot, "999")
        assert said[-1] == "no message #999 (this conversation has #0–#25)"
        await goto(pilot, "-4")
        assert said[-1].startswith("not a message number: '-4'")
        assert app.cursor == 2 and app.is_running


async def test_g_into_a_folded_run_unfolds_it():
    app = new_app(budget=3000)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.row_layout.folded
        await goto(pilot, "4")
        assert app.row_layout.rows[app.cursor].index == 4 and app.row_layout.visible(app.cursor)


@pytest.mark.parametrize("size", SIZES)
async def test_percent_jumps_between_a_call_and_its_result(size):
    app = new_app()
    said = record_notes(app)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await goto(pilot, "5")                                          # assistant: the call to read file 2
        call = app.row_layout.rows[app.cursor].stored.tool_calls[0]
        await pilot.press("percent_sign")
        await pilot.pause()
        result = app.row_layout.rows[app.cursor].stored
        assert result.role == "tool" and result.tool_call_id == call.id
        await pilot.press("percent_sign")
        await pilot.pause()
        assert app.row_layout.rows[app.cursor].index == 5
        await goto(pilot, "0")                                          # the user's message: neither
        await pilot.press("percent_sign")
        await pilot.pause()
        assert app.row_layout.rows[app.cursor].index == 0
        assert said[-1] == "#0: not a tool call or a tool result"


async def test_percent_says_when_a_call_has_no_result():
    msgs = (Message("user", "go"),
            Message("assistant", "", tool_calls=(ToolCall(id="c1", name="Bash", arguments={"command": "ls"}),)))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (Conversation("main", msgs),)))
    said = record_notes(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end", "percent_sign")
        await pilot.pause()
        assert app.cursor == 2 and said[-1] == "#1: no result for this tool call in the conversation"


@pytest.mark.parametrize("size", SIZES)
async def test_enter_on_a_task_call_opens_the_subagent_and_escape_returns(size):
    app = CtxviewApp(str(SPOTTER), Settings())
    said = record_notes(app)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert app.conversation.name == "main"
        await goto(pilot, "273")
        task = app.row_layout.rows[app.cursor].stored.tool_calls[0]
        assert task.name == "Task"
        await pilot.press("k", "j")                                     # (the cursor, as a user moves it)
        place = app.cursor, app.stored_pane.scroll_y
        await pilot.press("enter")
        await settle(pilot)
        conv = app.conversation
        assert conv.name == "agent-a881341" and conv.metadata["parent_tool_call_id"] == task.id
        assert app.cursor == 0 and not app.expanded_rows
        assert said[-1] == "opened agent-a881341 (Research Claude hook output) · Escape goes back"
        assert "Back" in {c.title for c in app.get_system_commands(app.screen)}
        await pilot.press("escape")
        await settle(pilot)
        assert app.conversation.name == "main"
        assert (app.cursor, app.stored_pane.scroll_y) == place
        await pilot.press("escape")                                     # nothing further back: stays
        await settle(pilot)
        assert app.conversation.name == "main" and app.cursor == place[0]


async def test_enter_elsewhere_still_expands_and_a_switch_forgets_the_way_back():
    app = CtxviewApp(str(SPOTTER), Settings())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await goto(pilot, "272")
        await pilot.press("enter")
        await pilot.pause()
        assert app.conversation.name == "main" and app.cursor in app.expanded_rows
        await goto(pilot, "273")
        await pilot.press("enter")
        await settle(pilot)
        assert app.conversation.name == "agent-a881341"
        await pilot.press("a")                                          # the user's own switch
        await pilot.pause()
        assert isinstance(app.screen, ConversationPicker)
        await pilot.press("escape")
        app.select_conversation(2)
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.state.conversation == 2 and app.state.trail == []


@pytest.mark.parametrize("size", SIZES)
async def test_escape_from_a_subagent_opened_inside_a_folded_run_keeps_the_cursor_there(size):
    # A budget drops the old messages: they fold into one line; a jump to the Task call among
    # them unfolds the run. Back from the sub-agent, the run is still open and the cursor on the
    # call, so the next move goes on from there (it used to fold again, the cursor at its head).
    filler = "x" * 4000
    msgs = [Message("user", "start")]
    for i in range(12):
        msgs.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(id=f"r{i}", name="Read",
                                                                            arguments={"file_path": f"f{i}"}),)))
        msgs.append(Message("tool", filler, tool_call_id=f"r{i}"))
    task = ToolCall(id="task1", name="Task", arguments={"description": "explore", "prompt": "look around"})
    msgs[5] = Message("assistant", "delegating", tool_calls=(task,))
    msgs[6] = Message("tool", "the sub-agent's answer", tool_call_id="task1")
    msgs += [Message("user", "and now?"), Message("assistant", "done")]
    sub = Conversation("agent-x", (Message("user", "look around"), Message("assistant", "found it")),
                       metadata={"parent_tool_call_id": "task1", "kind": "subagent"})
    session = Session("test", "t.json", (Conversation("main", tuple(msgs)), sub))
    app = CtxviewApp("t.json", Settings(budget=3000), session=session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        layout = app.row_layout
        row = next(r for r in range(len(layout)) if layout.rows[r].stored is msgs[5])
        assert layout.fold_of(row) not in (None, row)                   # folded away at first
        await goto(pilot, "5")
        assert app.cursor == row and app.pair.unfolded_runs
        await pilot.press("enter")
        await settle(pilot)
        assert app.conversation.name == "agent-x"
        await pilot.press("escape")
        await settle(pilot)
        assert app.conversation.name == "main"
        assert app.cursor == row and app.row_layout.visible(row)
        await pilot.press("j")
        await pilot.pause()
        assert app.cursor == row + 1
