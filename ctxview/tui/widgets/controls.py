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

from ctxview.engine.view import OLD_MESSAGE_STRATEGIES, Settings
from ctxview.plain_number import plain_number
from ctxview.tui.widgets.basic import Line

__all__ = ["ControlsPanel"]


class ControlsPanel(VerticalScroll):
    """keep_recent, tiers, compression, clearing, budget, old messages, request."""

    class Changed(TMessage):
        def __init__(self, changes: dict[str, Any]) -> None:
            self.changes = changes
            super().__init__()

    def __init__(self, presets: list[str], settings: Settings, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.presets = presets
        self.can_focus = False
        # What each control last showed. A widget event carrying the value it
        # already shows is not a user's change (Select and Switch post events
        # when they are set up), so it is not reported.
        self.shown: dict[str, Any] = self._values(settings)

    def _values(self, settings: Settings) -> dict[str, Any]:
        return {
            "keep_recent": settings.keep_recent,
            "tiers": settings.tiers if settings.tiers in self.presets else None,
            "compression": settings.compression,
            "clear": settings.clear is not None,
            "budget": settings.budget,
            "old_messages": settings.old_messages,
        }

    def compose(self) -> ComposeResult:
        shown = self.shown
        yield Label("keep_recent", classes="control-label")
        yield Input(str(shown["keep_recent"]), id="ctl-keep-recent", type="integer", compact=True)
        yield Label("tiers (t; e edits)", classes="control-label")
        yield Select([(p, p) for p in self.presets], id="ctl-tiers", allow_blank=True, compact=True,
                     prompt="custom", value=shown["tiers"] if shown["tiers"] else Select.NULL)
        with Horizontal(classes="switch-row"):
            yield Switch(shown["compression"], id="ctl-compression")
            yield Label("compression (c)")
        with Horizontal(classes="switch-row"):
            yield Switch(shown["clear"], id="ctl-clear")
            yield Label("clear old tool uses")
        yield Label("budget (model tokens)", classes="control-label")
        yield Input("" if shown["budget"] is None else str(shown["budget"]), id="ctl-budget", type="integer",
                    placeholder="none", compact=True)
        yield Label("old messages", classes="control-label")
        yield Select([(s, s) for s in OLD_MESSAGE_STRATEGIES], id="ctl-old", allow_blank=False, compact=True,
                     value=shown["old_messages"] if shown["old_messages"] in OLD_MESSAGE_STRATEGIES else Select.NULL)
        yield Label("request ([ ])", classes="control-label")
        yield Line(Text("next", end=""), id="ctl-request")

    def sync(self, settings: Settings, request_label: str) -> None:
        """Show `settings` without reporting them back as changes."""
        self.shown = self._values(settings)
        shown = self.shown
        with self.prevent(Input.Changed, Input.Submitted, Select.Changed, Switch.Changed):
            keep = self.query_one("#ctl-keep-recent", Input)
            if not keep.has_focus:
                keep.value = str(shown["keep_recent"])
            self.query_one("#ctl-tiers", Select).value = shown["tiers"] if shown["tiers"] else Select.NULL
            self.query_one("#ctl-compression", Switch).value = shown["compression"]
            self.query_one("#ctl-clear", Switch).value = shown["clear"]
            budget = self.query_one("#ctl-budget", Input)
            if not budget.has_focus:
                budget.value = "" if shown["budget"] is None else str(shown["budget"])
            if shown["old_messages"] in OLD_MESSAGE_STRATEGIES:
                self.query_one("#ctl-old", Select).value = shown["old_messages"]
            self.query_one("#ctl-request", Line).update(Text(request_label, end=""))

    def _send(self, name: str, value: Any) -> None:
        if self.shown.get(name) == value:
            return
        self.shown[name] = value
        self.post_message(self.Changed({name: value}))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._input_value(event.input)

    def on_input_blurred(self, event: Input.Blurred) -> None:
        self._input_value(event.input)

    def _input_value(self, widget: Input) -> None:
        value = widget.value.strip()
        number = plain_number(value)
        if widget.id == "ctl-keep-recent":
            if number is not None:
                self._send("keep_recent", number)
        elif widget.id == "ctl-budget":
            if not value:
                self._send("budget", None)
            elif number:
                self._send("budget", number)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL:
            return
        if event.select.id == "ctl-tiers":
            self._send("tiers", str(event.value))
        elif event.select.id == "ctl-old":
            self._send("old_messages", str(event.value))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        if event.switch.id == "ctl-compression":
            self._send("compression", event.value)
        elif event.switch.id == "ctl-clear":
            self._send("clear", event.value)
