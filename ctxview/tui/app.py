"""The inspector: stored messages beside the messages prepared for the model.

Loading and every recompute run in thread workers. Each recompute carries a
generation number; a result whose generation is not the latest is dropped,
so fast key presses never paint a stale view. The same PipelineCache is
passed to every recompute, so a change redoes only what it touches.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from ..gcpause import paused_gc
from ..model import Conversation, Session
from ..sanitize import make_visible, sanitize
from ..view import ClearSettings, PreparedView, Settings, row_columns
from .controls import ControlsPanel
from .keys import APP_BINDINGS, KEYS, key_list
from .layout import Layout, display_text, stored_heights_of
from .pane import MessagePane
from .render import block_lines, header_line
from .screens import (
    BloatScreen,
    ConversationPicker,
    DetailScreen,
    HelpScreen,
    TierEditor,
    WriteScreen,
    bloat_text,
)
from .widgets import HeaderBar, Line, Meters, StatusBar, status_text

__all__ = ["CtxviewApp", "run_app"]

# A message this big opens in the detail view instead of expanding in place.
HUGE_CHARS = 100_000
HUGE_LINES = 1_500
# Runs of at least this many removed messages fold into one line on each side.
FOLD_MIN = 2


def _messages_match(stored, prepared, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` is in either message's text or tool calls (None: no message)."""
    search = pattern.search
    for message in (stored, prepared):
        if message is None:
            continue
        if search(message.text):  # raw text: no copy of a 100k-message session per search
            return True
        for call in message.tool_calls:
            if search(call.name) or search(str(dict(call.arguments))):
                return True
    return False

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
        self.settings = settings or Settings()
        # What the user gave on the command line; None: the fields of
        # `settings` that differ from the defaults count as given.
        self.overrides = overrides
        self.agent = agent
        self.fmt = fmt
        self.lenient = lenient
        self.session: Session | None = session
        self.conversation_index = 0
        self.view: PreparedView | None = None
        self.row_layout: Layout | None = None
        self.generation = 0
        self.applied_generation = 0
        self.cursor = 0
        self.expanded_rows: set[int] = set()
        self.unfolded_runs: set[int] = set()   # removed runs the user unfolded (first rows)
        self.search_term = ""
        self.linked = True
        self.error: str | None = None      # set when loading failed before the app was usable
        self.last_written: str | None = None
        self._cache: Any = None            # PipelineCache, created with the first recompute
        self._compute_lock = threading.Lock()
        self._syncing_scroll = False
        self._searching = False
        self._stored_heights: tuple[Conversation, list[int]] | None = None

    # -- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from ..compression import PRESETS

        yield HeaderBar(id="header")
        yield Meters(id="meters")
        with Horizontal(id="body"):
            with Vertical(id="panes"):
                with Horizontal(id="titles"):
                    yield Line(Text("stored messages", Style(bold=True)), id="title-stored", classes="pane-title")
                    yield Line(Text("prepared for the model", Style(bold=True)), id="title-prepared",
                               classes="pane-title")
                with Horizontal(id="pane-row"):
                    yield MessagePane("stored", id="stored")
                    yield MessagePane("prepared", id="prepared")
            yield ControlsPanel(list(PRESETS), self.settings, id="controls")
        yield Input(id="search", placeholder="search both panes (Enter to find, Esc to close)")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def stored_pane(self) -> MessagePane:
        return self.query_one("#stored", MessagePane)

    @property
    def prepared_pane(self) -> MessagePane:
        return self.query_one("#prepared", MessagePane)

    @property
    def panes(self) -> tuple[MessagePane, MessagePane]:
        return self.stored_pane, self.prepared_pane

    @property
    def conversation(self) -> Conversation | None:
        if self.session is None or not self.session.conversations:
            return None
        return self.session.conversations[self.conversation_index]

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self.query_one("#body").loading = True
        self.query_one(StatusBar).update(Text(f"loading {make_visible(self._path_label())}…", end=""))
        stored, prepared = self.panes
        self.watch(stored, "scroll_y", lambda y: self._link_scroll(stored, prepared, y), init=False)
        self.watch(prepared, "scroll_y", lambda y: self._link_scroll(prepared, stored, y), init=False)
        stored.focus()
        self._load()

    def _path_label(self) -> str:
        if self.path is None:
            return "demo session (bundled)"
        return self.path

    # -- loading ----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", description="load")  # no repr of 100k-message args
    def _load(self) -> None:
        try:
            # The collector stays paused from loading to the first view: building
            # 100k rows allocates in bursts that would set off collections, and the
            # values are acyclic. Whatever was allocated meanwhile sits in the
            # youngest generation, so it is frozen before the collector resumes,
            # or its first pass would walk all of it (~0.2 s at 100k messages).
            with paused_gc():
                loaded = self._load_view()
                gc.freeze()  # the session and views live as long as the app: out of every GC pass
        except Exception as exc:  # noqa: BLE001 - any failure becomes one line, never a traceback
            self.call_from_thread(self._load_failed, exc)
            return
        self.call_from_thread(self._apply, *loaded)

    def _load_view(self) -> tuple[int, PreparedView, Layout]:
        """Load the session, show its stored side, and compute the first view."""
        from ..pipeline import PipelineCache

        self._cache = PipelineCache()
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
        self.settings = settings = self._opening_settings(conversation)
        stored_heights = self._stored_heights_for(conversation)
        # Show the stored side now; the prepared side follows when the
        # first pipeline run is done (the slowest part of opening).
        pending = Layout.pending(conversation.messages, settings, stored_heights)
        generation = self.call_from_thread(self._show_stored, session, index, pending)
        view = self._prepare(conversation, settings)
        assert view is not None
        return generation, view, Layout.build(view, stored_heights=stored_heights)

    def _opening_settings(self, conversation: Conversation) -> Settings:
        """Settings saved with the conversation, overridden by what was given,
        as `ctxview report` does."""
        from ..report import settings_for

        if self.overrides is not None:
            return settings_for(conversation, self.overrides)
        defaults = Settings()
        given = {
            f.name: getattr(self.settings, f.name)
            for f in dataclasses.fields(Settings)
            if getattr(self.settings, f.name) != getattr(defaults, f.name)
        }
        return settings_for(conversation, given)

    def _load_failed(self, exc: Exception) -> None:
        self.error = _one_line(exc)
        self.exit(1, return_code=1)

    def _show_stored(self, session: Session, index: int, pending: Layout) -> int:
        """The session is loaded: show the stored side while the pipeline runs.

        Returns the generation the first view will carry (a key pressed in
        the meantime starts a newer one, and that one wins)."""
        self.session = session
        self.conversation_index = index
        self.generation += 1
        self.row_layout = pending
        for pane in self.panes:
            pane.cursor = self.cursor
            pane.set_layout(pending, 0)
        self.query_one("#body").loading = False
        self._refresh_chrome()
        if session.warnings or session.skipped:
            note = f"{session.skipped:,} lines skipped" if session.skipped else ""
            if session.warnings:
                note = (note + "; " if note else "") + make_visible(str(session.warnings[0]))
            self.notify(sanitize(note), title="loaded with warnings", severity="warning", markup=False)
        return self.generation

    # -- recompute --------------------------------------------------------------

    def _prepare(self, conversation: Conversation, settings: Settings,
                 generation: int | None = None) -> PreparedView | None:
        """One pipeline run at a time on the shared cache; None if `generation`
        went stale while waiting for the one before."""
        from ..pipeline import prepare

        with self._compute_lock:
            if generation is not None and generation != self.generation:
                return None
            return prepare(conversation, settings, cache=self._cache)

    def recompute(self) -> None:
        """Start a recompute with the current settings; the newest one wins."""
        conversation = self.conversation
        if conversation is None:
            return
        self.generation += 1
        self._refresh_chrome()
        self._compute(self.generation, conversation, self.settings)

    @work(thread=True, exclusive=True, group="compute", description="compute")  # no repr of 100k-message args
    def _compute(self, generation: int, conversation: Conversation, settings: Settings) -> None:
        if generation != self.generation:
            return
        try:
            # As in _load: the collector's first pass after a full pipeline run
            # would walk everything the run allocated (~0.1 s at 100k messages).
            with paused_gc():
                try:
                    view = self._prepare(conversation, settings, generation)
                    if view is None or generation != self.generation:
                        return
                    layout = Layout.build(view, self.row_layout, self._stored_heights_for(conversation))
                finally:
                    gc.freeze()
        except Exception as exc:  # noqa: BLE001 - shown on screen, never a traceback
            self.call_from_thread(self._compute_failed, generation, exc)
            return
        self.call_from_thread(self._apply, generation, view, layout)

    def _stored_heights_for(self, conversation: Conversation) -> list[int]:
        cached = self._stored_heights
        if cached is None or cached[0] is not conversation:
            cached = self._stored_heights = (conversation, stored_heights_of(conversation.messages))
        return cached[1]

    def _compute_failed(self, generation: int, exc: Exception) -> None:
        if generation == self.generation:
            self.applied_generation = generation
            self._refresh_chrome()
        self.notify(sanitize(_one_line(exc)), title="cannot prepare", severity="error", markup=False)

    def _apply(self, generation: int, view: PreparedView, layout: Layout) -> None:
        if generation != self.generation:
            return  # a newer recompute is on its way
        self.view = view
        self.row_layout = layout
        self.applied_generation = generation
        # The session and views are millions of long-lived, acyclic objects:
        # keep them out of the cyclic GC's full passes (seconds at 100k messages).
        gc.freeze()
        if self.cursor >= len(layout):
            self.cursor = max(len(layout) - 1, 0)
        self.expanded_rows = {r for r in self.expanded_rows if r < len(layout)}
        self._reflow()
        for pane in self.panes:
            pane.cursor = self.cursor
            pane.set_layout(layout, generation)
        self._refresh_chrome()

    def _reflow(self) -> None:
        """Apply folds and expanded rows to the current layout."""
        layout = self.row_layout
        if layout is None:
            return
        stored, prepared = self.panes
        layout.fold_runs(FOLD_MIN, self.unfolded_runs)
        layout.expanded = {row: self._expanded_height(row, stored, prepared) for row in self.expanded_rows}
        layout.reflow()
        if len(layout) and not layout.visible(self.cursor):
            self.cursor = layout.fold_of(self.cursor) or 0

    def _expanded_height(self, row: int, stored: MessagePane, prepared: MessagePane) -> int:
        assert self.row_layout is not None
        r = self.row_layout.view.rows[row]
        heights = []
        for pane in (stored, prepared):
            heights.append(len(block_lines(r, pane.side, pane.styles_for_render, pane.text_width, True,
                                           self.row_layout.runs.get(row), row, console=self.console)))
        return max(heights)

    # -- chrome -----------------------------------------------------------------

    def _request_label(self) -> str:
        req = self.settings.request
        if req is None:
            return "next"
        requests = self.view.requests if self.view else ()
        if req in requests:
            return f"{requests.index(req) + 1}/{len(requests)} (#{req})"
        return f"#{req}"

    def _refresh_chrome(self) -> None:
        if not self.is_mounted:
            return
        view = self.view
        conv = self.conversation
        if conv is not None and self.session is not None:
            position = ""
            if len(self.session.conversations) > 1:
                position = f"({self.conversation_index + 1}/{len(self.session.conversations)}, a switches)"
            window = view.context_window if view is not None else conv.context_window
            self.query_one(HeaderBar).show(self._path_label(), self.session.format, conv.name, conv.model,
                                           window, position)
            self.query_one("#title-stored", Line).update(
                Text(f"stored messages · {len(conv.messages):,}", Style(bold=True), end=""))
            if view is not None:
                self.query_one("#title-prepared", Line).update(
                    Text(f"prepared for the model · {len(view.prepared):,} (request {self._request_label()})",
                         Style(bold=True), end=""))
        self.query_one(Meters).show(view)
        self.query_one(StatusBar).update(
            status_text(
                self.settings.keep_recent,
                self._tiers_label(),
                view,
                request=self._request_label(),
                linked=self.linked,
                cursor=self.cursor,
                rows=len(self.row_layout) if self.row_layout else 0,
                busy=self.generation != self.applied_generation or self._searching,
                search=self.search_term,
            )
        )
        self.query_one(ControlsPanel).sync(self.settings, self._request_label())

    def _tiers_label(self) -> str:
        tiers = self.settings.tiers
        from ..compression import PRESETS

        if tiers in PRESETS:
            return tiers if self.settings.compression else f"{tiers} (off)"
        return f"custom {tiers}" if self.settings.compression else f"custom {tiers} (off)"

    # -- settings ----------------------------------------------------------------

    def update_settings(self, **changes: Any) -> None:
        if "clear" in changes and isinstance(changes["clear"], bool):
            changes["clear"] = ClearSettings() if changes["clear"] else None
        new = dataclasses.replace(self.settings, **changes)
        if new == self.settings:
            return
        self.settings = new
        self.recompute()

    @on(ControlsPanel.Changed)
    def _controls_changed(self, event: ControlsPanel.Changed) -> None:
        self.update_settings(**event.changes)

    def action_keep_recent(self, delta: int) -> None:
        self.update_settings(keep_recent=max(self.settings.keep_recent + delta, 0))

    def action_next_tiers(self) -> None:
        from ..compression import PRESETS

        names = list(PRESETS)
        current = self.settings.tiers
        nxt = names[(names.index(current) + 1) % len(names)] if current in names else names[0]
        self.update_settings(tiers=nxt)

    def action_toggle_compression(self) -> None:
        self.update_settings(compression=not self.settings.compression)

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
                from ..compression import PRESETS

                key = value.strip().lower()
                self.update_settings(tiers=key if key in PRESETS else value)

        self.push_screen(TierEditor(spec, check), done)

    def action_request(self, direction: int) -> None:
        requests = self.view.requests if self.view else ()
        current = self.settings.request
        if not requests:
            self.bell()
            return
        if direction < 0:
            if current is None:
                target: int | None = requests[-1]
            else:
                i = requests.index(current) if current in requests else len(requests)
                if i == 0:
                    self.bell()
                    return
                target = requests[i - 1]
        else:
            if current is None:
                self.bell()
                return
            i = requests.index(current) if current in requests else len(requests) - 1
            target = requests[i + 1] if i + 1 < len(requests) else None
        self.update_settings(request=target)

    def action_switch_conversation(self) -> None:
        if self.session is None or len(self.session.conversations) < 2:
            self.notify("this session holds one conversation", markup=False)
            return
        names = [(c.name, len(c.messages)) for c in self.session.conversations]

        def done(index: int | None) -> None:
            if index is not None and index != self.conversation_index:
                self.select_conversation(index)

        self.push_screen(ConversationPicker(names, self.conversation_index), done)

    def select_conversation(self, index: int) -> None:
        self.conversation_index = index
        self.cursor = 0
        self.expanded_rows.clear()
        self.unfolded_runs.clear()
        self.settings = dataclasses.replace(self.settings, request=None)
        self.view = None
        for pane in self.panes:
            pane.scroll_to(y=0, animate=False)
        self.recompute()

    def action_toggle_link(self) -> None:
        self.linked = not self.linked
        if self.linked:
            stored, prepared = self.panes
            prepared.scroll_to(y=stored.scroll_y, animate=False, immediate=True)
        self._refresh_chrome()

    def _link_scroll(self, source: MessagePane, other: MessagePane, y: float) -> None:
        if not self.linked or self._syncing_scroll or other.scroll_y == y:
            return
        self._syncing_scroll = True
        try:
            other.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._syncing_scroll = False

    # -- cursor -----------------------------------------------------------------

    def set_cursor(self, row: int, scroll: bool = True) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row = min(max(row, 0), len(layout) - 1)
        if not layout.visible(row):
            row = layout.fold_of(row) or 0
        self.cursor = row
        for pane in self.panes:
            pane.set_cursor(row)
        if scroll:
            self._scroll_to_row(row)
        self._refresh_chrome()

    def _scroll_to_row(self, row: int) -> None:
        layout = self.row_layout
        assert layout is not None
        top = layout.row_top(row)
        height = layout.heights[row]
        targets = self.panes if self.linked else (self._focused_pane(),)
        for pane in targets:
            viewport = pane.scrollable_content_region.height or 1
            y = pane.scroll_y
            if top < y:
                y = top
            elif top + min(height, viewport) > y + viewport:
                y = top + min(height, viewport) - viewport
            if y != pane.scroll_y:
                pane.scroll_to(y=y, animate=False, immediate=True)

    def _focused_pane(self) -> MessagePane:
        focused = self.focused
        return focused if isinstance(focused, MessagePane) else self.stored_pane

    @on(MessagePane.Resized)
    def _pane_resized(self, event: MessagePane.Resized) -> None:
        if self.expanded_rows and self.row_layout is not None:
            self._reflow()
            for pane in self.panes:
                pane.invalidate()

    @on(MessagePane.RowClicked)
    def _row_clicked(self, event: MessagePane.RowClicked) -> None:
        self.set_cursor(event.row, scroll=False)

    def action_cursor(self, delta: int) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row, step = self.cursor, (1 if delta > 0 else -1)
        for _ in range(abs(delta)):
            nxt = row + step
            while 0 <= nxt < len(layout) and not layout.visible(nxt):
                nxt += step  # over the hidden rows of a folded run
            if not 0 <= nxt < len(layout):
                break
            row = nxt
        self.set_cursor(row)

    def action_cursor_to(self, where: str) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self.set_cursor(0 if where == "first" else len(layout) - 1)
        if where == "last":
            for pane in self.panes:
                pane.scroll_end(animate=False, immediate=True)

    def _find_row(self, predicate, direction: int = 1) -> int | None:
        """The next visible row after the cursor (wrapping) whose position satisfies predicate."""
        layout = self.row_layout
        if layout is None or not len(layout):
            return None
        heights = layout.heights
        n = len(heights)
        for step in range(1, n + 1):
            i = (self.cursor + direction * step) % n
            if heights[i] and predicate(i):
                return i
        return None

    def _jump(self, row: int | None, what: str) -> None:
        if row is None:
            self.notify(f"no {what}", markup=False)
            self.bell()
        else:
            self.set_cursor(row)

    def action_next_reminder(self) -> None:
        rows = self.row_layout.view.rows if self.row_layout is not None else ()

        def has_reminders(i: int) -> bool:
            r = rows[i]
            return bool(r.stored_reminders or r.prepared_reminders or r.ephemeral_spans)

        self._jump(self._find_row(has_reminders), "system reminders")

    def action_next_changed(self) -> None:
        # a row changed exactly when its prepared message is not its stored one: read from the
        # columns, so the rows passed over are not made
        _, stored, prepared = row_columns(self.row_layout.view.rows) if self.row_layout is not None else ((), (), ())
        self._jump(self._find_row(lambda i: prepared[i] is not stored[i]), "changed messages")

    # -- expand / detail -------------------------------------------------------------

    def action_expand(self) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        row = self.cursor
        if row in layout.folded:
            self.action_fold()
            return
        r = layout.view.rows[row]
        sizes = [display_text(m) for m in (r.stored, r.prepared) if m is not None]
        if row not in self.expanded_rows and any(
            len(t) > HUGE_CHARS or t.count("\n") > HUGE_LINES for t in sizes
        ):
            self.action_detail()
            return
        if row in self.expanded_rows:
            self.expanded_rows.discard(row)
        else:
            self.expanded_rows.add(row)
        self._reflow()
        for pane in self.panes:
            pane.invalidate()
        self._scroll_to_row(row)

    def action_fold(self) -> None:
        """Fold or unfold the run of removed messages under the cursor."""
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        run = layout.runs.get(self.cursor)
        if run is None or run[1] < FOLD_MIN:
            self.bell()
            return
        start = run[0]
        if start in layout.folded:
            self.unfolded_runs.add(start)
        else:
            self.unfolded_runs.discard(start)
        self._reflow()
        for pane in self.panes:
            pane.invalidate()
        self.set_cursor(start)

    def action_detail(self) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        r = layout.view.rows[self.cursor]
        sides: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
        if r.stored is not None:
            sides["stored"] = (r.stored.text, [(s, e, "reminder") for s, e in r.stored_reminders])
        if r.prepared is not None:
            spans = [(s, e, "reminder") for s, e in r.prepared_reminders]
            spans += [(s, e, "ephemeral") for s, e in r.ephemeral_spans]
            sides["prepared"] = (r.prepared.text, spans)
        side = "prepared" if isinstance(self.focused, MessagePane) and self.focused.side == "prepared" else "stored"
        pane = self.stored_pane
        title = header_line(r, "stored" if r.stored is not None else "prepared", pane.styles_for_render)
        self.push_screen(DetailScreen(title, sides, side))

    # -- search -------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.value = self.search_term
        box.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.search_term = event.value
        self._close_search()
        for pane in self.panes:
            pane.set_search(self.search_term)
        if self.search_term:
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

    def search_matches(self, row, pattern: re.Pattern[str] | None = None) -> bool:
        """Whether the term is in either side's text or tool calls (case-insensitive)."""
        if pattern is None:
            pattern = re.compile(re.escape(self.search_term), re.IGNORECASE)
        return _messages_match(row.stored, row.prepared, pattern)

    def action_search_next(self, direction: int, include_current: bool = False) -> None:
        if not self.search_term:
            self.action_search()
            return
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self._searching = True
        self._refresh_chrome()
        self._search(layout, self.search_term, direction, self.cursor, include_current)

    @work(thread=True, exclusive=True, group="search", description="search")
    def _search(self, layout: Layout, term: str, direction: int, start: int, include_current: bool) -> None:
        """Scan for the next matching row off the UI thread (a miss reads every message)."""
        worker = get_current_worker()
        pattern = re.compile(re.escape(term), re.IGNORECASE)
        # the rows' messages, not the rows: a changed row is made only when shown
        _, stored, prepared = row_columns(layout.view.rows)
        heights = layout.heights
        n = len(heights)
        first = 0 if include_current else 1
        for step in range(first, n + 1):
            if worker.is_cancelled:
                return
            i = (start + direction * step) % n
            if heights[i] and _messages_match(stored[i], prepared[i], pattern):
                self.call_from_thread(self._search_done, layout, term, i)
                return
        self.call_from_thread(self._search_done, layout, term, None)

    def _search_done(self, layout: Layout, term: str, row: int | None) -> None:
        self._searching = False
        if layout is not self.row_layout or term != self.search_term:
            self._refresh_chrome()
            return  # the view or the term changed meanwhile
        self._jump(row, f"match for {term!r}")
        self._refresh_chrome()

    # -- reports and export ---------------------------------------------------------

    def action_bloat(self) -> None:
        conv = self.conversation
        if conv is None:
            return
        self._bloat(conv, self.settings)

    @work(thread=True, exclusive=True, group="bloat", description="bloat")  # no repr of 100k-message args
    def _bloat(self, conversation: Conversation, settings: Settings) -> None:
        try:
            from ..bloat import analyze_context_bloat

            view = self.view
            report = analyze_context_bloat(
                conversation.messages,
                context_window=view.context_window if view is not None else conversation.context_window,
                counter=self._cache.counter(conversation, settings.counter),
                ephemeral=conversation.ephemeral if settings.embed_ephemeral else None,
                system_prompt=conversation.system_prompt,
                keep_recent=settings.keep_recent,
            )
            text = bloat_text(report, conversation.name)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, sanitize(_one_line(exc)), title="bloat report",
                                  severity="error", markup=False)
            return
        self.call_from_thread(self.push_screen, BloatScreen(text))

    def action_write(self) -> None:
        if self.view is None:
            return
        if self.path is None:
            stem = "demo"
        elif self.path.startswith("<"):
            stem = "session"  # <stdin>
        else:
            stem = Path(self.path).name.split(".")[0] or "session"
        self.push_screen(WriteScreen(f"{stem}.prepared.json"), self._write_to)

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

    @work(thread=True, exclusive=True, group="write", description="write")  # no repr of 100k-message args
    def _write(self, target: str, shape: str, view: PreparedView, model: str | None) -> None:
        try:
            from ..export import dumps, to_shape, write_atomic

            write_atomic(target, dumps(to_shape(view, shape, model)))
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, sanitize(_one_line(exc)), title="write failed",
                                  severity="error", markup=False)
            return
        self.last_written = target
        self.call_from_thread(
            self.notify, sanitize(f"wrote {len(view.prepared):,} prepared messages ({shape}) to {target}"),
            markup=False)

    # -- help / palette ---------------------------------------------------------------

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(key_list(), self.stored_pane.styles_for_render))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for b in KEYS:
            action = b.action
            yield SystemCommand(b.description, f"key {b.key_display or b.key}",
                                lambda action=action: self.run_action(action))

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
