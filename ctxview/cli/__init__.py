"""The `ctxview` command: its sub-commands, arguments and the user's config file."""

from ctxview.cli.commands import main

__all__ = ["main"]
