"""`ctxview TRANSCRIPT --trace LOG`: the request shown, against what the trace says was really sent.

The comparison is trace_compare's (always the view as sent, whatever what-if is on screen);
this module keeps one result per request shown and draws the status bar's mark and the
`T` screen's text.
"""

from __future__ import annotations

from typing import Sequence

from rich.style import Style
from rich.text import Text

from ctxview.formats.claude_trace import TraceRequest
from ctxview.model import Conversation, Session
from ctxview.pipeline import PipelineCache
from ctxview.sanitize import make_visible
from ctxview.analysis.trace_compare import RequestComparison, TraceMatch, compare_request, match

__all__ = ["TraceCheck"]


class TraceCheck:
    """The trace's requests matched to a session's, and each request's comparison once computed."""

    def __init__(self, name: str, session: Session, requests: Sequence[TraceRequest]) -> None:
        self.name = name
        self.match: TraceMatch = match(session, requests)
        self._cache = PipelineCache()   # its own: the app's cache belongs to the worker in flight
        self._done: dict[tuple[str, int], RequestComparison] = {}

    def result(self, conv: Conversation, request: int | None) -> RequestComparison | None:
        """The comparison of stored request index `request` (None: the next request, never sent)."""
        if request is None:
            return None
        key = (conv.name, request)
        hit = self._done.get(key)
        if hit is None and key in self.match.pairs:
            req, how = self.match.pairs[key]
            hit = self._done[key] = compare_request(conv, request, req, how, cache=self._cache)
        return hit

    def mark(self, conv: Conversation, request: int | None) -> Text:
        """The status bar's part: ✓ or ✗ and where, or why there is nothing to compare."""
        r = self.result(conv, request)
        if r is None:
            word = "next request: not in the trace" if request is None else "no trace request for this one"
            return Text(f"trace: {word}", Style(dim=True), end="")
        if r.matches:
            return Text("✓ matches trace", Style(color="green", bold=True), end="")
        d = r.differences[0]
        at = f"#{d.stored_index}" if d.stored_index is not None else f"#{d.sent_index} as sent"
        return Text(f"✗ trace differs at {at} (T)", Style(color="red", bold=True), end="")

    def text(self, conv: Conversation, request: int | None) -> Text:
        """The `T` screen: this request's differences, then what no request of the transcript holds."""
        bold, dim = Style(bold=True), Style(dim=True)
        out = Text(end="")
        out.append(f"Trace: {make_visible(self.name)}\n", bold)
        out.append("ctxview's reconstruction as sent, against the request body the trace recorded\n\n", dim)
        r = self.result(conv, request)
        if r is None:
            out.append("This request has no request in the trace" if request is not None else
                       "The next request was never sent: step back with [ to a recorded one", bold)
            out.append("\n")
        else:
            out.append(f"{make_visible(conv.name)}, request {r.number} (trace line {r.trace_line}, matched by "
                       f"{r.matched_by}): {r.sent_messages:,} messages sent, {r.reconstructed_messages:,} "
                       "reconstructed\n", bold)
            if r.matches:
                out.append("✓ the reconstruction equals what was sent\n", Style(color="green"))
            for d in r.differences:
                where = f"#{d.stored_index}" if d.stored_index is not None else "—"
                out.append(f"  sent #{d.sent_index} (stored {where}) {d.role} · {d.kind}: ", bold)
                out.append(make_visible(d.detail) + "\n")
        for note in self.match.not_in_transcript:
            out.append(f"\nnot in the transcript (every request): {make_visible(note)}", dim)
        if self.match.unmatched_trace_lines:
            out.append(f"\n{len(self.match.unmatched_trace_lines):,} trace request(s) with no request in this file "
                       "(side calls, sub-agents)", dim)
        out.append("\n\nEscape closes.", dim)
        return out
