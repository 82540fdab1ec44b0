"""The controls panel: one widget per setting; changes go to the app.

The panel only reports what the user chose (`ControlsPanel.Changed`); the app
owns the Settings and recomputes. `sync` writes the current Settings back into
the widgets without echoing change events.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message as TMessage
from rich.text import Text
from textual.widgets import Input, Label, Select, Switch

from ..view import OLD_MESSAGE_STRATEGIES, Settings
from .widgets import Line

__all__ = ["ControlsPanel"]


class ControlsPanel(VerticalScroll):
    """keep_recent, tiers, compression, clearing, budget, old messages, request."""

    class Changed(TMessage):
        def __init__(self, changes: dict[str, Any]) -> None:
            self.changes = changes
            super().__init__()

    def __init__(self, presets: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.presets = presets
        self.can_focus = False

    def compose(self) -> ComposeResult:
        yield Label("keep_recent", classes="control-label")
        yield Input("10", id="ctl-keep-recent", type="integer", compact=True)
        yield Label("tiers (t; e edits)", classes="control-label")
        yield Select([(p, p) for p in self.presets], id="ctl-tiers", allow_blank=True, compact=True,
                     prompt="custom")
        with Horizontal(classes="switch-row"):
            yield Switch(True, id="ctl-compression")
            yield Label("compression (c)")
        with Horizontal(classes="switch-row"):
            yield Switch(False, id="ctl-clear")
            yield Label("clear old tool uses")
        yield Label("token budget", classes="control-label")
        yield Input("", id="ctl-budget", type="integer", placeholder="none", compact=True)
        yield Label("old messages", classes="control-label")
        yield Select([(s, s) for s in OLD_MESSAGE_STRATEGIES], id="ctl-old", allow_blank=False, compact=True)
        yield Label("request ([ ])", classes="control-label")
        yield Line(Text("next", end=""), id="ctl-request")

    def sync(self, settings: Settings, request_label: str) -> None:
        """Show `settings` without sending Changed messages back."""
        with self.prevent(Input.Changed, Input.Submitted, Select.Changed, Switch.Changed):
            keep = self.query_one("#ctl-keep-recent", Input)
            if not keep.has_focus:
                keep.value = str(settings.keep_recent)
            tiers = self.query_one("#ctl-tiers", Select)
            tiers.value = settings.tiers if settings.tiers in self.presets else Select.NULL
            self.query_one("#ctl-compression", Switch).value = settings.compression
            self.query_one("#ctl-clear", Switch).value = settings.clear is not None
            budget = self.query_one("#ctl-budget", Input)
            if not budget.has_focus:
                budget.value = "" if settings.budget is None else str(settings.budget)
            self.query_one("#ctl-old", Select).value = settings.old_messages
            self.query_one("#ctl-request", Line).update(Text(request_label, end=""))

    def _send(self, **changes: Any) -> None:
        self.post_message(self.Changed(changes))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._input_value(event.input)

    def on_input_blurred(self, event: Input.Blurred) -> None:
        self._input_value(event.input)

    def _input_value(self, widget: Input) -> None:
        value = widget.value.strip()
        if widget.id == "ctl-keep-recent":
            if value.isdigit():
                self._send(keep_recent=int(value))
        elif widget.id == "ctl-budget":
            if not value:
                self._send(budget=None)
            elif value.isdigit() and int(value) > 0:
                self._send(budget=int(value))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL:
            return
        if event.select.id == "ctl-tiers":
            self._send(tiers=str(event.value))
        elif event.select.id == "ctl-old":
            self._send(old_messages=str(event.value))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        if event.switch.id == "ctl-compression":
            self._send(compression=event.value)
        elif event.switch.id == "ctl-clear":
            self._send(clear=event.value)
