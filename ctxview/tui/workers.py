"""What the app's thread workers do: the jobs, and the memo they share.

The app runs each `*_job` in a thread worker (`CtxviewApp.run_job`): it gets
what it works on as arguments, changes nothing on screen and posts one typed
message (messages.py) with what came of it, which the app's handlers apply on
the UI thread; a failure posts one line, never a traceback. `Layouts` makes each
view's Layout with what belongs to the conversation rather than to one view,
worked out once per conversation: the stored messages' heights, the #sys row's
note where the file stores no system prompt (the overhead fitted from the
recorded usage), the calls without a result and the compaction boundaries.

While a big file is read (in pieces: formats/native.pieces_told_to), the stored side shows the
messages read so far (`StoredPieces`), so the screen has rows to move over from the first piece on.

Collector policy: a pipeline run allocates hundreds of thousands of acyclic
objects, so the collector stays paused during it and what it allocated is
frozen after (`paused_then_frozen`); otherwise the collector's next pass walks
all of it (0.1-0.4 s at 100k messages).
"""

from __future__ import annotations

import dataclasses
import gc
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable, Iterator, Mapping

from textual.message import Message as TMessage

from ctxview.formats.inputs import ReadMeter
from ctxview.gcpause import paused_gc
from ctxview.model import Conversation, Message, Session
from ctxview.settings import Settings
from ctxview.engine.system_block import deferred_note, tool_definitions
from ctxview.engine.view import PreparedView
from ctxview.tui.follow import FileFollower
from ctxview.tui.block_heights import collapsed_height, stored_heights_of
from ctxview.tui.layout import Layout, Marks, system_row
from ctxview.tui.failures import LoadFailed, one_line
from ctxview.tui.messages import (BloatReady, Copied, HistoryFailed, HistoryLoaded, NoteReady, OpeningFailed, SessionLoaded, StoredPiece, ViewFailed, ViewReady,
                       WorkFailed, Written)
from ctxview.tui.state import ViewKey, opening_settings

__all__ = ["Layouts", "Opening", "bloat_job", "compute_job", "conversation_marks", "copy_body_job", "load_job", "note_job",
           "open_session", "paused_then_frozen", "request_body", "system_note", "write_job"]

Post = Callable[[TMessage], object]          # the app's post_message (safe from any thread)
Prepare = Callable[[Conversation, Settings, Any], PreparedView]   # one pipeline run (CtxviewApp._prepare)


@contextmanager
def paused_then_frozen() -> Iterator[None]:
    """The collector paused for the block, and what it allocated moved out of every GC pass after
    (the session and views live as long as the app)."""
    with paused_gc():
        try:
            yield
        finally:
            gc.freeze()


def open_session(path: str | None, label: str, fmt: str | None, lenient: bool, session: Session | None,
                 agent: str | None, follower: FileFollower | None = None) -> tuple[Session, int]:
    """The session (read from `path`, None: the bundled demo, unless given; by `follower` when the
    file is followed) and the index of the conversation to open; LoadFailed naming `label` when
    there is none to show."""
    if follower is not None:
        session = follower.load()
    if session is None:
        from ctxview.formats import DEMO_PATH, load_session

        session = load_session(str(DEMO_PATH) if path is None else path, format=fmt, lenient=lenient)
    if not session.conversations:
        raise LoadFailed(f"{label}: no conversations in the file")
    if agent is None:
        return session, 0
    try:
        conv = session.conversation(agent)
    except KeyError as exc:
        raise LoadFailed(f"{label}: {exc.args[0]}") from None
    return session, session.conversations.index(conv)


def conversation_marks(conversation: Conversation) -> Marks:
    """The tool call ids a result in the conversation answers, and the first message after each
    compaction."""
    answered = frozenset(map(attrgetter("tool_call_id"), conversation.messages))  # (None among them: harmless)
    boundaries = {e.index: e for e in conversation.events if e.kind == "compaction" and type(e.index) is int}
    return Marks(answered, boundaries)


def system_note(conversation: Conversation, counter_name: str, cache: Any) -> tuple[str, int]:
    """What the #sys row says where the file stores no system prompt, and the tokens it stands for:
    the overhead every request carried beyond the messages, fitted from the recorded usage
    (tokens.calibrate, as `report` does; 0 when there is none)."""
    from ctxview.engine.harness import sent_tokens
    from ctxview.engine.tokens import calibrate

    counter = cache.counter(conversation, counter_name)
    counts, prefix = cache.stored_counts(cache.data(conversation), counter)
    fit = calibrate(conversation.messages, counter, counts=counts,
                    estimate=sent_tokens(conversation, counts, lambda m: cache.count(counter, m), prefix=prefix))
    n = len(fit.requests)
    deferred = deferred_note(conversation, None, lambda m: cache.count(counter, m))
    deferred = f"; {deferred}" if deferred else ""
    if fit.overhead is None or fit.overhead <= 0:
        why = "no recorded usage" if not n else f"no overhead fitted from {n:,} recorded requests"
        return f"not in file: the system prompt and tools ({why}){deferred}", 0
    noun = "request" if n == 1 else "requests"
    return (f"not in file: ≈ {fit.overhead:,} tokens of system prompt and tools, fitted from {n:,} recorded "
            f"{noun}{deferred}", fit.overhead)


FITTING = "not in file: the system prompt and tools (fitting them to the recorded usage…)"
READING = "the system prompt and tools (reading the file…)"


class Layouts:
    """Makes the Layouts of one conversation's views, with what is the conversation's worked out once
    (the last conversation's only: switching back works it out again).

    The #sys note is fitted after the view is on screen (`fit_note`, by note_job), under
    `lock`, which every pipeline run holds too: the jobs share one PipelineCache."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._conversation: Conversation | None = None
        self._heights: list[int] = []
        self._read_first: Message | None = None  # the first message read_so_far measured
        self._marks: Marks | None = None
        self._notes: dict[str, tuple[str, int]] = {}   # counter name -> the #sys note and its tokens

    def _for(self, conversation: Conversation) -> None:
        if conversation is not self._conversation:
            messages = conversation.messages
            if self._conversation is None and messages and messages[0] is self._read_first:
                # Built from the messages shown while the file was read (read_so_far): those are
                # measured (the same objects: a ctxview file's results are linked as they are read).
                heights = self._heights
                heights.extend(map(collapsed_height, messages[len(heights):]))
            else:
                heights = stored_heights_of(messages)
            self._conversation, self._heights, self._read_first = conversation, heights, None
            self._marks = None  # made with the first view: the stored side shows without them
            self._notes = {}

    def pending(self, conversation: Conversation, settings: Settings) -> Layout:
        """The stored side alone, to show while the first view computes."""
        self._for(conversation)
        return Layout.pending(conversation.messages, settings, self._heights,
                              system_row(conversation.system_prompt, 0, "not in file: the system prompt and tools",
                                         tool_definitions(conversation)))

    def read_so_far(self, messages: tuple[Message, ...], settings: Settings) -> Layout:
        """The stored side of the messages read so far, while the file is read (before any
        conversation: their heights are measured once, as they come, and kept for it)."""
        assert self._conversation is None and messages
        self._read_first = messages[0]
        heights = self._heights
        heights.extend(map(collapsed_height, messages[len(heights):]))
        return Layout.pending(messages, settings, heights, system_row(None, 0, READING))

    def build(self, conversation: Conversation, view: PreparedView, previous: Layout | None = None,
              cache: Any = None) -> Layout:
        """The view's Layout; from `previous` (the one on screen), measuring only the rows the
        pipeline says changed where `cache` (the PipelineCache that made both views) knows them."""
        self._for(conversation)
        if self._marks is None:
            self._marks = conversation_marks(conversation)
        if view.system_prompt or view.tools:
            head = system_row(view.system_prompt, view.system_tokens, "", view.tools)
        else:
            note, tokens = self._notes.get(view.settings.counter, (FITTING, 0))
            head = system_row(None, tokens, note)
        changed = None
        if previous is not None and cache is not None and not previous.is_pending:
            from ctxview.pipeline.delta import rows_changed

            changed = rows_changed(cache, previous.view, view)
        return Layout.build(view, previous, self._heights, head, self._marks, changed)

    def fit_note(self, post: Post, conversation: Conversation, view: PreparedView, cache: Any) -> None:
        """Where the view has no system prompt and its note is not fitted yet: fit it and post NoteReady."""
        name = view.settings.counter
        if view.system_prompt or conversation is not self._conversation or name in self._notes:
            return
        try:
            with self.lock:
                note = system_note(conversation, name, cache)
        except Exception:  # noqa: BLE001 - the placeholder stays: the view itself is fine
            return
        self._notes[name] = note
        post(NoteReady(conversation, name, *note))


@dataclass(frozen=True)
class Opening:
    """What the app was asked to open: the file (None: the bundled demo), or a session already read."""

    path: str | None
    label: str                      # the file as named in messages
    fmt: str | None
    lenient: bool
    session: Session | None
    agent: str | None
    given: Settings
    overrides: Mapping[str, Any] | None
    follower: FileFollower | None = None    # the file followed (follow.py), which reads it


class StoredPieces:
    """Posts the stored side of the messages read so far (StoredPiece) as a big file is read: the
    first piece at once, then whenever the messages read have doubled and a while has passed (each
    post copies them and sums their heights: doubling keeps all of it within twice one copy)."""

    EVERY = 0.5   # seconds, at least, between posts

    def __init__(self, post: Post, layouts: Layouts, settings: Settings) -> None:
        self.post, self.layouts, self.settings = post, layouts, settings
        self.shown, self.at = 0, 0.0

    def __call__(self, conversation: int, messages) -> None:
        n = len(messages)
        if conversation != 0 or n < 2 * self.shown or not n:
            return  # (the first conversation is the one opened, unless one is named: see load_job)
        now = time.monotonic()
        if self.shown and now - self.at < self.EVERY:
            return
        self.shown, self.at = n, now
        self.post(StoredPiece(n, self.layouts.read_so_far(tuple(messages), self.settings)))


TAIL_FIRST_BYTES = 32 << 20   # a transcript or rollout this big shows its tail first (tail_first)


def tail_first(opening: Opening) -> Session | None:
    """The session from its last compaction on, when the file asked for is a Claude Code
    transcript or a Codex rollout (formats/tails.py) of TAIL_FIRST_BYTES or more whose last
    compaction lies in its second half (the next request, as sent, holds nothing before it); else None.
    A request asked for by number is counted in the whole file, so it opens whole."""
    import os

    from ctxview.formats import tails

    path = opening.path
    if (opening.session is not None or opening.agent is not None or path is None or path == "-"
            or (opening.overrides or {}).get("request_number") is not None
            or (opening.fmt is not None and opening.fmt not in tails.FORMATS)):
        return None
    try:
        if os.stat(path).st_size < TAIL_FIRST_BYTES:
            return None
        from ctxview.formats.registry import detect_format

        return tails.load_tail(path, opening.fmt or detect_format(path), opening.lenient)
    except Exception:  # noqa: BLE001 - the whole file is read next, and says what is wrong with it
        return None


def load_job(post: Post, opening: Opening, layouts: Layouts, prepare: Prepare, meter: ReadMeter | None = None) -> None:
    """Load the session (showing what is read so far on the way, from a big file), post it (the
    stored side shows), compute and post the first view. A big Claude Code transcript or Codex
    rollout with a compaction in its second half shows the request after it first, from the file's tail
    (tail_first), then the whole file (HistoryLoaded). `meter` is told how far the read has got."""
    from ctxview.formats.native import pieces_told_to

    meter = meter or ReadMeter()
    try:
        # The collector stays paused from loading to the first view: the values are acyclic.
        with paused_then_frozen(), meter.watching():
            tail = tail_first(opening)
            if tail is not None:
                session, index = tail, 0
            elif opening.session is None and opening.agent is None:
                with pieces_told_to(StoredPieces(post, layouts, opening.given)):
                    session, index = open_session(opening.path, opening.label, opening.fmt, opening.lenient,
                                                  None, None, opening.follower)
            else:
                session, index = open_session(opening.path, opening.label, opening.fmt, opening.lenient,
                                              opening.session, opening.agent, opening.follower)
            from ctxview.pipeline import PipelineCache  # (after the reading: the first piece shows sooner)

            cache = PipelineCache()
            conversation = session.conversations[index]
            try:
                settings = opening_settings(conversation, opening.given, opening.overrides)
            except ValueError as exc:   # (a request past the file's, bad saved settings: as `report` says it)
                raise ValueError(f"{opening.label}: {exc}") from None
            # Show the stored side now; the prepared side follows when the
            # first pipeline run is done (the slowest part of opening).
            post(SessionLoaded(session, index, settings, layouts.pending(conversation, settings), cache,
                               tail is not None))
            with layouts.lock:
                view = prepare(conversation, settings, cache)
            layout = layouts.build(conversation, view)
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line, never a traceback
        post(OpeningFailed(one_line(exc)))
        return
    post(ViewReady(ViewKey(index, settings), view, layout))
    if tail is not None:
        with meter.watching():   # (the status bar says how much of the whole file is read)
            history_job(post, opening)


def history_job(post: Post, opening: Opening) -> None:
    """The whole file, after its tail was shown: HistoryLoaded, or HistoryFailed (the tail stays)."""
    try:
        with paused_then_frozen():
            session, _ = open_session(opening.path, opening.label, opening.fmt, opening.lenient, None, None,
                                      opening.follower)
    except Exception as exc:  # noqa: BLE001 - one line; what is shown stays
        post(HistoryFailed(one_line(exc)))
        return
    post(HistoryLoaded(session))


def compute_job(post: Post, key: ViewKey, conversation: Conversation, cache: Any, layouts: Layouts,
                prepare: Prepare, previous: weakref.ref[Layout] | None) -> None:
    """One pipeline run for `key` and its layout. `previous` (whose row heights the new layout
    reuses) is held weakly: a finished Worker is cyclic garbage that the next gc.freeze() keeps for
    good, and with it anything its arguments hold (a layout is ~3 MB at 100k messages)."""
    try:
        with paused_then_frozen():  # as in load_job
            with layouts.lock:
                view = prepare(conversation, key.settings, cache)
            layout = layouts.build(conversation, view, previous() if previous is not None else None, cache)
    except Exception as exc:  # noqa: BLE001 - shown on screen, never a traceback
        post(ViewFailed(key, one_line(exc)))
        return
    post(ViewReady(key, view, layout))


def note_job(post: Post, layouts: Layouts, conversation: Conversation, view: PreparedView, cache: Any,
             painted: threading.Event) -> None:
    """The #sys note fitted (NoteReady) once the view's frame is out (`painted`, set by the app after
    its next refresh; at most a second's wait): fitted sooner, it held up that frame (both need the
    interpreter)."""
    painted.wait(1.0)
    layouts.fit_note(post, conversation, view, cache)


def bloat_job(post: Post, conversation: Conversation, settings: Settings, context_window: int | None,
              cache: Any, lock: threading.Lock) -> None:
    """The bloat report (`b`), as text to show; under `lock` (Layouts.lock): it counts through the
    pipeline's cache."""
    try:
        from ctxview.analysis.report import conversation_bloat, split_recommendations
        from ctxview.tui.screens.modals import bloat_text

        with lock:
            report = conversation_bloat(conversation, settings, context_window, cache)
        # as `report` does: what the current settings apply already is not recommended
        todo, _ = split_recommendations(report.recommendations, settings)
        report = dataclasses.replace(report, recommendations=tuple(todo))
        post(BloatReady(bloat_text(report, conversation.name)))  # the tokens first, then the dollars
        if todo:
            from ctxview.analysis.prices import PriceTable
            from ctxview.analysis.report import cache_replays

            with lock:  # (the replays count through the pipeline's cache)
                advice = cache_replays(conversation, settings, cache, PriceTable()).advise([r.to_dict() for r in todo])
            post(BloatReady(bloat_text(report, conversation.name, advice), update=True))
    except Exception as exc:  # noqa: BLE001
        post(WorkFailed("bloat report", one_line(exc)))


def request_body(view: PreparedView, shape: str, model: str | None, max_tokens: int | None,
                 conversation: Conversation | None = None) -> str:
    """The prepared messages as a request body in `shape`, as `ctxview prepare` writes it (with the
    conversation, an Anthropic body asks the API for its own edits in force: export.body_for)."""
    from ctxview.export.bodies import DEFAULT_MAX_TOKENS, body_for, dumps, to_shape

    max_tokens = max_tokens or DEFAULT_MAX_TOKENS
    if conversation is not None:
        return dumps(body_for(conversation, view, shape, model, max_tokens=max_tokens)[0])
    return dumps(to_shape(view, shape, model, max_tokens=max_tokens))


def write_job(post: Post, target: str, shape: str, view: PreparedView, model: str | None,
              max_tokens: int | None = None, source: str | None = None,
              conversation: Conversation | None = None) -> None:
    """The prepared messages as an OpenAI or Anthropic request body (`w`), written atomically;
    `source`, the file the session was read from, is never removed as a leftover of a write."""
    try:
        from ctxview.export.bodies import (
            DEFAULT_MAX_TOKENS,
            body_for,
            body_messages,
            dumps,
            images_as_text,
            recorded_images,
            to_shape,
            write_atomic,
        )

        if conversation is not None:  # (an Anthropic body asks the API for its own edits in force)
            body, _, found = body_for(conversation, view, shape, model,
                                      max_tokens=max_tokens or DEFAULT_MAX_TOKENS, source=source)
        else:
            found = recorded_images(source, view.prepared)   # the images the source file holds, read back
            body = to_shape(view, shape, model, max_tokens=max_tokens or DEFAULT_MAX_TOKENS, images=found)
        if not body_messages(body, shape):  # as `prepare`: the APIs refuse it, so nothing is written
            post(WorkFailed("nothing written", f"the {shape} body would hold no messages"))
            return
        write_atomic(target, dumps(body), keep=() if source is None or source == "-" else (source,))
        images = len(images_as_text(view.prepared, found, shape))
    except Exception as exc:  # noqa: BLE001
        post(WorkFailed("write failed", one_line(exc)))
        return
    # never silently: what the body carries changed (the prepared pane marks each one)
    post(Written(target, shape, len(body.get("messages") or []),
                 f"{images:,} images sent as their placeholder text" if images else ""))


def copy_body_job(post: Post, view: PreparedView, shape: str, model: str | None, max_tokens: int | None,
                  what: str, conversation: Conversation | None = None) -> None:
    """The request body of the view on screen, for the clipboard (a big view takes a while)."""
    try:
        text = request_body(view, shape, model, max_tokens, conversation)
    except Exception as exc:  # noqa: BLE001
        post(WorkFailed("cannot copy", one_line(exc)))
        return
    post(Copied(text, what))
