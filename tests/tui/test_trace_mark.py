"""The inspector with --trace: each request's mark in the status bar, and `T`'s screen."""

from __future__ import annotations

from pathlib import Path

from test_app import settle, status

from ctxview.formats.claude_trace import trace_requests
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.modals import BloatScreen, HelpScreen
from ctxview.engine.view import Settings

SIZE = (160, 40)
FIXTURES = Path(__file__).parents[1] / "fixtures" / "claude_trace"
TRACE = FIXTURES / "trace.jsonl"
TRANSCRIPT = FIXTURES / "transcript.jsonl"


async def test_each_request_says_whether_it_matches_the_trace():
    app = CtxviewApp(str(TRANSCRIPT), Settings(), trace=("trace.jsonl", trace_requests(TRACE)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "trace: next request: not in the trace" in status(app)
        await pilot.press("left_square_bracket")            # request 3: microcompacted, reminder
        await settle(pilot)
        assert "✗ trace differs at #2 (T)" in status(app)
        await pilot.press("T")
        await pilot.pause()
        assert isinstance(app.screen, BloatScreen)
        shown = str(app.screen.report)
        assert "request 3 (trace line 7, matched by id)" in shown
        assert "sent #2 (stored #2) tool · text:" in shown and "[Old tool result content cleared]" in shown
        assert "not in the transcript (every request): system prompt" in shown
        await pilot.press("escape")
        await pilot.press("left_square_bracket", "left_square_bracket")  # request 1
        await settle(pilot)
        assert "✓ matches trace" in status(app)
        # the comparison is of the view as sent, whatever what-if is on screen
        await pilot.press("t")
        await settle(pilot)
        assert "what-if" in status(app) and "✓ matches trace" in status(app)


async def test_without_a_trace_there_is_no_mark_and_no_T_in_the_help():
    app = CtxviewApp(str(TRANSCRIPT), Settings())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "trace" not in status(app)
        assert all(b.id != "ctxview.trace" for _, b, _ in app.live_bindings())
        await pilot.press("T")
        await pilot.pause()
        assert not isinstance(app.screen, BloatScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
