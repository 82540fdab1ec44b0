"""The navigation decisions without a pilot: go to #N, a call's partner, sub-agents, the way back,
the search's count, what `y` copies, the scroll that reveals a line."""

from __future__ import annotations

import json

import pytest

from ctxview.model import Conversation, Message, ToolCall
from ctxview.settings import Settings
from ctxview.tui.navigation import copy_of
from ctxview.tui.reveal import reveal_scroll
from ctxview.tui.search_state import Search, match_positions
from ctxview.tui.state import UNKNOWN_SCROLL, InspectorState, Place, export_name, goto_position, subagents_of, tool_partner

CALL = ToolCall(id="t1", name="Task", arguments={"description": "look", "prompt": "go"})


def test_goto_position():
    indices = [None, 0, 1, None, 2, 3]       # #sys, then an inserted row before #2
    assert goto_position("2", indices) == (4, "")
    assert goto_position(" #3 ", indices) == (5, "")
    assert goto_position("SYS", indices) == (0, "")
    assert goto_position("0", indices) == (1, "")
    assert goto_position("4", indices) == (None, "no message #4 (this conversation has #0–#3)")
    assert goto_position("x1", indices)[0] is None
    assert goto_position("1.5", indices)[1].startswith("not a message number: '1.5'")
    # what str.isdigit() takes and int() refuses, or a number int() will not read, is no number
    assert goto_position("²", indices)[1].startswith("not a message number: '²'")
    assert goto_position("9" * 5000, indices)[1].startswith("not a message number: '9999")
    assert goto_position("\x1b[31m", indices)[1] == "not a message number: '␛[31m' (this conversation has #0–#3, or sys)"
    assert goto_position("9" * 40, indices)[0] is None
    assert goto_position("0", [None]) == (None, "no message #0 (this conversation has none)")


def test_tool_partner():
    msgs = [None, Message("user", "go"),
            Message("assistant", "", tool_calls=(ToolCall(id="a", name="Read", arguments={}),
                                                 ToolCall(id="b", name="Read", arguments={}))),
            Message("user", "(a compaction summary between them)"),
            Message("tool", "B", tool_call_id="b"), Message("tool", "A", tool_call_id="a"),
            Message("tool", "orphan", tool_call_id="zz")]
    assert tool_partner(msgs, 2) == (4, "")            # the first result of any of its calls
    assert tool_partner(msgs, 5) == (2, "") and tool_partner(msgs, 4) == (2, "")
    assert tool_partner(msgs, 6) == (None, "no tool call for this result in the conversation")
    assert tool_partner(msgs, 1) == (None, "not a tool call or a tool result")
    assert tool_partner(msgs, 0) == (None, "no message here")
    assert tool_partner(msgs[:4], 2) == (None, "no result for this tool call in the conversation")


def test_subagents_of():
    convs = [Conversation("main", ()), Conversation("agent-1", (), metadata={"parent_tool_call_id": "t1"}),
             Conversation("agent-2", (), metadata={"parent_tool_call_id": "t2"}), Conversation("agent-3", ())]
    assert subagents_of(Message("assistant", "", tool_calls=(CALL,)), convs) == [1]
    two = Message("assistant", "", tool_calls=(CALL, ToolCall(id="t2", name="Task", arguments={})))
    assert subagents_of(two, convs) == [1, 2]
    assert subagents_of(Message("assistant", "no calls"), convs) == [] and subagents_of(None, convs) == []


def test_enter_a_subagent_and_back():
    state = InspectorState(Settings())
    state.opened(0, 3, Settings(tiers="default"))
    assert state.change(request=5)
    here = Place(0, 5, 12, 40.0)
    assert state.enter_subagent(2, here)
    assert state.conversation == 2 and state.settings.request is None and state.trail == [here]
    assert state.settings.tiers == "default"           # the what-if settings carry over, as with `a`
    assert state.back() == here and state.returning == here
    assert state.conversation == 0 and state.settings.request == 5 and state.trail == []
    assert state.back() is None
    state.enter_subagent(1, here)
    state.select_conversation(2)                       # the user's own switch: no way back
    assert state.trail == [] and state.back() is None


def test_a_file_read_again_moves_or_forgets_the_way_back():
    state = InspectorState(Settings())
    state.opened(0, 3, Settings())
    here = Place(0, 5, 12, 40.0)
    state.change(request=5)
    state.enter_subagent(2, here)
    holds = lambda conversation, request: request < 10  # noqa: E731 - the new session's requests
    # both found again, at other indices, with 3 messages of history before the parent's own
    assert not state.reloaded(1, 4, renumbered={0: (3, 3), 2: (1, 0)}, holds=holds)
    # (its rows moved with its messages; where it was scrolled to is found anew)
    assert state.conversation == 1 and state.trail == [Place(3, 8, 15, UNKNOWN_SCROLL)]
    # the parent's request cut off: the way back leads to its next request
    state.reloaded(1, 4, renumbered={1: (1, 0), 3: (3, 0)}, holds=lambda c, r: r < 8)
    assert state.trail == [Place(3, None, 15, UNKNOWN_SCROLL)]
    # the sub-agent gone: the first conversation shows, and there is no way back to take
    state.reloaded(0, 1, found=False, renumbered={3: (0, 0)}, holds=holds)
    assert state.conversation == 0 and state.trail == [] and state.back() is None
    # the parent gone while the sub-agent stays: nowhere to go back to either
    state.opened(0, 3, Settings())
    state.enter_subagent(2, here)
    state.reloaded(0, 1, renumbered={2: (0, 0)}, holds=holds)
    assert state.trail == [] and state.returning is None


def test_a_request_picked_that_the_new_read_does_not_hold_gives_the_next():
    state = InspectorState(Settings())
    state.opened(0, 1, Settings())
    state.change(request=40)
    assert state.reloaded(0, 1, holds=lambda c, r: r < 40)
    assert state.settings.request is None
    state.change(request=20)
    assert not state.reloaded(0, 1, holds=lambda c, r: r < 40) and state.settings.request == 20


@pytest.mark.parametrize("path, name", [
    ("/runs/v1.2-run.jsonl", "v1.2-run.prepared.json"),        # a dot inside the name stays
    ("saved.ctxview.json", "saved.prepared.json"),             # every suffix saying the format goes
    ("log.eval", "log.prepared.json"), ("t.ctap.JSON", "t.prepared.json"), ("notes", "notes.prepared.json"),
    (".jsonl", "jsonl.prepared.json"), ("..", "session.prepared.json"),   # never a hidden file
    (None, "demo.prepared.json"), ("<stdin>", "session.prepared.json"),
])
def test_the_name_w_proposes(path, name):
    assert export_name(path) == name


def test_search_count_label():
    layout, other = object(), object()
    search = Search()
    search.submit("x")
    assert search.needs_count(layout) and search.count_label(3, layout) == ""
    assert search.count_done("x", layout, [3, 8, 20])
    assert not search.needs_count(layout) and search.needs_count(other)
    assert [search.count_label(r, layout) for r in (3, 8, 20, 4)] == ["1/3", "2/3", "3/3", "–/3"]
    assert search.count_label(3, other) == ""          # counted over another view
    assert not search.count_done("old term", layout, [])
    search.count_done("x", other, [])
    assert search.count_label(0, other) == "0/0"
    search.submit("y")
    assert search.count_label(0, other) == ""


def test_match_positions():
    stored = [None, Message("user", "Needle here"), Message("user", "hay"),
              Message("assistant", "", tool_calls=(ToolCall(id="1", name="Grep", arguments={"q": "needle"}),))]
    prepared = [None, None, Message("user", "hay + needle"), None]
    assert match_positions(stored, prepared, "NEEDLE") == [1, 2, 3]
    assert match_positions(stored, prepared, "needle", cancelled=lambda: True) is None


def test_copy_of():
    assert copy_of(Message("user", "hello")) == ("hello", "the text of the user message")
    one = Message("assistant", "text too", tool_calls=(CALL,))
    text, what = copy_of(one)
    assert json.loads(text) == {"description": "look", "prompt": "go"} and what == "the input of Task as JSON"
    two = Message("assistant", "", tool_calls=(CALL, ToolCall(id="2", name="Bash", arguments={"n": float("nan")})))
    text, what = copy_of(two)
    assert json.loads(text) == [{"name": "Task", "input": {"description": "look", "prompt": "go"}},
                                {"name": "Bash", "input": {"n": None}}]     # strict JSON, as the export
    assert what == "the inputs of its 2 tool calls as JSON"


def test_reveal_scroll():
    # a block at line 100, viewport 20 lines
    assert reveal_scroll(100, 5, 0, 20) == 86          # line 105 at the bottom, header above it shown
    assert reveal_scroll(100, 5, 95, 20) == 95          # already on screen: no move
    assert reveal_scroll(100, 5, 120, 20) == 100        # scrolled past: back to the header
    assert reveal_scroll(100, 50, 0, 20) == 144         # further than a screen: a third down
    assert reveal_scroll(100, 50, 140, 20) == 140       # on screen already
