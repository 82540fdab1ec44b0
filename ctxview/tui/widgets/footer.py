"""The key bar at the bottom: Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer rebuilds its keys (a widget each, styled anew) on every change of the screen's
bindings: focus moving, a loading indicator coming and going. Opening a session makes four such
changes that leave the keys as they were, about 12 ms each, inside the time to the first frame.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter

__all__ = ["Footer", "keys_shown"]


def keys_shown(screen: Screen) -> tuple[Any, ...]:
    """What the footer's compose reads of `screen`: each active binding (its key, description,
    action, group and whether it is shown), whether it is enabled, and its tooltip."""
    return tuple((key, binding, enabled, tooltip)
                 for key, (_, binding, enabled, tooltip) in screen.active_bindings.items())


class Footer(TextualFooter):
    """Textual's Footer, rebuilt only when the keys it would show differ from those it shows."""

    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        if not (screen.app.app_focus and self.is_attached and screen is self.screen):
            super().bindings_changed(screen)   # (nothing rebuilt: the next change compares again)
            return
        shown = keys_shown(screen)
        if shown == self._shown:
            return
        self._shown = shown
        super().bindings_changed(screen)
