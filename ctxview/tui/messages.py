"""What the thread workers report to the app: one typed Message per outcome.

The workers (`CtxviewApp._load`, `_compute`, `_search`, `_bloat`, `_write`)
compute and post one of these; the app's handlers apply them on the UI
thread, asking `InspectorState` whether a view is still wanted. A worker
gets what it works on as arguments and changes nothing on screen
(toolong's `run_scan` and harlequin's query workers work the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message as TMessage

from ctxview.model import Conversation, Session
from ctxview.settings import Settings
from ctxview.engine.view import PreparedView
from ctxview.tui.layout import Layout
from ctxview.tui.state import ViewKey

__all__ = ["BloatReady", "Copied", "HistoryFailed", "HistoryLoaded", "NoteReady", "SessionLoaded", "StoredPiece", "OpeningFailed", "SearchCounted", "SearchDone",
           "ViewFailed", "ViewReady", "WorkFailed", "Written"]


@dataclass
class StoredPiece(TMessage):
    """The file is still being read: its first `count` messages (of the conversation opened) on
    the stored side (`layout` is pending), until SessionLoaded brings them all."""

    count: int
    layout: Layout


@dataclass
class SessionLoaded(TMessage):
    """The file is read: show the stored side (`layout` is pending) while the first view computes."""

    session: Session
    conversation: int
    settings: Settings       # the opening settings of that conversation
    layout: Layout
    cache: object            # the PipelineCache every later run shares
    partial: bool = False    # the transcript from its last compaction on: the whole file follows (HistoryLoaded)


@dataclass
class HistoryLoaded(TMessage):
    """The whole file is read, after its tail was shown (SessionLoaded.partial): the session anew."""

    session: Session


@dataclass
class HistoryFailed(TMessage):
    """Reading the whole file failed after its tail was shown: one line; the tail stays."""

    error: str


@dataclass
class OpeningFailed(TMessage):
    """Loading or the first view failed: the app ends with this one line."""

    error: str


@dataclass
class ViewReady(TMessage):
    """A pipeline run's view and its layout, for `key`."""

    key: ViewKey
    view: PreparedView
    layout: Layout


@dataclass
class NoteReady(TMessage):
    """The #sys note of `conversation` (no system prompt in the file), fitted with `counter`."""

    conversation: Conversation
    counter: str
    note: str
    tokens: int


@dataclass
class ViewFailed(TMessage):
    """A pipeline run for `key` failed (a notification, the old view stays)."""

    key: ViewKey
    error: str


@dataclass
class SearchDone(TMessage):
    """A scan for `term` over `layout` ended at `row` (None: no match)."""

    layout: Layout
    term: str
    row: int | None


@dataclass
class SearchCounted(TMessage):
    """Every row of `layout` matching `term`, in order (the search's `3/17`)."""

    layout: Layout
    term: str
    matches: list[int]


@dataclass
class Copied(TMessage):
    """Text for the clipboard (`y`, the request body), and what it is, for the notification."""

    text: str
    what: str


@dataclass
class BloatReady(TMessage):
    """The bloat report, as text to show; `update`: the same report with its recommendations priced,
    for the screen opened with the first one (nothing when it was closed meanwhile)."""

    report: object  # rich Text
    update: bool = False


@dataclass
class Written(TMessage):
    """The prepared messages were written to `target`."""

    target: str
    shape: str
    count: int
    note: str = ""  # what the body changed (images sent as text), said with the notification


@dataclass
class WorkFailed(TMessage):
    """A report or a write failed: a notification titled `title`."""

    title: str
    error: str
