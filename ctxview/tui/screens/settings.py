"""The settings dialog (`S`, and the palette): every what-if setting at any width.

Its rows are the stages' declarations (stages/dialog.py): a stage added to the
registry has its rows here with nothing written in this module.

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
from ctxview.settings import Settings
from ctxview.stages.dialog import dialog_fields, read
from ctxview.stages.dialog import shown as shown_values

__all__ = ["FIELDS", "SettingsDialog", "read_settings"]

# The dialog's rows (the stages' declarations): id → label. The ids are what `SettingsDialog(focus=...)` takes.
ROWS = {field.id: field for field in dialog_fields()}
FIELDS = {name: field.label for name, field in ROWS.items()}


def read_settings(base: Settings, values: dict[str, Any]) -> tuple[Settings, list[str]]:
    """The settings the dialog's `values` (field id → the text or bool shown) ask for, on top of
    `base`, and what is wrong with them (empty: they can be applied)."""
    return read(base, values)


class SettingsDialog(ModalScreen[dict[str, Any] | None]):
    """Every what-if setting; returns the fields changed (None: cancelled or nothing changed)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.settings_cancel")]

    def __init__(self, settings: Settings, focus: str = "keep_recent") -> None:
        super().__init__(id="settings-dialog")
        self.base = settings
        self.first = focus if focus in FIELDS else "keep_recent"

    def compose(self) -> ComposeResult:
        shown = shown_values(self.base)
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
        field, field_id = ROWS[name], f"set-{name.replace('_', '-')}"
        if field.kind == "switch":  # (a Checkbox: its X shows on any terminal, a Switch only in colour)
            return Checkbox("on" if value else "off", value, id=field_id, compact=True)
        if field.kind == "choice":
            return Select([(s, s) for s in field.choices], value=value, allow_blank=False, id=field_id, compact=True)
        return Input(value, id=field_id, placeholder=field.placeholder, compact=True)

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
        for name, field in ROWS.items():
            if field.under is not None:
                self.widget(name).disabled = not values[field.under]
            if field.kind == "switch":  # said in words too: the box's mark differs only by its colour
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
