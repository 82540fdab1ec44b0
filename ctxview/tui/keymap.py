"""What a user's keymap and theme may name (config.toml's [keys] and theme).

Above the app, the panes and the dialogs, since it lists their bindings;
the command line checks a config file against it before the app starts.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.theme import BUILTIN_THEMES

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.modals import BloatScreen, ConversationPicker, DetailScreen, HelpScreen, TierEditor, WriteScreen
from ctxview.tui.screens.settings import SettingsDialog
from ctxview.tui.widgets.pane import MessagePane
from ctxview.tui.widgets.pane_pair import PanePair

__all__ = ["binding_ids", "theme_names"]


def binding_ids() -> set[str]:
    """Every binding id a keymap (config.toml's [keys]) may name: the app's, the panes', the dialogs'."""
    groups = (CtxviewApp.BINDINGS, PanePair.BINDINGS, MessagePane.BINDINGS, HelpScreen.BINDINGS,
              DetailScreen.BINDINGS, TierEditor.BINDINGS, ConversationPicker.BINDINGS, WriteScreen.BINDINGS,
              BloatScreen.BINDINGS, SettingsDialog.BINDINGS)
    return {b.id for group in groups for b in group if isinstance(b, Binding) and b.id}


def theme_names() -> set[str]:
    """The Textual themes a config.toml may name."""
    return set(BUILTIN_THEMES)
