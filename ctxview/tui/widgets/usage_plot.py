"""The usage screen's chart of context per request, drawn by plotext (textual-plotext's widget).

`plot_data` turns ctxview.analysis.report.context_series into what is drawn (a pure function, tested
without a terminal); `ContextPlot` draws it: ctxview's estimate as sent as a line, the recorded
input + cache as points, the window's 60/80/90% as horizontal lines and each compaction as a
vertical one. No session text reaches the plot: its labels are ctxview's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual_plotext import PlotextPlot

__all__ = ["ContextPlot", "PlotData", "plot_data"]

_MARK_COLORS = {0.6: "yellow", 0.8: "orange", 0.9: "red"}


@dataclass(frozen=True)
class PlotData:
    requests: list[int]                       # 1-based request numbers
    estimate: list[int]                       # ctxview's estimate as sent, per request
    recorded: tuple[list[int], list[int]]     # (request numbers, recorded input + cache) where recorded
    marks: list[tuple[float, int]]            # (share of the window, tokens)
    compactions: list[int]                    # request numbers of the first request after each compaction
    window: int | None


def plot_data(series: dict[str, Any]) -> PlotData:
    points = series["points"]
    window = series.get("window")
    requests = list(range(1, len(points) + 1))
    recorded = [(k, p["recorded"]) for k, p in zip(requests, points) if p["recorded"] is not None]
    return PlotData(
        requests=requests,
        estimate=[p["estimate"] for p in points],
        recorded=([k for k, _ in recorded], [v for _, v in recorded]),
        marks=[(m, round(m * window)) for m in series.get("marks", ())] if window else [],
        compactions=[k + 1 for k in series.get("compactions") or ()],
        window=window,
    )


def nice_ticks(top: float, count: int = 5) -> list[int]:
    """About `count` round tick values from 0 to at least `top` (steps of 1, 2 or 5 × 10^k)."""
    if top <= 0:
        return [0]
    raw = top / count
    magnitude = 10 ** max(len(str(int(raw))) - 1, 0)
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return list(range(0, int(top) + step, step))


class ContextPlot(PlotextPlot):
    """Context per request; `show(series)` draws it (before that: nothing)."""

    DEFAULT_CSS = "ContextPlot { height: 18; width: 1fr; }"

    def show(self, series: dict[str, Any]) -> None:
        data = plot_data(series)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        if not data.requests:
            plt.title("no requests")
            self.refresh()
            return
        for share, tokens in data.marks:
            plt.hline(tokens, _MARK_COLORS.get(share, "gray"))
        for k in data.compactions:
            plt.vline(k, "magenta")
        plt.plot(data.requests, data.estimate, color="blue", marker="braille", label="ctxview's estimate as sent")
        if data.recorded[0]:
            plt.scatter(*data.recorded, color="white", marker="dot", label="recorded input + cache")
        top = max([*data.estimate, *data.recorded[1], *(t for _, t in data.marks)])
        ticks = nice_ticks(top)
        plt.yticks(ticks, [f"{t:,}" for t in ticks])
        xs = [max(t, 1) for t in nice_ticks(len(data.requests), 6)]
        plt.xticks(xs, [str(x) for x in xs])
        title = "tokens per request"
        if data.window:
            title += f" · window {data.window:,} (lines at " + ", ".join(f"{s:.0%}" for s, _ in data.marks) + ")"
        if data.compactions:
            title += " · magenta: compaction"
        plt.title(title)
        plt.xlabel("request")
        self.refresh()
