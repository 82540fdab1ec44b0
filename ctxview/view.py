"""What the pipeline produces and the inspector renders.

`Settings` go in; a `PreparedView` comes out: one `Row` per stored message
(plus rows for messages the pipeline inserted, such as a summary checkpoint),
each pairing the stored form with the prepared form and saying what changed
and why. The TUI and `ctxview report` only read these values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .model import Message

__all__ = ["Change", "ClearSettings", "PreparedView", "Row", "Settings", "Span", "OLD_MESSAGE_STRATEGIES"]

# (start, end) character offsets into a message's text, end exclusive.
Span = tuple[int, int]

OLD_MESSAGE_STRATEGIES = ("keep", "truncate", "remove", "llm")


@dataclass(frozen=True, slots=True)
class ClearSettings:
    """Anthropic-style clearing of old tool uses (clear_tool_uses)."""

    keep: int = 3                       # most recent tool results left intact
    exclude: tuple[str, ...] = ()       # tool names never cleared
    clear_inputs: bool = False          # also clear the tool-call arguments
    trigger: int = 0                    # only when total tokens exceed this
    min_saving: int = 0                 # clear nothing unless this many tokens are saved
    placeholder: str = "[tool result cleared to save context]"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides how stored messages become prepared ones."""

    keep_recent: int = 10
    tiers: str = "default"              # a preset name or a tier spec (see compression.parse_tiers)
    compression: bool = True
    tool_name_from: str = "content"     # "content" (the seed's detection) or "tool_call"
    clear: ClearSettings | None = None  # None: no clearing
    old_messages: str = "keep"          # one of OLD_MESSAGE_STRATEGIES
    summarize_before: int | None = None  # index; None with a strategy: everything before the recent part
    budget: int | None = None           # token budget for truncate_to_fit; None: no budget
    context_window: int | None = None   # overrides the conversation's / model table's
    embed_ephemeral: bool = True        # add the conversation's recorded ephemeral reminders
    request: int | None = None          # prepare as for the model call that produced the
                                        # assistant message at this index; None: the next call
    counter: str = "auto"               # token counter name (see tokens.get_counter)


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


@dataclass(frozen=True, slots=True)
class PreparedView:
    """A conversation run through the pipeline with one set of Settings."""

    settings: Settings
    rows: tuple[Row, ...]
    prepared: tuple[Message, ...]       # exactly what goes to the model, in order
    system_prompt: str | None = None
    tokens_stored: int = 0
    tokens_prepared: int = 0
    system_tokens: int = 0              # counted in both totals above
    context_window: int | None = None
    budget_shortfall: int = 0           # tokens still over the budget after fitting
    recorded_input_tokens: int | None = None   # what the source recorded for this request
    requests: tuple[int, ...] = ()      # indices of assistant messages that mark model calls
    counter_name: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)  # counts: compressed, cleared, removed, ...

    @property
    def window_share(self) -> float | None:
        """Prepared tokens as a share of the context window."""
        if not self.context_window:
            return None
        return self.tokens_prepared / self.context_window
