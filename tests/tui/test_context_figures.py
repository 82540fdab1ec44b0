"""The meters, the status bar and `b` show the context in the model's tokens, with its basis."""

from __future__ import annotations

from pathlib import Path

from ctxview.formats import load_session
from ctxview.pipeline import PipelineCache, prepare
from ctxview.analysis.report import conversation_bloat
from ctxview.settings import Settings
from ctxview.tui.widgets.chrome import StatusParts, status_line
from ctxview.tui.screens.modals import bloat_text
from ctxview.tui.widgets.basic import meters_text

SPOTTER = (Path(__file__).parents[1] / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


def _view(**settings):
    conv = load_session(str(SPOTTER)).conversations[0]
    return conv, prepare(conv, Settings(**settings))


def test_meters_show_the_figure_and_gauge_it():
    _, view = _view()
    figure = view.context
    assert figure.basis == "calibrated" and figure.tokens > 3 * view.tokens_prepared
    text = meters_text(view).plain
    assert f"context ≈ {figure.tokens:,} calibrated" in text
    assert f"{figure.tokens / 200_000:.0%} of 200,000" in text
    assert f"prepared {view.tokens_prepared:,} counted" in text
    assert f"≈ {figure.tokens:,} cal" in meters_text(view, compact=True).plain


def test_meters_on_a_recorded_request_say_recorded():
    conv, view = _view(request=339)
    assert f"context {conv.messages[339].usage.context_tokens:,} recorded" in meters_text(view).plain


def test_status_bar_shows_the_figure():
    _, view = _view()
    parts = StatusParts(view.settings, (view.tokens_stored, view.tokens_prepared),
                        context=(view.context.tokens, view.context.basis))
    assert f"context ≈ {view.context.tokens:,} calibrated" in status_line(parts, 0).plain


def test_bloat_screen_states_the_rule_on_the_request_as_sent():
    conv, view = _view()
    cache = PipelineCache()
    report = conversation_bloat(conv, Settings(), 200_000, cache)
    assert report.total_tokens == view.context.tokens and report.basis == "calibrated"
    text = bloat_text(report, conv.name).plain
    assert "not bloated" in text and "< 70% of the 200,000-token window" in text
    # the share the screen shows is the meters' share (was 54% against the meter's 16%)
    assert f"= {view.window_share:.0%} of 200,000" in text
    assert all(r.saves <= report.total_tokens for r in report.recommendations)


# --- the requests screen (L) -----------------------------------------------------------

async def test_L_lists_the_requests_and_enter_opens_one():
    from textual.widgets import OptionList

    from ctxview.tui.app import CtxviewApp
    from ctxview.tui.screens.requests import RequestsScreen
    from ctxview.tui.widgets.basic import Meters

    app = CtxviewApp(str(SPOTTER))
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(400):
            await pilot.pause(0.02)
            if app.view is not None and not app.busy:
                break
        assert app.view is not None and app.settings.request is None
        await pilot.press("L")
        screen = app.screen
        assert isinstance(screen, RequestsScreen)
        for _ in range(400):
            await pilot.pause(0.02)
            if screen.rows is not None:
                break
        rows = screen.rows
        assert rows is not None and len(rows) == 152
        olist = screen.query_one(OptionList)
        assert olist.option_count == len(rows)
        lost = [str(olist.get_option_at_index(p).prompt) for p, r in enumerate(rows) if r["cache"]["lost"]]
        assert any("lost 145,298 (compaction)" in line for line in lost)
        olist.highlighted = 10
        await pilot.press("enter")
        for _ in range(400):
            await pilot.pause(0.02)
            if app.view is not None and app.view.settings.request == rows[10]["index"] and not app.busy:
                break
        assert app.settings.request == rows[10]["index"]
        meters = app.query_one(Meters).render()
        assert f"context {rows[10]['context']['tokens']:,} recorded" in str(meters)
