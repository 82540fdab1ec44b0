"""The settings dialog (`S`, and the palette): every what-if setting at any width.

The controls panel is hidden below 120 columns; this dialog holds the same
settings and those the panel has no room for (clearing's trigger, minimum
saving, excluded tools and inputs; the old-messages cut-off; ephemeral
reminders). What is typed is checked as it changes by `Settings.problems()`
(the rules the command line and the session files follow), and the errors
show in the dialog: Apply does nothing until they are gone. Escape or Cancel
leaves everything as it was. The dialog returns the changed fields; the app
applies them as any other change (InspectorState.change), and any value but
the defaults makes the view a what-if, named as one: the dialog's last line
shows the name the view will have (Settings.label()).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from ctxview.sanitize import make_visible
from ctxview.settings import OLD_MESSAGE_STRATEGIES, ClearSettings, Settings
from ctxview.tui.state import preset_for

__all__ = ["FIELDS", "SettingsDialog", "read_settings"]

# The dialog's fields: id → label. The ids are what `SettingsDialog(focus=...)` takes.
FIELDS = {
    "keep_recent": "keep_recent",
    "tiers": "tiers (preset or spec)",
    "compression": "compression",
    "budget": "budget (model tokens)",
    "clear": "clear old tool uses",
    "clear_keep": "  keep most recent",
    "clear_trigger": "  only over (model tokens)",
    "clear_min_saving": "  min saving (model tokens)",
    "clear_exclude": "  never clear (tools)",
    "clear_inputs": "  clear inputs too",
    "old_messages": "old messages",
    "summarize_before": "  before # (empty: recent)",
    "embed_ephemeral": "ephemeral reminders",
}
_SWITCHES = ("compression", "clear", "clear_inputs", "embed_ephemeral")


def _number(name: str, text: str, errors: list[str], empty: int | None = None) -> int | None:
    """A whole number typed in a field (`50,000` and `50_000` too); `empty` for an empty field."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return empty
    if text.isascii() and text.isdigit() and len(text) <= 16:
        return int(text)
    errors.append(f"{name}: expected a whole number, not {make_visible(text)!r}")
    return empty


def read_settings(base: Settings, values: dict[str, Any]) -> tuple[Settings, list[str]]:
    """The settings the dialog's `values` (field id → the text or bool shown) ask for, on top of
    `base`, and what is wrong with them (empty: they can be applied)."""
    errors: list[str] = []
    keep_recent = _number("keep_recent", values["keep_recent"], errors, base.keep_recent)
    tiers = preset_for(values["tiers"]) if values["tiers"].strip() else base.tiers
    clear = None
    if values["clear"]:
        old = base.clear or ClearSettings()
        exclude = tuple(x.strip() for x in values["clear_exclude"].split(",") if x.strip())
        clear = dataclasses.replace(
            old, keep=_number("clear keep", values["clear_keep"], errors, old.keep),
            trigger=_number("clear trigger", values["clear_trigger"], errors, 0),
            min_saving=_number("clear min saving", values["clear_min_saving"], errors, 0),
            exclude=exclude,
            # (the switch says on or off; a list of tools from the command line stays while it is on)
            clear_inputs=old.clear_inputs if values["clear_inputs"] and type(old.clear_inputs) is tuple
            else values["clear_inputs"])
    settings = dataclasses.replace(
        base, keep_recent=keep_recent, tiers=tiers, compression=values["compression"],
        budget=_number("budget", values["budget"], errors), clear=clear,
        old_messages=values["old_messages"] or base.old_messages,
        summarize_before=_number("summarize_before", values["summarize_before"], errors),
        embed_ephemeral=values["embed_ephemeral"])
    return settings, errors + settings.problems()


def _shown(settings: Settings) -> dict[str, Any]:
    """What each field shows for `settings`."""
    clear = settings.clear or ClearSettings()
    return {
        "keep_recent": str(settings.keep_recent),
        "tiers": settings.tiers,
        "compression": settings.compression,
        "budget": "" if settings.budget is None else str(settings.budget),
        "clear": settings.clear is not None,
        "clear_keep": str(clear.keep),
        "clear_trigger": str(clear.trigger) if clear.trigger else "",
        "clear_min_saving": str(clear.min_saving) if clear.min_saving else "",
        "clear_exclude": ", ".join(clear.exclude),
        "clear_inputs": bool(clear.clear_inputs),
        "old_messages": settings.old_messages,
        "summarize_before": "" if settings.summarize_before is None else str(settings.summarize_before),
        "embed_ephemeral": settings.embed_ephemeral,
    }


class SettingsDialog(ModalScreen[dict[str, Any] | None]):
    """Every what-if setting; returns the fields changed (None: cancelled or nothing changed)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.settings_cancel")]

    def __init__(self, settings: Settings, focus: str = "keep_recent") -> None:
        super().__init__(id="settings-dialog")
        self.base = settings
        self.first = focus if focus in FIELDS else "keep_recent"

    def compose(self) -> ComposeResult:
        shown = _shown(self.base)
        with Vertical(id="settings-box"):
            yield Label("Settings: every change is a what-if on top of the view as sent", id="settings-title")
            with VerticalScroll(id="settings-fields"):
                for name, label in FIELDS.items():
                    with Horizontal(classes="settings-row"):
                        yield Label(label, classes="settings-label")
                        yield self._field(name, shown[name])
            yield Static(id="settings-errors")
            yield Static(id="settings-label")
            with Horizontal(id="settings-buttons"):
                yield Button("Apply", id="settings-apply", variant="primary", compact=True)
                yield Button("Cancel", id="settings-cancel", compact=True)

    @staticmethod
    def _field(name: str, value: Any):
        field_id = f"set-{name.replace('_', '-')}"
        if name in _SWITCHES:  # (a Checkbox: its X shows on any terminal, a Switch only in colour)
            return Checkbox("on" if value else "off", value, id=field_id, compact=True)
        if name == "old_messages":
            return Select([(s, s) for s in OLD_MESSAGE_STRATEGIES], value=value, allow_blank=False, id=field_id,
                          compact=True)
        placeholder = {"budget": "off", "clear_trigger": "0", "clear_min_saving": "0", "clear_exclude": "none",
                       "summarize_before": "the recent part"}.get(name, "")
        return Input(value, id=field_id, placeholder=placeholder, compact=True)

    def widget(self, name: str):
        return self.query_one(f"#set-{name.replace('_', '-')}")

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in FIELDS:
            widget = self.widget(name)
            value = widget.value
            # (Select.BLANK is False: only a Select's blank is "nothing chosen")
            out[name] = None if isinstance(widget, Select) and value is Select.BLANK else value
        return out

    def on_mount(self) -> None:
        self._check()
        self.widget(self.first).focus()

    def _check(self) -> tuple[Settings, list[str]]:
        settings, errors = read_settings(self.base, self.values())
        box = self.query_one("#settings-errors", Static)
        box.update(Text("\n".join(make_visible(e) for e in errors), Style(color="red"), end=""))
        box.display = bool(errors)
        label = settings.label()
        name = Text("view: ", Style(dim=True), end="")
        name.append(make_visible(label), Style(bold=True) if label == "as sent" else Style(color="black",
                                                                                          bgcolor="yellow"))
        self.query_one("#settings-label", Static).update(name)
        self.query_one("#settings-apply", Button).disabled = bool(errors)
        values = self.values()
        for name in ("clear_keep", "clear_trigger", "clear_min_saving", "clear_exclude", "clear_inputs"):
            self.widget(name).disabled = not values["clear"]
        for name in _SWITCHES:  # said in words too: the box's mark differs only by its colour
            self.widget(name).label = "on" if values[name] else "off"
        return settings, errors

    def on_input_changed(self, event: Input.Changed) -> None:
        self._check()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._check()

    def on_select_changed(self, event: Select.Changed) -> None:
        self._check()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "settings-apply":
            self.apply()
        else:
            self.dismiss(None)

    def apply(self) -> None:
        settings, errors = self._check()
        if errors:
            self.app.bell()
            return
        changes = {f.name: getattr(settings, f.name) for f in dataclasses.fields(Settings)
                   if getattr(settings, f.name) != getattr(self.base, f.name)}
        self.dismiss(changes or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
