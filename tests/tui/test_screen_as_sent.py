"""What the model saw, on screen: the #sys row, thinking, header flags, as-sent vs what-if badges,
compaction boundaries, sub-agent labels."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from test_app import SIZE, settle, status

from ctxview.model import ContextEvent, Conversation, Message, Session, ToolCall, Usage
from ctxview.tui.app import CtxviewApp
from ctxview.tui.block_heights import collapsed_height
from ctxview.tui.layout import Layout, SystemRow, system_row
from ctxview.tui.render import PaneStyles, badge_style, block_lines, header_line
from ctxview.tui.screens.modals import ConversationPicker
from ctxview.tui.state import conversation_title
from ctxview.tui.workers import conversation_marks
from ctxview.engine.view import Change, PreparedView, Row, Settings

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = next((ROOT / "sample_sessions" / "claude-code").glob("*.jsonl"))
STYLES = PaneStyles()
CONSOLE = Console(width=200, color_system="truecolor", markup=False, emoji=False, highlight=False)


def one(conv: Conversation, **settings) -> CtxviewApp:
    return CtxviewApp("t.json", Settings(**settings), session=Session("test", "t.json", (conv,)))


# -- #sys --------------------------------------------------------------------------


async def test_sys_row_shows_the_system_prompt_with_its_tokens_and_expands():
    prompt = "\n".join(f"rule {i}: be brief" for i in range(12)) + "\nthe secret word is PELICAN"
    conv = Conversation("main", (Message("user", "hi"), Message("assistant", "hello")), system_prompt=prompt)
    app = one(conv)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.system_tokens > 0
        for pane in app.panes:
            header = pane.block(0)[0].text
            assert header.startswith(f"#sys system · {app.view.system_tokens:,} tok")
        assert "rule 0: be brief" in app.stored_pane.block(0)[1].text
        collapsed = app.row_layout.heights[0]
        assert app.cursor == 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.row_layout.heights[0] == 1 + 13 > collapsed
        assert any("PELICAN" in strip.text for strip in app.prepared_pane.block(0))


async def test_search_finds_text_in_the_system_prompt():
    conv = Conversation("main", (Message("user", "hi"), Message("assistant", "hello")),
                        system_prompt="You are PELICAN, a careful agent.")
    app = one(conv)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_cursor(2)
        await pilot.press("slash", *"pelican", "enter")
        await settle(pilot)
        assert app.cursor == 0
        await pilot.press("n")  # the only match: n wraps round to it
        await settle(pilot)
        assert app.cursor == 0


async def test_without_a_system_prompt_the_sys_row_is_the_fitted_overhead():
    from ctxview.formats import load_session
    from ctxview.analysis.report import conversation_report

    session = load_session(str(CLAUDE))
    main = session.conversations[0]
    assert main.system_prompt is None
    fit = conversation_report(main, Settings())["calibration"]  # what `ctxview report` prints
    assert fit["requests"] >= 10 and fit["overhead"] > 0
    app = CtxviewApp(str(CLAUDE), Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        head = app.row_layout.head
        assert type(head) is SystemRow and head.stored is None and head.prepared is None
        expected = (f"not in file: ≈ {fit['overhead']:,} tokens of system prompt and tools, "
                    f"fitted from {fit['requests']:,} recorded requests")
        for pane in app.panes:
            lines = [strip.text for strip in pane.block(0)]
            assert lines[0].startswith(f"#sys system · ≈ {fit['overhead']:,} tok")
            assert lines[1].startswith(expected[: pane.text_width])
        assert app.row_layout.heights[0] == 2


def test_sys_ghost_without_usage_says_there_is_nothing_to_fit():
    from ctxview.pipeline import PipelineCache
    from ctxview.tui.workers import system_note

    conv = Conversation("main", (Message("user", "hi"), Message("assistant", "hello")))
    note, tokens = system_note(conv, "swarm", PipelineCache())
    assert tokens == 0 and note == "not in file: the system prompt and tools (no recorded usage)"
    lines = block_lines(system_row(None, 0, note), "stored", STYLES, 100, False)
    assert [line.plain for line in lines] == ["#sys system · … tok", note]


# -- thinking and header flags ------------------------------------------------------


def row(stored, prepared=None, **kw):
    return Row(index=kw.pop("index", 0), stored=stored, prepared=stored if prepared is None else prepared, **kw)


def test_thinking_is_one_dim_italic_line_collapsed_and_every_line_expanded():
    msg = Message("assistant", "The answer is 4.", thinking="First, 2 + 2.\nThat is 4.\nCheck: yes.")
    r = row(msg)
    collapsed = block_lines(r, "stored", STYLES, 80, False)
    assert collapsed[1].plain.startswith("thinking First, 2 + 2.") and "(+2 lines)" in collapsed[1].plain
    assert any(s.style.italic and s.style.dim for s in collapsed[1].spans)
    assert collapsed[2].plain == "The answer is 4."
    assert len(collapsed) == collapsed_height(msg)  # the layout's height counts the thinking line
    expanded = [line.plain for line in block_lines(r, "stored", STYLES, 80, True, console=CONSOLE)]
    assert expanded[1:5] == ["thinking ", "First, 2 + 2.", "That is 4.", "Check: yes."]
    assert expanded[5] == "The answer is 4."


async def test_search_finds_text_in_thinking():
    conv = Conversation("main", (Message("user", "hi"), Message("assistant", "ok", thinking="ponder ZEBRA")))
    app = one(conv)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zebra", "enter")
        await settle(pilot)
        assert app.cursor == 2 and app.row_layout.rows[2].stored.thinking == "ponder ZEBRA"


def test_header_flags_errors_injected_messages_and_unanswered_calls():
    failed = Message("tool", "boom", tool_call_id="c1", meta={"is_error": True})
    assert "error" in header_line(row(failed), "stored", STYLES).plain
    assert "error" not in header_line(row(Message("tool", "ok", tool_call_id="c1")), "stored", STYLES).plain
    injected = Message("user", "<system-reminder>x</system-reminder>", injected=True)
    assert "injected" in header_line(row(injected), "prepared", STYLES).plain
    call = Message("assistant", "", tool_calls=(ToolCall("c2", "Read"),))
    assert "no result" in header_line(row(call), "stored", STYLES, unanswered=True).plain
    assert "no result" not in header_line(row(call), "stored", STYLES).plain
    narrow = header_line(row(failed), "stored", STYLES, width=16).plain
    assert "err" in narrow and "error" not in narrow


def test_conversation_marks_find_unanswered_calls_and_compaction_boundaries():
    msgs = (
        Message("user", "go"),
        Message("assistant", "", tool_calls=(ToolCall("a", "Read"), ToolCall("b", "Grep"))),
        Message("tool", "read", tool_call_id="a"),
        Message("assistant", "", tool_calls=(ToolCall("c", "Read"),)),
        Message("tool", "read", tool_call_id="c"),
        Message("user", "summary"),
    )
    event = ContextEvent("compaction", 5, trigger="auto", tokens_before=167_412)
    marks = conversation_marks(Conversation("main", msgs, events=(event, ContextEvent("threshold_hit", 3))))
    assert [i for i, m in enumerate(msgs) if marks.unanswered(m)] == [1]  # "b" has no result; "c" has one
    assert dict(marks.boundaries) == {5: event}
    from ctxview.tui.layout import NO_MARKS
    assert not NO_MARKS.unanswered(msgs[1])  # (the pending layout: not known yet)


async def test_pilot_flags_a_failed_result_and_an_unanswered_call():
    msgs = (
        Message("user", "go"),
        Message("assistant", "", tool_calls=(ToolCall("a", "Bash"), ToolCall("b", "Read"))),
        Message("tool", "exit 1", tool_call_id="a", tool_name="Bash", meta={"is_error": True}),
    )
    app = one(Conversation("main", msgs))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for pane in app.panes:
            assert "no result" in pane.block(2)[0].text   # message #1 (row 0 is #sys)
            assert "error" in pane.block(3)[0].text
            assert "error" not in pane.block(1)[0].text


# -- as sent vs what-if ----------------------------------------------------------------


def test_harness_badges_are_styled_apart_from_what_if_ones():
    harness = [Change("compacted", "compaction", ""), Change("microcompacted", "compaction", ""),
               Change("truncated", "harness", ""), Change("compressed", "harness", "", tier=1, age=12)]
    what_if = [Change("compressed", "compression", "", tier=1, age=12), Change("compressed", "swarm-auto", "", 1, 12),
               Change("cleared", "clear", ""), Change("excerpted", "summarize", "")]
    assert {badge_style(c, STYLES) for c in harness} == {STYLES.badge_harness}
    assert {badge_style(c, STYLES) for c in what_if} == {STYLES.badge}
    assert STYLES.badge_harness != STYLES.badge
    assert badge_style(Change("ephemeral", "ephemeral", ""), STYLES) == STYLES.badge_ephemeral


def test_short_harness_badges_fit_an_80_column_pane():
    stored = Message("tool", "x" * 400)
    for change in (Change("microcompacted", "compaction", ""), Change("truncated", "harness", ""),
                   Change("compressed", "harness", "", tier=4, age=182)):
        r = Row(index=12_345, stored=stored, prepared=Message("tool", "x"), changes=(change,), tokens_stored=12_345,
                tokens_prepared=3, tool_name="Bash")
        header = header_line(r, "prepared", STYLES, width=38).plain  # a pane at 80 columns
        assert len(header) <= 38, header


async def test_claude_code_compaction_marked_on_both_sides():
    app = CtxviewApp(str(CLAUDE), Settings())
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        layout = app.row_layout
        event = next(e for e in app.conversation.events if e.kind == "compaction")
        boundary = next(i for i, r in enumerate(layout.rows) if r.index == event.index)
        words = f"compaction ({event.trigger}, {event.tokens_before:,} tokens before, recorded)"
        assert words in app.stored_pane.block(boundary)[0].text
        assert "compaction (" not in app.prepared_pane.block(boundary)[0].text  # the stored side's mark
        folded = layout.runs[boundary - 1][0]
        ghost = app.prepared_pane.block(folded)[0].text
        assert ghost.startswith(f"⋯ {event.index} messages replaced by compaction at #{event.index} "
                                f"({event.trigger}, {event.tokens_before:,} tokens before, recorded) ⋯")
        assert "as sent" in status(app)


async def test_microcompacted_rows_carry_the_harness_style():
    from ctxview.pipeline import prepare

    result = Message("tool", "y" * 4000, tool_call_id="c1", tool_name="Read")
    msgs = (Message("user", "go"), Message("assistant", "", tool_calls=(ToolCall("c1", "Read"),)), result,
            Message("assistant", "done", usage=Usage(100, 5)), Message("user", "more"))
    event = ContextEvent("microcompaction", 4, meta={"tool_ids": ["c1"]})
    conv = Conversation("main", msgs, events=(event,))
    view = prepare(conv, Settings())
    (changed,) = [r for r in view.rows if r.changes]
    assert changed.changes[0].action == "microcompacted"
    app = one(conv)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.prepared_pane
        strip = pane.block(3)[0]
        assert "microcompacted" in strip.text
        styles = {seg.style for seg in strip if "microcompacted" in seg.text}
        assert styles and all(s.bgcolor == pane.styles_for_render.badge_harness.bgcolor for s in styles)


# -- sub-agents -----------------------------------------------------------------------


def test_conversation_title_uses_the_loaders_label():
    assert conversation_title(Conversation("main")) == "main"
    labelled = Conversation("agent-a1", metadata={"label": "Explore\nthe parser", "kind": "subagent"})
    assert conversation_title(labelled) == "agent-a1 (Explore the parser)"
    compaction = Conversation("agent-acompact-1", metadata={"kind": "compaction", "label": "compaction (writes ...)"})
    assert conversation_title(compaction) == "agent-acompact-1 (compaction agent)"


async def test_header_and_switcher_name_sub_agents_by_label():
    convs = (Conversation("main", (Message("user", "hi"),)),
             Conversation("agent-a1", (Message("user", "find it"),), metadata={"label": "Find the bug"}),
             Conversation("agent-acompact-9", (Message("user", "sum"),), metadata={"kind": "compaction"}))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", convs))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConversationPicker)
        assert [name for name, _ in app.screen.names] == ["main", "agent-a1 (Find the bug)",
                                                          "agent-acompact-9 (compaction agent)"]
        await pilot.press("down", "enter")
        await settle(pilot)
        assert "agent agent-a1 (Find the bug)" in str(app.query_one("#header").render())


def test_a_layout_of_a_view_starts_with_its_system_prompt():
    view = PreparedView(settings=Settings(), rows=(row(Message("user", "hi")),), prepared=(Message("user", "hi"),),
                        system_prompt="be brief", system_tokens=3)
    layout = Layout.build(view)
    assert layout.head.stored.text == "be brief" and layout.head.tokens_stored == 3
    assert len(layout) == 2 and layout.row(1) is view.rows[0]
    stored, prepared = layout.columns()
    assert stored[0] is layout.head.stored and prepared[1] is view.rows[0].prepared


def test_the_sys_note_is_fitted_after_the_view_and_remembered():
    from ctxview.formats import load_session
    from ctxview.pipeline import PipelineCache, prepare
    from ctxview.tui.messages import NoteReady
    from ctxview.tui.workers import FITTING, Layouts

    main = load_session(str(CLAUDE)).conversations[0]
    cache, layouts, posted = PipelineCache(), Layouts(), []
    view = prepare(main, Settings(), cache=cache)
    assert layouts.build(main, view).head.note == FITTING  # the view shows without waiting for the fit
    layouts.fit_note(posted.append, main, view, cache)
    (ready,) = posted
    assert isinstance(ready, NoteReady) and ready.conversation is main and ready.tokens > 0
    assert ready.note.startswith(f"not in file: ≈ {ready.tokens:,} tokens")
    head = layouts.build(main, prepare(main, Settings(keep_recent=3), cache=cache)).head
    assert (head.note, head.tokens_stored) == (ready.note, ready.tokens)
    layouts.fit_note(posted.append, main, view, cache)
    assert len(posted) == 1  # fitted once per conversation and counter


async def test_enter_and_o_on_the_sys_ghost_ring_and_change_nothing():
    app = one(Conversation("main", (Message("user", "hi"), Message("assistant", "hello"))))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.cursor == 0 and app.row_layout.head.stored is None
        heights = list(app.row_layout.heights)
        await pilot.press("enter", "o", "z")
        await pilot.pause()
        assert app.is_running and app.screen is app.screen_stack[0]
        assert app.row_layout.heights == heights and not app.expanded_rows
