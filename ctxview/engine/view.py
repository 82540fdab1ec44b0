"""What the pipeline produces and the inspector renders.

`Settings` go in; a `PreparedView` comes out: one `Row` per stored message
(plus rows for messages the pipeline inserted, such as a summary checkpoint),
each pairing the stored form with the prepared form and saying what changed
and why. The TUI and `ctxview report` only read these values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence, overload

from ctxview.engine.context_tokens import ContextFigure, ContextFit
from ctxview.model import Message
from ctxview.settings import OLD_MESSAGE_STRATEGIES, ClearSettings, Settings  # (re-exported: their home is settings.py)

__all__ = ["Change", "ClearSettings", "PreparedView", "Row", "Rows", "Settings", "Span", "OLD_MESSAGE_STRATEGIES",
           "row_columns"]

# (start, end) character offsets into a message's text, end exclusive.
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Change:
    """One thing the pipeline did to a message, and why."""

    action: str           # "ephemeral", "compressed", "cleared", "excerpted", "summarised", "removed", "dropped"
    rule: str             # the setting responsible: "ephemeral", "compression", "clear", "summarize", "budget"
    detail: str           # one human line: "tier 3 (ages 21-40 → 500 chars), age 27, 2,431 chars cut"
    tier: int | None = None
    age: int | None = None
    saved_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the side-by-side view.

    `stored` is None for a message the pipeline inserted (a summary or a
    removal marker); `prepared` is None for a message left out of the request.
    """

    index: int | None                   # index in the conversation's stored messages
    stored: Message | None
    prepared: Message | None
    changes: tuple[Change, ...] = ()
    tokens_stored: int = 0
    tokens_prepared: int = 0
    tool_name: str | None = None
    stored_reminders: tuple[Span, ...] = ()     # reminder blocks in stored.text
    prepared_reminders: tuple[Span, ...] = ()   # reminder blocks in prepared.text (stored ones carried over)
    ephemeral_spans: tuple[Span, ...] = ()      # text in prepared.text added for this request only

    @property
    def changed(self) -> bool:
        return bool(self.changes)


class RowMaker(Protocol):
    """Makes the Row at a position of a Rows table when it is first read (and may tell its tokens
    without making it: `tokens(position)`, as (tokens_stored, tokens_prepared))."""

    def make(self, position: int) -> Row: ...


class Rows(Sequence[Row]):
    """A view's rows, each changed one made when first read.

    A recompute after a setting changes may change tens of thousands of
    rows; the inspector shows a screenful, `ctxview report` reads them all
    once. So the pipeline stores, for a changed row, the RowMaker that can
    make it, and this sequence makes and keeps the Row on first access (the
    same object every time after). Reading it is reading a tuple of Rows.

    Three columns are there without making any row: each row's `indices`
    (its stored index, None for an inserted message), `stored` and
    `prepared` messages (None where there is none), which is all a layout
    needs to size the rows.
    """

    __slots__ = ("_items", "indices", "stored", "prepared")

    def __init__(self, items: list[Row | RowMaker], indices: Sequence[int | None], stored: Sequence[Message | None],
                 prepared: Sequence[Message | None]) -> None:
        self._items = items       # a Row, or the RowMaker of the row at that position
        self.indices = indices
        self.stored = stored
        self.prepared = prepared

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, position: int) -> Row: ...
    @overload
    def __getitem__(self, position: slice) -> tuple[Row, ...]: ...

    def __getitem__(self, position):
        if type(position) is slice:
            return tuple(self[p] for p in range(*position.indices(len(self._items))))
        item = self._items[position]
        if type(item) is Row:
            return item
        if position < 0:
            position += len(self._items)
        row = self._items[position] = item.make(position)
        return row

    def __iter__(self) -> Iterator[Row]:
        items = self._items
        for position, item in enumerate(items):
            if type(item) is not Row:
                item = items[position] = item.make(position)
            yield item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Rows: {len(self._items):,} rows>"

    def tokens(self) -> Iterator[tuple[int, int]]:
        """(tokens_stored, tokens_prepared) of each row: a row not made yet is not made where its
        maker can tell them (RowMaker.tokens)."""
        maker = told = None   # (the rows not made yet mostly share one maker: its method looked up once)
        for position, item in enumerate(self._items):
            if type(item) is Row:
                yield item.tokens_stored, item.tokens_prepared
            else:
                if item is not maker:
                    maker, told = item, getattr(item, "tokens", None)
                if told is None:
                    row = self[position]
                    yield row.tokens_stored, row.tokens_prepared
                else:
                    yield told(position)

    def entries(self) -> list[Row | RowMaker]:
        """The stored entries (Rows and RowMakers), for building another table from this one's."""
        return self._items


def row_columns(rows: Sequence[Row]) -> tuple[Sequence[int | None], Sequence[Message | None],
                                              Sequence[Message | None]]:
    """(indices, stored, prepared) of each row: a Rows table's columns, without making its rows."""
    if isinstance(rows, Rows):
        return rows.indices, rows.stored, rows.prepared
    return [r.index for r in rows], [r.stored for r in rows], [r.prepared for r in rows]


def row_tokens(rows: Sequence[Row]) -> Iterable[tuple[int, int]]:
    """(tokens_stored, tokens_prepared) of each row: a Rows table's without making the rows it can."""
    if isinstance(rows, Rows):
        return rows.tokens()
    return ((r.tokens_stored, r.tokens_prepared) for r in rows)


@dataclass(frozen=True, slots=True)
class PreparedView:
    """A conversation run through the pipeline with one set of Settings."""

    settings: Settings
    rows: Sequence[Row]                 # a Rows table from the pipeline (each row made when first read)
    prepared: tuple[Message, ...]       # exactly what goes to the model, in order
    system_prompt: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()   # the tool definitions the file recorded (system_block.py)
    tokens_stored: int = 0
    tokens_prepared: int = 0
    system_tokens: int = 0              # the system prompt and the tools; counted in both totals above
    context_window: int | None = None
    budget_shortfall: int = 0           # tokens still over the budget after fitting
    recorded_input_tokens: int | None = None   # what the source recorded for this request
    requests: tuple[int, ...] = ()      # indices of assistant messages that mark model calls
    counter_name: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)  # counts: compressed, cleared, removed, ...
    # what the request's figure in the model's tokens rests on (context_tokens.py); set by the
    # pipeline, None for a view made by hand
    context_fit: ContextFit | None = field(default=None, compare=False)

    @property
    def view_label(self) -> str:
        """"as sent", or "what-if: ..." naming each ctxview transform applied (Settings.label)."""
        return self.settings.label()

    @property
    def context(self) -> ContextFigure:
        """The request's context in the model's tokens, with its basis: what the file recorded for
        it (as sent), else the counter's estimate corrected by the file's fit, else as counted."""
        fit = self.context_fit
        if fit is None:
            return ContextFigure(self.tokens_prepared, "counted")
        return fit.figure(self.tokens_prepared, as_sent=not self.settings.what_if())

    @property
    def window_share(self) -> float | None:
        """The context (in the model's tokens, `context`) as a share of the context window."""
        if not self.context_window:
            return None
        return self.context.tokens / self.context_window
