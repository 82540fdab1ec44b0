"""Pilot tests: every binding, asserting on the app's state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pilot_sizes import settle  # (test_screen_as_sent.py takes it from here too)
from sessions import make_session
from textual.widgets import Input

from ctxview.model import Conversation, Message, Session
from ctxview.tui.app import CtxviewApp
from ctxview.tui.keys import KEYS
from ctxview.tui.layout import Layout
from ctxview.tui.screens.dialogs import ConfirmScreen
from ctxview.tui.screens.modals import (
    BloatScreen,
    ConversationPicker,
    DetailScreen,
    HelpScreen,
    TierEditor,
    WriteScreen,
)
from ctxview.tui.widgets.chrome import StatusBar
from ctxview.engine.view import Settings

SIZE = (140, 40)
HOSTILE = Path(__file__).parents[1] / "fixtures" / "hostile.ctxview.json"


def new_app(convs: int = 2, **settings) -> CtxviewApp:
    # (most tests drive the what-if controls: they start from the default tiers)
    settings.setdefault("tiers", "default")
    return CtxviewApp("test.json", Settings(keep_recent=4, **settings), session=make_session(convs))


def status(app) -> str:
    return str(app.query_one(StatusBar).render())


async def test_opens_with_a_view_and_status_bar():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.error is None
        assert app.view is not None and len(app.view.rows) == 26
        text = status(app)
        assert "keep_recent=4" in text and "tiers=default" in text
        # the status bar gives the request's context in the model's tokens, with its basis
        figure = app.view.context
        assert f"{figure.tokens:,} {figure.basis}" in text
        assert not app.query_one("#body").loading


async def test_keep_recent_up_and_down():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = app.view.stats.get("compressed", None), app.view.tokens_prepared
        await pilot.press("plus")
        await settle(pilot)
        assert app.settings.keep_recent == 5 and app.view.settings.keep_recent == 5
        assert "keep_recent=5" in status(app)
        for _ in range(6):
            await pilot.press("minus")
        await settle(pilot)
        assert app.settings.keep_recent == 0 and app.view.settings.keep_recent == 0
        assert app.view.tokens_prepared <= before[1]


async def test_next_tier_preset_and_compression_toggle():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert app.settings.tiers == "light" and app.view.settings.tiers == "light"
        assert "tiers=light" in status(app)
        await pilot.press("c")
        await settle(pilot)
        assert app.view.settings.compression is False
        assert not any(c.action == "compressed" for r in app.view.rows for c in r.changes)
        assert app.view.tokens_prepared >= app.view.tokens_stored


async def test_edit_tiers_applies_a_valid_spec_and_rejects_a_bad_one():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TierEditor)
        box = app.screen.query_one("#tier-input", Input)
        box.value = "2:full,nonsense"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TierEditor)  # still open: the spec was refused
        assert "nonsense" in str(app.screen.query_one("#tier-preview").render())
        box.value = "2:full,*:100"
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, TierEditor)
        assert app.settings.tiers == "2:full,*:100"
        assert "custom 2:full,*:100" in status(app)


async def test_switch_conversation():
    app = new_app(convs=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConversationPicker)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.conversation_index == 1
        assert app.conversation.name == "sub-agent-1"
        assert len(app.view.rows) == len(app.conversation.messages)


async def test_previous_and_next_request():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        requests = app.view.requests
        assert len(requests) >= 2
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.settings.request == requests[-1]
        assert len(app.view.rows) == requests[-1]
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.settings.request == requests[-2]
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(pilot)
        assert app.settings.request is None
        assert "request next" in status(app)


async def test_search_next_and_previous():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.pause()
        box = app.query_one("#search", Input)
        assert box.display and box.has_focus
        await pilot.press(*"file5.py", "enter")
        await settle(pilot)
        assert not box.display
        assert app.search_term == "file5.py"
        first = app.cursor
        # The first row whose tool call reads file5.py.
        assert app.row_layout.rows[first].stored.tool_calls[0].arguments["file_path"] == "/src/file5.py"
        await pilot.press("/")
        await pilot.pause()
        box.value = "line 3 of FILE"  # case-insensitive
        await pilot.press("enter")
        await settle(pilot)
        hits = [i for i, r in enumerate(app.row_layout.rows) if r.stored is not None and app.search_matches(r)]
        assert app.cursor in hits and len(hits) > 2
        pos = hits.index(app.cursor)
        await pilot.press("n")
        await settle(pilot)
        assert app.cursor == hits[(pos + 1) % len(hits)]
        await pilot.press("N")
        await settle(pilot)
        await pilot.press("N")
        await settle(pilot)
        assert app.cursor == hits[(pos - 1) % len(hits)]


async def test_search_without_a_match_says_so_and_keeps_the_cursor():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        await pilot.press("slash", *"no-such-text", "enter")
        await settle(pilot)
        assert app.cursor == 2
        assert any("no match for 'no-such-text'" in n.message for n in app._notifications)


async def test_next_reminder_and_next_changed():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await pilot.pause()
        row = app.row_layout.rows[app.cursor]
        assert row.stored_reminders or row.prepared_reminders or row.ephemeral_spans
        start = app.cursor
        changed = [i for i, r in enumerate(app.row_layout.rows) if r.changes]

        def after(i):  # the next changed row after i, wrapping around
            return next((j for j in changed if j > i), changed[0])

        await pilot.press("x")
        await pilot.pause()
        assert app.cursor == after(start) and app.row_layout.rows[app.cursor].changes
        await pilot.press("x")
        await pilot.pause()
        assert app.cursor == after(after(start))


async def test_toggle_scroll_link():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stored, prepared = app.panes
        stored.scroll_to(y=20, animate=False, immediate=True)
        await pilot.pause()
        assert stored.scroll_y == 20 and prepared.scroll_y == 20
        await pilot.press("s")
        await pilot.pause()
        assert app.linked is False and "unlinked" in status(app)
        stored.scroll_to(y=30, animate=False, immediate=True)
        await pilot.pause()
        assert stored.scroll_y == 30 and prepared.scroll_y == 20
        await pilot.press("s")
        await pilot.pause()
        assert app.linked and prepared.scroll_y == 30


async def test_cursor_keys_and_enter_expands():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down")  # (row 0 is #sys, row 3 the first Read result)
        assert app.cursor == 3
        collapsed = app.row_layout.heights[3]
        await pilot.press("enter")
        await pilot.pause()
        assert 3 in app.expanded_rows
        assert app.row_layout.heights[3] > collapsed
        assert app.row_layout.total_lines == sum(app.row_layout.heights)
        await pilot.press("enter")
        await pilot.pause()
        assert app.row_layout.heights[3] == collapsed
        await pilot.press("end")
        await pilot.pause()
        assert app.cursor == len(app.view.rows)  # the last view row: #sys comes first
        assert app.stored_pane.scroll_y == app.stored_pane.max_scroll_y
        await pilot.press("home", "up")
        assert app.cursor == 0


async def test_huge_message_opens_detail_view():
    big = "\n".join(f"line {i} " + "x" * 40 for i in range(20_000))
    conv = Conversation("main", (Message("user", "hi"), Message("tool", big, tool_name="Bash")))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (conv,)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen)
        view = app.screen.query_one("DetailView")
        assert view.line_count == 20_000
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y > 0
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DetailScreen) and 1 not in app.expanded_rows


async def test_help_screen_lists_every_key():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        for binding in KEYS:
            assert binding.description in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_write_prepared_messages(tmp_path):
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, WriteScreen)
        box = app.screen.query_one(Input)
        assert Path(box.value).is_absolute() and Path(box.value).name == "test.prepared.json"
        target = tmp_path / "out.json"
        box.value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, WriteScreen)
        data = json.loads(target.read_text())
        assert len(data["messages"]) == len(app.view.prepared) + (1 if app.view.system_prompt else 0)
        assert app.last_written == str(target)


async def test_write_refuses_a_device_or_a_folder_before_asking_to_overwrite(tmp_path):
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for target, why in (("/dev/null", "is a character device"), (str(tmp_path), "is a directory")):
            await pilot.press("w")
            await pilot.pause()
            app.screen.query_one(Input).value = target
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(app.screen, (WriteScreen, ConfirmScreen))
            notes = [n for n in app._notifications if n.title == "write failed"]
            assert notes and why in notes[-1].message
        assert app.last_written is None


async def test_write_refuses_the_input_file(tmp_path):
    source = tmp_path / "session.ctxview.json"
    source.write_text(HOSTILE.read_text())
    before = source.read_bytes()
    app = CtxviewApp(str(source), Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one(Input).value = str(source)
        await pilot.press("enter")
        await settle(pilot)
        assert app.last_written is None
        assert any("input file" in n.message for n in app._notifications)
    assert source.read_bytes() == before


async def test_bloat_report():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, BloatScreen)
        text = str(app.screen.query_one("#bloat-text").render())
        assert "Context bloat: main" in text and "By tool" in text and "Read" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BloatScreen)


async def test_quit():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


def test_bindings_have_unique_ids():
    ids = [b.id for b in KEYS]
    assert all(ids) and len(set(ids)) == len(ids)
    keys = {b.key for b in KEYS}
    for key in ("plus,equals_sign", "minus", "t", "c", "e", "a", "left_square_bracket", "right_square_bracket",
                "slash", "n", "N", "r", "x", "b", "w", "s", "q", "question_mark"):
        assert key in keys


async def test_bindings_in_command_palette():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for binding in KEYS:
            assert binding.description in titles


async def test_stale_results_are_dropped():
    from ctxview.tui.messages import ViewReady
    from ctxview.tui.state import ViewKey

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        current = app.view
        stale_key = ViewKey(0, app.settings)
        app.update_settings(keep_recent=9)  # a newer recompute is in flight
        stale = Layout.build(current)
        app.post_message(ViewReady(stale_key, current, stale))  # a run for the settings before
        await settle(pilot)
        assert app.row_layout is not stale and app.view.settings.keep_recent == 9
        fresh = Layout.build(app.view)
        app.post_message(ViewReady(ViewKey(0, app.settings), app.view, fresh))
        await settle(pilot)
        assert app.row_layout is fresh


async def test_fast_key_presses_end_on_the_last_setting():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*["plus"] * 8)
        await settle(pilot)
        assert app.view.settings.keep_recent == 12 == app.settings.keep_recent


async def test_bad_file_fails_before_the_app_is_usable(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    app = CtxviewApp(str(bad), Settings())
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            await pilot.pause()
            if app.error:
                break
    assert app.error and "bad.jsonl" in app.error
    assert "\n" not in app.error
    assert app.return_code == 1


async def test_unknown_agent_is_an_error():
    app = CtxviewApp("test.json", Settings(), agent="nobody", session=make_session(2))
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            await pilot.pause()
            if app.error:
                break
    assert app.error and "nobody" in app.error and "sub-agent-1" in app.error
    assert app.return_code == 1


async def test_error_after_start_is_a_notification():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.update_settings(request=1)  # not an assistant message that starts a request... row 1 is assistant
        await settle(pilot)
        app.update_settings(request=0)  # index 0 is a user message: prepare refuses
        await settle(pilot)
        assert app.error is None and app.is_running
        assert any("request 0" in n.message for n in app._notifications)


async def test_saved_settings_are_defaults_and_given_ones_win(tmp_path):
    from ctxview.formats.native import write_session

    conv = make_session(1).conversations[0]
    conv = Conversation(conv.name, conv.messages, model=conv.model, context_window=conv.context_window,
                        settings={"keep_recent": 3, "tiers": "light"})
    path = tmp_path / "saved.ctxview.json"
    write_session(Session("ctxview", "", (conv,)), path)
    app = CtxviewApp(str(path), Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.settings.keep_recent == 3 and app.view.settings.tiers == "light"
    app = CtxviewApp(str(path), Settings(keep_recent=7))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.settings.keep_recent == 7 and app.view.settings.tiers == "light"
    # An option given on the command line wins even when it equals the default.
    app = CtxviewApp(str(path), Settings(), overrides={"keep_recent": 10})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.settings.keep_recent == 10 and app.view.settings.tiers == "light"


async def test_removed_runs_fold_into_one_line_and_unfold():
    app = new_app(budget=4000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        layout = app.row_layout
        runs = sorted({run for run in layout.runs.values() if run[1] >= 2})
        assert runs, "the budget should leave a run of messages out"
        start, length = runs[0]
        assert start in layout.folded
        assert layout.heights[start] == 1 and not any(layout.heights[start + 1:start + length])
        assert layout.total_lines == sum(layout.heights)
        # The cursor steps over the hidden rows of the fold.
        app.set_cursor(start)
        await pilot.press("down")
        assert app.cursor == start + length
        app.set_cursor(start)
        await pilot.press("enter")
        await pilot.pause()
        assert start not in app.row_layout.folded and app.row_layout.heights[start + 1] > 0
        await pilot.press("z")
        await pilot.pause()
        assert start in app.row_layout.folded and app.cursor == start
        # Both panes render one line for the fold, and the same number of lines in all.
        stored, prepared = app.panes
        assert "not in this request" in stored.block(start)[0].text
        assert "removed" in prepared.block(start)[0].text


async def test_bindings_can_be_remapped_by_id():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_keymap({"ctxview.keep_recent_up": "u"})
        await pilot.press("u")
        await settle(pilot)
        assert app.settings.keep_recent == 5


async def test_click_selects_a_row():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.prepared_pane
        target = 3
        y = app.row_layout.row_top(target) - int(pane.scroll_y)
        await pilot.click(pane, offset=(5, y))
        await pilot.pause()
        assert app.cursor == target


async def test_stdin_session_is_named_and_write_defaults_to_session():
    app = CtxviewApp("<stdin>", Settings(), session=make_session(1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await pilot.pause()
        assert Path(app.screen.query_one(Input).value).name == "session.prepared.json"


async def test_resize_rewraps_expanded_rows():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        wide = app.row_layout.heights[2]
        await pilot.resize_terminal(70, 30)
        await pilot.pause()
        await pilot.pause()
        narrow = app.row_layout.heights[2]
        assert narrow > wide  # long lines wrap onto more lines in a narrow pane
        stored, prepared = app.panes
        assert len(stored.block(2)) <= narrow and len(prepared.block(2)) <= narrow
        assert max(len(stored.block(2)), len(prepared.block(2))) == narrow


async def test_empty_conversation_and_inserted_rows():
    empty = Session("test", "t.json", (Conversation("empty", ()),))
    app = CtxviewApp("t.json", Settings(), session=empty)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.error is None and len(app.view.rows) == 0
        for key in ("down", "enter", "x", "r", "n", "end", "z", "o", "left_square_bracket"):
            await pilot.press(key)
        await pilot.pause()
        assert app.is_running


async def test_inserted_summary_row_and_summarised_run():
    app = new_app(old_messages="llm")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = app.row_layout.rows
        assert rows[1].stored is None and rows[1].prepared is not None  # (row 0: #sys)
        stored, prepared = app.panes
        assert "inserted" in stored.block(1)[0].text
        assert prepared.block(1)[0].text.startswith("+ ")
        start = next(i for i, r in enumerate(rows) if r.prepared is None and r.stored is not None)
        assert start in app.row_layout.folded or app.row_layout.runs[start][1] == 1


async def test_controls_panel_changes_recompute_and_mounting_changes_nothing():
    from textual.widgets import Select, Switch

    app = new_app(old_messages="llm", budget=5000)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # Setting up the widgets did not overwrite the settings given.
        assert app.settings.old_messages == "llm" and app.settings.budget == 5000
        before = app.view
        app.query_one("#ctl-old", Select).value = "remove"
        await settle(pilot)
        assert app.view.settings.old_messages == "remove" and app.view is not before
        app.query_one("#ctl-clear", Switch).value = True
        await settle(pilot)
        assert app.view.settings.clear is not None
        app.query_one("#ctl-compression", Switch).value = False
        await settle(pilot)
        assert app.view.settings.compression is False
        app.query_one("#ctl-tiers", Select).value = "aggressive"
        await settle(pilot)
        assert app.view.settings.tiers == "aggressive"
        keep = app.query_one("#ctl-keep-recent", Input)
        keep.focus()
        keep.value = "7"
        await pilot.press("enter")
        await settle(pilot)
        assert app.view.settings.keep_recent == 7
        for typed in ("²", "9" * 4400):  # digits to str.isdigit(), not numbers int() reads
            keep.value = typed
            await pilot.press("enter")
            await settle(pilot)
            assert app.view.settings.keep_recent == 7 and app.is_running
        budget = app.query_one("#ctl-budget", Input)
        budget.focus()
        budget.value = ""
        await pilot.press("enter")
        await settle(pilot)
        assert app.view.settings.budget is None
        budget.value = "9" * 4400
        await pilot.press("enter")
        await settle(pilot)
        assert app.view.settings.budget is None and app.is_running


async def test_stored_side_shows_while_the_first_view_computes_and_keys_are_kept():
    import threading

    release = threading.Event()

    class SlowApp(CtxviewApp):
        calls = 0

        def _prepare(self, *args):
            SlowApp.calls += 1
            if SlowApp.calls == 1:
                release.wait(10)
            return super()._prepare(*args)

    app = SlowApp("test.json", Settings(keep_recent=4), session=make_session(1))
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(100):
            await pilot.pause()
            if app.row_layout is not None:
                break
        layout = app.row_layout
        assert layout.is_pending and app.view is None
        assert "computing" in app.prepared_pane.block(1)[0].text
        assert app.stored_pane.block(1)[0].text.startswith("#0 user · … tok")
        await pilot.press("plus")  # a change while the first view is computing
        release.set()
        await settle(pilot)
        assert app.view.settings.keep_recent == 5 and not app.row_layout.is_pending


async def test_page_keys_and_detail_view_side_switch():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.stored_pane
        await pilot.press("pagedown")
        await pilot.pause()
        assert pane.scroll_y > 0 and app.prepared_pane.scroll_y == pane.scroll_y
        assert app.cursor == app.row_layout.row_at(int(pane.scroll_y))
        await pilot.press("pageup")
        await pilot.pause()
        assert pane.scroll_y == 0
        app.set_cursor(3)  # view row 2 (row 0 is #sys)
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and app.screen.side == "stored"
        lines = app.screen.query_one("DetailView").line_count
        assert lines == app.view.rows[2].stored.text.count("\n") + 1
        await pilot.press("tab")
        await pilot.pause()
        assert app.screen.side == "prepared"
        assert app.screen.query_one("DetailView").line_count == app.view.rows[2].prepared.text.count("\n") + 1


async def test_hostile_markup_is_inert_when_clicked():
    app = CtxviewApp(str(HOSTILE), Settings(keep_recent=2))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.stored_pane
        # Message #0 (row 1, after #sys), line 2 reads "[bold]not bold[/bold] [$accent]... [@click=app.quit]click me[/] ..."
        line = pane.block(1)[2].text
        assert "[@click=a" in line
        y = app.row_layout.row_top(1) + 2
        for x in range(0, min(len(line), pane.size.width), 3):
            await pilot.click(pane, offset=(x, y))
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert app.title == "ctxview"
        # The conversation name (it holds markup and a bidi override) is shown escaped in the header.
        header = str(app.query_one("#header").render())
        assert "agent [@click=app.quit]<U+202E>evil" in header and "\u202e" not in header


# -- live bindings ---------------------------------------------------------------


async def test_help_and_palette_follow_the_keymap():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_keymap({"ctxview.search": "f", "ctxview.cursor_down": "J"})
        await pilot.press("question_mark")
        await pilot.pause()
        text = str(app.screen.query_one("#help-text").render())
        lines = {line.split("  ")[-1].strip(): line for line in text.splitlines() if "  " in line}
        assert lines["Search"].split()[0] == "f"            # no longer "/"
        assert lines["Next message"].split()[0] == "J"
        await pilot.press("escape")
        await pilot.pause()
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Search"] == "key f"
        await pilot.press("f")                              # and f does search
        await pilot.pause()
        assert app.query_one("#search", Input).has_focus


async def test_palette_lists_every_action_once():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)
        assert titles.count("Quit") == 1
        for title in ("Expand", "Next message", "Page down", "Theme"):  # the panes' and Textual's own too
            assert title in titles
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert commands["Quit"] == "key q/^c" and commands["keep_recent +1"] == "key +"


async def test_a_palette_command_runs_in_its_widget():
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Next message")
        await command.callback()
        await pilot.pause()
        assert app.cursor == 1


# -- the view's name ---------------------------------------------------------------


async def test_the_view_is_named_as_sent_or_what_if():
    app = CtxviewApp("test.json", Settings(keep_recent=4), session=make_session(1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        title = app.query_one("#title-prepared").text
        assert title.plain.startswith("as sent · ")
        assert status(app).startswith("as sent · keep_recent=4 · tiers=off")
        as_sent_style = title.get_style_at_offset(app.console, 0)
        await pilot.press("c")                              # tiers=off: on with the default tiers
        await settle(pilot)
        assert app.settings.tiers == "default" and app.settings.compression
        title = app.query_one("#title-prepared").text
        assert title.plain.startswith(" what-if: tiers=default, keep_recent=4 ")
        # (4 is inside the default tiers' first tier, 10:full: settings.keep_recent_note)
        assert status(app).startswith(" what-if  · keep_recent=4 (no effect) · tiers=default")
        what_if_style = title.get_style_at_offset(app.console, 1)
        assert what_if_style.bgcolor is not None and what_if_style != as_sent_style
        assert any(c.action == "compressed" for r in app.view.rows for c in r.changes)
        await pilot.press("t", "t", "t")                   # light, aggressive, off
        await settle(pilot)
        assert app.settings.tiers == "off" and status(app).startswith("as sent")
        await pilot.press("c")                             # back to the tiers chosen last
        await settle(pilot)
        assert app.settings.tiers == "aggressive"


# -- loading never blocks ------------------------------------------------------------


class SlowLoader:
    """load_session that waits until released, as a slow or huge file would."""

    def __init__(self, monkeypatch) -> None:
        import threading

        import ctxview.formats as formats
        import ctxview.formats.growing as growing

        self.release = threading.Event()
        self.started = threading.Event()
        self.done = threading.Event()
        def slowed(real):
            def load(*args, **kwargs):
                self.started.set()
                # (released at the end of the test; the timeout only keeps a broken app from hanging the run)
                self.release.wait(20)
                try:
                    return real(*args, **kwargs)
                finally:
                    self.done.set()
            return load

        monkeypatch.setattr(formats, "load_session", slowed(formats.load_session))
        monkeypatch.setattr(growing, "load_input", slowed(growing.load_input))  # (how a followed file is read)


async def wait_for(pilot, condition) -> None:
    for _ in range(200):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the condition never held")


async def test_help_opens_while_a_file_loads(monkeypatch):
    slow = SlowLoader(monkeypatch)
    app = CtxviewApp(str(HOSTILE), Settings())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, slow.started.is_set)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and not slow.done.is_set()
            await pilot.press("escape")
            await pilot.press("plus", "t", "c", "left_square_bracket", "down", "enter", "slash")  # no effect yet
            await pilot.press("escape")
            slow.release.set()
            await settle(pilot)
            assert app.view is not None and app.error is None
            assert app.settings == app.view.settings                # opened with the file's settings
    finally:
        slow.release.set()


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_q_and_ctrl_c_quit_while_a_file_loads(monkeypatch, key):
    import asyncio

    slow = SlowLoader(monkeypatch)
    app = CtxviewApp(str(HOSTILE), Settings())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, slow.started.is_set)
            await pilot.press(key)
            await pilot.pause()
        assert app.return_code == 0 and not app.is_running
        # What asyncio.run does after the app ends (App.run): shut the default executor down. It
        # must not wait for the load, which is still blocked.
        await asyncio.get_running_loop().shutdown_default_executor()
        assert not slow.release.is_set() and not slow.done.is_set()
    finally:
        slow.release.set()


async def test_ctrl_c_quits_from_a_text_box_and_a_dialog():
    for opener in ("slash", "w"):
        app = new_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press(opener)
            await pilot.pause()
            await pilot.press("ctrl+c")
            await pilot.pause()
        assert app.return_code == 0


def test_thread_workers_run_on_daemon_threads():
    # what lets the process end at once when q is pressed during a load (asyncio.run and the
    # interpreter's exit join the default executor's threads, which are not daemons)
    import asyncio
    import threading

    from ctxview.tui.threads import DaemonThreads

    async def job_thread() -> tuple[bool, str]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(DaemonThreads())
        return await loop.run_in_executor(None, lambda: (threading.current_thread().daemon, "done"))

    assert asyncio.run(job_thread()) == (True, "done")

    async def failing() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(DaemonThreads())
        await loop.run_in_executor(None, lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        asyncio.run(failing())


async def test_a_replaced_layout_is_freed_at_once():
    # The compute worker holds the previous layout weakly: a finished Worker is cyclic garbage,
    # which the next run's gc.freeze() would keep for good, and with it a layout it held
    # (~3 MB at 100k messages). With the collector off, only reference counts free it.
    import gc
    import weakref

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        gc.disable()
        try:
            first = weakref.ref(app.row_layout)
            for _ in range(2):
                await pilot.press("plus")
                await settle(pilot)
            assert app.row_layout is not None and first() is None
        finally:
            gc.enable()


async def test_presses_during_a_slow_run_skip_to_the_newest_settings():
    import threading

    release = threading.Event()
    computed: list[int] = []

    class SlowApp(CtxviewApp):
        def _prepare(self, conversation, settings, cache):
            computed.append(settings.keep_recent)
            if len(computed) == 2:
                release.wait(20)  # the run for keep_recent=5 takes long
            return super()._prepare(conversation, settings, cache)

    app = SlowApp("test.json", Settings(keep_recent=4, tiers="default"), session=make_session(1))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("plus")
            await wait_for(pilot, lambda: len(computed) == 2)
            await pilot.press("plus", "plus", "plus", "question_mark")  # the screen answers meanwhile
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and app.busy and "computing" in status(app)
            await pilot.press("escape")
            release.set()
            await settle(pilot)
            assert computed == [4, 5, 8]  # 6 and 7 were asked for and changed before their turn
            assert app.view.settings.keep_recent == 8 and "computing" not in status(app)
    finally:
        release.set()
