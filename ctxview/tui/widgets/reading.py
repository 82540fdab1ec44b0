"""What covers the body while the session file is read: its name and how far the read has got.

Textual's own LoadingIndicator redraws its dots sixteen times a second for as long as it shows. The
file is read in another thread, and each redraw takes the interpreter from it: on a file that takes
a second to read, a tenth of the main thread's work before the first screen was those redraws. This
one redraws only when the figure it shows changes, looked at four times a second.
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.widget import Widget

from ctxview.formats.inputs import ReadMeter
from ctxview.tui.widgets.basic import safe_text

__all__ = ["ReadingIndicator", "reading_text"]

LOOK_EVERY = 0.25  # seconds between looks at the meter


def reading_text(label: str, percent: int | None) -> Text:
    """"reading FILE…", with the share read where it is known: "reading FILE… 45%"."""
    text = Text(f"reading {safe_text(label)}…", end="")
    if percent is not None:
        text.append(f" {percent}%")
    return text


class ReadingIndicator(Widget):
    """The loading cover (App.get_loading_widget): `label` and the share of the file `meter` says is read.
    Input meant for what it covers stops here, as with Textual's indicator."""

    DEFAULT_CSS = """
    ReadingIndicator {
        width: 100%;
        height: 100%;
        min-height: 1;
        content-align: center middle;
        color: $primary;
        text-style: not reverse;
    }
    ReadingIndicator.-textual-loading-indicator {
        layer: _loading;
        background: $boost;
        dock: top;
    }
    """

    def __init__(self, label: str, meter: ReadMeter | None = None) -> None:
        super().__init__()
        self.label, self.meter = label, meter
        self._shown = self._figure()

    def _figure(self) -> int | None:
        return self.meter.percent() if self.meter is not None else None

    def on_mount(self) -> None:
        if self.meter is not None:
            self.set_interval(LOOK_EVERY, self._look)

    def _look(self) -> None:
        figure = self._figure()
        if figure != self._shown:
            self._shown = figure
            self.refresh()

    @on(events.InputEvent)
    def _stop_input(self, event: events.InputEvent) -> None:
        event.stop()
        event.prevent_default()

    def render(self) -> Text:
        return reading_text(self.label, self._shown)
