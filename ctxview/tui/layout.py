"""Where each row of a PreparedView sits in the two panes.

Both panes share one `Layout`: every row is a block of the same height on
both sides (the taller side decides), so the panes stay aligned row by row.
Collapsed blocks have a height known from line counts alone (no wrapping:
block_heights.py), which keeps building the layout for 100k rows cheap enough
for a worker thread; expanded rows get their wrapped heights from the renderer.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import is_
from dataclasses import dataclass, field
from typing import Any, Mapping

from ctxview.model import ContextEvent, Message
from ctxview.engine.system_block import tools_text
from ctxview.engine.view import PreparedView, Row, Rows, row_columns
from ctxview.tui.block_heights import block_height, collapsed_height
from ctxview.tui.widgets.row_heights import RowHeights, RowTops

__all__ = ["NO_MARKS", "HeadedRows", "Layout", "Marks", "SystemRow", "head_height", "removed_runs", "system_row"]

def removed_runs(stored: Sequence[Message | None], prepared: Sequence[Message | None],
                 offset: int = 0) -> dict[int, tuple[int, int]]:
    """For each row missing from the prepared side: (first row of its run, run length).
    `stored`, `prepared`: each row's messages (view.row_columns); `offset` is added to the row
    positions (the layout's rows start after the #sys row)."""
    runs: dict[int, tuple[int, int]] = {}
    if not any(map(is_, prepared, repeat(None))):  # (nothing removed, the usual view: one C-level pass)
        return runs
    i, n = 0, len(prepared)
    while i < n:
        if prepared[i] is None and stored[i] is not None:
            j = i
            while j < n and prepared[j] is None and stored[j] is not None:
                j += 1
            run = (i + offset, j - i)
            for k in range(i + offset, j + offset):
                runs[k] = run
            i = j
        else:
            i += 1
    return runs


@dataclass(frozen=True, slots=True)
class SystemRow(Row):
    """The `#sys` row both panes start with: the system prompt the model read (`stored` and
    `prepared` are the same message, `tokens_*` its tokens), or, where the file does not store
    it (both None), a ghost whose `note` says so, with the tokens recorded usage suggests it
    held (`tokens_*`, 0: unknown). A ghost takes two lines: a header and the note."""

    note: str = ""


GHOST_SYSTEM_LINES = 2


def system_row(prompt: str | None, tokens: int, note: str, tools: Sequence[Mapping[str, Any]] = ()) -> SystemRow:
    """The #sys row: the prompt (and the tool definitions the file recorded) and its tokens, or
    (neither in the file) a ghost with `note` and the tokens fitted for what the file lacks."""
    if not prompt and not tools:
        return SystemRow(index=None, stored=None, prepared=None, note=note, tokens_stored=tokens,
                         tokens_prepared=tokens)
    text = prompt or ""
    if tools:
        names = ", ".join(str(t.get("name") or (t.get("function") or {}).get("name") or "?") for t in tools)
        text = (text + "\n\n" if text else "") + f"tool definitions ({len(tools)}: {names}):\n" + tools_text(tools)
    message = Message(role="system", content=text)
    return SystemRow(index=None, stored=message, prepared=message, tokens_stored=tokens, tokens_prepared=tokens)


def head_height(head: Row) -> int:
    return collapsed_height(head.stored) if head.stored is not None else GHOST_SYSTEM_LINES


@dataclass(frozen=True, slots=True)
class Marks:
    """What a block header flags that the rows do not say, for one conversation: the tool call ids
    some result answers (a message with a call not among them is flagged: `unanswered`), and the
    first message after each compaction (stored index -> its event). `NO_MARKS` flags nothing."""

    answered: frozenset[str] | None = None       # None: not known (nothing is flagged)
    boundaries: Mapping[int, ContextEvent] = field(default_factory=dict)

    def unanswered(self, message: Message | None) -> bool:
        """Whether `message` holds a tool call no result in the conversation answers (checked for
        the rows on screen only: a pass over 100k messages' calls costs more than the set)."""
        answered = self.answered
        if answered is None or message is None or not message.tool_calls:
            return False
        return any(call.id not in answered for call in message.tool_calls)


NO_MARKS = Marks()


class HeadedRows(Sequence[Row]):
    """The layout's rows: the #sys row at position 0, then the view's rows (not copied)."""

    __slots__ = ("head", "rows")

    def __init__(self, head: Row, rows: Sequence[Row]) -> None:
        self.head, self.rows = head, rows

    def __len__(self) -> int:
        return len(self.rows) + 1

    def __getitem__(self, position):  # type: ignore[override]
        if position < 0:
            position += len(self.rows) + 1
        return self.head if position == 0 else self.rows[position - 1]


class _Headed(Sequence):
    """One column of HeadedRows: `first`, then `column` (not copied)."""

    __slots__ = ("first", "column")

    def __init__(self, first: object, column: Sequence) -> None:
        self.first, self.column = first, column

    def __len__(self) -> int:
        return len(self.column) + 1

    def __getitem__(self, position):  # type: ignore[override]
        return self.first if position == 0 else self.column[position - 1]


class _StoredOnly:
    """Makes a pending layout's rows, Row(index=i, stored=message, prepared=None), when the
    panes ask for them: they show a few dozen, while all of them (100k Row objects, ~0.1x
    the file) would sit beside the first pipeline run, at the opening's peak."""

    __slots__ = ("messages",)

    def __init__(self, messages: tuple[Message, ...]) -> None:
        self.messages = messages

    def make(self, position: int) -> Row:
        from ctxview.pipeline import make_row  # Row(index=i, stored=m, prepared=None), twice as fast

        return make_row(position, self.messages[position], None, (), 0, 0, None, (), (), ())


def _stored_rows(messages: tuple[Message, ...]) -> Rows:
    n = len(messages)
    return Rows([_StoredOnly(messages)] * n, range(n), messages, (None,) * n)


@dataclass(slots=True, weakref_slot=True)  # (a worker holds the previous one weakly: see CtxviewApp._compute)
class Layout:
    """Block heights and the line each block starts on, for one PreparedView, its #sys row first.

    Positions are the panes' rows: 0 is the #sys row (`head`), position i + 1 is the view's row i
    (`rows` and `columns` read them so, without copying the view's).

    The heights as shown (`lines`: folds and expanded rows applied) are a RowHeights, changed a
    row at a time: `reflow` sets only the rows whose fold or expansion changed, and a layout built
    from the one on screen with the rows the pipeline changed (`build(..., changed=...)`) takes
    that one's heights over when it is shown (`settle`), re-measuring those rows alone.
    """

    view: PreparedView
    base_heights: list[int]
    runs: dict[int, tuple[int, int]]
    head: Row = field(default_factory=lambda: system_row(None, 0, ""))
    marks: Marks = NO_MARKS
    expanded: dict[int, int] = field(default_factory=dict)   # row -> expanded height
    folded: set[int] = field(default_factory=set)            # first rows of folded removed runs
    is_pending: bool = False                                 # stored side only; prepared side computing
    lines: RowHeights | None = None                          # the heights as shown
    # what `lines` holds beyond base_heights: the folds and expanded heights applied
    shown_folds: set[int] = field(default_factory=set)
    shown_expanded: dict[int, int] = field(default_factory=dict)
    # (build with `changed`) the layout whose heights this one takes over, and the new base heights
    takes_over: tuple[Layout, dict[int, int], list[int] | None] | None = None
    handed_on: bool = False                                  # its heights now belong to a newer layout
    exported: Any = None                                     # export.LeftOut of the view, made when first asked

    def left_out(self, source: str | None = None) -> Any:
        """What `prepare` and `w` leave out of this view's body, message by message (export.LeftOut;
        `source`: the session file, where an image is read back from)."""
        if self.exported is None:
            from ctxview.export.bodies import LeftOut

            self.exported = LeftOut(self.view.prepared, source)
        return self.exported

    @classmethod
    def build(cls, view: PreparedView, previous: Layout | None = None,
              stored_heights: list[int] | None = None, head: Row | None = None,
              marks: Marks = NO_MARKS, changed: Sequence[int] | None = None) -> Layout:
        """Heights for every row.

        Cheap on a recompute: a row whose stored and prepared messages are
        the same objects at the same position in `previous` keeps its height, and
        `stored_heights` (see `stored_heights_of`) spares re-reading the
        stored texts, which are most of the data. With `changed` (the view's rows
        that may differ from `previous.view`'s, from pipeline.rows_changed), only
        those are measured: the layout takes `previous`'s heights over when shown
        (`settle`; until then `previous` is untouched, it may still be on screen).
        """
        head = head if head is not None else system_row(view.system_prompt, view.system_tokens, "", view.tools)
        if changed is not None and previous is not None and not previous.is_pending:
            update = _measured(view, previous.view, changed, stored_heights)
            if update is not None:
                update[0] = head_height(head)
                return cls(view=view, base_heights=previous.base_heights, runs=previous.runs, head=head,
                           marks=marks, takes_over=(previous, update, stored_heights))
        layout = cls(view=view, base_heights=_all_heights(view, head, previous, stored_heights),
                     runs=removed_runs(*row_columns(view.rows)[1:], 1), head=head, marks=marks)
        layout.reflow()
        return layout

    @classmethod
    def pending(cls, messages: tuple[Message, ...], settings, stored_heights: list[int],
                head: Row | None = None) -> Layout:
        """A stored-only layout to show while the first view is computed."""
        view = PreparedView(settings=settings, rows=_stored_rows(messages), prepared=())
        head = head if head is not None else system_row(None, 0, "")
        layout = cls(view=view, base_heights=[head_height(head), *stored_heights], runs={}, head=head,
                     is_pending=True)
        layout.reflow()
        return layout

    def settle(self) -> None:
        """(UI thread, when shown) Take the heights of the layout this one was built from over,
        with the changed rows' new heights; that layout must not be shown again."""
        pending = self.takes_over
        if pending is None:
            return
        self.takes_over = None
        previous, update, stored_heights = pending
        if previous.handed_on or previous.takes_over is not None or previous.lines is None:
            # (not expected: the app shows each layout built from the one on screen) measure them all
            self.base_heights = _all_heights(self.view, self.head, None, stored_heights)
            self.runs = removed_runs(*row_columns(self.view.rows)[1:], 1)
            self.reflow()
            return
        previous.handed_on = True
        base, lines = previous.base_heights, previous.lines
        self.base_heights, self.lines = base, lines
        self.shown_folds, self.shown_expanded = previous.shown_folds, previous.shown_expanded
        for position, height in update.items():
            base[position] = height
            lines.set(position, self._shown_height(position, self.shown_folds, self.shown_expanded))

    def row(self, position: int) -> Row:
        """The row at `position` (0: the #sys row)."""
        return self.head if position == 0 else self.view.rows[position - 1]

    @property
    def rows(self) -> HeadedRows:
        """The row at each position: the #sys row, then the view's rows."""
        return HeadedRows(self.head, self.view.rows)

    def columns(self) -> tuple[Sequence[Message | None], Sequence[Message | None]]:
        """(stored, prepared) message of each position, without making the view's rows."""
        _, stored, prepared = row_columns(self.view.rows)
        return _Headed(self.head.stored, stored), _Headed(self.head.prepared, prepared)

    @property
    def heights(self) -> list[int]:
        """Each row's height as shown (read only: `reflow` changes it)."""
        return self._lines().heights

    @property
    def offsets(self) -> RowTops:
        """offsets[i]: the first line of row i; offsets[-1]: the total."""
        return self._lines().tops

    def _lines(self) -> RowHeights:
        if self.lines is None or self.takes_over is not None:
            self.settle()
            self.reflow()
        return self.lines  # type: ignore[return-value]

    def reflow(self) -> None:
        """Apply `folded` and `expanded` to the heights shown, after an expand/collapse or (un)fold:
        only the rows whose fold or expansion changed are set.

        A folded run of removed rows is one line on both sides (its first
        row); the others get height 0, so the sides stay aligned.
        """
        self.settle()
        runs, n = self.runs, len(self.base_heights)
        folds = {start for start in self.folded if (run := runs.get(start)) is not None and run[0] == start}
        expanded = {row: height for row, height in self.expanded.items() if 0 <= row < n}
        lines = self.lines
        if lines is None:
            self.lines = RowHeights([self._shown_height(row, folds, expanded) for row in range(n)]
                                    if folds or expanded else list(self.base_heights))
        else:
            touched: set[int] = set()
            for start in folds ^ self.shown_folds:
                touched.update(range(start, start + runs[start][1]))
            shown = self.shown_expanded
            touched.update(row for row in shown.keys() | expanded.keys() if shown.get(row) != expanded.get(row))
            for row in touched:
                lines.set(row, self._shown_height(row, folds, expanded))
        self.shown_folds, self.shown_expanded = folds, expanded

    def _shown_height(self, row: int, folds: set[int], expanded: dict[int, int]) -> int:
        run = self.runs.get(row)
        if run is not None and run[0] in folds:
            return 1 if row == run[0] else 0
        height = expanded.get(row)
        return self.base_heights[row] if height is None else height

    def fold_runs(self, min_length: int, keep_open: set[int]) -> None:
        """Fold every removed run of at least `min_length` rows not in `keep_open`."""
        self.folded = {
            start for start, length in set(self.runs.values()) if length >= min_length and start not in keep_open
        }

    def fold_of(self, row: int) -> int | None:
        """The first row of the folded run holding `row`, if it is folded."""
        run = self.runs.get(row)
        if run is not None and run[0] in self.folded:
            return run[0]
        return None

    def visible(self, row: int) -> bool:
        return self._lines().heights[row] > 0

    @property
    def total_lines(self) -> int:
        return self._lines().total

    def __len__(self) -> int:
        return len(self.base_heights)

    def row_at(self, y: int) -> int:
        """The row whose block holds line y (clamped to the rows there are)."""
        if not self.base_heights:
            return -1
        return self._lines().row_at(y)

    def row_top(self, row: int) -> int:
        return self._lines().top(row)


def _all_heights(view: PreparedView, head: Row, previous: Layout | None,
                 stored_heights: list[int] | None) -> list[int]:
    """Every position's base height: the #sys row's, then each row's (the taller side), reusing
    `previous`'s where a row has the same two messages at the same position."""
    height, block = collapsed_height, block_height
    # the rows' messages, read from columns: a view's changed rows are made only when shown
    indices, stored_col, prepared_col = row_columns(view.rows)
    heights: list[int] = [head_height(head)]
    append = heights.append
    # (a pending layout's rows are never the pipeline's: nothing to reuse there)
    # (nor in one that has not taken its heights over yet: its base_heights are not its own)
    if previous is not None and not previous.is_pending and previous.takes_over is None:
        _, old_stored, old_prepared = row_columns(previous.view.rows)
        old_heights = previous.base_heights
    else:
        old_stored, old_prepared, old_heights = (), (), [0]
    n_old = len(old_heights) - 1
    n_stored = len(stored_heights) if stored_heights is not None else 0
    for i, prepared in enumerate(prepared_col):
        stored = stored_col[i]
        # a block's height follows from its two messages alone
        if i < n_old and old_prepared[i] is prepared and old_stored[i] is stored:
            append(old_heights[i + 1])
            continue
        index = indices[i]
        if index is not None and index < n_stored and stored is not None:
            hs = stored_heights[index]  # type: ignore[index]
        else:
            hs = height(stored)
        append(hs if prepared is stored else block(hs, stored, prepared))  # (block_height's first case, inline)
    return heights


def _measured(view: PreparedView, old: PreparedView, changed: Sequence[int],
              stored_heights: list[int] | None) -> dict[int, int] | None:
    """The base heights of the rows at `changed` (view row numbers) by position, when nothing else
    about the rows differs from `old`'s (same number, a row removed where it was): else None."""
    indices, stored_col, prepared_col = row_columns(view.rows)
    _, old_stored, old_prepared = row_columns(old.rows)
    if len(prepared_col) != len(old_prepared):
        return None
    n_stored = len(stored_heights) if stored_heights is not None else 0
    update: dict[int, int] = {}
    for i in changed:
        stored, prepared = stored_col[i], prepared_col[i]
        if stored is not old_stored[i] or (prepared is None) != (old_prepared[i] is None):
            return None  # the removed runs would change
        index = indices[i]
        if index is not None and index < n_stored and stored is not None:
            hs = stored_heights[index]  # type: ignore[index]
        else:
            hs = collapsed_height(stored)
        update[i + 1] = block_height(hs, stored, prepared)
    return update
