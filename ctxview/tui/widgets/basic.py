"""The small widgets around the panes: meters, search box, one-line text (the header and the
status bar, chrome.py, are lines too).

Each renders a Rich `Text` assembled from styled pieces; file names, agent
and model names come from the session and are sanitized, never markup.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message as TMessage
from textual.widget import Widget
from textual.widgets import Input

from ctxview.sanitize import make_visible
from ctxview.settings import Settings
from ctxview.engine.view import PreparedView

__all__ = ["Line", "Meters", "SearchBox", "gauge", "meters_text", "prepared_title", "safe_text", "view_name",
           "WINDOW_MARKS"]

WINDOW_MARKS = (0.6, 0.8, 0.9)  # SwarmSDK's context warning thresholds

# The view's name: what the model was sent, or a simulation of ctxview's (never to be mistaken for it).
AS_SENT_STYLE = Style(color="green", bold=True)
WHAT_IF_STYLE = Style(color="black", bgcolor="yellow", bold=True)


def safe_text(value: object) -> str:
    return make_visible(str(value)).replace("\n", " ")


def gauge(share: float, width: int) -> Text:
    """A bar filled to `share`, with ticks at 60/80/90% of the window."""
    share = max(share, 0.0)
    if share >= 0.9:
        fill = Style(color="red", bold=True)
    elif share >= 0.8:
        fill = Style(color="dark_orange")
    elif share >= 0.6:
        fill = Style(color="yellow")
    else:
        fill = Style(color="green")
    empty = Style(color="grey39")
    marks = {min(int(m * width), width - 1) for m in WINDOW_MARKS}
    text = Text(end="")
    for i in range(width):
        filled = (i + 0.5) / width <= share
        if i in marks:
            text.append("┃" if filled else "│", fill if filled else Style(color="grey62"))
        else:
            text.append("█" if filled else "░", fill if filled else empty)
    return text


def meters_text(view: PreparedView | None, gauge_width: int = 30, compact: bool = False) -> Text:
    """`stored 12,345 → prepared 8,765 counted (-29%)   context ≈ 20,114 calibrated ▕███│░░▏ 10% of 200,000`.

    The stored and prepared figures are the counter's (they compare the two sides); the context
    and the gauge are in the model's tokens, with their basis (view.context). `compact` (narrow
    terminals) drops the labels and shortens the gauge.
    """
    text = Text(end="", no_wrap=True, overflow="ellipsis")
    if view is None:
        text.append("computing…", Style(dim=True))
        return text
    if not compact:
        text.append("stored ", Style(dim=True))
    text.append(f"{view.tokens_stored:,}", Style(bold=True))
    text.append(" → " if compact else " → prepared ", Style(dim=True))
    text.append(f"{view.tokens_prepared:,}", Style(bold=True))
    text.append(" tok" if compact else " counted", Style(dim=True))
    if view.tokens_stored:
        change = (view.tokens_prepared - view.tokens_stored) / view.tokens_stored
        text.append(f" ({change:+.0%})", Style(dim=True))
    if view.budget_shortfall:
        text.append(f"  {view.budget_shortfall:,} over budget", Style(color="red", bold=True))
    context = view.context
    text.append("  " if compact else "   context ", Style(dim=True))
    if context.basis == "calibrated":
        text.append("≈ ", Style(dim=True))
    text.append(f"{context.tokens:,}", Style(bold=True))
    text.append(" " + {"recorded": "rec", "calibrated": "cal", "counted": "cnt"}[context.basis] if compact
                else f" {context.basis}", Style(dim=True))
    text.append(" ")
    share = view.window_share
    if share is None:
        text.append("window unknown", Style(dim=True))
    else:
        text.append("▕")
        text.append_text(gauge(share, 12 if compact else gauge_width))
        text.append("▏")
        window = f"{view.context_window // 1000:,}k" if compact else f"{view.context_window:,}"
        text.append(f" {share:.0%} of {window}", Style(bold=share >= 0.8))
    return text


def view_name(label: str) -> Text:
    """A view's name (Settings.label: "as sent", "what-if: tiers=default, ..."), styled by which it is."""
    what_if = label != "as sent"
    text = Text(end="", no_wrap=True, overflow="ellipsis")
    text.append(f" {label} " if what_if else label, WHAT_IF_STYLE if what_if else AS_SENT_STYLE)
    return text


def prepared_title(view: PreparedView | None, settings: Settings, request: str) -> Text:
    """The prepared pane's title: the view's name, then how many messages and which request."""
    title = view_name(view.view_label if view is not None else settings.label())
    if view is not None:
        title.append(f" · {len(view.prepared):,} (request {request})")
    return title


class Line(Widget):
    """One line of Text. Unlike Static.update, a change repaints without a
    layout pass (the height is fixed in CSS), which keeps a recompute's
    repaint cheap."""

    DEFAULT_CSS = "Line { height: 1; }"

    def __init__(self, text: Text | None = None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.text = text if text is not None else Text(end="")

    def update(self, text: Text) -> None:
        if text.plain != self.text.plain or text.spans != self.text.spans or text.style != self.text.style:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        return self.text


class Meters(Line):
    """Token totals and the context-window gauge."""

    COMPACT_BELOW = 110  # terminal columns

    def show(self, view: PreparedView | None) -> None:
        self.view = view
        self.update(meters_text(view, compact=self._compact()))

    def _compact(self) -> bool:
        return 0 < self.size.width < self.COMPACT_BELOW

    def on_resize(self) -> None:
        if hasattr(self, "view"):
            self.update(meters_text(self.view, compact=self._compact()))


class SearchBox(Input):
    """The search box (`/`): hidden until opened; Enter or Escape closes it, posting Closed."""

    class Closed(TMessage):
        """The box closed: with the term typed (Enter), or None (Escape)."""

        def __init__(self, term: str | None) -> None:
            self.term = term
            super().__init__()

    def on_mount(self) -> None:
        self.display = False

    def open(self, term: str) -> None:
        self.display = True
        self.value = term
        self.focus()

    def _close(self, term: str | None) -> None:
        self.display = False
        self.post_message(self.Closed(term))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value)

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self._close(None)
