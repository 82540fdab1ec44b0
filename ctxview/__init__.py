"""ctxview: see what your LLM agent really sent to the model.

The library never imports textual or rich; only `ctxview.cli` and
`ctxview.tui` do, and the CLI loads the TUI lazily. Where the library pauses
the cyclic garbage collector for a bulk build (loading, compressing, a
pipeline run), it restores the caller's setting afterwards (gcpause.paused_gc).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ctxview.model import Content, ContextEvent, Conversation, Message, Session, ToolCall, Usage

__version__ = "0.1.0"

# Public names served from submodules, imported on first use so that
# `import ctxview` stays fast and a submodule's imports are paid only when used.
_LAZY = {
    "ContextManager": "ctxview.engine.context_manager",
    "CompressionPolicy": "ctxview.engine.compression",
    "Tier": "ctxview.engine.compression",
    "load_session": "ctxview.formats",
    "LoadError": "ctxview.formats.errors",
    "Settings": "ctxview.settings",
    "prepare_reference": "ctxview.pipeline",
    "PreparedView": "ctxview.engine.view",
    "prepare": "ctxview.pipeline",
    "truncate_to_fit": "ctxview.engine.budget",
    "summarize_old_messages": "ctxview.engine.budget",
    "analyze_context_bloat": "ctxview.engine.bloat",
}

__all__ = [
    "Content",
    "ContextEvent",
    "Conversation",
    "Message",
    "Session",
    "ToolCall",
    "Usage",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxview' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from ctxview.engine.bloat import analyze_context_bloat
    from ctxview.engine.budget import summarize_old_messages, truncate_to_fit
    from ctxview.engine.compression import CompressionPolicy, Tier
    from ctxview.engine.context_manager import ContextManager
    from ctxview.formats import load_session
    from ctxview.formats.errors import LoadError
    from ctxview.pipeline import prepare, prepare_reference
    from ctxview.settings import Settings
    from ctxview.engine.view import PreparedView
