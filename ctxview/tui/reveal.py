"""Where in a block the thing a jump landed on is: the line to show.

Search (`/`, `n`), `r` and `x` land on a row; what they found can sit below a collapsed
preview (line 13 of a three-line preview). The block's lines as rendered carry the styles of
what they hold (the search highlight, a reminder, an ephemeral reminder, the truncation marker),
so the first line carrying one of those styles is the one to bring on screen; when the
collapsed block has none, the expanded block is asked (PanePair.reveal expands the row).
"""

from __future__ import annotations

from typing import Iterable, Literal, Sequence

from rich.style import Style
from rich.text import Text

from ctxview.tui.render import PaneStyles

__all__ = ["Kind", "first_styled_line", "reveal_scroll", "target_styles"]

Kind = Literal["search", "reminder", "changed"]


def target_styles(kind: Kind, styles: PaneStyles) -> tuple[Style, ...]:
    """The styles that mark what a jump of `kind` looks for."""
    if kind == "search":
        return (styles.search,)
    if kind == "reminder":
        return (styles.reminder, styles.ephemeral)
    return (styles.ephemeral, styles.marker)  # what a change added: reminders, compression's cut


def first_styled_line(lines: Sequence[Text], wanted: Iterable[Style]) -> int | None:
    """The index of the first line with a span in one of the `wanted` styles (None: none)."""
    wanted = tuple(wanted)
    for i, line in enumerate(lines):
        for span in line.spans:
            if span.style in wanted:
                return i
    return None


def reveal_scroll(top: int, line: int, y: float, viewport: int) -> float:
    """The scroll offset that shows line `line` of a block starting at `top`, with its header when
    both fit (else the line a third down the viewport), moving as little as it must."""
    target = top + line
    if line < viewport:
        if top < y:
            return top
        if target + 1 > y + viewport:
            return target + 1 - viewport
        return y
    if y <= target < y + viewport:
        return y
    return max(target - viewport // 3, 0)
