"""The inspector: stored messages beside the messages prepared for the model.

The app composes the widgets, turns keys into calls on `InspectorState`
(state.py, which decides) and renders what comes back. Loading and every
pipeline run, search, bloat report and write run in thread workers that
post a typed message (messages.py) when done; the handlers below apply it.
At most one pipeline run is in flight, on one PipelineCache shared by all
of them, so a change redoes only what it touches; a result that is no
longer wanted is dropped and the newest settings run next. The workers run
on daemon threads (threads.py): `q` and ctrl+c quit at once, even while a
file loads.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import weakref
from pathlib import Path
from typing import Any, Iterable, Mapping

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from ..gcpause import paused_gc
from ..model import Conversation, Session
from ..sanitize import make_visible, safe_file_name, sanitize
from ..view import PreparedView, Settings, row_columns
from .controls import ControlsPanel
from .keys import APP_BINDINGS, help_rows, live_bindings
from .layout import Layout, stored_heights_of
from .messages import BloatReady, OpeningFailed, SearchDone, SessionLoaded, ViewFailed, ViewReady, WorkFailed, Written
from .pane import MessagePane
from .pane_pair import PanePair
from .screens import BloatScreen, ConversationPicker, HelpScreen, TierEditor, WriteScreen, bloat_text
from .state import (InspectorState, ViewKey, find_match, messages_match, next_row, opening_settings, request_label,
                    term_pattern, tiers_label)
from .threads import DaemonThreads
from .widgets import HeaderBar, Meters, StatusBar, status_text, view_name

__all__ = ["CtxviewApp", "run_app"]


class LoadFailed(Exception):
    """Loading or the first recompute failed before the app was usable."""


class CtxviewApp(App[int]):
    """Side-by-side stored/prepared inspector."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "ctxview"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = APP_BINDINGS

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
    ) -> None:
        super().__init__()
        self.path = path
        self.given = settings or Settings()
        # What the user gave on the command line; None: the fields of
        # `settings` that differ from the defaults count as given.
        self.overrides = overrides
        self.agent = agent
        self.fmt = fmt
        self.lenient = lenient
        self.session: Session | None = session
        self.state = InspectorState(self.given)
        self.view: PreparedView | None = None
        self.error: str | None = None      # set when loading failed before the app was usable
        self.last_written: str | None = None
        self._cache: Any = None            # PipelineCache, made by the load worker (SessionLoaded brings it)
        self._stored_heights: tuple[Conversation, list[int]] | None = None

    # -- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from ..compression import PRESETS

        yield HeaderBar(id="header")
        yield Meters(id="meters")
        with Horizontal(id="body"):
            yield PanePair(id="panes", on_cursor_moved=self._refresh_chrome)
            yield ControlsPanel(list(PRESETS), self.settings, id="controls")
        yield Input(id="search", placeholder="search both panes (Enter to find, Esc to close)")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def pair(self) -> PanePair:
        return self.query_one(PanePair)

    @property
    def stored_pane(self) -> MessagePane:
        return self.pair.stored

    @property
    def prepared_pane(self) -> MessagePane:
        return self.pair.prepared

    @property
    def panes(self) -> tuple[MessagePane, MessagePane]:
        return self.pair.panes

    # What the state and the pane pair hold, by the names the app has always had.
    @property
    def settings(self) -> Settings:
        return self.state.settings

    @property
    def conversation_index(self) -> int:
        return self.state.conversation

    @property
    def search_term(self) -> str:
        return self.state.search.term

    @property
    def row_layout(self) -> Layout | None:
        return self.pair.row_layout

    @property
    def cursor(self) -> int:
        return self.pair.cursor

    @property
    def linked(self) -> bool:
        return self.pair.linked

    @property
    def expanded_rows(self) -> set[int]:
        return self.pair.expanded_rows

    @property
    def busy(self) -> bool:
        """Whether the view on screen is not yet the one asked for (loading included)."""
        return self.view is None or self.state.busy

    @property
    def conversation(self) -> Conversation | None:
        if self.session is None or not self.session.conversations:
            return None
        return self.session.conversations[self.state.conversation]

    def on_mount(self) -> None:
        # Quitting must not wait for a thread worker (a load can take long): see threads.py.
        asyncio.get_running_loop().set_default_executor(DaemonThreads())
        self.query_one("#search", Input).display = False
        self.query_one("#body").loading = True
        self.query_one(StatusBar).update(Text(f"loading {make_visible(self._path_label())}…", end=""))
        self.stored_pane.focus()
        self._load()

    def _path_label(self) -> str:
        if self.path is None:
            return "demo session (bundled)"
        return self.path

    # -- loading ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", description="load", exit_on_error=False)  # no repr of args
    def _load(self) -> None:
        try:
            # The collector stays paused from loading to the first view: building
            # 100k rows allocates in bursts that would set off collections, and the
            # values are acyclic. Whatever was allocated meanwhile sits in the
            # youngest generation, so it is frozen before the collector resumes,
            # or its first pass would walk all of it (~0.2 s at 100k messages).
            with paused_gc():
                self._load_view()
                gc.freeze()  # the session and views live as long as the app: out of every GC pass
        except Exception as exc:  # noqa: BLE001 - any failure becomes one line, never a traceback
            self.post_message(OpeningFailed(_one_line(exc)))

    def _load_view(self) -> None:
        """Load the session, post it (the stored side shows), compute and post the first view."""
        from ..pipeline import PipelineCache

        cache = PipelineCache()
        session = self.session
        if session is None:
            from ..formats import DEMO_PATH, load_session

            path = str(DEMO_PATH) if self.path is None else self.path
            session = load_session(path, format=self.fmt, lenient=self.lenient)
        if not session.conversations:
            raise LoadFailed(f"{self._path_label()}: no conversations in the file")
        index = 0
        if self.agent is not None:
            try:
                conv = session.conversation(self.agent)
            except KeyError as exc:
                raise LoadFailed(f"{self._path_label()}: {exc.args[0]}") from None
            index = session.conversations.index(conv)
        conversation = session.conversations[index]
        settings = opening_settings(conversation, self.given, self.overrides)
        stored_heights = self._stored_heights_for(conversation)
        # Show the stored side now; the prepared side follows when the
        # first pipeline run is done (the slowest part of opening).
        pending = Layout.pending(conversation.messages, settings, stored_heights)
        self.post_message(SessionLoaded(session, index, settings, pending, cache))
        view = self._prepare(conversation, settings, cache)
        self.post_message(ViewReady(ViewKey(index, settings), view, Layout.build(view, stored_heights=stored_heights)))

    @on(OpeningFailed)
    def _opening_failed(self, event: OpeningFailed) -> None:
        self.error = event.error
        self.exit(1, return_code=1)

    @on(SessionLoaded)
    def _session_loaded(self, event: SessionLoaded) -> None:
        self._cache = event.cache
        self._show_stored(event.session, event.conversation, event.settings, event.layout)

    def _show_stored(self, session: Session, index: int, settings: Settings, pending: Layout) -> None:
        """The session is loaded: show the stored side while the first view computes."""
        self.session = session
        self.state.opened(index, len(session.conversations), settings)
        self.pair.show(pending)
        self.query_one("#body").loading = False
        self._refresh_chrome()
        if session.warnings or session.skipped:
            note = f"{session.skipped:,} lines skipped" if session.skipped else ""
            if session.warnings:
                note = (note + "; " if note else "") + make_visible(str(session.warnings[0]))
            self.notify(sanitize(note), title="loaded with warnings", severity="warning", markup=False)

    # -- recompute --------------------------------------------------------------

    def _prepare(self, conversation: Conversation, settings: Settings, cache: Any) -> PreparedView:
        """One pipeline run on the shared cache (InspectorState keeps them one at a time)."""
        from ..pipeline import prepare

        return prepare(conversation, settings, cache=cache)

    def recompute(self) -> None:
        """Start the run for the newest settings, unless one is in flight (its end starts it)."""
        key = self.state.next_run()
        self._refresh_chrome()
        if key is not None and self.session is not None:
            conversation = self.session.conversations[key.conversation]
            layout = self.pair.row_layout
            self._compute(key, conversation, self._cache, weakref.ref(layout) if layout is not None else None)

    @work(thread=True, group="compute", description="compute", exit_on_error=False)  # no repr of args
    def _compute(self, key: ViewKey, conversation: Conversation, cache: Any,
                 previous: weakref.ref[Layout] | None) -> None:
        # `previous` (whose row heights the new layout reuses) is held weakly: a finished
        # Worker is cyclic garbage that the next gc.freeze() keeps for good, and with it
        # anything its arguments hold (a layout is ~3 MB at 100k messages).
        try:
            # As in _load: the collector's first pass after a full pipeline run
            # would walk everything the run allocated (~0.1 s at 100k messages).
            with paused_gc():
                try:
                    view = self._prepare(conversation, key.settings, cache)
                    layout = Layout.build(view, previous() if previous is not None else None,
                                          self._stored_heights_for(conversation))
                finally:
                    gc.freeze()
        except Exception as exc:  # noqa: BLE001 - shown on screen, never a traceback
            self.post_message(ViewFailed(key, _one_line(exc)))
            return
        self.post_message(ViewReady(key, view, layout))

    def _stored_heights_for(self, conversation: Conversation) -> list[int]:
        cached = self._stored_heights
        if cached is None or cached[0] is not conversation:
            cached = self._stored_heights = (conversation, stored_heights_of(conversation.messages))
        return cached[1]

    @on(ViewReady)
    def _view_ready(self, event: ViewReady) -> None:
        if self.state.finished(event.key):
            self.view = event.view
            # The session and views are millions of long-lived, acyclic objects:
            # keep them out of the cyclic GC's full passes (seconds at 100k messages).
            gc.freeze()
            self.pair.show(event.layout)
        self.recompute()  # the settings changed meanwhile: their run starts now

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
            position = ""
            if len(self.session.conversations) > 1:
                position = f"({self.state.conversation + 1}/{len(self.session.conversations)}, a switches)"
            window = view.context_window if view is not None else conv.context_window
            self.query_one(HeaderBar).show(self._path_label(), self.session.format, conv.name, conv.model,
                                           window, position)
            title = view_name(view.view_label if view is not None else self.settings.label())
            if view is not None:
                title.append(f" · {len(view.prepared):,} (request {self._request_label()})")
            self.pair.set_titles(f"stored messages · {len(conv.messages):,}", title)
        self.query_one(Meters).show(view)
        layout = self.row_layout
        self.query_one(StatusBar).update(
            status_text(
                self.settings.keep_recent,
                tiers_label(self.settings),
                view,
                request=self._request_label(),
                linked=self.linked,
                cursor=self.cursor,
                rows=len(layout) if layout else 0,
                busy=self.state.busy or self.state.search.running,
                search=self.search_term,
                what_if=self.settings.view == "what-if",
            )
        )
        self.query_one(ControlsPanel).sync(self.settings, self._request_label())

    @on(PanePair.CursorMoved)
    def _cursor_moved(self, event: PanePair.CursorMoved) -> None:
        self._refresh_chrome()

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
            self.notify(sanitize(_one_line(exc)), title="cannot apply", severity="error", markup=False)

    @on(ControlsPanel.Changed)
    def _controls_changed(self, event: ControlsPanel.Changed) -> None:
        self.update_settings(**event.changes)

    def action_keep_recent(self, delta: int) -> None:
        self._changed(self.state.keep_recent(delta))

    def action_next_tiers(self) -> None:
        self._changed(self.state.next_tiers())

    def action_toggle_compression(self) -> None:
        self._changed(self.state.toggle_compression())

    def action_edit_tiers(self) -> None:
        from ..compression import describe_tier, format_tiers, get_policy

        def check(spec: str) -> list[str]:
            policy = get_policy(spec)
            return [f"tier {i}: {describe_tier(policy, i)}" for i in range(len(policy.tiers))]

        try:
            spec = format_tiers(get_policy(self.settings.tiers))
        except ValueError:
            spec = self.settings.tiers

        def done(value: str | None) -> None:
            if value:
                self._changed(self.state.edit_tiers(value))

        self.push_screen(TierEditor(spec, check), done)

    def action_request(self, direction: int) -> None:
        self._changed(self.state.step_request(direction, self.view.requests if self.view else ()), bell=True)

    def action_switch_conversation(self) -> None:
        if self.session is None or len(self.session.conversations) < 2:
            self.notify("this session holds one conversation", markup=False)
            return
        names = [(c.name, len(c.messages)) for c in self.session.conversations]

        def done(index: int | None) -> None:
            if index is not None:
                self.select_conversation(index)

        self.push_screen(ConversationPicker(names, self.state.conversation), done)

    def select_conversation(self, index: int) -> None:
        if not self.state.select_conversation(index):
            return
        self.view = None
        self.pair.reset()
        self.recompute()

    def action_toggle_link(self) -> None:
        self.pair.toggle_link()

    def set_cursor(self, row: int, scroll: bool = True) -> None:
        self.pair.set_cursor(row, scroll)

    # -- jumps ------------------------------------------------------------------------

    def _jump(self, row: int | None, what: str) -> None:
        if row is None:
            self.notify(f"no {what}", markup=False)
            self.bell()
        else:
            self.pair.set_cursor(row)

    def _next_row(self, predicate) -> int | None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return None
        return next_row(layout.heights, self.cursor, predicate)

    def action_next_reminder(self) -> None:
        rows = self.row_layout.view.rows if self.row_layout is not None else ()

        def has_reminders(i: int) -> bool:
            r = rows[i]
            return bool(r.stored_reminders or r.prepared_reminders or r.ephemeral_spans)

        self._jump(self._next_row(has_reminders), "system reminders")

    def action_next_changed(self) -> None:
        # a row changed exactly when its prepared message is not its stored one: read from the
        # columns, so the rows passed over are not made
        _, stored, prepared = row_columns(self.row_layout.view.rows) if self.row_layout is not None else ((), (), ())
        self._jump(self._next_row(lambda i: prepared[i] is not stored[i]), "changed messages")

    # -- search -------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.value = self.search_term
        box.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close_search()
        found = self.state.search.submit(event.value)
        self.pair.set_search(self.search_term)
        if found:
            self.action_search_next(1, include_current=True)
        self._refresh_chrome()

    def _close_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = False
        self.stored_pane.focus()

    def on_key(self, event) -> None:
        if event.key == "escape":
            box = self.query_one("#search", Input)
            if box.display and box.has_focus:
                event.stop()
                self._close_search()

    def search_matches(self, row) -> bool:
        """Whether the search term is in either side of `row` (text or tool calls, any case)."""
        return messages_match(row.stored, row.prepared, term_pattern(self.search_term))

    def action_search_next(self, direction: int, include_current: bool = False) -> None:
        if not self.search_term:
            self.action_search()
            return
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self.state.search.step(direction)
        self._refresh_chrome()
        self._search(weakref.ref(layout), self.search_term, direction, self.cursor, include_current)

    @work(thread=True, exclusive=True, group="search", description="search", exit_on_error=False)
    def _search(self, scanned: weakref.ref[Layout], term: str, direction: int, start: int,
                include_current: bool) -> None:
        """Scan for the next matching row off the UI thread (a miss reads every message);
        a newer search cancels this one. (The layout is held weakly, as in _compute.)"""
        worker = get_current_worker()
        layout = scanned()
        if layout is None:
            return  # a newer view replaced it: the answer would be dropped
        # the rows' messages, not the rows: a changed row is made only when shown
        _, stored, prepared = row_columns(layout.view.rows)
        row = find_match(stored, prepared, layout.heights, term, start, direction, include_current,
                         cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(SearchDone(layout, term, row))

    @on(SearchDone)
    def _search_done(self, event: SearchDone) -> None:
        if self.state.search.done(event.term, event.row, same_view=event.layout is self.row_layout):
            self._jump(event.row, f"match for {event.term!r}")
        self._refresh_chrome()

    # -- reports and export ---------------------------------------------------------

    def action_bloat(self) -> None:
        conv = self.conversation
        if conv is None or self._cache is None:
            return
        window = self.view.context_window if self.view is not None else conv.context_window
        self._bloat(conv, self.settings, window, self._cache)

    @work(thread=True, exclusive=True, group="bloat", description="bloat", exit_on_error=False)  # no repr of args
    def _bloat(self, conversation: Conversation, settings: Settings, context_window: int | None,
               cache: Any) -> None:
        try:
            from ..bloat import analyze_context_bloat

            report = analyze_context_bloat(
                conversation.messages,
                context_window=context_window,
                counter=cache.counter(conversation, settings.counter),
                ephemeral=conversation.ephemeral if settings.embed_ephemeral else None,
                system_prompt=conversation.system_prompt,
                keep_recent=settings.keep_recent,
            )
            self.post_message(BloatReady(bloat_text(report, conversation.name)))
        except Exception as exc:  # noqa: BLE001
            self.post_message(WorkFailed("bloat report", _one_line(exc)))

    @on(BloatReady)
    def _bloat_ready(self, event: BloatReady) -> None:
        self.push_screen(BloatScreen(event.report))

    @on(WorkFailed)
    def _work_failed(self, event: WorkFailed) -> None:
        self.notify(sanitize(event.error), title=event.title, severity="error", markup=False)

    def action_write(self) -> None:
        if self.view is None:
            return
        if self.path is None:
            stem = "demo"
        elif self.path.startswith("<"):
            stem = "session"  # <stdin>
        else:
            stem = Path(self.path).name.split(".")[0] or "session"
        self.push_screen(WriteScreen(f"{safe_file_name(stem)}.prepared.json"), self._write_to)

    def _write_to(self, choice: tuple[str, str] | None) -> None:
        if not choice or self.view is None:
            return
        target, shape = choice
        if self.path is not None:
            try:
                if Path(target).resolve() == Path(self.path).resolve():
                    self.notify("refusing to overwrite the input file", severity="error", markup=False)
                    return
            except OSError:
                pass
        conv = self.conversation
        self._write(target, shape, self.view, conv.model if conv else None)

    @work(thread=True, exclusive=True, group="write", description="write", exit_on_error=False)  # no repr of args
    def _write(self, target: str, shape: str, view: PreparedView, model: str | None) -> None:
        try:
            from ..export import dumps, to_shape, write_atomic

            write_atomic(target, dumps(to_shape(view, shape, model)))
        except Exception as exc:  # noqa: BLE001
            self.post_message(WorkFailed("write failed", _one_line(exc)))
            return
        self.post_message(Written(target, shape, len(view.prepared)))

    @on(Written)
    def _written(self, event: Written) -> None:
        self.last_written = event.target
        self.notify(sanitize(f"wrote {event.count:,} prepared messages ({event.shape}) to {event.target}"),
                    markup=False)

    # -- help / palette ---------------------------------------------------------------

    def live_bindings(self) -> list[tuple[Any, Binding, list[str]]]:
        """The app's and the panes' bindings as they are now (keys.live_bindings)."""
        pair = self.pair
        return live_bindings(self, ((pair, PanePair.BINDINGS), (pair.stored, MessagePane.BINDINGS),
                                    (self, APP_BINDINGS)))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        rows = [("/".join(keys), b.tooltip or b.description) for _, b, keys in self.live_bindings()]
        self.push_screen(HelpScreen(help_rows(rows), self.stored_pane.styles_for_render))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        ours = self.live_bindings()
        titles = {b.description for _, b, _ in ours}
        for command in super().get_system_commands(screen):
            if command.title not in titles:  # Textual's own Quit is ours too: listed once
                yield command
        for node, b, keys in ours:
            yield SystemCommand(b.description, f"key {'/'.join(keys)}",
                                lambda action=b.action, node=node: self.run_action(action, node))

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(0)


def _one_line(exc: BaseException) -> str:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, (LoadFailed, ValueError, OSError)) and type(exc).__name__ != "LoadError":
        message = f"{type(exc).__name__}: {message}"
    return " ".join(message.split())


def _session_from_stdin(fmt: str | None, lenient: bool) -> Session:
    from ..formats import load_session

    session = load_session("-", format=fmt, lenient=lenient)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise LoadFailed("<stdin>: the inspector needs a terminal for its keys; "
                         "save the session to a file, or use 'ctxview report -'") from None
    os.dup2(tty, sys.__stdin__.fileno())
    os.close(tty)
    return session


def run_app(
    path: str | None,
    settings: Settings,
    agent: str | None = None,
    fmt: str | None = None,
    lenient: bool = False,
    overrides: Mapping[str, Any] | None = None,
) -> int:
    """Open the inspector; the exit status (1 with one line on stderr if opening failed).

    `overrides` (Settings field names) win over the settings saved in the
    file, even where they equal the defaults; without them, the fields of
    `settings` that differ from the defaults do."""
    session = None
    if path == "-":
        # The session comes on stdin, and Textual reads keys from stdin: read
        # the session first, then take the keyboard from the terminal.
        try:
            session = _session_from_stdin(fmt, lenient)
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback
            print(f"ctxview: error: {sanitize(_one_line(exc))}", file=sys.stderr)
            return 1
        path = "<stdin>"
    app = CtxviewApp(path, settings, agent=agent, fmt=fmt, lenient=lenient, session=session, overrides=overrides)
    result = app.run()
    if app.error is not None:
        print(f"ctxview: error: {sanitize(app.error)}", file=sys.stderr)
        return 1
    if app.return_code not in (None, 0):
        return int(app.return_code or 1)
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover - handy for trying the app
    raise SystemExit(run_app(sys.argv[1] if len(sys.argv) > 1 else None, Settings()))
