"""The header and the status bar: what they say at a given width.

Both are one line that must hold at 80 columns as at 200, so each is built
from pieces that shorten in a fixed order of importance:

- the header: the path shortens first (middle ellipsis, then its basename),
  then the labels go, then the app's name and the format; the model, the
  window and the conversation hint `(1/2, a switches)` stay as long as
  anything does;
- the status bar: every active what-if setting (tiers, keep_recent, budget,
  clearing, old messages) in full words, then abbreviated, then in its
  shortest form; the tokens, the request and the scroll link go before any
  of them; `row N/M` sits at the right edge and is never cut.

Text from the session (path, agent, model) is made visible (sanitize), never
markup. The widgets keep what they were given and build the line for their
width when they paint, so a resize re-fits it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from ctxview.model import Session
from ctxview.settings import Settings
from ctxview.stages.declare import short_number
from ctxview.engine.view import PreparedView
from ctxview.tui.state import conversation_title
from ctxview.tui.widgets.basic import Line, safe_text, view_name

__all__ = ["HeaderBar", "HeaderParts", "StatusBar", "StatusParts", "end_ellipsis", "header_line", "middle_ellipsis", "status_line",
           "what_if_pieces"]

DIM = Style(dim=True)
BOLD = Style(bold=True)


def middle_ellipsis(text: str, width: int) -> str:
    """`text` cut to at most `width` cells by an ellipsis in the middle, its end kept longer (for a
    path: the file name)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head_n = (width - 1) // 3
    tail_n = width - 1 - head_n
    head, tail = text[:head_n], text[len(text) - tail_n:]
    while cell_len(head) + 1 + cell_len(tail) > width:  # wide characters: fewer of them fit
        if len(tail) > len(head):
            tail = tail[1:]
        else:
            head = head[:-1]
    return f"{head}…{tail}"


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


# -- header ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeaderParts:
    path: str
    fmt: str
    conversation: str
    model: str | None
    window: int | None
    position: str = ""  # "(1/2, a switches)", or "" with one conversation


def _path_forms(path: str, room: int, cut_name: bool) -> str | None:
    """The longest form of `path` in `room` cells: whole, middle-cut (keeping the file name), the
    file name, and with `cut_name` the file name middle-cut; None when none fits or says enough."""
    if cell_len(path) <= room:
        return path
    base = _basename(path)
    if room >= cell_len(base) + 8:
        return middle_ellipsis(path, room)
    if cell_len(base) <= room:
        return base
    if cut_name and room >= 16:
        return middle_ellipsis(base, room)
    return None


def header_line(parts: HeaderParts, width: int) -> Text:
    """The header for `width` cells (0: no limit)."""
    path, fmt, conversation = safe_text(parts.path), safe_text(parts.fmt), safe_text(parts.conversation)
    model = safe_text(parts.model or "unknown")
    # (labels, app name, format): each step gives up the least important of them
    for labels, name, with_fmt in ((True, True, True), (False, True, True), (False, False, True),
                                   (False, False, False)):
        text = _header(parts, path, fmt, conversation, model, labels, name, with_fmt, width)
        if text is not None:
            return text
    # Too narrow even for the file name: what stays is the conversation and its hint, model, window;
    # a long conversation label (a sub-agent's task, a sample's question) shortens before they go.
    text = _header(parts, None, fmt, conversation, model, False, False, False, 0)
    assert text is not None
    if width and text.cell_len > width:
        room = cell_len(conversation) - (text.cell_len - width)
        conversation = end_ellipsis(conversation, max(room, 12))
        text = _header(parts, None, fmt, conversation, model, False, False, False, 0)
        assert text is not None
    return text


def end_ellipsis(text: str, width: int) -> str:
    """`text` cut to at most `width` cells, its beginning kept, an ellipsis at the end."""
    if cell_len(text) <= width:
        return text
    cut = text[:width]
    while cut and cell_len(cut) + 1 > width:
        cut = cut[:-1]
    return f"{cut.rstrip()}…"


def _header(parts: HeaderParts, path: str | None, fmt: str, conversation: str, model: str, labels: bool,
            name: bool, with_fmt: bool, width: int) -> Text | None:
    tail = Text(end="")
    if with_fmt:
        tail.append("  format " if labels else "  ", DIM)
        tail.append(fmt)
    tail.append("  agent " if labels else "  ", DIM)
    tail.append(conversation)
    if parts.position:
        tail.append(f" {parts.position}", DIM)
    tail.append("  model " if labels else "  ", DIM)
    tail.append(model)
    tail.append("  window " if labels else "  ", DIM)
    if parts.window:
        tail.append(f"{parts.window:,}" if labels else f"{parts.window // 1000:,}k window")
    else:
        tail.append("unknown" if labels else "window unknown")
    text = Text(end="", no_wrap=True, overflow="ellipsis")
    if name:
        text.append("ctxview ", BOLD)
    if path is not None:
        room = width - text.cell_len - tail.cell_len if width else cell_len(path)
        shown = _path_forms(path, room, cut_name=not labels)  # (the labels go before the file name is cut)
        if shown is None:
            return None
        text.append(shown, BOLD)
    else:
        tail = Text(tail.plain.lstrip(), end="")
    text.append_text(tail)
    return text


class HeaderBar(Line):
    """File, format, conversation, model, context window, fitted to the width (header_line)."""

    parts: HeaderParts | None = None

    def show(self, parts: HeaderParts) -> None:
        if parts != self.parts:
            self.parts = parts
            self.refresh()

    def show_conversation(self, path: str, session: Session, index: int, view: PreparedView | None) -> None:
        """The header of conversation `index` (its label too), with the window the view used."""
        conv = session.conversations[index]
        count = len(session.conversations)
        position = f"({index + 1}/{count}, a switches)" if count > 1 else ""
        window = view.context_window if view is not None else conv.context_window
        self.show(HeaderParts(path, session.format, conversation_title(conv), conv.model, window, position))

    def render(self) -> Text:
        if self.parts is None:
            return Text("ctxview", BOLD, end="")
        return header_line(self.parts, self.content_size.width)


# -- status bar -------------------------------------------------------------------

def what_if_pieces(settings: Settings) -> list[tuple[str, str, str]]:
    """Each stage's pieces of the status bar (its declaration's), each as (full words, abbreviated,
    shortest), made visible. keep_recent and the tiers are always there (the keys change them); the
    others only when they are on."""
    return [(safe_text(full), safe_text(abbr), safe_text(short))
            for stage in settings.STAGES for full, abbr, short in stage.status_pieces(settings)]


@dataclass(frozen=True, slots=True)
class StatusParts:
    settings: Settings
    tokens: tuple[int, int] | None = None  # stored, prepared (None: not computed yet)
    request: str = "next"
    linked: bool = True
    cursor: int = 0
    rows: int = 0
    busy: bool = False
    search: str = ""
    search_count: str = ""  # "3/17": the cursor's match, of how many (n / N step through them)
    trace: Text | None = None  # the request against the recorded trace (--trace), right after the view's name
    # the request's context in the model's tokens and its basis (view.context); shown instead of the
    # counter's stored → prepared where known
    context: tuple[int, str] | None = None
    # the whole file read after its tail (tail first): "history 45%", "history…", "history not read"; "" when not
    history: str = ""


def _optional_pieces(parts: StatusParts, level: int) -> list[tuple[int, str, Style | None]]:
    """What the status bar says besides the settings, as (rank, text, style): 0 the search term,
    1 the request, 2 the tokens, 3 the scroll link; each can go, the highest rank first."""
    out: list[tuple[int, str, Style | None]] = []
    if parts.search:
        term = safe_text(parts.search)
        count = f" {parts.search_count}" if parts.search_count else ""
        out.append((0, "/" + (term if level < 2 else middle_ellipsis(term, 24)) + count, Style(italic=True)))
    out.append((1, ("request ", "req ", "req ")[level] + parts.request, None))
    if parts.context is not None:
        tokens, basis = parts.context
        approx = "≈ " if basis == "calibrated" else ""
        short = {"recorded": "rec", "calibrated": "cal", "counted": "cnt"}.get(basis, basis)
        out.append((2, (f"context {approx}{tokens:,} {basis}", f"{approx}{short_number(tokens)} {short}",
                        f"{approx.strip()}{short_number(tokens)}")[level], None))
    elif parts.tokens is None:
        out.append((2, "… → … tok", None))
    else:
        stored, prepared = parts.tokens
        out.append((2, (f"{stored:,} → {prepared:,} tok", f"{short_number(stored)} → {short_number(prepared)} tok",
                        f"{short_number(stored)}→{short_number(prepared)}")[level], None))
    if not parts.linked:  # linked is the usual state: said in full words only
        out.append((3, ("scroll unlinked", "unlinked", "unlinked")[level], None))
    elif level == 0:
        out.append((3, "scroll linked", None))
    return out


def status_line(parts: StatusParts, width: int) -> Text:
    """The status bar for `width` cells (0: no limit): the view's name, the settings, then what
    fits; the row position at the right edge."""
    right = Text(end="")
    if parts.history:
        right.append(parts.history + " ", Style(color="yellow"))
    if parts.busy:
        right.append("computing… " if width == 0 or width >= 100 else "… ", Style(color="yellow"))
    if parts.rows:
        right.append(f"row {parts.cursor + 1:,}/{parts.rows:,}")
    what_if = parts.settings.view == "what-if"
    settings = what_if_pieces(parts.settings)
    room = width - right.cell_len - (1 if right.cell_len else 0) if width else 0
    # Full words, then abbreviations, each first with every optional piece and then without the
    # tokens and the scroll link (the meters line shows the tokens too); then the shortest forms,
    # giving up the optional pieces least important first; then the left part is cut (never the
    # right one).
    attempts = [(level, keep) for level in (0, 1) for keep in (None, 2)]
    attempts += [(2, keep) for keep in (None, 3, 2, 1, 0)]
    for level, keep in attempts:
        optional = [(text, style) for rank, text, style in _optional_pieces(parts, level)
                    if keep is None or rank < keep]
        left = _status_left(what_if, [p[level] for p in settings], optional, parts.trace)
        if not room or left.cell_len <= room:
            break
    if room and left.cell_len > room:
        left.truncate(max(room, 1), overflow="ellipsis")
    text = Text(end="", no_wrap=True, overflow="ellipsis")
    text.append_text(left)
    if right.cell_len:
        gap = max((width - left.cell_len - right.cell_len) if width else 3, 1)
        text.append(" " * gap)
        text.append_text(right)
    return text


def _status_left(what_if: bool, settings: list[str], optional: list[tuple[str, Style | None]],
                 trace: Text | None = None) -> Text:
    text = Text(end="")
    text.append_text(view_name("what-if" if what_if else "as sent"))
    if trace is not None:
        text.append(" · ")
        text.append_text(trace)
    for piece in settings:
        text.append(" · ")
        text.append(piece, BOLD)
    for piece, style in optional:
        text.append(" · ")
        text.append(piece, style or "")
    return text


class StatusBar(Line):
    """The view's name and every setting in force, fitted to the width (status_line); a plain
    line (`update`) while loading."""

    parts: StatusParts | None = None

    def show(self, parts: StatusParts) -> None:
        if parts != self.parts:
            self.parts = parts
            self.refresh()

    def update(self, text: Text) -> None:
        self.parts = None
        super().update(text)
        self.refresh()

    def render(self) -> Text:
        if self.parts is None:
            return self.text
        return status_line(self.parts, self.content_size.width)
