"""The row of each stored message as sent unchanged (`base_row`), made when first read: a view's
unchanged rows are these same objects (BaseRows, one table per conversation and counter, kept
by the PipelineCache)."""

from __future__ import annotations

import threading
from typing import Any, Sequence

from ctxview._fast.tool_names import NameTable
from ctxview.engine import reminders
from ctxview.engine.view import Row
from ctxview.model import Message
from ctxview.pipeline.builders import make_row

__all__ = ["BaseRows", "base_row", "tool_name_of"]


class BaseRows(Sequence[Row]):
    """The unchanged row of each stored message (`base_row`), made when first read and the same
    object after: a view's unchanged rows are these, and the first screen reads a screenful of them
    (making all 100k up front was 0.09 s of the first view). `entries` gives a view's row table."""

    __slots__ = ("data", "messages", "counts", "rows", "made", "_making", "tool_names")

    def __init__(self, data: Any, counts: Sequence[int], tool_names: NameTable) -> None:
        self.data, self.messages, self.counts = data, data.conversation.messages, counts  # (data: the cache's table)
        self.tool_names = tool_names  # the tool each text names, detected once (the compressor's too)
        self.rows: list[Row | None] = [None] * len(self.messages)
        self.made = 0  # how many rows are made
        # The inspector's panes read rows on its main thread while a worker may make them too:
        # a row is made under this lock, so it is made once (one object) and `made` counts it once.
        self._making = threading.Lock()

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        # Every row (the bloat analysis reads them all): the missing ones made, then the list's own
        # iterator, not Sequence's __getitem__ per row (100k calls)
        rows = self.rows
        if self.made < len(rows):
            for i, row in enumerate(rows):
                if row is None:
                    self[i]
        return iter(rows)

    def __getitem__(self, i):  # type: ignore[override]
        if type(i) is slice:
            return [self[k] for k in range(*i.indices(len(self.rows)))]
        row = self.rows[i]
        if row is None:
            if i < 0:
                i += len(self.rows)
            with self._making:
                row = self.rows[i]
                if row is None:
                    row = self.rows[i] = base_row(i, self.messages[i], self.counts[i], self)
                    self.made += 1
        return row

    def get(self, call_id: str) -> str | None:
        """The tool a call id names (the map is made when a result without a tool_name first asks)."""
        return self.data.names.get(call_id)

    def entries(self, n: int, maker: Any) -> list:
        """The first n positions of a view's row table (view.Rows): the rows made so far, `maker`
        (which makes an unchanged row from this table, RowMaker.make) where none is yet."""
        return [maker if row is None else row for row in self.rows[:n]]


def base_row(i: int, msg: Message, tokens: int, names: BaseRows) -> Row:
    """Stored message i as sent unchanged: its tool and reminder spans, no changes."""
    text = msg.text
    spans = tuple(reminders.spans(text)) if "<system-reminder>" in text else ()
    tool = tool_name_of(msg, names) if msg.role == "tool" else None
    return make_row(i, msg, msg, (), tokens, tokens, tool, spans, spans, ())


def tool_name_of(msg: Message, names: BaseRows) -> str | None:
    """A tool result's tool: its own field, its call's name, else detected from the text (remembered
    in the table the compressor detects the same texts in when it cuts them)."""
    name = msg.tool_name or (names.get(msg.tool_call_id) if msg.tool_call_id else None)
    return name if name is not None else names.tool_names.detect(msg.text)
