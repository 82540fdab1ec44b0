"""Request captures: the logs that record what was really sent, read as `--trace` reads them.

claude-trace (claude_trace.py), claude-tap (claude_tap.py), context-lens LHAR
(context_lens.py) and HAR (har.py) each record the Messages API request bodies
and their responses; `capture_requests(path)` detects which one a file is and
gives its kept requests (sent_requests.TraceRequest), which trace_compare.py
holds a transcript's reconstruction against.
"""

from __future__ import annotations

import os

from ctxview.formats import claude_tap, claude_trace, context_lens, har
from ctxview.formats.errors import LoadError
from ctxview.formats.registry import DESCRIPTIONS, detect_format
from ctxview.formats.sent_requests import TraceRequest

__all__ = ["CAPTURE_FORMATS", "EXPECTED", "capture_requests"]

# format name -> its module's trace_requests(path)
CAPTURE_FORMATS = {m.FORMAT: m.trace_requests for m in (claude_trace, claude_tap, context_lens, har)}
EXPECTED = "a request capture: claude-trace, claude-tap, context-lens LHAR or HAR"


def capture_requests(path: str | os.PathLike) -> list[TraceRequest]:
    """The kept requests of the capture log at `path`, in its order; LoadError for a file that is no
    capture log (what it is instead, where that is known) or a bad one."""
    try:
        fmt = detect_format(path)
    except LoadError as exc:
        raise LoadError(exc.path, exc.message, line=exc.line, column=exc.column, expected=EXPECTED,
                        hint=exc.hint) from None
    read = CAPTURE_FORMATS.get(fmt)
    if read is None:
        raise LoadError(str(path), f"this is a {DESCRIPTIONS[fmt]}, not a log of the requests sent",
                        expected=EXPECTED)
    return read(path)
