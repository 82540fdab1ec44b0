"""The chart of context size per request, as styled Rich Text: `ctxview report` draws it on a terminal,
the inspector's usage screen (u) in its box.

A pure function of ctxview.analysis.report.context_series' data and a size, so that it is tested without a
terminal. Rich is imported when a chart is drawn (this module is importable without it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["context_chart"]


def context_chart(series: dict[str, Any], width: int = 72, height: int = 12) -> Text:
    """Columns of requests (several per column when they outnumber the width: the largest shows):
    ctxview's estimate as sent as bars (█), the recorded context as ●, the window's 60/80/90% lines
    (─), and ▼ under the first request after a compaction."""
    from rich.style import Style
    from rich.text import Text

    mark_styles = {0.6: Style(color="yellow"), 0.8: Style(color="dark_orange"), 0.9: Style(color="red")}
    estimate_style, recorded_style = Style(color="blue"), Style(color="bright_white", bold=True)
    drop_style, dim = Style(color="magenta", bold=True), Style(dim=True)
    points = series["points"]
    text = Text(end="")
    if not points:
        text.append("no requests\n", dim)
        return text
    window = series.get("window")
    n = len(points)
    cols = min(width, n)
    buckets = [range(c * n // cols, (c + 1) * n // cols) for c in range(cols)]
    est = [max(points[k]["estimate"] for k in b) for b in buckets]
    rec = [max((points[k]["recorded"] for k in b if points[k]["recorded"] is not None), default=None) for b in buckets]
    drops = set(series.get("compactions") or ())
    dropped = [any(k in drops for k in b) for b in buckets]
    marks = [m for m in series.get("marks", ()) if window]
    top = max([*est, *(r for r in rec if r is not None), *((max(marks) * window,) if marks else ())]) or 1
    step = top / height

    def row_of(value: float) -> int:  # 0 is the bottom row
        return min(height - 1, int(value / step)) if value > 0 else -1

    mark_rows = {row_of(m * window): m for m in marks}
    for row in range(height - 1, -1, -1):
        mark = mark_rows.get(row)
        label = f"{(row + 1) * step:>9,.0f} "
        text.append(label, dim if mark is None else mark_styles.get(mark, dim))
        for c in range(cols):
            r = rec[c]
            if r is not None and row_of(r) == row:
                text.append("●", recorded_style)
            elif row_of(est[c]) >= row:
                text.append("█", estimate_style)
            elif mark is not None:
                text.append("─", mark_styles.get(mark, dim))
            else:
                text.append(" ")
        if mark is not None:
            text.append(f" {mark:.0%}", mark_styles.get(mark, dim))
        text.append("\n")
    text.append(" " * 10)
    for c in range(cols):
        text.append("▼" if dropped[c] else "─", drop_style if dropped[c] else dim)
    text.append("\n")
    per = f"{n / cols:.1f} requests" if cols < n else "1 request"
    text.append(f"{' ' * 10}requests 1–{n:,}, {per} a column · ", dim)
    text.append("█", estimate_style)
    text.append(" ctxview's estimate as sent  ", dim)
    text.append("●", recorded_style)
    text.append(" recorded input + cache  ", dim)
    text.append("▼", drop_style)
    text.append(" compaction", dim)
    if window:
        text.append(f"  · window {window:,}", dim)
    text.append("\n")
    return text
