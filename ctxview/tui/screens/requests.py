"""The requests screen (`L`): every request of the conversation, one line each, Enter opens it.

Each line: the request's number and message, its time, its context in the model's tokens with
the basis, the tokens added since the previous request, what the cache read, wrote and lost (and
why), and what it cost: the rows of `ctxview report --requests` (request_table), computed in a
thread when the screen opens.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ctxview.sanitize import make_visible

__all__ = ["RequestsScreen", "request_label"]

_DIM = Style(dim=True)


def request_label(row: dict[str, Any]) -> Text:
    """One request as a line: `12  #41  20:41:37  ≈ 64,531 calibrated  +699  lost 89,607 (ttl)  $0.0582`."""
    text = Text(end="", no_wrap=True, overflow="ellipsis")
    c = row["context"]
    text.append(f"{row['number']:>4}  ", _DIM)
    text.append(f"#{row['index']:<6} ")
    text.append(f"{make_visible((row['timestamp'] or '')[11:19]):8}  ", _DIM)
    text.append(("≈ " if c["basis"] == "calibrated" else "") + f"{c['tokens']:>9,}", Style(bold=True))
    text.append(f" {c['basis']:<10}", _DIM)
    text.append(f"{'' if row['added'] is None else format(row['added'], '+,'):>9}  ")
    cache = row["cache"]
    if cache and cache["lost"]:
        text.append(f"lost {cache['lost']:,} ({make_visible(str(cache['cause']))})", Style(color="dark_orange"))
    elif cache:
        text.append(f"read {cache['read']:,} write {cache['write']:,}", _DIM)
    if row["usd"] is not None:
        text.append(f"  ${row['usd']:.4f}", _DIM)
    return text


class RequestsScreen(ModalScreen["int | None"]):
    """Pick a request: its index (the assistant message) is returned, None on Escape."""

    BINDINGS = [Binding("escape,q,L", "cancel", "Close", id="ctxview.requests_close")]
    DEFAULT_CSS = """
    RequestsScreen { align: center middle; }
    #requests-box { width: 120; max-width: 95%; height: 90%; padding: 0 1; background: $surface;
                    border: round $primary; }
    #requests-list { height: 1fr; }
    """

    def __init__(self, conversation: Any, settings: Any, cache: Any, prices: Any = None) -> None:
        super().__init__(id="requests")
        self.conversation, self.settings, self.cache, self.prices = conversation, settings, cache, prices
        self.rows: list[dict[str, Any]] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="requests-box"):
            yield Label("Requests · context in the model's tokens (≈: calibrated) · Enter opens one", id="requests-title")
            yield OptionList(Option(Text("computing the requests…", _DIM), id="-1", disabled=True), id="requests-list")

    def on_mount(self) -> None:
        self._compute()

    @work(thread=True, exclusive=True, group="requests", exit_on_error=False)
    def _compute(self) -> None:
        from ctxview.analysis.prices import PriceTable
        from ctxview.analysis.request_table import request_rows

        try:
            counter = self.cache.counter(self.conversation, self.settings.counter)
            rows, _ = request_rows(self.conversation, counter, self.cache, self.prices or PriceTable())
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback
            self.app.call_from_thread(self._failed, " ".join(str(exc).split()))
            return
        self.app.call_from_thread(self._show, rows)

    def _failed(self, error: str) -> None:
        olist = self.query_one(OptionList)
        olist.clear_options()
        olist.add_option(Option(Text(f"requests: {make_visible(error)}"), id="-1", disabled=True))

    def _show(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        olist = self.query_one(OptionList)
        olist.clear_options()
        if not rows:
            olist.add_option(Option(Text("no requests in this conversation", _DIM), id="-1", disabled=True))
            return
        olist.add_options([Option(request_label(r), id=str(r["index"])) for r in rows])
        shown = self.settings.request
        at = next((p for p, r in enumerate(rows) if r["index"] == shown), len(rows) - 1)
        olist.highlighted = at
        olist.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        index = int(event.option.id or -1)
        if index >= 0:
            self.dismiss(index)

    def action_cancel(self) -> None:
        self.dismiss(None)
