"""The inspector: stored messages beside the messages prepared for the model.

The app composes the widgets, turns keys into calls on `InspectorState`
(state.py, which decides) and renders what comes back. Loading and every
pipeline run, bloat report and write are jobs (workers.py) run in thread
workers (`run_job`) that post a typed message (messages.py) when done; the
handlers below apply it. At most one pipeline run is in flight, on one
PipelineCache shared by all of them, so a change redoes only what it touches;
a result that is no longer wanted is dropped and the newest settings run
next. Reading the session in, and again as it grows, is reading.py's; the
panes, their cursor and the search scan are the PanePair's
(widgets/pane_pair.py); starting from the command line is launch.py's. The workers
run on daemon threads (threads.py): `q` and ctrl+c quit at once, even while
a file loads.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from pathlib import Path
from functools import partial
from typing import Any, Callable, Iterable, Mapping

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from ctxview.formats.inputs import ReadMeter
from ctxview.model import Conversation, Session
from ctxview.sanitize import make_visible, sanitize
from ctxview.settings import keep_recent_note
from ctxview.engine.view import PreparedView, Settings, row_columns
from ctxview.tui.widgets.controls import ControlsPanel
from ctxview.tui.follow import FOLLOW_INTERVAL, FileFollower, followable
from ctxview.tui.keys import APP_BINDINGS, help_rows, live_bindings, palette_commands, typed_actions
from ctxview.tui.failures import one_line
from ctxview.tui.messages import NoteReady, ViewFailed, ViewReady
from ctxview.tui.widgets.pane import MessagePane
from ctxview.tui.navigation import NavigationActions
from ctxview.tui.reading import SessionReading
from ctxview.tui.report_actions import ReportActions
from ctxview.tui.widgets.pane_pair import PanePair
from ctxview.tui.screens.modals import ConversationPicker, HelpScreen, TierEditor
from ctxview.tui.screens.settings import SettingsDialog
from ctxview.tui.state import (InspectorState, conversation_title, editable_tiers, position_of, request_label,
                               tier_lines)
from ctxview.tui.threads import DaemonThreads
from ctxview.tui.widgets.chrome import HeaderBar, StatusBar, StatusParts
from ctxview.tui.widgets.footer import Footer
from ctxview.tui.widgets.basic import Meters, SearchBox, prepared_title
from ctxview.tui.widgets.reading import ReadingIndicator
from ctxview.tui.workers import Layouts, Opening, compute_job, load_job, note_job

__all__ = ["CtxviewApp"]


class CtxviewApp(SessionReading, ReportActions, NavigationActions, App[int]):
    """Side-by-side stored/prepared inspector."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "ctxview"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [*APP_BINDINGS, Binding("u", "usage", "Usage, cost and the prompt cache", show=False, id="ctxview.usage"),
                # (from a sub-agent's conversation, navigation.py; else when opened from the browser)
                Binding("escape", "back", "Back", id="ctxview.back",
                        tooltip="Back (from a sub-agent's conversation to its parent's, else to the sessions)"),
                Binding("T", "trace", "Trace: this request against what was really sent", show=False,
                        id="ctxview.trace"),
                Binding("L", "requests", "Requests: context, cache and cost of each", show=False,
                        id="ctxview.requests")]

    def __init__(
        self,
        path: str | None,
        settings: Settings | None = None,
        agent: str | None = None,
        fmt: str | None = None,
        lenient: bool = False,
        *,
        session: Session | None = None,
        overrides: Mapping[str, Any] | None = None,
        follow_interval: float | None = FOLLOW_INTERVAL,
        browsing: bool = False,
        trace: tuple[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._trace_log = trace            # (name, requests) of --trace LOG; matched once the session loads
        self.trace: Any = None             # trace_view.TraceCheck
        self.path = path
        self.browsing = browsing           # opened from the session browser: Escape goes back to it
        self.went_back = False
        self.given = settings or Settings()
        # What the user gave on the command line; None: the fields of
        # `settings` that differ from the defaults count as given.
        self.overrides = overrides
        self.agent = agent
        self.fmt = fmt
        self.lenient = lenient
        self.session: Session | None = session
        self.tail_only = False   # the transcript from its last compaction on is shown; the whole file is read
        self.history_failed: str | None = None  # why the whole file could not be read after its tail
        self._history_timer: Any = None    # looks at how much of it is read while it is (reading.py)
        self._history_shown = ""           # what the status bar said of it last
        self._moved_to: int | None = None  # the stored message the cursor goes to when the whole file shows
        self.state = InspectorState(self.given)
        self.view: PreparedView | None = None
        self.error: str | None = None      # set when loading failed before the app was usable
        self.last_written: str | None = None
        self._read_count = 0               # messages on the stored side while the file is read (StoredPiece)
        self._cache: Any = None            # PipelineCache, made by the load worker (SessionLoaded brings it)
        self._layouts = Layouts()          # used by one worker at a time (one pipeline run in flight)
        self._meter = ReadMeter()          # how far the load worker is into the file (the loading cover shows it)
        # The file is followed as it grows (follow.py): polled every follow_interval seconds (None: not).
        self.follow_interval = follow_interval
        self.follower = (FileFollower(path, fmt, lenient, self._read_again)  # type: ignore[arg-type]
                         if follow_interval is not None and session is None and followable(path) else None)

    # -- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from ctxview.engine.compression import PRESETS

        yield HeaderBar(id="header")
        yield Meters(id="meters")
        with Horizontal(id="body"):
            yield PanePair(id="panes", on_cursor_moved=self._refresh_chrome)
            yield ControlsPanel(list(PRESETS), self.settings, id="controls")
        yield SearchBox(id="search", placeholder="search both panes (Enter to find, Esc to close)")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def pair(self) -> PanePair:
        return self.query_one(PanePair)

    # What the state and the pane pair hold, by the names the app has always had.
    stored_pane = property(lambda self: self.pair.stored)
    prepared_pane = property(lambda self: self.pair.prepared)
    panes = property(lambda self: self.pair.panes)
    row_layout = property(lambda self: self.pair.row_layout)
    cursor = property(lambda self: self.pair.cursor)
    linked = property(lambda self: self.pair.linked)
    expanded_rows = property(lambda self: self.pair.expanded_rows)
    settings = property(lambda self: self.state.settings)
    conversation_index = property(lambda self: self.state.conversation)
    search_term = property(lambda self: self.state.search.term)

    @property
    def busy(self) -> bool:
        """Whether the view on screen is not yet the one asked for (loading included)."""
        return self.view is None or self.state.busy

    @property
    def conversation(self) -> Conversation | None:
        if self.session is None or not self.session.conversations:
            return None
        return self.session.conversations[self.state.conversation]

    def configure(self, keymap: Mapping[str, str], theme: str | None, note: str = "",
                  export_dir: str | None = None) -> None:
        """The user's config.toml (cli/user_config.py): keys by binding id, a theme, the folder `w`
        offers; `note` says when its settings make every view a what-if."""
        self._export_dir = export_dir
        if keymap:
            self.set_keymap(dict(keymap))
        if theme:
            self.theme = theme
        self._config_note = note

    def on_mount(self) -> None:
        if getattr(self, "_config_note", ""):
            self.notify(sanitize(self._config_note), title="config", markup=False)
        # Quitting must not wait for a thread worker (a load can take long): see threads.py.
        asyncio.get_running_loop().set_default_executor(DaemonThreads())
        self.query_one("#body").loading = True
        self.query_one(StatusBar).update(Text(f"loading {make_visible(self._path_label())}…", end=""))
        self.stored_pane.focus()
        self.pair.on_enter = self.enter_row  # (a Task call opens its sub-agent: navigation.py)
        opening = Opening(self.path, self._path_label(), self.fmt, self.lenient, self.session, self.agent,
                          self.given, self.overrides, self.follower)
        self.run_job(load_job, opening, self._layouts, self._prepare, self._meter)

    def get_loading_widget(self) -> Widget:
        """The body's cover while the file is read: its name and the share read (widgets/reading.py)."""
        return ReadingIndicator(self._path_label(), self._meter)

    def _path_label(self) -> str:
        if self.path is None:
            return "demo session (bundled)"
        return self.path

    # -- loading ----------------------------------------------------------------

    def run_job(self, job: Callable[..., None], *args: Any, exclusive: bool = True) -> None:
        """Run `job(self.post_message, *args)` (workers.py) in a thread worker of its own group;
        what it posts, the handlers apply (here, reading.py, report_actions.py)."""
        name = job.__name__.removesuffix("_job")
        self.run_worker(partial(job, self.post_message, *args), name=name, group=name, description=name,
                        exclusive=exclusive, thread=True, exit_on_error=False)  # (description: no repr of args)

    # -- recompute --------------------------------------------------------------

    def _prepare(self, conversation: Conversation, settings: Settings, cache: Any) -> PreparedView:
        """One pipeline run on the shared cache (InspectorState keeps them one at a time)."""
        from ctxview.pipeline import prepare

        return prepare(conversation, settings, cache=cache)

    def recompute(self) -> None:
        """Start the run for the newest settings, unless one is in flight (its end starts it)."""
        key = self.state.next_run()
        self._refresh_chrome()
        if key is not None and self.session is not None:
            conversation = self.session.conversations[key.conversation]
            layout = self.pair.row_layout
            self.run_job(compute_job, key, conversation, self._cache, self._layouts, self._prepare,
                         weakref.ref(layout) if layout is not None else None, exclusive=False)

    @on(ViewReady)
    def _view_ready(self, event: ViewReady) -> None:
        shown = self.state.shown
        if self.state.finished(event.key):
            self.view = event.view
            # The session and views are millions of long-lived, acyclic objects:
            # keep them out of the cyclic GC's full passes (seconds at 100k messages).
            gc.freeze()
            # a followed file read again: the cursor on the last message follows the new ones
            follow = shown is not None and shown.generation != event.key.generation and self._cursor_at_end()
            self.pair.show(event.layout)
            if follow:
                self.pair.action_cursor_to("last")
            elif self._moved_to is not None and event.key.generation == self.state.generation:
                # the whole file after its tail: the row of the message the cursor was on
                position = position_of([None, *row_columns(event.layout.view.rows)[0]], self._moved_to)
                if position is not None:
                    self.pair.set_cursor(position)
                self._moved_to = None
            self.restore_place()  # back from a sub-agent: where the user was
            self.recount()        # a search on: its count over the new view
            if not event.view.system_prompt:   # its #sys note, fitted once the view is painted
                painted = threading.Event()
                self.call_after_refresh(painted.set)
                self.run_job(note_job, self._layouts, self.session.conversations[event.key.conversation],
                             event.view, self._cache, painted, exclusive=False)
        self.recompute()  # the settings changed meanwhile: their run starts now

    @on(NoteReady)
    def _note_ready(self, event: NoteReady) -> None:
        pairs = self.query(PanePair)   # (none when it comes as the app closes)
        if event.conversation is self.conversation and pairs:
            pairs.first().set_head_note(event.counter, event.note, event.tokens)

    @on(ViewFailed)
    def _view_failed(self, event: ViewFailed) -> None:
        if self.state.finished(event.key, ok=False):
            self.notify(sanitize(event.error), title="cannot prepare", severity="error", markup=False)
        self.recompute()

    # -- chrome -----------------------------------------------------------------

    def _request_label(self) -> str:
        return request_label(self.settings.request, self.view.requests if self.view else ())

    def _refresh_chrome(self) -> None:
        if not self.is_mounted:
            return
        view = self.view
        conv = self.conversation
        if conv is not None and self.session is not None:
            self.query_one(HeaderBar).show_conversation(self._path_label(), self.session, self.state.conversation,
                                                        view)
            self.pair.set_titles(f"stored messages · {len(conv.messages):,}",
                                 prepared_title(view, self.settings, self._request_label()))
        self.query_one(Meters).show(view)
        if self.session is None and self._read_count:  # (the file still being read: StoredPiece)
            self.query_one(StatusBar).update(Text(f"reading {make_visible(self._path_label())}… "
                                                  f"{self._read_count:,} messages so far", end=""))
            return
        layout, request = self.row_layout, self._request_label()
        self.query_one(StatusBar).show(StatusParts(
            self.settings, (view.tokens_stored, view.tokens_prepared) if view is not None else None, request=request,
            linked=self.linked, cursor=self.cursor, rows=len(layout) if layout else 0,
            busy=self.state.busy or self.state.search.running, search=self.search_term,
            search_count=self.state.search.count_label(self.cursor, layout),
            trace=self.trace.mark(conv, self.settings.request) if self.trace is not None and conv is not None else None,
            context=(view.context.tokens, view.context.basis) if view is not None else None,
            history=self._history_note()))
        self.query_one(ControlsPanel).sync(self.settings, request)

    # -- settings ----------------------------------------------------------------

    def _changed(self, changed: bool, bell: bool = False) -> None:
        """After a settings decision: recompute if it changed anything, else ring when asked."""
        if changed:
            self.recompute()
        elif bell:
            self.bell()

    def update_settings(self, **changes: Any) -> None:
        try:
            self._changed(self.state.change(**changes))
        except ValueError as exc:
            self.notify(sanitize(one_line(exc)), title="cannot apply", severity="error", markup=False)

    @on(ControlsPanel.Changed)
    def _controls_changed(self, event: ControlsPanel.Changed) -> None:
        self.update_settings(**event.changes)

    def action_keep_recent(self, delta: int) -> None:
        changed = self.state.keep_recent(delta)
        note = keep_recent_note(self.settings)
        if changed and note:  # the step was taken, and leaves every figure as it was: say why
            self.notify(note, title="keep_recent", markup=False)
        self._changed(changed)

    def action_next_tiers(self) -> None:
        self._changed(self.state.next_tiers())

    def action_toggle_compression(self) -> None:
        self._changed(self.state.toggle_compression())

    def action_edit_tiers(self) -> None:
        def done(value: str | None) -> None:
            if value:
                self._changed(self.state.edit_tiers(value))

        self.push_screen(TierEditor(editable_tiers(self.settings.tiers), tier_lines), done)

    def action_settings(self, focus: str = "keep_recent") -> None:
        """The settings dialog (screens/settings.py): every setting, at any width."""
        def done(changes: dict[str, Any] | None) -> None:
            if changes:
                self.update_settings(**changes)

        self.push_screen(SettingsDialog(self.settings, focus), done)

    def action_request(self, direction: int) -> None:
        moved = self.state.step_request(direction, self.view.requests if self.view else ())
        if not moved and direction < 0 and self.tail_only:
            self._still_loading("no earlier request read yet")
        self._changed(moved, bell=not self.tail_only)

    def _still_loading(self, what: str) -> None:
        """Say that the history before the last compaction is still being read (tail first), or
        could not be read."""
        if self.history_failed is not None:
            self.notify(f"{what}: the history before the last compaction could not be read", markup=False,
                        timeout=3)
            return
        self.notify(f"{what}: the history before the last compaction is still loading", markup=False, timeout=3)

    def _history_note(self) -> str:
        """The status bar's word on the whole file read after its tail: how much of it is read."""
        if not self.tail_only:
            return ""
        if self.history_failed is not None:
            return "history not read"
        percent = self._meter.percent()
        return "history…" if percent is None else f"history {percent}%"

    def action_switch_conversation(self) -> None:
        if self.session is None or len(self.session.conversations) < 2:
            self.notify("this session holds one conversation", markup=False)
            return
        names = [(conversation_title(c), len(c.messages)) for c in self.session.conversations]

        def done(index: int | None) -> None:
            if index is not None:
                self.select_conversation(index)

        self.push_screen(ConversationPicker(names, self.state.conversation), done)

    def select_conversation(self, index: int) -> None:
        if self.state.select_conversation(index):
            self.show_conversation()

    def show_conversation(self) -> None:
        """Another conversation is wanted (`a`, a sub-agent, back): its view computes, from the top."""
        self.view = None
        self.pair.reset()
        self.recompute()

    def action_toggle_link(self) -> None:
        self.pair.toggle_link()

    def set_cursor(self, row: int, scroll: bool = True) -> None:
        self.pair.set_cursor(row, scroll)

    def action_next_reminder(self) -> None:
        self.pair.jump_to_next("reminder")

    def action_next_changed(self) -> None:
        self.pair.jump_to_next("changed")

    # -- help / palette ---------------------------------------------------------------

    def live_bindings(self) -> list[tuple[Any, Binding, list[str]]]:
        """The app's and the panes' bindings as they are now (keys.live_bindings)."""
        pair = self.pair
        own = [b for b in self.BINDINGS
               if (self.browsing or self.state.trail or b.id != "ctxview.back")  # (Escape: from a sub-agent, or the browser)
               and (self.trace is not None or b.id != "ctxview.trace")]          # (T: with --trace)
        return live_bindings(self, ((pair, PanePair.BINDINGS), (pair.stored, MessagePane.BINDINGS), (self, own)))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(help_rows(self.live_bindings()), self.stored_pane.styles_for_render))

    # -- focus ---------------------------------------------------------------------------

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, MessagePane):
            self._last_pane = event.widget

    def action_focus_pane(self) -> None:
        """Escape: back to the pane focus came from (after Tab into the controls, say)."""
        pane = getattr(self, "_last_pane", None)
        pane = pane if pane is not None and pane.is_attached else self.stored_pane
        pane.screen.set_focus(pane)  # (at once, not deferred as focus() is: an action may follow)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer shows the keys that work where focus is. Escape: back to the panes from anywhere
        # else, and from a pane out of a sub-agent or back to the sessions (when opened from the browser). Not the letter
        # keys while a text box takes them as typed characters. Under a dialog (it has keys of its
        # own) nothing changes.
        can_go_back = self.browsing or bool(self.state.trail)  # (out of a sub-agent, or to the browser)
        if len(self.screen_stack) > 1:
            return action != "focus_pane" and (action != "back" or can_go_back)
        on_pane = isinstance(self.focused, MessagePane)
        if action == "back":
            return can_go_back and on_pane
        if action == "focus_pane":
            return not on_pane
        focused = self.focused
        if isinstance(focused, Input) and action in typed_actions(self, self.BINDINGS):
            return False
        return True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        return palette_commands(self, self.live_bindings(), super().get_system_commands(screen))

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(0)

    def action_back(self) -> None:
        """Escape: out of a sub-agent's conversation (navigation.py), else back to the browser."""
        if self.back_to_parent():
            return
        if self.browsing:
            self.went_back = True
            self.exit(0)

