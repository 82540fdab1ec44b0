"""The app's key bindings. Each has an id, so a keymap can rebind it
(`App.set_keymap({"ctxview.search": "f"})`); the same list feeds the footer,
the help screen and the command palette."""

from __future__ import annotations

import dataclasses

from textual.binding import Binding

__all__ = ["APP_BINDINGS", "FOOTER_IDS", "KEYS", "key_list"]

KEYS: list[Binding] = [
    Binding("plus,equals_sign", "keep_recent(1)", "keep_recent +1", key_display="+", id="ctxview.keep_recent_up"),
    Binding("minus", "keep_recent(-1)", "keep_recent −1", key_display="-", id="ctxview.keep_recent_down"),
    Binding("t", "next_tiers", "Next tier preset", id="ctxview.next_tiers"),
    Binding("c", "toggle_compression", "Compression on/off", id="ctxview.toggle_compression"),
    Binding("e", "edit_tiers", "Edit tiers", id="ctxview.edit_tiers"),
    Binding("a", "switch_conversation", "Switch conversation", id="ctxview.switch_conversation"),
    Binding("left_square_bracket", "request(-1)", "Previous request", key_display="[", id="ctxview.prev_request"),
    Binding("right_square_bracket", "request(1)", "Next request", key_display="]", id="ctxview.next_request"),
    Binding("slash", "search", "Search", key_display="/", id="ctxview.search"),
    Binding("n", "search_next(1)", "Next match", id="ctxview.search_next"),
    Binding("N", "search_next(-1)", "Previous match", id="ctxview.search_prev"),
    Binding("r", "next_reminder", "Next system reminder", id="ctxview.next_reminder"),
    Binding("x", "next_changed", "Next changed message", id="ctxview.next_changed"),
    Binding("b", "bloat", "Bloat report", id="ctxview.bloat"),
    Binding("w", "write", "Write prepared messages", id="ctxview.write"),
    Binding("s", "toggle_link", "Link/unlink scrolling", id="ctxview.toggle_link"),
    Binding("question_mark", "help", "Help", key_display="?", id="ctxview.help"),
    Binding("q", "quit", "Quit", id="ctxview.quit"),
]

# Shown in the footer; the rest are in the help screen and the palette.
FOOTER_IDS = {
    "ctxview.keep_recent_up", "ctxview.keep_recent_down", "ctxview.next_tiers", "ctxview.toggle_compression",
    "ctxview.search", "ctxview.next_changed", "ctxview.help", "ctxview.quit",
}


def _binding(b: Binding) -> Binding:
    return dataclasses.replace(b, show=b.id in FOOTER_IDS)


APP_BINDINGS = [_binding(b) for b in KEYS]


def key_list() -> list[tuple[str, str]]:
    """Every key with what it does, for the help screen."""
    rows = [(b.key_display or b.key, b.description) for b in KEYS]
    rows[0:0] = [
        ("↑/↓ j/k", "Previous / next message"),
        ("PgUp/PgDn", "Scroll a page"),
        ("Home/End", "First / last message"),
        ("Enter", "Expand / collapse the message (huge ones open the detail view)"),
        ("o", "Open the message in the detail view"),
        ("z", "Fold / unfold a run of removed messages (Enter unfolds too)"),
        ("Tab", "Move focus (panes, controls)"),
    ]
    return rows
