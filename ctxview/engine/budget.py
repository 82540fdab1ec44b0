"""Fitting a conversation to a token budget, and summarising its old part.

`truncate_to_fit` / `fit_to_budget` drop the oldest messages until the rest
fits; `summarize_old_messages` / `plan_summary` shorten, remove or summarise
the messages before an index. Both treat an assistant message with tool calls
and its tool results as one unit (see `grouping`), so a request never holds
a result without its call or a call without its result. System messages are
never dropped or summarised. Inputs are never mutated.

The first turn stays the user's (providers reject a request whose first
message is the assistant's): when fitting drops messages and leaves an
assistant (or tool, or blank user) unit first, that unit is dropped too, and
so on; when the unit left first is protected, the nearest dropped user
message before it is kept after all (its tokens may leave a shortfall). Summarising puts a user
message (the removal marker or the checkpoint) where the old messages were.
A conversation that itself starts with the assistant is left as it is.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ctxview.engine.compression import DEFAULT_MARKER
from ctxview.engine.context_tokens import TokenUnits
from ctxview.engine.grouping import units
from ctxview.model import Content, Message
from ctxview.engine.reminders import strip as strip_reminders
from ctxview.engine.tokens import SwarmEstimate, TokenCounter

__all__ = [
    "ERROR_LINE",
    "FitResult",
    "PATH_KEYS",
    "SUMMARY_STRATEGIES",
    "budget_shortfall",
    "SummaryResult",
    "extractive_summary",
    "first_line",
    "fit_plan",
    "fit_to_budget",
    "plan_summary",
    "summary_span",
    "summarize_old_messages",
    "summary_text",
    "truncate_to_fit",
]

SUMMARY_STRATEGIES = ("keep", "truncate", "remove", "llm")
EXCERPT_CHARS = 200
MARKER_KIND = "ctxview"   # meta key of the messages this module inserts


# --- budget ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FitResult:
    """What fit_to_budget kept and dropped."""

    messages: tuple[Message, ...]
    kept: tuple[int, ...]          # indices into the input, in order
    dropped: tuple[int, ...]
    tokens: int                    # total of the kept messages
    budget: int
    shortfall: int                 # tokens still over budget (the protected part alone is too big)

    @property
    def fits(self) -> bool:
        return self.shortfall == 0


def fit_to_budget(
    messages: Sequence[Message],
    max_tokens: int,
    keep_recent: int = 10,
    counter: TokenCounter | None = None,
    *,
    counts: Sequence[int] | None = None,
    protected: Sequence[int] = (),
    unit_list: Sequence[Sequence[int]] | None = None,
) -> FitResult:
    """Drop the oldest unprotected units until the total fits `max_tokens`.

    Protected: system messages, the last `keep_recent` messages, the indices in
    `protected`, and every message sharing a unit with one of those.
    `counts` (tokens per message) and `unit_list` (grouping.units(messages))
    may be passed in when the caller has them already. What is kept starts
    with a user turn (the module docstring says how).
    """
    if counts is None:
        counter = counter or SwarmEstimate()
        counts = [counter.count_message(m) for m in messages]
    gone, total = fit_plan(messages, max_tokens, keep_recent, counts, protected, unit_list)
    kept = tuple(i for i in range(len(messages)) if i not in gone)
    return FitResult(
        messages=tuple(messages[i] for i in kept),
        kept=kept,
        dropped=tuple(sorted(gone)),
        tokens=total,
        budget=max_tokens,
        shortfall=max(0, total - max_tokens),
    )


def fit_plan(messages: Sequence[Message], max_tokens: int, keep_recent: int, counts: Sequence[int],
             protected: Sequence[int] = (), unit_list: Sequence[Sequence[int]] | None = None) -> tuple[set[int], int]:
    """What fit_to_budget drops, and the tokens of what it keeps (for a caller that needs no more)."""
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be ≥ 0, not {max_tokens}")
    n = len(messages)
    total = sum(counts)
    dropped: list[int] = []
    gone: set[int] = set()
    if total > max_tokens:
        recent_from = n - max(keep_recent, 0)
        extra = set(protected)

        all_units = units(messages) if unit_list is None else unit_list
        for unit in all_units:
            if total <= max_tokens:
                break
            for i in unit:  # (a loop, not any() over a generator: this runs once per unit of 100k)
                if i >= recent_from or i in extra or messages[i].role == "system":
                    break
            else:
                dropped.extend(unit)
                for i in unit:
                    total -= counts[i]

        def is_protected(unit: Sequence[int]) -> bool:
            return any(i >= recent_from or i in extra or messages[i].role == "system" for i in unit)

        if dropped:
            gone = set(dropped)
            total -= _user_first(messages, counts, all_units, gone, is_protected)
    return gone, total


def _is_user_turn(msg: Message) -> bool:
    # A blank user message is no turn: the request bodies leave it out (the APIs reject empty text).
    return msg.role == "user" and bool(msg.text.strip())


def _user_first(messages: Sequence[Message], counts: Sequence[int], all_units: Sequence[Sequence[int]],
                gone: set[int], is_protected: Callable[[Sequence[int]], bool]) -> int:
    """Make the first unit kept (after system messages) start with a user message (see the module
    docstring); updates `gone` and returns the tokens it dropped minus those it kept again."""
    saved = 0
    for unit in all_units:
        head = unit[0]
        if head in gone or messages[head].role == "system":
            continue
        if _is_user_turn(messages[head]):
            return saved
        if not is_protected(unit):
            gone.update(unit)
            saved += sum(counts[i] for i in unit)
            continue
        # A protected assistant turn leads: keep the user message that came before it.
        for i in range(head - 1, -1, -1):
            if i in gone and _is_user_turn(messages[i]) and not messages[i].tool_calls:
                gone.discard(i)  # (a user message without calls is a unit of its own)
                saved -= counts[i]
                break
        return saved
    return saved


def budget_shortfall(units: TokenUnits, budget: int, kept: int) -> int:
    """How far a request of `kept` counted tokens (system block included) is over `budget` of the
    model's tokens (0: within it)."""
    return max(0, units.model(kept) - budget)


def truncate_to_fit(
    messages: Sequence[Message],
    max_tokens: int,
    keep_recent: int = 10,
    counter: TokenCounter | None = None,
) -> list[Message]:
    """Messages whose total fits `max_tokens`, oldest dropped first (see fit_to_budget).

    When the protected part alone exceeds the budget it is returned anyway;
    `fit_to_budget(...).shortfall` says by how much.
    """
    return list(fit_to_budget(messages, max_tokens, keep_recent, counter).messages)


# --- summarising -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What plan_summary did to the messages before the boundary."""

    messages: tuple[Message, ...]
    strategy: str
    boundary: int                      # messages before this index were summarised (adjusted to units)
    removed: tuple[int, ...] = ()      # input indices left out ("remove", "llm")
    excerpted: tuple[int, ...] = ()    # input indices shortened ("truncate")
    inserted: Message | None = None    # the marker or checkpoint message
    insert_at: int | None = None       # input index the inserted message stands in front of


def _adjusted_boundary(messages: Sequence[Message], before_index: int,
                       unit_list: Sequence[Sequence[int]] | None = None) -> int:
    """Move the boundary down so that no unit straddles it."""
    spans = [(u[0], u[-1]) for u in (units(messages) if unit_list is None else unit_list) if len(u) > 1]
    b = before_index
    moved = True
    while moved:
        moved = False
        for head, last in spans:
            if head < b <= last:
                b = head
                moved = True
    return b


def _excerpt(msg: Message, max_chars: int) -> Message:
    text = msg.text
    if len(text) <= max_chars:
        return msg
    cut = text[:max_chars] + DEFAULT_MARKER.replace("{n}", str(len(text) - max_chars))
    if len(cut) >= len(text):  # the marker would make it longer: leave it whole
        return msg
    content = Content(cut, msg.content.attachments) if isinstance(msg.content, Content) else cut
    return msg.with_content(content)


def removal_marker(count: int) -> Message:
    noun = "message" if count == 1 else "messages"
    return Message(
        role="user",
        content=f"[{count} earlier {noun} removed to save context]",
        injected=True,
        meta={MARKER_KIND: "removed"},
    )


def checkpoint_message(count: int, summary: str) -> Message:
    noun = "message" if count == 1 else "messages"
    return Message(
        role="user",
        content=f"[Summary of {count} earlier {noun}]\n{summary}",
        injected=True,
        meta={MARKER_KIND: "summary"},
    )


def summary_span(messages: Sequence[Message], before_index: int,
                 unit_list: Sequence[Sequence[int]] | None = None) -> tuple[int, list[int]]:
    """What "remove" and "llm" take out: the boundary (`before_index` moved down so that no unit
    straddles it) and the indices before it that are not system messages."""
    b = _adjusted_boundary(messages, max(0, min(before_index, len(messages))), unit_list)
    return b, [i for i in range(b) if messages[i].role != "system"]


def plan_summary(
    messages: Sequence[Message],
    before_index: int,
    strategy: str = "truncate",
    *,
    summarizer: Callable[[Sequence[Message]], str] | None = None,
    excerpt_chars: int = EXCERPT_CHARS,
    unit_list: Sequence[Sequence[int]] | None = None,
) -> SummaryResult:
    """Apply a strategy to the messages before `before_index` and say what changed.

    `unit_list` (grouping.units(messages)) may be passed in when the caller has it already.
    """
    if strategy not in SUMMARY_STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (valid: {', '.join(SUMMARY_STRATEGIES)})")
    n = len(messages)
    b = max(0, min(before_index, n))
    if strategy == "keep" or b == 0:
        return SummaryResult(tuple(messages), strategy, b)
    if strategy == "truncate":
        out = list(messages)
        excerpted = []
        for i in range(b):
            if out[i].role == "system":
                continue
            short = _excerpt(out[i], excerpt_chars)
            if short is not out[i]:
                out[i] = short
                excerpted.append(i)
        return SummaryResult(tuple(out), strategy, b, excerpted=tuple(excerpted))
    b, removed = summary_span(messages, b, unit_list)
    if not removed:
        return SummaryResult(tuple(messages), strategy, b)
    if strategy == "remove":
        inserted = removal_marker(len(removed))
    else:
        old = [messages[i] for i in removed]
        text = summarizer(old) if summarizer is not None else extractive_summary(old)
        inserted = checkpoint_message(len(removed), str(text))
    first = removed[0]
    gone = set(removed)
    out = [m for i, m in enumerate(messages[:first]) if i not in gone]
    out.append(inserted)
    out.extend(m for i, m in enumerate(messages[first:], first) if i not in gone)
    return SummaryResult(tuple(out), strategy, b, removed=tuple(removed), inserted=inserted, insert_at=first)


def summarize_old_messages(
    messages: Sequence[Message],
    before_index: int,
    strategy: str = "truncate",
    *,
    summarizer: Callable[[Sequence[Message]], str] | None = None,
    excerpt_chars: int = EXCERPT_CHARS,
) -> list[Message]:
    """The messages with those before `before_index` summarised.

    "truncate": each shortened to an excerpt with the seed's marker;
    "remove": dropped, one marker message saying how many stands in their place;
    "llm": replaced by one checkpoint message from `summarizer(old_messages)`,
    or from the offline `extractive_summary` when none is given;
    "keep": unchanged. System messages stay; a tool call and its results are
    never split (the boundary moves down to keep them together).
    """
    return list(
        plan_summary(messages, before_index, strategy, summarizer=summarizer, excerpt_chars=excerpt_chars).messages
    )


# --- offline extractive summary ----------------------------------------------

PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "file", "target_file")
ERROR_LINE = re.compile(r"(?im)^.*\b(error|exception|traceback|failed|failure|not found|denied)\b.*$")


def first_line(text: str, limit: int = 160) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def extractive_summary(messages: Sequence[Message], *, max_requests: int = 10, max_errors: int = 5) -> str:
    """A checkpoint built without a model: the user's requests (the first max_requests shown, the
    others counted), tools used with counts, files touched and errors seen, each drawn from the
    messages as they are."""
    requests: list[str] = []
    tools: Counter[str] = Counter()
    files: dict[str, None] = {}   # (a dict: the files in the order first touched)
    errors: list[str] = []
    for msg in messages:
        if msg.role == "user" and not msg.injected:
            text = strip_reminders(msg.text) or ""
            if text.strip():
                requests.append(first_line(text))
        for call in msg.tool_calls:
            tools[call.name or "?"] += 1
            get = getattr(call.arguments, "get", None)
            for key in PATH_KEYS if get is not None else ():
                value = get(key)
                if isinstance(value, str) and value:
                    files.setdefault(value, None)
        if msg.role == "tool" and len(errors) < max_errors:
            found = ERROR_LINE.search(msg.text)
            if found:
                errors.append(first_line(found.group(0)))
    shown = requests[:max(max_requests, 0)]
    return summary_text(shown, len(requests) - len(shown), tools, files, errors)


def summary_text(requests: Sequence[str], more_requests: int, tools: Counter[str], files: Mapping[str, None],
                 errors: Sequence[str]) -> str:
    """The checkpoint's text: the requests shown and how many more there were, tools with counts,
    files touched (the first 20), errors seen."""
    lines: list[str] = []
    if requests or more_requests:
        lines.append("User requests:")
        lines.extend(f"- {r}" for r in requests)
        if more_requests:
            lines.append(f"- … and {more_requests} more")
    if tools:
        lines.append("Tools used: " + ", ".join(f"{name} ×{n}" for name, n in tools.most_common()))
    if files:
        shown = list(files)[:20]
        more = f" (+{len(files) - len(shown)} more)" if len(files) > len(shown) else ""
        lines.append("Files touched: " + ", ".join(shown) + more)
    if errors:
        lines.append("Errors seen:")
        lines.extend(f"- {e}" for e in errors)
    if not lines:
        lines.append("(nothing to summarise)")
    return "\n".join(lines)
