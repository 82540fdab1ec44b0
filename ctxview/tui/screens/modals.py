"""Modal screens: help, detail view, tier editor, conversation picker,
bloat report, write dialog.

Everything shown from the session is a Rich `Text` built from sanitized
pieces; labels that are ours are plain strings without markup.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any, Callable, Iterable, Mapping

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from ctxview.sanitize import make_visible
from ctxview.tui.render import PaneStyles, detail_line

__all__ = [
    "BloatScreen",
    "ConversationPicker",
    "DetailScreen",
    "DetailView",
    "HelpScreen",
    "TierEditor",
    "WriteScreen",
    "bloat_text",
]


def _plain(text: str, style: Style | str | None = None) -> Text:
    return Text(text, style=style or "", end="")


class HelpScreen(ModalScreen[None]):
    """The key list, built from the app's bindings."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="ctxview.help_close")]

    def __init__(self, keys: Iterable[tuple[str, str]], styles: PaneStyles | None = None) -> None:
        super().__init__(id="help")
        self.keys = list(keys)
        self.pane_styles = styles or PaneStyles()

    def compose(self) -> ComposeResult:
        table = Text(end="")
        table.append("ctxview keys\n\n", Style(bold=True))
        width = max((len(k) for k, _ in self.keys), default=4)
        for key, description in self.keys:
            table.append(f"  {key:<{width}}  ", Style(bold=True, color="cyan"))
            table.append(f"{description}\n")
        styles = self.pane_styles
        table.append("\nPanes: stored messages on the left, prepared (sent to the model) on the right;\n"
                     "a message left out of the request shows as a ghost line on the right;\n"
                     "#sys, the first row, is the system prompt (or what the file lacks of it).\n")
        legend = [
            ("<system-reminder>", styles.reminder, "a reminder stored in the conversation history"),
            ("<system-reminder>", styles.ephemeral, "an ephemeral reminder, added for this request only"),
            ("...[N chars truncated]", styles.marker, "where compression cut a tool result"),
            ("If you need the full…", styles.hint, "the re-run hint added for re-runnable tools"),
            (" microcompacted ", styles.badge_harness, "as sent: the harness's own change, from the file"),
            (" compaction (auto) ", styles.boundary, "the first stored message after a compaction"),
            (" compressed tN age A ", styles.badge, "what-if: tier and age of a compressed tool result"),
            (" t3·27 ", styles.badge, "the same when the long form does not fit (+eph, clr, rm)"),
            (" cleared ", styles.badge, "what-if: also excerpted, summarised"),
            (" +ephemeral ", styles.badge_ephemeral, "reminders were added to this message"),
            (" removed ", styles.badge_removed, "what-if: left out (budget, summarising); ghost line"),
            (" error ", styles.flag, "a tool result that failed (also: no result, a call unanswered)"),
            (" injected ", styles.injected, "a message the harness added, not the user"),
            ("thinking …", styles.thinking, "the model's thinking (Enter expands the message)"),
        ]
        table.append("\n")
        for sample, style, meaning in legend:
            table.append("  ")
            table.append(sample, style)
            table.append(" " * max(24 - len(sample), 1))
            table.append(f"{meaning}\n")
        table.append("\nEscape closes this screen; ctrl+p opens the command palette.", Style(dim=True))
        with VerticalScroll(id="help-body"):
            yield Static(table, id="help-text")


class DetailView(ScrollView, can_focus=True):
    """A read-only, line-API view of one (possibly huge) message.

    Line starts are found once; lines are styled only when they scroll into
    view, and cut at a few thousand characters, so a multi-megabyte message
    stays responsive.
    """

    COMPONENT_CLASSES = {"pane--reminder", "pane--ephemeral", "pane--marker", "pane--hint", "pane--more"}

    MAX_CHARS = 4000

    def __init__(self, text: str, spans: list[tuple[int, int, str]], *, search: str = "",
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.raw = text
        self.span_kinds = spans
        self.search = search  # highlighted; the view opens at its first match (first_match_line)
        starts = array("q", [0])
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(maxsize=400)
        self._styles: PaneStyles | None = None
        longest = 0
        prev = 0
        for start in starts[1:]:
            longest = max(longest, start - prev)
            prev = start
        longest = max(longest, len(text) - prev)
        self.virtual_size = Size(min(longest, self.MAX_CHARS + 24) + 1, len(starts))

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def first_match_line(self) -> int | None:
        """The line of the search term's first occurrence (any case), None without one."""
        if not self.search:
            return None
        from ctxview.tui.search_state import term_pattern

        match = term_pattern(self.search).search(self.raw)
        return None if match is None else bisect_right(self.starts, match.start()) - 1

    def show_first_match(self) -> None:
        line = self.first_match_line()
        if line is not None:
            self.scroll_to(y=max(line - 2, 0), animate=False, immediate=True)

    def _pane_styles(self) -> PaneStyles:
        if self._styles is None:
            self._styles = PaneStyles(
                reminder=self.get_component_rich_style("pane--reminder", partial=True),
                ephemeral=self.get_component_rich_style("pane--ephemeral", partial=True),
                marker=self.get_component_rich_style("pane--marker", partial=True),
                hint=self.get_component_rich_style("pane--hint", partial=True),
                more=self.get_component_rich_style("pane--more", partial=True),
            )
        return self._styles

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= self.line_count:
            return Strip.blank(width, base)
        key = (index, 0)
        strip = self._cache.get(key)
        if strip is None:
            start = self.starts[index]
            end = self.starts[index + 1] - 1 if index + 1 < self.line_count else len(self.raw)
            styles = self._pane_styles()
            spans = [(s, e, getattr(styles, kind)) for s, e, kind in self.span_kinds]
            text = detail_line(self.raw, start, end, spans, styles, self.MAX_CHARS, self.search)
            text.stylize_before(base)
            strip = Strip(list(text.render(self.app.console)), text.cell_len)
            self._cache[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base)


class DetailScreen(Screen[None]):
    """Full text of one message side, read-only."""

    BINDINGS = [
        Binding("escape,q", "dismiss", "Close", id="ctxview.detail_close"),
        Binding("tab", "switch_side", "Other side", id="ctxview.detail_side"),
    ]

    def __init__(self, titles: Mapping[str, Text], sides: dict[str, tuple[str, list[tuple[int, int, str]]]],
                 side: str, search: str = "") -> None:
        """`titles`: each side's header line (its own tokens and badges), `sides`: each side's text
        and spans; `search`: the search term, highlighted, each side opening at its first match."""
        super().__init__(id="detail")
        self.titles = titles
        self.search = search
        self.sides = sides
        self.side = side if side in sides else next(iter(sides))

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="detail-title")
        text, spans = self.sides[self.side]
        yield DetailView(text, spans, search=self.search, id="detail-view")
        yield Static(_plain("Esc closes · Tab switches stored/prepared · arrows/PgUp/PgDn scroll"), id="detail-help")

    def _title(self) -> Text:
        title = self.titles[self.side].copy()
        title.append(f"  [{self.side}]", Style(bold=True))
        return title

    def on_mount(self) -> None:
        view = self.query_one(DetailView)
        view.focus()
        self.call_after_refresh(view.show_first_match)  # (once it has its size)

    async def action_switch_side(self) -> None:
        if len(self.sides) < 2:
            return
        names = list(self.sides)
        self.side = names[(names.index(self.side) + 1) % len(names)]
        old = self.query_one(DetailView)
        text, spans = self.sides[self.side]
        new = DetailView(text, spans, search=self.search, id="detail-view")
        await old.remove()
        await self.mount(new, after=self.query_one("#detail-title"))
        self.query_one("#detail-title", Static).update(self._title())
        new.focus()
        self.call_after_refresh(new.show_first_match)


class TierEditor(ModalScreen[str | None]):
    """Edit the tier spec ("10:full,20:1000,*:100"); checked before it is applied."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.tiers_cancel")]

    def __init__(self, spec: str, check: Callable[[str], list[str]]) -> None:
        super().__init__(id="tier-editor")
        self.spec = spec
        self.check = check  # returns the tiers described, or raises ValueError

    def compose(self) -> ComposeResult:
        with Vertical(id="tier-box"):
            yield Label("Compression tiers, oldest last: AGE:LIMIT,… where LIMIT is a number of characters or full, and * is every older age. Example: 10:full,20:1000,*:100")
            yield Input(self.spec, id="tier-input")
            yield Static(id="tier-preview")
            with Horizontal(id="tier-buttons"):
                yield Button("Apply", id="tier-apply", variant="primary")
                yield Button("Cancel", id="tier-cancel")

    def on_mount(self) -> None:
        self._preview(self.spec)
        self.query_one("#tier-input", Input).focus()

    def _preview(self, spec: str) -> bool:
        preview = self.query_one("#tier-preview", Static)
        try:
            lines = self.check(spec)
        except ValueError as exc:
            preview.update(_plain(make_visible(str(exc)), Style(color="red")))
            return False
        preview.update(_plain("\n".join(lines)))
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        self._preview(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "tier-apply":
            self._apply()
        else:
            self.dismiss(None)

    def _apply(self) -> None:
        value = self.query_one("#tier-input", Input).value
        if self._preview(value):
            self.dismiss(value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConversationPicker(ModalScreen[int | None]):
    """Choose one of the session's conversations (agents, sub-agents)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.picker_cancel")]

    def __init__(self, names: list[tuple[str, int]], current: int) -> None:
        super().__init__(id="picker")
        self.names = names
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for i, (name, count) in enumerate(self.names):
            label = Text(end="")
            label.append(make_visible(name).replace("\n", " "), Style(bold=i == self.current))
            label.append(f"  {count:,} messages", Style(dim=True))
            options.append(Option(label, id=str(i)))
        with Vertical(id="picker-box"):
            yield Label("Switch conversation")
            yield OptionList(*options, id="picker-list")

    def on_mount(self) -> None:
        olist = self.query_one(OptionList)
        olist.highlighted = self.current
        olist.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_cancel(self) -> None:
        self.dismiss(None)


class WriteScreen(ModalScreen[tuple[str, str] | None]):
    """Ask where, and in which API shape, to write the prepared messages."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ctxview.write_cancel")]

    def __init__(self, default: str, shape: str = "openai") -> None:
        """`default`: the file name offered; `shape`: the one chosen at first (the source's own)."""
        super().__init__(id="write")
        self.default = default
        self.shape = shape

    def compose(self) -> ComposeResult:
        with Vertical(id="write-box"):
            yield Label("Write the prepared messages (a request body) to:")
            yield Input(self.default, id="write-input")
            yield Label("shape", classes="control-label")
            yield Select([("OpenAI chat completions", "openai"), ("Anthropic messages", "anthropic")],
                         value=self.shape, allow_blank=False, id="write-shape", compact=True)
            yield Label("Enter writes (atomically; never over the input file; asks before replacing a file) · "
                        "Esc cancels", classes="hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        shape = str(self.query_one("#write-shape", Select).value)
        self.dismiss((value, shape) if value else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class BloatScreen(ModalScreen[None]):
    """The bloat report, as prepared text lines."""

    BINDINGS = [Binding("escape,q,b", "dismiss", "Close", id="ctxview.bloat_close")]

    def __init__(self, report: Text) -> None:
        super().__init__(id="bloat")
        self.report = report

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="bloat-body"):
            yield Static(self.report, id="bloat-text")

    def show(self, report: Text) -> None:
        self.report = report
        self.query_one("#bloat-text", Static).update(report)


def bloat_text(report: Any, name: str, advice: tuple[list, list] | None = None) -> Text:
    """A BloatReport as Text: verdict, where the tokens go, what to do. `advice`: the recommendations
    replayed and priced (advice.rank_advice: those that save, by dollars; those that raise the bill),
    shown instead of the tokens alone."""
    bold, dim = Style(bold=True), Style(dim=True)
    text = Text(end="")
    text.append("Context bloat: ", bold)
    text.append(make_visible(name), bold)
    text.append("\n\n")
    none = report.rule.startswith("no verdict")
    verdict = "BLOATED" if report.bloated else "no verdict" if none else "not bloated"
    text.append(verdict, Style(bold=True, color="red" if report.bloated else "yellow" if none else "green"))
    share = report.share
    approx = "≈ " if report.basis == "calibrated" else ""
    text.append(f"  {approx}{report.total_tokens:,} tokens {report.basis} (the request as sent)")
    if share is not None:
        text.append(f" = {share:.0%} of {report.context_window:,}")
    text.append(f"\n{make_visible(report.rule)} (counter {make_visible(report.counter)})\n", dim)
    text.append("the parts below are counted, each message's tokens as the counter counts them\n", dim)
    text.append(f"tool results {report.tool_result_tokens:,} tokens · reminders: "
                f"{report.reminder_tokens_stored:,} stored in history, "
                f"{report.reminder_tokens_ephemeral:,} ephemeral\n")

    def table(title: str, rows: list[tuple[str, str]]) -> None:
        if not rows:
            return
        text.append(f"\n{title}\n", bold)
        width = max(len(a) for a, _ in rows)
        for a, b in rows:
            text.append(f"  {a:<{width}}  ", dim)
            text.append(f"{b}\n")

    table("By role", [(make_visible(k), f"{v:,}") for k, v in report.by_role.items()])
    table("By tool", [(make_visible(k), f"{v:,}") for k, v in list(report.by_tool.items())[:10]])
    table("Largest messages", [
        (f"#{x['index']}", f"{make_visible(str(x['role']))} {make_visible(str(x.get('tool') or ''))}"
                           f"  {x['tokens']:,}") for x in report.largest])
    table("Repeated tool results", [
        (make_visible(str(x["tool"])), f"{x['kind']}: {len(x['indices'])} copies, {x['wasted_tokens']:,} wasted")
        for x in report.repeated[:10]])
    if report.stale:
        tokens = sum(x["tokens"] for x in report.stale)
        text.append(f"\nStale large tool results: {len(report.stale):,} ({tokens:,} tokens)\n", bold)
    if advice is None:
        table("Recommendations", [
            (make_visible(r.setting), f"{make_visible(r.action)} (saves {r.saves:,} {report.basis} tokens)") for r in report.recommendations])
    else:
        def said(x: dict) -> str:
            r = x.get("replay")
            if r is None:
                return f"{make_visible(x['action'])} (saves {x['saves']:,} tokens; {x.get('not_replayed', '')})"
            share = "-" if r["read_share"] is None else f"{r['read_share']:.0%}"
            return (f"{make_visible(x['action'])}: {r['verdict']}, {r['tokens_saved_per_request']:,} tokens less "
                    f"per request, cache reads {share}")

        table("Recommendations (replayed through the prompt cache, most dollars saved first)",
              [(make_visible(x["setting"]), said(x)) for x in advice[0]])
        table("Not recommended: each raises the bill", [(make_visible(x["setting"]), said(x)) for x in advice[1]])
    text.append("\nEscape closes.", dim)
    return text
