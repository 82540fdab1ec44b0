"""Clearing old tool uses, as Anthropic's `clear_tool_uses_20250919` context edit does.

Once the context passes a trigger (in tokens, or in tool uses), every tool
result except the `keep` most recent is replaced by a short placeholder;
tools named in `exclude` are never cleared; with `clear_inputs` the arguments
of the calls whose results were cleared are emptied too (of every call, or of
the named tools' calls). If clearing would save fewer than `min_saving`
tokens, nothing is cleared (a cleared prefix breaks prompt caching, so a small
saving is not worth it: the API's clear_at_least). The messages stay in place,
so no call loses its result. With ClearSettings.api the trigger counts the
whole prompt, as the API does: the caller passes the tokens outside the
messages (`base`: the system prompt and the tool definitions).

The trigger and the minimum saving are in the model's tokens, as the API's are: `units`
(context_tokens.TokenUnits) turns the counter's tokens into them; without it they are compared
with the counter's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ctxview.engine.compression import detect_tool_name
from ctxview.engine.context_tokens import COUNTED, TokenUnits
from ctxview.model import Message, ToolCall
from ctxview.engine.tokens import SwarmEstimate, TokenCounter
from ctxview.settings import ClearSettings

__all__ = ["ClearResult", "clear_tool_uses", "clearing_saving", "plan_clearing", "tool_name_of"]

DEFAULT_PLACEHOLDER = ClearSettings().placeholder


@dataclass(frozen=True, slots=True)
class ClearResult:
    messages: tuple[Message, ...]
    cleared: tuple[int, ...] = ()          # tool results replaced by the placeholder
    inputs_cleared: tuple[int, ...] = ()   # assistant messages whose call arguments were emptied
    saved_tokens: int = 0
    triggered: bool = False                # the context was over the trigger
    reason: str = ""                       # why nothing was cleared, when nothing was


def tool_name_of(msg: Message, names_by_call: dict[str, str]) -> str | None:
    """A tool result's tool: recorded name, else the linked call's name, else detected from the text."""
    if msg.tool_name:
        return msg.tool_name
    if msg.tool_call_id and msg.tool_call_id in names_by_call:
        return names_by_call[msg.tool_call_id]
    return detect_tool_name(msg.text)


def plan_clearing(
    messages: Sequence[Message],
    settings: ClearSettings = ClearSettings(),
    counter: TokenCounter | None = None,
    *,
    counts: Sequence[int] | None = None,
    measure: Callable[[Message], int] | None = None,
    blank: Callable[[Message, str], Message] | None = None,
    base: int = 0,
    units: TokenUnits = COUNTED,
) -> ClearResult:
    """Clear old tool results per `settings`; report what was cleared and the tokens saved.

    counts, measure (tokens of one message) and blank (a message with its
    content replaced) let a caller with caches supply them. base: the prompt's
    tokens outside the messages, which an API trigger counts (settings.api).
    units: how the counter's tokens become the model's, in which the trigger and
    the minimum saving are given. saved_tokens is in the counter's tokens.
    """
    counter = counter or SwarmEstimate()
    measure = measure or counter.count_message
    if counts is None:
        counts = [measure(m) for m in messages]
    if settings.trigger and settings.trigger_unit == "tool_uses":
        uses = sum(1 for m in messages if m.role == "tool")
        if uses <= settings.trigger:
            return ClearResult(tuple(messages), reason=f"{uses:,} tool uses ≤ trigger {settings.trigger:,}")
    elif settings.trigger:
        total = units.model(sum(counts) + base) if settings.api else units.part(sum(counts))
        if total <= settings.trigger:
            return ClearResult(tuple(messages), reason=f"context {total:,} tokens ≤ trigger {settings.trigger:,}")
    inputs_of = settings.clear_inputs if type(settings.clear_inputs) is tuple else None
    names: dict[str, str] = {}
    call_at: dict[str, int] = {}
    if settings.exclude or settings.clear_inputs:  # only these read the calls
        for i, m in enumerate(messages):
            for call in m.tool_calls:
                if call.id:
                    names[call.id] = call.name
                    call_at[call.id] = i
    results = [i for i, m in enumerate(messages) if m.role == "tool"]
    keep = max(settings.keep, 0)
    old = results[: max(len(results) - keep, 0)]
    exclude = set(settings.exclude)
    placeholder = settings.placeholder
    out = list(messages)
    cleared: list[int] = []
    saved = 0
    emptied: dict[int, set[str]] = {}
    for i in old:
        msg = out[i]
        text = msg.content  # (msg.text without the property call: this runs once per old result)
        if (text if type(text) is str else msg.text) == placeholder:
            continue  # cleared already
        if exclude and tool_name_of(msg, names) in exclude:
            continue
        new = blank(msg, placeholder) if blank is not None else msg.with_content(placeholder)
        saved += counts[i] - measure(new)
        out[i] = new
        cleared.append(i)
        if (settings.clear_inputs and msg.tool_call_id in call_at
                and (inputs_of is None or names.get(msg.tool_call_id) in inputs_of)):
            emptied.setdefault(call_at[msg.tool_call_id], set()).add(msg.tool_call_id)
    inputs_cleared = []
    for j, ids in sorted(emptied.items()):
        msg = out[j]
        calls = tuple(ToolCall(c.id, c.name, {}) if c.id in ids and c.arguments else c for c in msg.tool_calls)
        if calls != msg.tool_calls:
            new = msg.replace(tool_calls=calls)
            saved += counts[j] - measure(new)
            out[j] = new
            inputs_cleared.append(j)
    if not cleared:
        return ClearResult(tuple(messages), triggered=True, reason="no tool result old enough to clear")
    if units.part(saved) < settings.min_saving:
        return ClearResult(
            tuple(messages), triggered=True,
            reason=f"clearing would save {units.part(saved):,} tokens < minimum {settings.min_saving:,}",
        )
    return ClearResult(tuple(out), tuple(cleared), tuple(inputs_cleared), saved, True)


def clearing_saving(
    messages: Sequence[Message],
    settings: ClearSettings,
    counter: TokenCounter,
    counts: Sequence[int],
    measure: Callable[[Message], int],
    blank: Callable[[Message, str], Message] | None = None,
    results: Sequence[int] | None = None,
    by_text: Mapping[str, Sequence[int]] | None = None,
) -> tuple[int, int]:
    """(results cleared, tokens saved) of plan_clearing(messages, settings, counter, counts=counts,
    measure=measure, blank=blank). `results` and `by_text` are what a caller may know of the tool
    results already; the rule does not need them (its twin in _fast.bloat does)."""
    result = plan_clearing(messages, settings, counter, counts=counts, measure=measure, blank=blank)
    return len(result.cleared), result.saved_tokens


def clear_tool_uses(
    messages: Sequence[Message],
    keep: int = 3,
    *,
    exclude: Sequence[str] = (),
    clear_inputs: bool = False,
    trigger: int = 0,
    min_saving: int = 0,
    placeholder: str = DEFAULT_PLACEHOLDER,
    counter: TokenCounter | None = None,
) -> list[Message]:
    """Messages with all but the `keep` most recent tool results cleared (see plan_clearing)."""
    settings = ClearSettings(keep, tuple(exclude), clear_inputs, trigger, min_saving, placeholder)
    return list(plan_clearing(messages, settings, counter).messages)
