"""The formats whose big files can open at their last compaction, and how each finds it."""

from __future__ import annotations

from typing import Callable

from ctxview.formats.claude_code import FORMAT as CLAUDE_CODE
from ctxview.formats.codex import FORMAT as CODEX
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input
from ctxview.model import Session

__all__ = ["FORMATS", "load_tail"]

FORMATS = (CLAUDE_CODE, CODEX)


def _loader(fmt: str) -> Callable[..., Session | None]:
    if fmt == CLAUDE_CODE:
        from ctxview.formats.claude_code.tail import load_tail
    else:
        from ctxview.formats.codex_tail import load_tail
    return load_tail


def load_tail(path: str, fmt: str, lenient: bool = False, share: float = 0.5) -> Session | None:
    """The session from its last compaction on, read from the end of `path` (a file of format `fmt`,
    one of FORMATS), when that compaction lies in its last `share`; else None. A tail that asks for
    more than ctxview reads (registry.within_limits: conversations; the nesting of a call's
    arguments, which both loaders check as they read) is None too: the whole file, read next, says
    what is wrong."""
    if fmt not in FORMATS:
        return None
    session = _loader(fmt)(path, lenient, share)   # (a LoadError there is None too)
    if session is None:
        return None
    from ctxview.formats.registry import within_limits

    try:
        return within_limits(Input(path), session, arguments=False)
    except LoadError:
        return None
