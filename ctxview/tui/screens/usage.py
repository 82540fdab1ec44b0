"""The usage screen (`u`): recorded usage and cost, the prompt cache, and context size per request.

The figures come from ctxview.analysis.report (usage_and_cost, the cache replays, context_series),
computed in a thread worker when the screen opens: the price table (genai-prices, which brings
pydantic) is imported then, never at start-up. The chart is a plotext plot (usage_plot.py); `report`
draws its own text chart (report_chart.py), which `usage_text` still gives with chart=True.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.analysis.report_chart import context_chart
from ctxview.sanitize import make_visible

__all__ = ["UsageScreen", "context_chart", "usage_figures", "usage_text"]

_DIM = Style(dim=True)


def _money(usd: Any) -> str:
    return "no price" if usd is None else f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def _share(value: Any) -> str:
    return "-" if value is None else f"{value:.0%}"


def usage_text(name: str, data: dict[str, Any], width: int = 72, chart: bool = True) -> Text:
    """The screen's text from the worker's figures (with report_chart's chart, unless chart=False)."""
    bold, dim = Style(bold=True), _DIM
    text = Text(end="")
    text.append("Usage: ", bold)
    text.append(make_visible(name), bold)
    text.append("\n\n")
    for title, usage, cost in (("this conversation", data["usage"], data["cost"]),
                               ("the session (every conversation)", data["session_usage"], data["session_cost"])):
        text.append(f"{title}: ", bold)
        if not usage["requests"]:
            text.append("no usage recorded\n", dim)
            continue
        text.append(f"{usage['requests']:,} requests · input {usage['input']:,} · output {usage['output']:,} · "
                    f"cache read {usage['cache_read']:,} · cache write {usage['cache_write']:,} · ")
        text.append(_money(cost["usd"]) + ("" if cost["priced"] else " (some models have no price)"))
        if cost.get("recorded_usd") is not None:  # the harness's own figure (costUSD), beside ctxview's
            text.append(f" · the file recorded {_money(cost['recorded_usd'])}", dim)
        text.append(f"  prices as of {cost['prices_as_of']}\n", dim)
    cache = data["cache"]
    text.append("\nprompt cache (simulated, TTL ", bold)
    text.append(f"{cache['ttl']}): ", bold)
    text.append(f"cache reads {_share(cache['simulated_read_share'])} of input")
    if cache["recorded_read_share"] is not None:
        text.append(f", recorded {_share(cache['recorded_read_share'])}")
    text.append("\n")
    compare = data.get("compare")
    if compare:
        base = compare["as_sent"]
        for r in compare["settings"]:
            change = "-" if r["tokens_change"] is None else f"{r['tokens_change']:+.0%}"
            # advice.verdict: a rise in the bill is said as one, never shown as a saving
            cost = r["verdict"] + ("" if r["cost_change"] is None else f" ({r['cost_change']:+.0%})")
            text.append(make_visible(r["view_label"]), bold)
            text.append(f": {change} tokens per request, cache reads {_share(base['read_share'])} → "
                        f"{_share(r['read_share'])}, ")
            text.append(cost + "\n", Style(color="red") if (r.get("usd_change") or 0) > 0 else None)
    text.append("\ncontext per request\n", bold)
    if chart:
        text.append_text(context_chart(data["series"], width=width))
    return text


class UsageScreen(ModalScreen[None]):
    """Totals, cost, the cache and the context chart of the conversation on screen."""

    BINDINGS = [Binding("escape,q,u", "dismiss", "Close", id="ctxview.usage_close")]
    DEFAULT_CSS = """
    UsageScreen { align: center middle; }
    #usage-body { width: 110; max-width: 95%; height: auto; max-height: 90%; padding: 1 2;
                  background: $surface; border: round $primary; }
    """

    def __init__(self, session: Any, conversation: Any, settings: Any, cache: Any) -> None:
        super().__init__(id="usage")
        self.session, self.conversation, self.settings, self.cache = session, conversation, settings, cache
        self.data: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        from ctxview.tui.widgets.usage_plot import ContextPlot  # (plotext: only once the screen opens)

        with VerticalScroll(id="usage-body"):
            yield Static(Text("computing usage and the prompt cache…", _DIM), id="usage-text")
            yield ContextPlot(id="usage-plot")

    def on_mount(self) -> None:
        self._compute()

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False)
    def _compute(self) -> None:
        try:
            data = usage_figures(self.session, self.conversation, self.settings, self.cache)
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback
            self.app.call_from_thread(self._show, Text(f"usage: {make_visible(' '.join(str(exc).split()))}"))
            return
        self.app.call_from_thread(self._done, data, usage_text(self.conversation.name, data, chart=False))

    def _done(self, data: dict[str, Any], text: Text) -> None:
        from ctxview.tui.widgets.usage_plot import ContextPlot

        self.data = data
        self._show(text)
        self.query_one("#usage-plot", ContextPlot).show(data["series"])

    def _show(self, text: Text) -> None:
        self.query_one("#usage-text", Static).update(text)


def usage_figures(session: Any, conversation: Any, settings: Any, cache: Any) -> dict[str, Any]:
    """What the screen shows, from ctxview.analysis.report (the current what-if compared when there is one)."""
    from ctxview.analysis import report
    from ctxview.analysis.prices import PriceTable

    prices = PriceTable()
    out = report.usage_and_cost(conversation, prices)
    whole = report.session_usage_and_cost(session, prices)
    replays = report.cache_replays(conversation, settings, cache, prices)
    data = {"usage": out["usage"], "cost": out["cost"], "session_usage": whole["usage"],
            "session_cost": whole["cost"], "cache": replays.cache_section(),
            "series": report.context_series(conversation, settings, cache)}
    if settings.what_if():
        data["compare"] = replays.compare([(settings.label(), dataclasses.replace(settings, request=None))])
    return data
