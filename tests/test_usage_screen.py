"""The inspector's usage screen (`u`) and its chart; pydantic stays out of the inspector's start-up."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

from ctxview import load_session
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.usage import UsageScreen, context_chart
from ctxview.engine.view import Settings

FIXTURE = (Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")


async def settle(pilot) -> None:
    app = pilot.app
    for _ in range(100):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not any(w.is_running for w in app.screen.workers):
            return
    raise AssertionError("workers did not settle")


def test_chart_marks_the_window_lines_and_the_compaction():
    series = {"points": [{"index": i, "estimate": e, "recorded": r} for i, (e, r) in
                         enumerate([(100, 150), (200, None), (300, 350), (50, 80), (150, 160)])],
              "compactions": [3], "marks": [0.6, 0.8, 0.9], "window": 400}
    lines = str(context_chart(series, width=40, height=10)).splitlines()
    assert len(lines) == 12                                   # 10 rows, the axis, the legend
    assert lines[-2].strip().startswith("───▼─")            # the drop under the 4th request
    assert any(line.rstrip().endswith("60%") for line in lines)
    assert any(line.rstrip().endswith("90%") for line in lines)
    assert sum(line.count("●") for line in lines[:10]) == 4  # one per recorded request
    bars = [line[10:15] for line in lines[:10]]
    heights = [sum(1 for b in bars if b[c] in "█●") for c in range(5)]
    assert heights[2] > heights[1] > heights[0] and heights[3] < heights[0]


def test_plot_data_numbers_requests_from_one_and_marks_the_window():
    from ctxview.tui.widgets.usage_plot import plot_data

    series = {"points": [{"index": i, "estimate": e, "recorded": r} for i, (e, r) in
                         enumerate([(100, 150), (200, None), (300, 350), (50, 80)])],
              "compactions": [3], "marks": [0.6, 0.8, 0.9], "window": 400}
    data = plot_data(series)
    assert data.requests == [1, 2, 3, 4] and data.estimate == [100, 200, 300, 50]
    assert data.recorded == ([1, 3, 4], [150, 350, 80])
    assert data.marks == [(0.6, 240), (0.8, 320), (0.9, 360)]
    assert data.compactions == [4]
    assert plot_data({**series, "window": None}).marks == []


def test_nice_ticks_are_round_and_reach_the_top():
    from ctxview.tui.widgets.usage_plot import nice_ticks

    assert nice_ticks(180_000) == [0, 50_000, 100_000, 150_000, 200_000]
    assert nice_ticks(152, 6) == [0, 50, 100, 150, 200]
    assert nice_ticks(7) == [0, 2, 4, 6, 8]
    assert nice_ticks(0) == [0]


def test_chart_buckets_more_requests_than_columns():
    series = {"points": [{"index": i, "estimate": i, "recorded": None} for i in range(1000)], "compactions": [],
              "marks": [0.6, 0.8, 0.9], "window": None}
    text = str(context_chart(series, width=50, height=5))
    assert "20.0 requests a column" in text
    assert max(len(line) for line in text.splitlines()[:5]) == 60


async def test_usage_screen_shows_totals_cache_and_chart():
    session = load_session(FIXTURE)
    app = CtxviewApp(str(FIXTURE), Settings(tiers="default"), session=session)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, UsageScreen)
        for _ in range(50):
            if app.screen.data is not None:
                break
            await pilot.pause(0.05)
        text = str(app.screen.query_one("#usage-text").render())
        assert "152 requests" in text and "cache read 14,771,617" in text and "$11.85" in text  # its writes were 1-hour writes
        assert "156 requests" in text                     # the session: both sub-agents too
        assert "prompt cache (simulated" in text and "recorded 98%" in text
        assert "what-if: tiers=default:" in text and "cache reads 99% →" in text
        from ctxview.tui.widgets.usage_plot import ContextPlot

        plot = app.screen.query_one("#usage-plot", ContextPlot)
        await pilot.pause()
        drawn = str(plot.render())  # plotext's drawing, as the widget renders it
        assert "tokens per request" in drawn and "window 200,000" in drawn and "compaction" in drawn
        assert "estimate as sent" in drawn and "recorded input + cache" in drawn
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, UsageScreen)


def test_the_inspector_starts_without_pydantic():
    probe = textwrap.dedent(f"""
        import asyncio, sys
        from ctxview.tui.app import CtxviewApp
        from ctxview.engine.view import Settings

        async def main():
            app = CtxviewApp({str(FIXTURE)!r}, Settings())
            async with app.run_test(size=(120, 40)) as pilot:
                for _ in range(100):
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                    if app.view is not None:
                        break
                assert app.view is not None
        asyncio.run(main())
        print(" ".join(m for m in ("pydantic", "genai_prices", "plotext", "textual_plotext") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_report_draws_the_chart_on_a_terminal_only():
    from ctxview.analysis.report_render import render_report
    from ctxview.analysis.report import build_report

    session = load_session(FIXTURE)
    data = build_report(session, agent="main", series=True)
    tty, piped = _Terminal(), io.StringIO()
    render_report(data, tty)
    render_report(data, piped)
    assert "Context per request" in tty.getvalue() and "▼" in tty.getvalue() and "●" in tty.getvalue()
    assert "Context per request" not in piped.getvalue()
    assert "context_series" not in build_report(session, agent="main")["conversations"][0]
