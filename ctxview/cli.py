"""The `ctxview` command. Imports the TUI only when the app is opened."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxview",
        description="Inspect what an LLM agent stored and what it sent to the model.",
    )
    parser.add_argument("--version", action="version", version=f"ctxview {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
