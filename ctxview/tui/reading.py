"""Reading the session into the inspector: the first read, and reading it again.

Mixed into CtxviewApp: the handlers of what the load worker posts (workers.load_job: what is read
so far, the session, a failure), of a followed file read again (follow.py) and of the whole file
read after its tail (the history before the last compaction). The handlers are named by Textual's
convention, `on_<message>`, which a plain mixin's methods take part in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxview.engine.view import Settings
from ctxview.model import Session, is_request, request_indices
from ctxview.sanitize import sanitize
from ctxview.tui.follow import FileChanged, FollowFailed, follow_job
from ctxview.tui.messages import HistoryFailed, HistoryLoaded, OpeningFailed, SessionLoaded, StoredPiece
from ctxview.tui.state import loading_note, renumbered, request_label, saved_settings_note
from ctxview.tui.widgets.basic import prepared_title
from ctxview.tui.widgets.reading import LOOK_EVERY

if TYPE_CHECKING:
    from ctxview.tui.app import CtxviewApp

__all__ = ["SessionReading"]


class SessionReading:
    """Loading and following, mixed into CtxviewApp (see the module's docstring)."""

    def on_opening_failed(self: CtxviewApp, event: OpeningFailed) -> None:
        self.error = event.error
        self.exit(1, return_code=1)

    def on_stored_piece(self: CtxviewApp, event: StoredPiece) -> None:
        if self.session is None:  # (not once the whole session is on screen)
            self._show_read_so_far(event.count, event.layout)

    def _show_read_so_far(self: CtxviewApp, count: int, pending) -> None:
        """The file is still being read: the stored side shows its first `count` messages
        (bench_tui.py times it); the keys that move over them work meanwhile."""
        self.pair.show(pending)
        self.query_one("#body").loading = False
        self._read_count = count
        self.pair.set_titles(f"stored messages · {count:,} read so far", prepared_title(None, self.settings, ""))
        self._refresh_chrome()

    def on_session_loaded(self: CtxviewApp, event: SessionLoaded) -> None:
        self._cache = event.cache
        self.tail_only = event.partial   # (the history before the last compaction still loading)
        if event.partial:
            self.notify("the request after the last compaction, read from the file's end; the history "
                        "before it is still loading ([ and the totals cover what is read)", markup=False, timeout=6)
        self._show_stored(event.session, event.conversation, event.settings, event.layout)
        if event.partial:   # the status bar says how much of the whole file is read, as it changes
            self._history_timer = self.set_interval(LOOK_EVERY, self._look_at_history)
        if self.follower is not None and self.follower.timer is None:
            self.follower.timer = self.set_interval(self.follow_interval, self.follower.poll)

    def _show_stored(self: CtxviewApp, session: Session, index: int, settings: Settings, pending) -> None:
        """The session is loaded: show the stored side while the first view computes (bench_tui.py times it)."""
        self.session = session
        if self._trace_log is not None and self.trace is None:
            from ctxview.tui.trace_view import TraceCheck

            self.trace = TraceCheck(self._trace_log[0], session, self._trace_log[1])
        self.state.opened(index, len(session.conversations), settings)
        self.pair.show(pending)
        self.query_one("#body").loading = False
        self._refresh_chrome()
        note = loading_note(session)
        if note:
            self.notify(sanitize(note), title="loaded with warnings", severity="warning", markup=False)
        saved = saved_settings_note(session.conversations[index], settings)
        if saved and not getattr(self, "_config_note", ""):  # (the config's note names the what-if already)
            self.notify(sanitize(saved), title="what-if", markup=False)

    # -- following the file -------------------------------------------------------

    def _read_again(self: CtxviewApp, change: str) -> None:
        self.run_job(follow_job, self.follower, change)

    def on_file_changed(self: CtxviewApp, event: FileChanged) -> None:
        from ctxview.formats.growing import GONE

        if self.follower is not None:
            self.follower.done()
        r = event.refresh
        if r.notice:
            self.notify(sanitize(r.notice), title="file changed", severity="warning", markup=False)
        if r.change == GONE:
            return
        self._take_session(r.session)

    def _take_session(self: CtxviewApp, session: Session, history: bool = False) -> None:
        """A session read anew (the file followed, or `history`: whole after its tail): the same
        conversation and place where it is still there, the view recomputed. After a tail, the
        messages the whole file holds before the ones shown move the cursor's message and the
        request picked with them (state.renumbered)."""
        from ctxview.pipeline import PipelineCache

        names = [c.name for c in session.conversations]
        shown = self.conversation
        found = shown is not None and shown.name in names
        moved = renumbered(self.session, session, history)
        shift = moved.get(self.state.conversation, (0, 0))[1]
        layout = self.row_layout
        if found and shift and layout is not None and not self._cursor_at_end():
            index = layout.row(self.cursor).index
            self._moved_to = None if index is None else index + shift
        self.session, self._cache = session, PipelineCache()
        if self._trace_log is not None:  # matched anew: the transcript's requests changed (the log is read once)
            from ctxview.tui.trace_view import TraceCheck

            self.trace = TraceCheck(self._trace_log[0], session, self._trace_log[1])
        picked = self.state.settings.request
        if self.state.reloaded(names.index(shown.name) if found else 0, len(names), found,  # type: ignore[union-attr]
                               moved, lambda c, i: is_request(session.conversations[c].messages, i)):
            label = request_label(picked, request_indices(shown.messages))  # type: ignore[union-attr]
            self.notify(f"request {label} is no longer in the file: showing the next request", markup=False)
        if not found:
            self.pair.reset()
        self.recompute()  # the view's rows change when it is ready: _view_ready

    def _look_at_history(self: CtxviewApp) -> None:
        note = self._history_note()
        if note != self._history_shown:
            self._history_shown = note
            self._refresh_chrome()

    def _history_read(self: CtxviewApp) -> None:
        timer = self._history_timer
        if timer is not None:
            timer.stop()
            self._history_timer = None

    def on_history_loaded(self: CtxviewApp, event: HistoryLoaded) -> None:
        self._history_read()
        self.tail_only = False
        self._take_session(event.session, history=True)   # (the tail's messages are the whole file's last ones)
        self.notify("the whole history is read", markup=False, timeout=3)

    def on_history_failed(self: CtxviewApp, event: HistoryFailed) -> None:
        self._history_read()
        self.history_failed = event.error
        self._refresh_chrome()
        self.notify(sanitize(event.error), title="cannot read the whole file", severity="error", markup=False)

    def on_follow_failed(self: CtxviewApp, event: FollowFailed) -> None:
        if self.follower is not None:
            self.follower.done()
        self.notify(sanitize(event.error), title="cannot read the file again", severity="error", markup=False)

    def action_reload(self: CtxviewApp) -> None:
        if self.follower is None:
            self.notify("nothing to reload: only a file named on the command line is read again", markup=False)
        else:
            self.follower.reload()

    def _cursor_at_end(self: CtxviewApp) -> bool:
        layout = self.row_layout
        return layout is not None and len(layout) > 1 and self.cursor >= len(layout) - 1

