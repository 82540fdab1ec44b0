"""Rows of a PreparedView as Rich `Text` lines, built from sanitized text.

Session text never becomes markup: every piece goes through
`sanitize.make_visible` and is appended to a `Text` with a `Style` object.
Reminder and ephemeral spans are applied to the raw text's offsets, segment
by segment, before sanitizing, so the highlighting stays exact even where
sanitizing lengthens the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Sequence

from rich.console import Console
from rich.style import Style
from rich.text import Text

from ctxview.model import ContextEvent, Message
from ctxview.pipeline.changes import compaction_words
from ctxview.sanitize import make_visible
from ctxview.engine.view import Change, Row
from ctxview.tui.block_heights import PREVIEW_LINES, TOOL_CALL_PREVIEW, display_text, preview_start
from ctxview.tui.layout import SystemRow

__all__ = [
    "PaneStyles",
    "fold_line",
    "Side",
    "badge_label",
    "block_lines",
    "detail_line",
    "line_offsets",
    "message_lines",
    "styled_line",
]

Side = Literal["stored", "prepared"]

TAB_SIZE = 4
# The seed's compression appends these two lines; they are styled, not parsed.
TRUNCATION_MARKER = re.compile(r"\.\.\.\[\d+ chars truncated for context management\]")
RERUN_HINT = re.compile(r"\U0001F4A1 If you need the full output, re-run the .* tool with the same parameters\.")


@dataclass(slots=True)
class PaneStyles:
    """Rich styles for the parts of a pane (filled from component classes)."""

    base: Style = Style()
    header: Style = Style(bold=True)
    cursor: Style = Style(reverse=True)
    user: Style = Style(color="green", bold=True)
    assistant: Style = Style(color="cyan", bold=True)
    tool: Style = Style(color="yellow", bold=True)
    system: Style = Style(color="magenta", bold=True)
    tokens: Style = Style(dim=True)
    reminder: Style = Style(color="magenta", bgcolor="grey15")
    ephemeral: Style = Style(color="black", bgcolor="yellow")
    marker: Style = Style(color="red", italic=True)
    hint: Style = Style(color="blue", italic=True)
    ghost: Style = Style(dim=True, italic=True)
    more: Style = Style(dim=True)
    toolcall: Style = Style(color="cyan", dim=True)
    search: Style = Style(color="black", bgcolor="bright_yellow")
    badge: Style = Style(color="black", bgcolor="yellow")
    badge_removed: Style = Style(color="white", bgcolor="red")
    badge_ephemeral: Style = Style(color="black", bgcolor="green")
    badge_harness: Style = Style(color="white", bgcolor="blue")     # the harness's own change: as sent
    flag: Style = Style(color="white", bgcolor="red", bold=True)     # is_error, a call without a result
    injected: Style = Style(color="black", bgcolor="grey70")        # text the harness added, not the user
    boundary: Style = Style(color="white", bgcolor="blue", bold=True)  # first message after a compaction
    thinking: Style = Style(dim=True, italic=True)


# Rules whose changes the harness made (recorded in the file: the view as sent), as against
# ctxview's what-if transforms (compression, clear, summarize, budget, swarm-auto).
HARNESS_RULES = frozenset({"compaction", "harness"})


_SHORT = {"ephemeral": "+eph", "cleared": "clr", "excerpted": "exc", "summarised": "sum", "removed": "rm",
          "dropped": "drop", "microcompacted": "µcmp", "compacted": "cmp", "truncated": "trunc",
          "persisted": "pers", "thinking cleared": "thk"}


def badge_label(change: Change, short: bool = False) -> str:
    """The badge for one change: what the pipeline did, tier and age.

    `short` (narrow panes): "t3·27" for compressed at tier 3, age 27. Tiers are numbered from 1, as
    the tier editor, the change's detail and the tier spec errors number them (Change.tier is 0-based).
    """
    action = change.action
    if action == "compressed":
        tier = "" if change.tier is None else change.tier + 1
        if short:
            return f"t{tier}·{'' if change.age is None else change.age}"
        parts = ["compressed"]
        if change.tier is not None:
            parts.append(f"t{tier}")
        if change.age is not None:
            parts.append(f"age {change.age}")
        return " ".join(parts)
    if short:
        return _SHORT.get(action, action)
    if action == "ephemeral":
        return "+ephemeral"
    return action


_BOLD = Style(bold=True)


def _role_style(role: str, styles: PaneStyles) -> Style:
    return getattr(styles, role) if role in ("user", "assistant", "tool", "system") else _BOLD


def badge_style(change: Change, styles: PaneStyles) -> Style:
    """Ephemeral reminders, the harness's own changes (as sent) and ctxview's what-ifs, apart."""
    if change.action == "ephemeral":
        return styles.badge_ephemeral
    return styles.badge_harness if change.rule in HARNESS_RULES else styles.badge


def message_flags(message: Message, unanswered: bool, short: bool,
                  left_out: Any = None) -> list[tuple[str, str]]:
    """(label, style name) of what the header flags about the message itself; `left_out` (an
    export.LeftOut, prepared side): what `prepare` and `w` leave out of the body or change in it."""
    flags = []
    meta = message.meta
    if meta and hasattr(meta, "get") and meta.get("is_error"):
        flags.append(("err" if short else "error", "flag"))
    if message.injected:
        flags.append(("inj" if short else "injected", "injected"))
    if unanswered:
        flags.append(("no res" if short else "no result", "flag"))
    said = left_out.reason(message, short) if left_out is not None else ""
    if said and not (unanswered and said in ("!calls", "calls not exported: no result")):  # (said: "no result")
        flags.append((said, "flag"))
    return flags


def boundary_label(event: ContextEvent, short: bool) -> str:
    """`compaction (auto, 167,412 tokens before, recorded)`, short `cmp auto 167k`."""
    if short:
        parts = ["cmp"] + ([event.trigger] if event.trigger else [])
        if event.tokens_before is not None:
            parts.append(f"{event.tokens_before // 1000:,}k")
        return make_visible(" ".join(parts))
    words = compaction_words(event)
    return make_visible("compaction" + (f" ({words})" if words else ""))


def header_line(row: Row, side: Side, styles: PaneStyles, pending: bool = False, width: int = 200,
                unanswered: bool = False, boundary: ContextEvent | None = None, left_out: Any = None) -> Text:
    """` #12 tool Read · 1,234 tok (-1,000)  compressed t3 age 27 `.

    `unanswered`: the message holds a tool call no result answers; `boundary`: the compaction
    this (stored) message is the first after. When that does not fit in `width`, the token
    change is left out and the badges take their short forms (`t3·27`, `+eph`), so they stay
    visible.
    """
    text = _header(row, side, styles, pending, False, unanswered, boundary, left_out)
    if text.cell_len > width:
        text = _header(row, side, styles, pending, True, unanswered, boundary, left_out)
    return text


def _badge(text: Text, label: str, style: Style) -> None:
    text.append(" ")
    text.append(f" {label} ", style)


def _header(row: Row, side: Side, styles: PaneStyles, pending: bool, short: bool, unanswered: bool,
            boundary: ContextEvent | None, left_out: Any = None) -> Text:
    message = row.stored if side == "stored" else row.prepared
    text = Text(no_wrap=True, end="")
    assert message is not None
    index = "#sys" if type(row) is SystemRow else "+" if row.index is None else f"#{row.index}"
    text.append(f"{index} ", _BOLD)
    text.append(make_visible(message.role), _role_style(message.role, styles))
    tool = row.tool_name or message.tool_name
    if tool and message.role not in ("user", "assistant", "system"):
        text.append(" ")
        text.append(make_visible(tool), _BOLD)
    if pending:  # counted by the pipeline run under way
        text.append(" · … tok", styles.tokens)
    else:
        tokens = row.tokens_stored if side == "stored" else row.tokens_prepared
        text.append(f" · {tokens:,} tok", styles.tokens)
        saved = row.tokens_stored - row.tokens_prepared
        if side == "prepared" and saved and row.stored is not None and not short:
            text.append(f" ({-saved:+,})", styles.tokens)
    if side == "stored" and boundary is not None:
        _badge(text, boundary_label(boundary, short), styles.boundary)
    for label, style in message_flags(message, unanswered, short, left_out if side == "prepared" else None):
        _badge(text, label, getattr(styles, style))
    if side == "prepared" and not pending:
        for change in row.changes:
            _badge(text, badge_label(change, short=short), badge_style(change, styles))
    return text


def ghost_line(row: Row, side: Side, run: tuple[int, int] | None, row_pos: int, styles: PaneStyles) -> Text:
    """The one line standing in for a message missing on this side."""
    text = Text(no_wrap=True, end="")
    if side == "prepared":
        start, length = run if run else (row_pos, 1)
        if row_pos != start:
            text.append("┊", styles.ghost)
            return text
        noun = "message" if length == 1 else "messages"
        if row.changes and row.changes[0].action == "compacted":  # the harness's own, recorded in the file
            text.append(f"⋯ {length:,} {noun} {make_visible(row.changes[0].detail)} ⋯", styles.ghost)
            return text
        why = next((c for c in row.changes if c.action in ("removed", "dropped", "summarised")), None)
        text.append(f"⋯ {length:,} {noun} removed", styles.ghost)
        if why is not None:
            text.append(": ", styles.ghost)
            text.append(f" {why.action} ", styles.badge_removed)
            text.append(f" by {make_visible(why.rule)}", styles.ghost)
        text.append(" ⋯", styles.ghost)
    else:
        text.append("⋯ inserted for this request ⋯", styles.ghost)
    return text


def fold_line(rows: Sequence[Row], run: tuple[int, int], side: Side, styles: PaneStyles) -> Text:
    """The one line a folded run of removed messages takes on each side."""
    start, length = run
    if side == "prepared":
        return ghost_line(rows[start], side, run, start, styles)
    first, last = rows[start].index, rows[start + length - 1].index
    text = Text(no_wrap=True, end="")
    text.append(f"⋯ {length:,} stored messages", styles.ghost)
    if first is not None and last is not None:
        text.append(f" #{first}–#{last}", styles.ghost)
    text.append(" not in this request · Enter unfolds ⋯", styles.ghost)
    return text


def line_offsets(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` from offset `start` (a line's start), newline excluded."""
    find = text.find
    while True:
        nl = find("\n", start)
        if nl == -1:
            yield start, len(text)
            return
        yield start, nl
        start = nl + 1


def styled_line(
    raw: str,
    start: int,
    end: int,
    spans: list[tuple[int, int, Style]],
    styles: PaneStyles,
    search: str = "",
) -> Text:
    """One line of raw text as a Text: spans applied, then sanitized piecewise."""
    cuts = {start, end}
    active = []
    for s, e, style in spans:
        if s < end and e > start:
            cuts.add(max(s, start))
            cuts.add(min(e, end))
            active.append((s, e, style))
    text = Text(no_wrap=True, end="", tab_size=TAB_SIZE)
    points = sorted(cuts)
    for a, b in zip(points, points[1:]):
        style = None
        for s, e, st in active:  # later spans win (ephemeral over reminder)
            if s <= a and b <= e:
                style = st
        text.append(make_visible(raw[a:b]), style)
    if "\t" in text.plain:
        text.expand_tabs(TAB_SIZE)
    plain = text.plain
    if "chars truncated" in plain:
        text.highlight_regex(TRUNCATION_MARKER, styles.marker)
    if "re-run the" in plain:
        text.highlight_regex(RERUN_HINT, styles.hint)
    if search:
        text.highlight_words([search], styles.search, case_sensitive=False)
    return text


def side_spans(row: Row, side: Side, styles: PaneStyles) -> list[tuple[int, int, Style]]:
    if side == "stored":
        return [(s, e, styles.reminder) for s, e in row.stored_reminders]
    spans = [(s, e, styles.reminder) for s, e in row.prepared_reminders]
    spans.extend((s, e, styles.ephemeral) for s, e in row.ephemeral_spans)
    return spans


def _tool_call_line(call, width: int, styles: PaneStyles, search: str = "") -> Text:
    import json

    try:
        args = json.dumps(dict(call.arguments), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        args = str(call.arguments)
    text = Text(no_wrap=True, end="")
    text.append("→ ", styles.toolcall)
    text.append(make_visible(call.name), styles.toolcall + Style(bold=True))
    text.append(" ")
    text.append(make_visible(args[: max(width * 2, 64)]), styles.toolcall)
    if search:  # (the search reads tool calls too)
        text.highlight_words([search], styles.search, case_sensitive=False)
    return text


def message_lines(
    row: Row,
    side: Side,
    message: Message,
    styles: PaneStyles,
    width: int,
    expanded: bool,
    search: str = "",
    console: Console | None = None,
) -> list[Text]:
    """The body of one message: preview (collapsed) or all lines wrapped to width."""
    raw = display_text(message)
    spans = side_spans(row, side, styles)
    out: list[Text] = thinking_lines(message.thinking, styles, width, expanded, search, console) \
        if message.thinking else []
    if raw:
        first = 0 if expanded else preview_start(raw)  # (a preview skips leading blank lines)
        total = raw.count("\n", first) + 1
        limit = total if expanded else min(total, PREVIEW_LINES)
        for n, (start, end) in enumerate(line_offsets(raw, first)):
            if n >= limit:
                break
            if not expanded:
                # A preview needs only a screen's width of a long line.
                end = min(end, start + width * 2 + 16)
            line = styled_line(raw, start, end, spans, styles, search)
            if expanded:
                out.extend(line.wrap(console or _console(), max(width, 1), overflow="fold", no_wrap=False))
            else:
                line.truncate(width, overflow="ellipsis")
                out.append(line)
        if total > limit:
            out.append(Text(f"… {total - limit:,} more lines · Enter expands", styles.more, end=""))
    calls = message.tool_calls
    shown = calls if expanded else calls[:TOOL_CALL_PREVIEW]
    for call in shown:
        line = _tool_call_line(call, width if not expanded else width * 8, styles, search)
        if expanded:
            out.extend(line.wrap(console or _console(), max(width, 1), overflow="fold", no_wrap=False))
        else:
            line.truncate(width, overflow="ellipsis")
            out.append(line)
    if len(calls) > len(shown):
        out.append(Text(f"… {len(calls) - len(shown)} more tool calls", styles.more, end=""))
    if not raw and not calls:
        out.append(Text("(empty)", styles.more, end=""))
    for line in out:
        line.truncate(width, overflow="ellipsis")
    return out


def thinking_lines(thinking: str, styles: PaneStyles, width: int, expanded: bool, search: str = "",
                   console: Console | None = None) -> list[Text]:
    """A message's thinking, styled apart from its content: one line collapsed (label, first
    line, how much more), every line wrapped when expanded."""
    raw = thinking.strip("\n")
    label = Text("thinking ", styles.thinking + Style(bold=True), end="")
    if not expanded:
        first = raw.split("\n", 1)[0][: width * 2 + 16]
        line = label + styled_line(first, 0, len(first), [], styles, search)
        line.stylize_before(styles.thinking)
        lines = raw.count("\n") + 1
        if lines > 1:
            line.append(f" (+{lines - 1:,} lines)", styles.more)
        line.truncate(width, overflow="ellipsis")
        return [line]
    out = [label]
    for start, end in line_offsets(raw):
        line = styled_line(raw, start, end, [], styles, search)
        line.stylize_before(styles.thinking)
        out.extend(line.wrap(console or _console(), max(width, 1), overflow="fold", no_wrap=False))
    return out


def system_ghost_lines(row: SystemRow, styles: PaneStyles, pending: bool = False) -> list[Text]:
    """The #sys row where the file stores no system prompt: what it would have held, and why."""
    head = Text(no_wrap=True, end="")
    head.append("#sys ", _BOLD)
    head.append("system", styles.system)
    tokens = "…" if pending or not row.tokens_stored else f"≈ {row.tokens_stored:,}"
    head.append(f" · {tokens} tok", styles.tokens)
    return [head, Text(make_visible(row.note), styles.ghost, no_wrap=True, end="")]


def block_lines(
    row: Row,
    side: Side,
    styles: PaneStyles,
    width: int,
    expanded: bool,
    run: tuple[int, int] | None = None,
    row_pos: int = 0,
    search: str = "",
    console: Console | None = None,
    pending: bool = False,
    unanswered: bool = False,
    boundary: ContextEvent | None = None,
    left_out: Any = None,
) -> list[Text]:
    """Every line of one row's block on one side (before padding to the block height)."""
    message = row.stored if side == "stored" else row.prepared
    if message is None:
        if type(row) is SystemRow:
            return system_ghost_lines(row, styles, pending)
        return [ghost_line(row, side, run, row_pos, styles)]
    lines = [header_line(row, side, styles, pending, width, unanswered, boundary, left_out)]
    lines.extend(message_lines(row, side, message, styles, width, expanded, search, console))
    return lines


def detail_line(raw: str, start: int, end: int, spans: list[tuple[int, int, Style]], styles: PaneStyles,
                max_chars: int = 4000, search: str = "") -> Text:
    """One line of the detail view, cut at `max_chars` with a note of what was cut; `search`
    highlighted."""
    cut = end - start > max_chars
    text = styled_line(raw, start, start + max_chars if cut else end, spans, styles, search)
    if cut:
        text.append(f" … {end - start - max_chars:,} more chars", styles.more)
    return text


_CONSOLE: Console | None = None


def _console() -> Console:
    global _CONSOLE
    if _CONSOLE is None:
        _CONSOLE = Console(width=200, color_system="truecolor", legacy_windows=False, markup=False,
                           emoji=False, highlight=False)
    return _CONSOLE
