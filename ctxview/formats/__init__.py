"""Session loaders: every common agent-session file into one Session model.

    from ctxview.formats import load_session, LoadError, FORMATS
    session = load_session("session.jsonl")            # format detected from content
    session = load_session("-", format="openai")        # stdin, format forced

One module per format, each implementing `contract.SessionFormat` (a new
format: its module, ending with `SESSION_FORMAT = ModuleFormat(...)`, and one
line in `registry.REGISTERED`); `registry` sniffs and loads; `builders`
makes messages, tool calls and usage; `jsonio` gathers the byte-level
reading and checks (inputs, json_decode, json_lines, json_pieces);
`errors.LoadError` is the only exception for bad input. No terminal
libraries are imported here.
"""

from __future__ import annotations

from pathlib import Path

from ctxview.formats.errors import LoadError
from ctxview.formats.registry import DESCRIPTIONS, FORMATS, detect_format, load_session

__all__ = ["DEMO_PATH", "DESCRIPTIONS", "FORMATS", "LoadError", "detect_format", "load_session"]

# The bundled demo `ctxview` opens when given no file (shipped as package data).
DEMO_PATH: Path = Path(__file__).resolve().parent.parent / "samples" / "swarm-demo.ctxview.json"
