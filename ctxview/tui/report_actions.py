"""The reports and the export, asked for from the inspector.

Mixed into CtxviewApp: `b` (the bloat report, computed by a worker), `u` (usage, cost and the
prompt cache), `L` (every request), `T` (a request against a captured log) and `w` (write the
request body as prepared), with the handlers of what their workers post (named by Textual's
convention, `on_<message>`, as reading.py's are).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxview.atomic import UnsafeTarget, check_target
from ctxview.sanitize import sanitize
from ctxview.tui.failures import one_line
from ctxview.tui.messages import BloatReady, WorkFailed, Written
from ctxview.tui.screens.dialogs import ConfirmScreen
from ctxview.tui.screens.modals import BloatScreen, WriteScreen
from ctxview.formats.inputs import same_file, writes_over_input
from ctxview.tui.state import export_name
from ctxview.tui.workers import bloat_job, write_job

if TYPE_CHECKING:
    from ctxview.tui.app import CtxviewApp

__all__ = ["ReportActions"]


class ReportActions:
    """Reports and export, mixed into CtxviewApp (see the module's docstring)."""

    def action_bloat(self: CtxviewApp) -> None:
        conv = self.conversation
        if conv is None or self._cache is None:
            return
        window = self.view.context_window if self.view is not None else conv.context_window
        self.run_job(bloat_job, conv, self.settings, window, self._cache, self._layouts.lock)

    def action_usage(self: CtxviewApp) -> None:
        if self.tail_only:
            self._still_loading("usage from the last compaction on only")
        if self.conversation is not None and self._cache is not None:
            from ctxview.tui.screens.usage import UsageScreen  # (prices, and pydantic, only once the screen opens)

            self.push_screen(UsageScreen(self.session, self.conversation, self.settings, self._cache))

    def action_requests(self: CtxviewApp) -> None:
        """`L`: every request as a line; Enter opens that request."""
        if self.conversation is None or self._cache is None:
            return
        if self.tail_only:
            self._still_loading("the requests from the last compaction on only")
        from ctxview.tui.screens.requests import RequestsScreen

        def done(index: int | None) -> None:
            if index is not None and index != self.settings.request:
                self.update_settings(request=index)

        self.push_screen(RequestsScreen(self.conversation, self.settings, self._cache), done)

    def action_trace(self: CtxviewApp) -> None:
        if self.trace is None:
            self.notify("open the session with --trace LOG (a claude-trace log) to compare", markup=False)
        elif self.conversation is not None:
            self.push_screen(BloatScreen(self.trace.text(self.conversation, self.settings.request)))

    def on_bloat_ready(self: CtxviewApp, event: BloatReady) -> None:
        if not event.update:
            self.push_screen(BloatScreen(event.report))
        elif isinstance(self.screen, BloatScreen):
            self.screen.show(event.report)

    def on_work_failed(self: CtxviewApp, event: WorkFailed) -> None:
        self.notify(sanitize(event.error), title=event.title, severity="error", markup=False)

    def action_write(self: CtxviewApp) -> None:
        from ctxview.export.bodies import default_shape

        if self.view is not None and self.session is not None:
            model = self.conversation.model if self.conversation is not None else None
            # a full path, so the user sees where it goes before anything is written (a folder whose
            # name holds control characters is not echoed into the box: the name alone, as before)
            here = getattr(self, "_export_dir", None) or os.getcwd()
            target = export_name(self.path)
            target = os.path.join(here, target) if sanitize(here) == here else target
            self.push_screen(WriteScreen(target, default_shape(self.session.format, model)),
                             self._write_to)

    def _write_to(self: CtxviewApp, choice: tuple[str, str] | None) -> None:
        if not choice or self.view is None:
            return
        target, shape = choice
        if self.path is not None and same_file(target, self.path):
            self.notify("refusing to overwrite the input file", severity="error", markup=False)
            return
        trace = self._trace_log[0] if self._trace_log is not None else None
        if writes_over_input(target, [self.path, trace]):
            self.notify("refusing to overwrite a file the session is read from", severity="error", markup=False)
            return
        try:   # (a device, FIFO, link or folder is refused before anything is asked)
            check_target(target)
        except (UnsafeTarget, OSError) as exc:
            self.notify(sanitize(one_line(exc)), title="write failed", severity="error", markup=False)
            return
        if os.path.lexists(target):  # ask first; the write itself stays atomic (write_atomic)
            self.push_screen(ConfirmScreen(f"{target} exists. Overwrite it?", "Overwrite"),
                             lambda yes: self._write(target, shape) if yes else None)
            return
        self._write(target, shape)

    def _write(self: CtxviewApp, target: str, shape: str) -> None:
        from ctxview.export.bodies import recorded_max_tokens

        conv, session = self.conversation, self.session
        if self.view is None or conv is None or session is None:
            return
        self.run_job(write_job, target, shape, self.view, conv.model,
                     recorded_max_tokens(conv.metadata, session.metadata), self.path, conv)

    def on_written(self: CtxviewApp, event: Written) -> None:
        self.last_written = event.target
        note = f"; changed: {event.note}" if event.note else ""
        self.notify(sanitize(f"wrote a request body of {event.count:,} messages ({event.shape}) to {event.target}{note}"),
                    markup=False, severity="warning" if note else "information")
