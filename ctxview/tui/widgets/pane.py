"""The message pane: a line-API ScrollView that renders only visible lines.

Two panes (stored, prepared) share one Layout, so line y is in the same row
on both sides. A block of lines per row is built on demand and kept in an
LRU cache; nothing is built for rows that are not on screen.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message as TMessage
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ctxview.tui.layout import Layout
from ctxview.tui.render import PaneStyles, Side, block_lines, fold_line

__all__ = ["MessagePane"]

_STYLE_CLASSES = {
    "header": "pane--header",
    "cursor": "pane--cursor",
    "user": "pane--user",
    "assistant": "pane--assistant",
    "tool": "pane--tool",
    "system": "pane--system",
    "tokens": "pane--tokens",
    "reminder": "pane--reminder",
    "ephemeral": "pane--ephemeral",
    "marker": "pane--marker",
    "hint": "pane--hint",
    "ghost": "pane--ghost",
    "more": "pane--more",
    "toolcall": "pane--toolcall",
    "search": "pane--search",
    "badge": "pane--badge",
    "badge_removed": "pane--badge-removed",
    "badge_ephemeral": "pane--badge-ephemeral",
    "badge_harness": "pane--badge-harness",
    "flag": "pane--flag",
    "injected": "pane--injected",
    "boundary": "pane--boundary",
    "thinking": "pane--thinking",
}

_HEADER_PIECES = ("user", "assistant", "tool", "system", "tokens")

GUTTER = 1  # a one-column bar marking the cursor row


class MessagePane(ScrollView, can_focus=True, inherit_bindings=False):
    """One side of the side-by-side view."""

    COMPONENT_CLASSES = set(_STYLE_CLASSES.values()) | {"pane--gutter"}

    # (the cursor, expand, detail and fold keys are the PanePair's, the pane's parent)
    BINDINGS = [
        Binding("pageup", "page(-1)", "Page up", show=False, id="ctxview.page_up"),
        Binding("pagedown,space", "page(1)", "Page down", show=False, id="ctxview.page_down"),
    ]

    class RowChosen(TMessage):
        """A click or a page key put this row under the cursor."""

        def __init__(self, row: int) -> None:
            self.row = row
            super().__init__()

    def __init__(self, side: Side, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.side: Side = side
        self.row_layout: Layout | None = None
        self.cursor = 0
        self.search = ""
        self._styles: PaneStyles | None = None
        self._blocks: LRUCache[tuple, tuple[object, list[Strip]]] = LRUCache(maxsize=512)
        self._frame: tuple[int, Style] | None = None   # (width, base style) while a frame renders

    # -- state from the app -------------------------------------------------

    def set_layout(self, layout: Layout | None) -> None:
        self.row_layout = layout
        self._update_virtual_size()
        self.refresh()

    def set_cursor(self, row: int) -> None:
        if row != self.cursor:
            self.cursor = row
            self.refresh()

    def set_search(self, term: str) -> None:
        if term != self.search:
            self.search = term
            self._blocks.clear()
            self.refresh()

    def invalidate(self) -> None:
        """Heights changed (expand/collapse): blocks are keyed by state, so keep them."""
        self._update_virtual_size()
        self.refresh()

    @property
    def text_width(self) -> int:
        frame = self._frame
        return max((frame[0] if frame is not None else self.scrollable_content_region.width) - GUTTER, 1)

    def _update_virtual_size(self) -> None:
        lines = self.row_layout.total_lines if self.row_layout else 0
        self.virtual_size = Size(self.scrollable_content_region.width, lines)

    # -- styles ---------------------------------------------------------------

    @property
    def styles_for_render(self) -> PaneStyles:
        if self._styles is None:
            values = {
                attr: self.get_component_rich_style(cls, partial=True) for attr, cls in _STYLE_CLASSES.items()
            }
            # Pieces of the header line must not paint over the cursor's background.
            for attr in _HEADER_PIECES:
                values[attr] = Style(color=values[attr].color, bold=values[attr].bold, italic=values[attr].italic)
            self._styles = PaneStyles(base=self.rich_style, **values)
        return self._styles

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._blocks.clear()

    class Resized(TMessage):
        """The pane's width changed: expanded (wrapped) rows need new heights."""

    def on_resize(self, event: events.Resize) -> None:
        self._blocks.clear()
        self._update_virtual_size()
        self.post_message(self.Resized())

    # -- rendering -----------------------------------------------------------

    def block(self, row: int) -> list[Strip]:
        """The strips of one row's block on this side (cached), without the gutter."""
        return self._entry(row)[1]

    def _entry(self, row: int) -> tuple:
        """(Row, strips, painted strips, padding strip) for one row, cached.

        Keyed by the Row object's identity rather than the view: the
        pipeline hands back the same Row for an unchanged message, so a
        recompute repaints only the rows that really changed.
        """
        layout = self.row_layout
        assert layout is not None
        row_obj = layout.row(row)
        width = self.text_width
        expanded = row in layout.expanded
        is_cursor = row == self.cursor
        run = layout.runs.get(row)
        folded = row in layout.folded
        key = (id(row_obj), row, width, expanded, self.search, is_cursor, run, folded, layout.is_pending)
        cached = self._blocks.get(key)
        if cached is not None and cached[0] is row_obj:
            return cached
        return self._build_block(key, row, row_obj, width, expanded, is_cursor, run, folded)

    def _build_block(self, key: tuple, row: int, row_obj, width: int, expanded: bool, is_cursor: bool,
                     run: tuple[int, int] | None, folded: bool) -> tuple:
        layout = self.row_layout
        assert layout is not None
        styles = self.styles_for_render
        if layout.is_pending and self.side == "prepared":
            texts = [Text("⋯ computing the prepared messages ⋯", styles.ghost, end="")]
        elif folded and run is not None:
            texts = [fold_line(layout.rows, run, self.side, styles)]
        else:
            index, marks = row_obj.index, layout.marks
            texts = block_lines(
                row_obj,
                self.side,
                styles,
                width,
                expanded,
                run=run,
                row_pos=row,
                search=self.search,
                console=self.app.console,
                pending=layout.is_pending,
                unanswered=marks.unanswered(row_obj.stored if self.side == "stored" else row_obj.prepared),
                boundary=marks.boundaries.get(index) if self.side == "stored" else None,
                left_out=(layout.left_out(getattr(self.app, "path", None))
                          if self.side == "prepared" and not layout.is_pending else None),
            )
        base = self.rich_style
        ghost = folded or (row_obj.stored if self.side == "stored" else row_obj.prepared) is None
        header = styles.cursor if is_cursor else (None if ghost else styles.header)
        strips = [self._strip(text, width, base, header if i == 0 else None) for i, text in enumerate(texts)]
        # The lines as painted: gutter (cursor bar) joined once, here, so that
        # repainting a cached row builds no new Strip.
        if is_cursor:
            gutter = Strip([Segment("▌", self.get_component_rich_style("pane--gutter"))], 1)
        else:
            gutter = Strip([Segment(" ", base)], 1)
        painted = [Strip.join([gutter, strip]) for strip in strips]
        pad = Strip.join([gutter, Strip.blank(width, base)])
        entry = (row_obj, strips, painted, pad)
        self._blocks[key] = entry
        return entry

    def _strip(self, text: Text, width: int, base: Style, line_style: Style | None) -> Strip:
        if line_style is not None:
            text.stylize_before(line_style)
        text.stylize_before(base)
        segments = list(text.render(self.app.console))
        pad = base + line_style if line_style is not None else base
        return Strip(segments, text.cell_len).crop_extend(0, width, pad)

    def render_lines(self, crop):  # type: ignore[no-untyped-def]
        # What every line of the frame reads, read once: Textual computes the content region and
        # rich_style anew on each access (with them per line they were most of a repaint).
        self._frame = (self.scrollable_content_region.width, self.rich_style)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        frame = self._frame
        width, base = frame if frame is not None else (self.scrollable_content_region.width, self.rich_style)
        layout = self.row_layout
        line_y = self.scroll_offset.y + y
        if layout is None or line_y >= layout.total_lines or not len(layout):
            return Strip.blank(width, base)
        row = layout.row_at(line_y)
        line = line_y - layout.offsets[row]
        _, _, painted, pad = self._entry(row)
        strip = painted[line] if line < len(painted) else pad
        return strip if strip.cell_length == width else strip.crop_extend(0, width, base)

    # -- input ----------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        if self.row_layout is None or not len(self.row_layout):
            return
        row = self.row_layout.row_at(self.scroll_offset.y + event.y)
        self.post_message(self.RowChosen(row))

    def action_page(self, direction: int) -> None:
        if direction > 0:
            self.scroll_page_down(animate=False)
        else:
            self.scroll_page_up(animate=False)
        if self.row_layout is not None and len(self.row_layout):
            target = self.scroll_target_y if hasattr(self, "scroll_target_y") else self.scroll_offset.y
            self.post_message(self.RowChosen(self.row_layout.row_at(int(target))))
