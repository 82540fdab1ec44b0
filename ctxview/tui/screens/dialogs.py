"""Two small dialogs: go to message #N (`g`), and confirm before overwriting a file (`w`).

Their styles are their own (DEFAULT_CSS), so app.tcss is untouched. What they show from the
session (a file name) is a sanitized Text, never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ctxview.sanitize import make_visible

__all__ = ["ConfirmScreen", "GotoScreen"]

_BOX_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 60; max-width: 95%; height: auto; padding: 1 2;
    background: $surface; border: round $primary;
}}
{name} Label, {name} Static {{ width: 100%; }}
{name} Input {{ width: 100%; margin: 1 0 0 0; }}
{name} Horizontal {{ height: auto; margin: 1 0 0 0; }}
{name} Button {{ margin: 0 2 0 0; }}
"""


class GotoScreen(ModalScreen[str | None]):
    """Ask for a message number; dismissed with what was typed (the app checks it), or None."""

    DEFAULT_CSS = _BOX_CSS.format(name="GotoScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.goto_cancel")]

    def __init__(self, hint: str) -> None:
        super().__init__(id="goto")
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-box"):
            yield Label("Go to message number (#N, or sys):")
            yield Input(placeholder=self.hint, id="goto-input")
            yield Static(Text("Enter goes · Esc cancels", style="dim", end=""))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A question with two answers: `yes` (the button named by the caller) or Cancel (Escape)."""

    DEFAULT_CSS = _BOX_CSS.format(name="ConfirmScreen")
    BINDINGS = [Binding("escape,n", "answer(False)", "Cancel", id="ctxview.confirm_cancel"),
                Binding("y", "answer(True)", "Yes", id="ctxview.confirm_yes")]

    def __init__(self, question: str, yes: str) -> None:
        super().__init__(id="confirm")
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Text(make_visible(self.question), end=""), id="confirm-question")
            with Horizontal():
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="warning")
                yield Button("Cancel (n, Esc)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # the safe answer first

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
