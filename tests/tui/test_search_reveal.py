"""Search, `r` and `x` land on a row and show what they found: the match count (`3/17`), and the
block expanded (or scrolled) to the line that holds the match, highlighted; at three sizes."""

from __future__ import annotations

import pytest
from pilot_sizes import SIZES
from sessions import make_session
from test_app import new_app, settle, status
from test_navigation_moves import record_notes

from ctxview.model import Conversation, Message, Session
from ctxview.tui.app import CtxviewApp
from ctxview.tui.block_heights import PREVIEW_LINES
from ctxview.tui.search_state import messages_match, term_pattern
from ctxview.engine.view import Settings



def on_screen(pane) -> list[tuple[int, str, list]]:
    """(layout line, text, segments) of each line the pane shows now."""
    top = int(pane.scroll_y)
    out = []
    for y in range(pane.scrollable_content_region.height):
        strip = pane.render_line(y)
        out.append((top + y, strip.text, list(strip)))
    return out


def highlighted(segments, style) -> str:
    """The text of the segments painted in `style` (the colours it sets)."""
    def painted(seg) -> bool:
        return (seg.style is not None and (style.color is None or seg.style.color == style.color)
                and (style.bgcolor is None or seg.style.bgcolor == style.bgcolor))
    assert style.color is not None or style.bgcolor is not None
    return "".join(seg.text for seg in segments if painted(seg))


async def search(pilot, term: str) -> None:
    await pilot.press("slash")
    await pilot.pause()
    pilot.app.query_one("#search").value = term
    await pilot.press("enter")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_a_match_below_the_preview_is_revealed_and_highlighted(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await search(pilot, "line 13 of file 2:")
        row = app.cursor
        stored = app.row_layout.rows[row].stored
        assert stored.tool_call_id == "call_2"                       # the Read result of file 2
        assert "line 13 of file 2:" not in "\n".join(stored.text.split("\n")[:PREVIEW_LINES])
        assert row in app.expanded_rows                               # expanded to show it
        styles = app.stored_pane.styles_for_render
        top, bottom = app.row_layout.row_top(row), app.row_layout.row_top(row) + app.row_layout.heights[row]
        found = [y for y, text, segs in on_screen(app.stored_pane)
                 if highlighted(segs, styles.search).lower() == "line 13 of file 2:"]
        assert len(found) == 1 and top < found[0] < bottom            # on screen, in the row's block
        assert " /line 13 of file 2: 1/1 " in status(app)


@pytest.mark.parametrize("size", SIZES)
async def test_the_match_count_follows_n_and_N(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await search(pilot, "line 3 of FILE")
        pattern = term_pattern("line 3 of FILE")
        hits = [i for i, r in enumerate(app.row_layout.rows) if messages_match(r.stored, r.prepared, pattern)]
        assert len(hits) == 12 and app.cursor == hits[0]
        assert "1/12" in status(app)
        await pilot.press("n")
        await settle(pilot)
        assert app.cursor == hits[1] and "2/12" in status(app)
        await pilot.press("N", "N")
        await settle(pilot)
        assert app.cursor == hits[-1] and "12/12" in status(app)
        await pilot.press("up")                                      # off the matches
        await pilot.pause()
        assert "–/12" in status(app)


@pytest.mark.parametrize("size", SIZES)
async def test_the_count_follows_a_new_view(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await search(pilot, "chars truncated")      # compressed results: fewer under lighter tiers
        before = list(app.state.search.matches)
        assert f"1/{len(before)}" in status(app)
        await pilot.press("t")                       # default → light
        await settle(pilot)
        pattern = term_pattern("chars truncated")
        hits = [i for i, r in enumerate(app.row_layout.rows) if messages_match(r.stored, r.prepared, pattern)]
        assert app.settings.tiers == "light" and 0 < len(hits) < len(before)
        assert app.state.search.counted is app.row_layout and list(app.state.search.matches) == hits
        assert f"/{len(hits)} " in status(app)      # counted again, no n pressed


@pytest.mark.parametrize("size", SIZES)
async def test_no_match_counts_zero(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await search(pilot, "no-such-text")
        assert "0/0" in status(app) and app.cursor == 0


def reminder_session() -> Session:
    body = "\n".join(f"paragraph {i} of the request" for i in range(12))
    msgs = (Message("user", "hello"), Message("assistant", "hi"),
            Message("user", f"{body}\n<system-reminder>\nthe late reminder\n</system-reminder>"),
            Message("assistant", "done"))
    return Session("test", "t.json", (Conversation("main", msgs),))


@pytest.mark.parametrize("size", SIZES)
async def test_r_reveals_a_reminder_below_the_preview(size):
    app = CtxviewApp("t.json", Settings(), session=reminder_session())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await pilot.pause()
        assert app.cursor == 3 and 3 in app.expanded_rows
        styles = app.stored_pane.styles_for_render
        lines = [(text, segs) for _, text, segs in on_screen(app.stored_pane)]
        assert any("<system-reminder>" in text and highlighted(segs, styles.reminder) for text, segs in lines)
        assert any("paragraph 11" in text for text, _ in lines)


@pytest.mark.parametrize("size", SIZES)
async def test_x_reveals_where_compression_cut(size):
    app = new_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        row = app.row_layout.rows[app.cursor]
        assert row.changes and row.changes[0].action == "compressed"
        marker = row.prepared.text.split("\n").index(
            next(l for l in row.prepared.text.split("\n") if "chars truncated" in l))
        assert marker >= PREVIEW_LINES and app.cursor in app.expanded_rows
        styles = app.prepared_pane.styles_for_render
        shown = on_screen(app.prepared_pane)
        assert any("chars truncated" in text and highlighted(segs, styles.marker) for _, text, segs in shown)


async def test_a_match_in_a_folded_run_unfolds_it():
    # a budget drops the old messages: they fold into one line; a match inside is shown
    app = new_app(budget=3000)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.row_layout.folded
        await search(pilot, "line 5 of file 1:")
        row = app.cursor
        assert app.row_layout.rows[row].stored.tool_call_id == "call_1" and app.row_layout.visible(row)
        assert app.row_layout.rows[row].prepared is None               # dropped by the budget
        assert any("line 5 of file 1:" in text for _, text, _ in on_screen(app.stored_pane))


async def test_a_match_below_the_preview_of_a_huge_message_says_where():
    big = "\n".join(f"line {i} " + "x" * 40 for i in range(20_000))
    conv = Conversation("main", (Message("user", "hi"), Message("tool", big, tool_name="Bash")))
    app = CtxviewApp("t.json", Settings(), session=Session("test", "t.json", (conv,)))
    said = record_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await search(pilot, "line 15000 ")
        assert app.cursor == 2 and 2 not in app.expanded_rows
        assert said[-1] == ("the match is below the preview of a huge message: o opens it in the detail view, "
                            "at the search's first match")
        await pilot.press("o")
        await settle(pilot)
        view = app.screen.query_one("DetailView")
        assert view.first_match_line() == 15000
        assert view.scroll_y <= 15000 < view.scroll_y + view.size.height       # on screen
        styles = view._pane_styles()
        line = view.render_line(15000 - int(view.scroll_y))
        assert "line 15000 " in line.text
        assert "".join(s.text for s in line if s.style and s.style.bgcolor == styles.search.bgcolor) == "line 15000 "
