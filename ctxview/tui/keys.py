"""The app's key bindings. Each has an id, so a keymap can rebind it
(`App.set_keymap({"ctxview.search": "f"})`). The footer shows some; the help
screen and the command palette list them all with the keys they are on now
(`CtxviewApp.live_bindings`, which adds the panes' own)."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Iterator

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingsMap
from textual.keys import _character_to_key

from ctxview.stages.dialog import palette_entries

# The key names of the printable ASCII characters: what a text box takes as typed ("slash", "t", "N").
_TYPED_KEYS = frozenset(_character_to_key(chr(c)) for c in range(32, 127))

__all__ = ["APP_BINDINGS", "FOOTER_IDS", "KEYS", "SETTINGS_ENTRIES", "help_rows", "live_bindings", "palette_commands",
           "typed_actions"]

KEYS: list[Binding] = [
    Binding("plus,equals_sign", "keep_recent(1)", "keep_recent +1", key_display="+", id="ctxview.keep_recent_up"),
    Binding("minus", "keep_recent(-1)", "keep_recent −1", key_display="-", id="ctxview.keep_recent_down"),
    Binding("t", "next_tiers", "Next tier preset", id="ctxview.next_tiers",
            tooltip="Next tier preset (off, the view as sent, included)"),
    Binding("c", "toggle_compression", "Compression on/off", id="ctxview.toggle_compression",
            tooltip="Compression on/off (from tiers=off: on with the tiers chosen last)"),
    Binding("e", "edit_tiers", "Edit tiers", id="ctxview.edit_tiers"),
    Binding("S", "settings", "Settings", id="ctxview.settings",
            tooltip="Settings: keep_recent, tiers, budget, clearing, old messages, ephemeral reminders"),
    Binding("a", "switch_conversation", "Switch conversation", id="ctxview.switch_conversation"),
    Binding("left_square_bracket", "request(-1)", "Previous request", key_display="[", id="ctxview.prev_request",
            tooltip="Previous request (the context as prepared for an earlier model call)"),
    Binding("right_square_bracket", "request(1)", "Next request", key_display="]", id="ctxview.next_request",
            tooltip="Next request (after the last one: the next call)"),
    Binding("slash", "search", "Search", key_display="/", id="ctxview.search"),
    Binding("n", "search_next(1)", "Next match", id="ctxview.search_next"),
    Binding("N", "search_next(-1)", "Previous match", id="ctxview.search_prev"),
    Binding("r", "next_reminder", "Next system reminder", id="ctxview.next_reminder"),
    Binding("x", "next_changed", "Next changed message", id="ctxview.next_changed"),
    Binding("b", "bloat", "Bloat report", id="ctxview.bloat"),
    Binding("w", "write", "Write prepared messages", id="ctxview.write"),
    Binding("s", "toggle_link", "Link/unlink scrolling", id="ctxview.toggle_link"),
    Binding("R", "reload", "Reload the file", id="ctxview.reload",
            tooltip="Reload the file (it is followed as it grows)"),
    # navigation and copying (navigation.py)
    Binding("g", "goto", "Go to message #N", id="ctxview.goto"),
    Binding("percent_sign", "tool_partner", "Jump between a tool call and its result", key_display="%",
            id="ctxview.tool_partner", tooltip="Jump between a tool call and its result (linked by tool_call_id)"),
    Binding("y", "copy", "Copy the message", id="ctxview.copy",
            tooltip="Copy the message under the cursor (a tool call: its input as JSON) to the clipboard"),
    Binding("Y", "copy_body", "Copy the request body", id="ctxview.copy_body",
            tooltip="Copy the request body of the request shown, as prepared, in the export's shape"),
    Binding("question_mark", "help", "Help", key_display="?", id="ctxview.help"),
    # From a text box, a control or a switch back to the pane focus came from (letter keys work again).
    Binding("escape", "focus_pane", "Back to the panes", id="ctxview.focus_pane"),
    Binding("q", "quit", "Quit", id="ctxview.quit"),
    # Anywhere, even in a text box or a dialog, and while a file loads (Textual's own ctrl+c only
    # says how to quit).
    Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="ctxview.quit_now"),
]

# Shown in the footer; the rest are in the help screen and the palette.
FOOTER_IDS = {
    "ctxview.keep_recent_up", "ctxview.keep_recent_down", "ctxview.next_tiers", "ctxview.toggle_compression",
    "ctxview.search", "ctxview.next_changed", "ctxview.settings", "ctxview.help", "ctxview.quit",
    "ctxview.focus_pane",
}


# Palette entries that open the settings dialog at one field (each stage's, stages/dialog.py).
SETTINGS_ENTRIES = palette_entries()


def _binding(b: Binding) -> Binding:
    return dataclasses.replace(b, show=b.id in FOOTER_IDS)


APP_BINDINGS = [_binding(b) for b in KEYS]


def typed_actions(app: App, bindings: Iterable[Binding]) -> frozenset[str]:
    """The actions of `bindings` all of whose keys (the keymap applied) a text box takes as typed
    characters: while one has focus they do nothing, so the footer leaves them out."""
    live = BindingsMap(list(bindings))
    live.apply_keymap(app._keymap)
    keys: dict[str, list[str]] = {}
    for key, key_bindings in live.key_to_bindings.items():
        for b in key_bindings:
            keys.setdefault(b.action.partition("(")[0], []).append(key)  # (check_action gets the name alone)
    return frozenset(action for action, ks in keys.items() if all(k in _TYPED_KEYS for k in ks))


def help_rows(live: list[tuple[Any, Binding, list[str]]]) -> list[tuple[str, str]]:
    """The help screen's rows: (keys, what they do) for each live binding (`live_bindings`), then
    Textual's focus key."""
    return [*(("/".join(keys), b.tooltip or b.description) for _, b, keys in live),
            ("Tab", "Move focus (panes, controls)")]


def palette_commands(app: App, live: list[tuple[Any, Binding, list[str]]],
                     textual_commands: Iterable[SystemCommand]) -> Iterator[SystemCommand]:
    """The command palette: Textual's own commands that are not ours, then each live binding."""
    titles = {b.description for _, b, _ in live}
    for command in textual_commands:
        if command.title not in titles:  # Textual's own Quit is ours too: listed once
            yield command
    for node, b, keys in live:
        yield SystemCommand(b.description, f"key {'/'.join(keys)}", _runner(app, b.action, node))
        if b.action == "settings":  # the dialog opened at one setting, for a search by its name
            for title, field in SETTINGS_ENTRIES:
                yield SystemCommand(title, f"key {'/'.join(keys)}, in the settings dialog",
                                    _runner(app, f"settings({field!r})", node))


def _runner(app: Any, action: str, node: Any):
    """Run `action` from the palette: back on the panes first (a text box that had focus would
    stop the panes' keys and their actions, see CtxviewApp.check_action)."""
    def run():
        if hasattr(app, "action_focus_pane"):
            app.action_focus_pane()
        return app.run_action(action, node)

    return run


def live_bindings(app: App, groups: Iterable[tuple[Any, list[Binding]]]) -> list[tuple[Any, Binding, list[str]]]:
    """Each action of `groups` ((the node that runs them, its BINDINGS), ...) once, as (node,
    binding, the keys it is on now): the app's keymap applied, keys shown as the footer shows them."""
    out: list[tuple[Any, Binding, list[str]]] = []
    for node, bindings in groups:
        live = BindingsMap(bindings)
        live.apply_keymap(app._keymap)  # what set_keymap / update_keymap gave (Textual keeps it there)
        by_action: dict[str, tuple[Binding, list[str]]] = {}
        for key_bindings in live.key_to_bindings.values():
            for b in key_bindings:
                binding, keys = by_action.setdefault(b.action, (b, []))
                display = app.get_key_display(b)
                if display not in keys:
                    keys.append(display)
        order = {b.action: i for i, b in enumerate(bindings)}  # as listed, wherever the keymap put them
        out.extend((node, *by_action[action]) for action in sorted(by_action, key=order.__getitem__))
    return out
