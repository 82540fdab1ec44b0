"""What went wrong, as the one line the user sees.

Its own module, below the app and its workers, so that each of them can
name a failure without importing the others.
"""

from __future__ import annotations

__all__ = ["LoadFailed", "one_line"]


class LoadFailed(Exception):
    """Loading or the first recompute failed before the app was usable."""


def one_line(exc: BaseException) -> str:
    """An exception as the one line the user sees (its type only where the message needs it)."""
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, (LoadFailed, ValueError, OSError)) and type(exc).__name__ != "LoadError":
        message = f"{type(exc).__name__}: {message}"
    return " ".join(message.split())
