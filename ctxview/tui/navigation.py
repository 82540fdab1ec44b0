"""The inspector's moves and copies: go to message #N (`g`), a tool call to its result and back
(`%`), a Task call into its sub-agent's conversation (Enter) and back (Escape), the search (`/`,
`n`, `N`) and its count, and copying a message (`y`) or the request body (`Y`) to the clipboard.

`NavigationActions` is mixed into CtxviewApp: what to do is decided by pure functions of
state.py (goto_position, tool_partner, subagents_of, InspectorState.enter_subagent / back); this
turns keys into those calls and shows the result. The clipboard is the terminal's, through
Textual's `App.copy_to_clipboard` (OSC 52): the text goes base64-encoded, so nothing in it reaches
the terminal raw as it is copied; what is copied is made safe too (made_safe), since a paste into a
terminal would run a message's escape sequences.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxview.model import Message
from ctxview.sanitize import UNSAFE, make_visible, sanitize, utf8_text
from ctxview.engine.view import row_columns
from ctxview.tui.screens.dialogs import GotoScreen
from ctxview.tui.messages import Copied, SearchCounted, SearchDone
from ctxview.tui.screens.modals import ConversationPicker
from ctxview.tui.search_state import messages_match, term_pattern
from ctxview.tui.state import UNKNOWN_SCROLL, Place, conversation_title, goto_position, subagents_of, tool_partner
from ctxview.tui.widgets.basic import SearchBox
from ctxview.tui.workers import copy_body_job

if TYPE_CHECKING:  # (the app this is mixed into)
    from ctxview.tui.app import CtxviewApp

__all__ = ["NavigationActions", "clipboard_text", "copy_of", "made_safe", "row_name"]


class _Either(Sequence):
    """Each position's stored message, or its prepared one where the pipeline inserted it."""

    __slots__ = ("stored", "prepared")

    def __init__(self, stored: Sequence[Message | None], prepared: Sequence[Message | None]) -> None:
        self.stored, self.prepared = stored, prepared

    def __len__(self) -> int:
        return len(self.stored)

    def __getitem__(self, i):  # type: ignore[override]
        m = self.stored[i]
        return m if m is not None else self.prepared[i]


def row_name(index: int | None, position: int) -> str:
    """`#12`, `#sys` (position 0), or `inserted` (a row the pipeline added)."""
    return "#sys" if position == 0 else ("inserted" if index is None else f"#{index}")


def copy_of(message: Message) -> tuple[str, str]:
    """What `y` copies of a message, and what to call it: a tool call's input as JSON (several
    calls: a JSON list of their names and inputs), otherwise its text."""
    from ctxview.export.bodies import arguments_json

    calls = message.tool_calls
    if len(calls) == 1:
        return arguments_json(dict(calls[0].arguments)), f"the input of {calls[0].name} as JSON"
    if calls:
        return (arguments_json([{"name": c.name, "input": dict(c.arguments)} for c in calls]),
                f"the inputs of its {len(calls)} tool calls as JSON")
    return message.text, f"the text of the {message.role} message"


def made_safe(text: str, is_json: bool) -> tuple[str, int]:
    """What `y` puts in the clipboard for `text`, and how many control or invisible characters it held.
    A paste into a terminal would run an ESC or C1 sequence, and a bidi override or a zero-width
    character hides what is pasted; so the copy is what the screen shows: text with the visible
    stand-ins of sanitize (ESC as ␛, U+202E as <U+202E>), JSON with those characters as JSON escapes
    (\\u001b: the same value to a JSON reader). Tabs and newlines are kept."""
    from ctxview.export.bodies import escape_unsafe

    if is_json:  # (counted in the values: JSON escapes C0 controls itself, not C1 or format characters)
        import json

        held = sum(len(UNSAFE.findall(s)) for s in _strings(json.loads(text)))
        return escape_unsafe(text), held
    held = len(UNSAFE.findall(text.replace("\r\n", "\n")))
    return (make_visible(text) if held else text), held


def _strings(value: object):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def clipboard_text(text: str) -> str:
    """`text` as the clipboard can take it: copy_to_clipboard encodes UTF-8 strictly, and a session
    may hold a lone surrogate (JSON's "\\ud800"), written as U+FFFD as the export writes it."""
    return utf8_text(text)


class NavigationActions:
    """Actions mixed into CtxviewApp (see the module's docstring)."""

    # -- go to #N -------------------------------------------------------------------

    def action_goto(self: CtxviewApp) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        last = max((i for i in row_columns(layout.view.rows)[0] if i is not None), default=0)
        self.push_screen(GotoScreen(f"0–{last:,}, or sys"), self._goto)

    def _goto(self: CtxviewApp, answer: str | None) -> None:
        layout = self.row_layout
        if not answer or layout is None:
            return
        position, why = goto_position(answer, [None, *row_columns(layout.view.rows)[0]])
        if position is None:
            self.notify(sanitize(why), severity="warning", markup=False)
            self.bell()
            return
        self.pair.unfold(position)
        self.pair.set_cursor(position)

    # -- a tool call and its result ---------------------------------------------------

    def action_tool_partner(self: CtxviewApp) -> None:
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        stored, prepared = layout.columns()
        position, why = tool_partner(_Either(stored, prepared), self.cursor)
        if position is None:
            self.notify(sanitize(f"{row_name(layout.row(self.cursor).index, self.cursor)}: {why}"), markup=False)
            self.bell()
            return
        self.pair.unfold(position)
        self.pair.set_cursor(position)

    # -- sub-agents ---------------------------------------------------------------------

    def enter_row(self: CtxviewApp, row: int) -> bool:
        """Enter on `row` (PanePair.on_enter): a Task call whose sub-agent's conversation the session
        holds opens it (several: a list of them to choose from). Whether it did."""
        layout, session = self.row_layout, self.session
        if layout is None or session is None or layout.is_pending:
            return False
        r = layout.row(row)
        found = subagents_of(r.stored if r.stored is not None else r.prepared, session.conversations)
        if not found:
            return False
        if len(found) == 1:
            self.open_subagent(found[0])
            return True
        convs = session.conversations
        names = [(conversation_title(convs[i]), len(convs[i].messages)) for i in found]

        def done(choice: int | None) -> None:
            if choice is not None:
                self.open_subagent(found[choice])

        self.push_screen(ConversationPicker(names, 0), done)
        return True

    def open_subagent(self: CtxviewApp, index: int) -> None:
        pair = self.pair
        here = Place(self.state.conversation, self.settings.request, self.cursor, self.stored_pane.scroll_y,
                     frozenset(pair.expanded_rows), frozenset(pair.unfolded_runs))
        if self.state.enter_subagent(index, here):
            self.show_conversation()
            title = conversation_title(self.session.conversations[index])  # type: ignore[union-attr]
            self.notify(sanitize(f"opened {title} · Escape goes back"), markup=False)

    def back_to_parent(self: CtxviewApp) -> bool:
        """Escape (CtxviewApp.action_back): back to the conversation a sub-agent was opened from;
        whether there was one."""
        if self.state.back() is None:
            return False
        self.show_conversation()
        return True

    def restore_place(self: CtxviewApp) -> None:
        """After a view showed: where `back` returns to, the cursor and scroll as they were."""
        place = self.state.returning
        if place is None or place.conversation != self.state.conversation or self.busy:
            return
        self.state.returning = None
        self.pair.restore_folds(place.expanded, place.unfolded)
        if place.scroll_y == UNKNOWN_SCROLL:   # (its rows moved since: the whole file read after its tail)
            self.pair.set_cursor(place.cursor)
            return
        self.pair.set_cursor(place.cursor, scroll=False)
        for pane in self.panes:
            pane.scroll_to(y=place.scroll_y, animate=False, immediate=True)

    # -- the search ---------------------------------------------------------------------------

    def action_search(self: CtxviewApp) -> None:
        self.query_one(SearchBox).open(self.search_term)

    def on_search_box_closed(self: CtxviewApp, event: SearchBox.Closed) -> None:
        self.action_focus_pane()
        if event.term is None:
            return  # Escape
        found = self.state.search.submit(event.term)
        self.pair.set_search(self.search_term)
        if found:
            self.action_search_next(1, include_current=True)
        self._refresh_chrome()

    def search_matches(self: CtxviewApp, row) -> bool:
        """Whether the search term is in either side of `row` (text or tool calls, any case)."""
        return messages_match(row.stored, row.prepared, term_pattern(self.search_term))

    def action_search_next(self: CtxviewApp, direction: int, include_current: bool = False) -> None:
        if not self.search_term:
            self.action_search()
            return
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        self.state.search.step(direction)
        self._refresh_chrome()
        self.pair.scan(weakref.ref(layout), self.search_term, direction, self.cursor, include_current,
                       count=self.state.search.needs_count(layout))

    def on_search_done(self: CtxviewApp, event: SearchDone) -> None:
        if self.state.search.done(event.term, event.row, same_view=event.layout is self.row_layout):
            self.pair.jump(event.row, f"match for {event.term!r}", "search")
        self._refresh_chrome()

    # the count of its matches

    def recount(self: CtxviewApp) -> None:
        """A new view is on screen: count the search's matches over it, if a search is on."""
        layout = self.row_layout
        if layout is not None and not layout.is_pending and self.state.search.needs_count(layout):
            self.pair.count(weakref.ref(layout), self.search_term)

    def on_search_counted(self: CtxviewApp, event: SearchCounted) -> None:
        if self.state.search.count_done(event.term, event.layout, event.matches):
            self._refresh_chrome()

    # -- copy -----------------------------------------------------------------------------

    def action_copy(self: CtxviewApp) -> None:
        """`y`: the message under the cursor on the focused side (the other side's where this one
        has none) to the clipboard."""
        layout = self.row_layout
        if layout is None or not len(layout):
            return
        r = layout.row(self.cursor)
        side = self.pair.focused_side
        message = r.stored if side == "stored" else r.prepared
        if message is None:
            side = "prepared" if side == "stored" else "stored"
            message = r.stored if side == "stored" else r.prepared
        if message is None:
            self.notify("nothing to copy here: no message in the file", markup=False)
            self.bell()
            return
        text, what = copy_of(message)
        safe, held = made_safe(text, is_json=bool(message.tool_calls))
        self._to_clipboard(safe, f"{row_name(r.index, self.cursor)} ({side}): {what}", held,
                           "JSON escapes" if message.tool_calls else "visible stand-ins as shown (␛ for ESC)")

    def action_copy_body(self: CtxviewApp) -> None:
        """The request body of the request shown, as prepared, in the export's default shape."""
        from ctxview.export.bodies import default_shape, recorded_max_tokens

        conv, session, view = self.conversation, self.session, self.view
        if conv is None or session is None or view is None:
            return
        shape = default_shape(session.format, conv.model)
        what = f"the {shape} request body of request {self._request_label()} ({self.settings.label()})"
        self.run_job(copy_body_job, view, shape, conv.model, recorded_max_tokens(conv.metadata, session.metadata),
                     what, conv)

    def on_copied(self: CtxviewApp, event: Copied) -> None:
        self._to_clipboard(event.text, event.what)

    def _to_clipboard(self: CtxviewApp, text: str, what: str, held: int = 0, how: str = "") -> None:
        text = clipboard_text(text)
        self.copy_to_clipboard(text)
        size = len(text.encode("utf-8"))
        # (the request body `Y` copies is JSON from export.dumps, escaped already)
        unsafe = (f" · it held {held:,} control or invisible character{'s' if held != 1 else ''}: copied as {how}"
                  if held else "")
        self.notify(sanitize(f"copied {what} · {len(text):,} characters, {_bytes(size)} (OSC 52: the terminal "
                             f"must allow it){unsafe}"), title="clipboard", markup=False,
                    severity="warning" if held else "information")


def _bytes(n: int) -> str:
    return f"{n:,} bytes" if n < 10_000 else f"{n / 1024:,.1f} KB" if n < 10_000_000 else f"{n / 1048576:,.1f} MB"
