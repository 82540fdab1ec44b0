"""Anthropic's own context edits as what-ifs: the presets, their two stages, and the request block.

The Messages API edits a request server-side when it carries `context_management.edits`
(beta; see docs/notes/s21-apiedits.md for what the docs say and where):

- `clear_tool_uses_20250919` (beta header context-management-2025-06-27): once the prompt is
  over `trigger` (100,000 input tokens by default), the oldest tool results are replaced by a
  placeholder, all but the `keep` most recent (3 by default). ctxview runs it with its own
  clearing (clearing.plan_clearing, ClearSettings.api).
- `clear_thinking_20251015` (same header): the thinking of the `keep` most recent assistant turns
  with thinking is kept (1 by default, or "all"), older turns lose theirs (`plan_thinking_clearing`).
- `compact_20260112` (beta header compact-2026-01-12): once a request's input reaches `trigger`
  (150,000 by default, at least 50,000), the conversation so far is summarised into a compaction
  block and what came before it is no longer sent (`compaction_point`; the summary stage makes
  the stand-in summary).

`PRESETS` holds each with the API's defaults; `parse_api_edit` reads "NAME[:key=value,...]";
`context_management(settings)` is the block that asks the API for the edits in force and
`beta_headers(settings)` the headers it needs.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ctxview.engine.context_tokens import COUNTED, TokenUnits
from ctxview.sanitize import excerpt
from ctxview.model import Message, request_indices
from ctxview.plain_number import plain_number
from ctxview.settings import ClearSettings, CompactSettings, Settings, ThinkingClearSettings

__all__ = ["BETA_COMPACT", "BETA_CONTEXT_MANAGEMENT", "PRESETS", "ThinkingClearResult", "api_edits_of",
           "beta_headers", "compaction_point", "context_management", "parse_api_edit", "plan_thinking_clearing",
           "without_api_edits"]

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"  # clear_tool_uses and clear_thinking
BETA_COMPACT = "compact-2026-01-12"                        # compact_20260112

# Each edit with the API's documented defaults, and the Settings field it sets.
PRESETS: dict[str, tuple[str, Any]] = {
    "clear_tool_uses_20250919": ("clear", ClearSettings(keep=3, trigger=100_000, api=True)),
    "clear_thinking_20251015": ("clear_thinking", ThinkingClearSettings(keep=1)),
    "compact_20260112": ("compact", CompactSettings(trigger=150_000)),
}
_ALIASES = {"clear-tool-uses": "clear_tool_uses_20250919", "clear_tool_uses": "clear_tool_uses_20250919",
            "clear-thinking": "clear_thinking_20251015", "clear_thinking": "clear_thinking_20251015",
            "compact": "compact_20260112", "compaction": "compact_20260112"}
# The keys each edit takes on the command line, as the API names them, and ctxview's field for each.
_KEYS = {
    "clear_tool_uses_20250919": {"trigger": "trigger", "trigger_tool_uses": "trigger", "keep": "keep",
                                 "clear_at_least": "min_saving", "exclude_tools": "exclude",
                                 "clear_tool_inputs": "clear_inputs"},
    "clear_thinking_20251015": {"keep": "keep"},
    "compact_20260112": {"trigger": "trigger", "instructions": "instructions"},
}


def _number(key: str, text: str) -> int:
    number = plain_number(text.replace("_", "").replace(",", ""), 16)
    if number is None:
        raise ValueError(f"{key} must be a whole number, not {excerpt(text)}")
    return number


def parse_api_edit(text: str) -> tuple[str, Any]:
    """("clear" | "clear_thinking" | "compact", its settings) from "NAME" or "NAME:key=value,...":
    the preset with the API's defaults, then the values given (ValueError naming a bad part).
    Keys as the API names them: trigger, trigger_tool_uses, keep, clear_at_least, exclude_tools
    (names joined by |), clear_tool_inputs (true, false or names joined by |); keep (a number or
    all); trigger, instructions (the rest of the text: it may hold commas)."""
    name, _, rest = text.strip().partition(":")
    name = _ALIASES.get(name.strip(), name.strip())
    if name not in PRESETS:
        raise ValueError(f"unknown API edit {excerpt(name)} (choices: {', '.join(PRESETS)})")
    field, value = PRESETS[name]
    changes: dict[str, Any] = {}
    rest = rest.strip()
    while rest:
        piece, _, rest = rest.partition(",")
        key, sep, raw = piece.partition("=")
        key, raw = key.strip(), raw.strip()
        if key == "instructions":  # the rest of the text, commas and all
            raw = (raw + ("," + rest if rest else "")).strip()
            rest = ""
        if not sep or key not in _KEYS[name]:
            raise ValueError(f"{name}: {excerpt(piece.strip())} is not key=value with a key of "
                             f"{', '.join(_KEYS[name])}")
        target = _KEYS[name][key]
        if key == "keep" and name == "clear_thinking_20251015" and raw == "all":
            changes[target] = "all"
        elif key in ("exclude_tools",):
            changes[target] = tuple(x.strip() for x in raw.split("|") if x.strip())
        elif key == "clear_tool_inputs":
            low = raw.lower()
            changes[target] = (True if low == "true" else False if low == "false"
                               else tuple(x.strip() for x in raw.split("|") if x.strip()))
        elif key == "instructions":
            changes[target] = raw or None
        else:
            changes[target] = _number(key, raw)
            if key == "trigger_tool_uses":
                changes["trigger_unit"] = "tool_uses"
            elif key == "trigger" and name == "clear_tool_uses_20250919":
                changes["trigger_unit"] = "input_tokens"
    value = dataclasses.replace(value, **changes)
    problems = value.problems()
    if problems:
        raise ValueError(f"{name}: {problems[0]}")
    return field, value


# --- the stages ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class ThinkingClearResult:
    messages: tuple[Message, ...]
    cleared: tuple[int, ...] = ()   # the messages whose thinking was cleared


def _has_thinking(msg: Message) -> bool:
    return bool(msg.thinking) or bool(msg.meta and msg.meta.get("thinking_blocks"))


def _without_thinking(msg: Message) -> Message:
    meta = msg.meta
    if meta and "thinking_blocks" in meta:
        meta = {k: v for k, v in meta.items() if k != "thinking_blocks"}
    return msg.replace(thinking=None, meta=meta)


def plan_thinking_clearing(messages: Sequence[Message], keep: int | str) -> ThinkingClearResult:
    """The messages with the thinking of all but the `keep` most recent assistant turns that have
    thinking cleared ("all": none cleared). A turn is a run of consecutive assistant messages (the
    one assistant message of the API's request, which a transcript may store as several)."""
    if keep == "all":
        return ThinkingClearResult(tuple(messages))
    turns: list[list[int]] = []  # per turn, its messages with thinking
    for i, m in enumerate(messages):
        if m.role == "assistant":
            if i == 0 or messages[i - 1].role != "assistant":
                turns.append([])
            if _has_thinking(m):
                turns[-1].append(i)
    turns = [t for t in turns if t]
    old = turns[: max(len(turns) - int(keep), 0)]
    if not old:
        return ThinkingClearResult(tuple(messages))
    out = list(messages)
    cleared = [i for turn in old for i in turn]
    for i in cleared:
        out[i] = _without_thinking(out[i])
    return ThinkingClearResult(tuple(out), tuple(cleared))


def compaction_point(messages: Sequence[Message], counts: Sequence[int], base: int, trigger: int,
                     units: TokenUnits = COUNTED) -> int:
    """Where the last compact_20260112 compaction up to the request after `messages` falls: the
    position whose messages (and those after) are still sent, 0 when none. Request by request
    (model.request_indices, then the request after the last message), a request whose input
    reaches `trigger` (base, the system prompt and tool definitions, plus the messages since the
    last compaction; in the model's tokens through `units`) is compacted there: the messages
    before it give way to the summary. The summary's own tokens are not counted (its size is the
    model's to decide)."""
    point = 0
    total = base
    start = 0
    for r in (*request_indices(messages), len(messages)):
        total += sum(counts[start:r])
        start = r
        if units.model(total) >= trigger and r > point:
            point, total = r, base
    return point


# --- the request ------------------------------------------------------------------------------

def api_edits_of(settings: Settings) -> tuple[Any, ...]:
    """The API edits in force under `settings`, in the order the API wants them (clear_thinking first)."""
    out: list[Any] = []
    if settings.clear_thinking is not None:
        out.append(settings.clear_thinking)
    if settings.clear is not None and settings.clear.api:
        out.append(settings.clear)
    if settings.compact is not None:
        out.append(settings.compact)
    return tuple(out)


def without_api_edits(settings: Settings) -> Settings:
    """`settings` less the API's edits: what the client itself sends (the server applies the rest)."""
    clear = settings.clear if settings.clear is not None and not settings.clear.api else None
    return dataclasses.replace(settings, clear=clear, clear_thinking=None, compact=None)


def _edit(value: Any) -> dict[str, Any]:
    if isinstance(value, ThinkingClearSettings):
        keep: Any = "all" if value.keep == "all" else {"type": "thinking_turns", "value": value.keep}
        return {"type": "clear_thinking_20251015", "keep": keep}
    if isinstance(value, CompactSettings):
        edit: dict[str, Any] = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": value.trigger}}
        if value.instructions and value.instructions.strip():
            edit["instructions"] = value.instructions
        return edit
    edit = {"type": "clear_tool_uses_20250919",
            "trigger": {"type": value.trigger_unit, "value": value.trigger},
            "keep": {"type": "tool_uses", "value": value.keep}}
    if value.min_saving:
        edit["clear_at_least"] = {"type": "input_tokens", "value": value.min_saving}
    if value.exclude:
        edit["exclude_tools"] = list(value.exclude)
    if value.clear_inputs:
        edit["clear_tool_inputs"] = True if value.clear_inputs is True else list(value.clear_inputs)
    return edit


def context_management(settings: Settings) -> dict[str, Any] | None:
    """The request's `context_management` block asking the API for the edits in force (None: none)."""
    edits = [_edit(v) for v in api_edits_of(settings)]
    return {"edits": edits} if edits else None


def beta_headers(settings: Settings) -> tuple[str, ...]:
    """The `anthropic-beta` header values the edits in force need."""
    out = []
    if settings.clear_thinking is not None or (settings.clear is not None and settings.clear.api):
        out.append(BETA_CONTEXT_MANAGEMENT)
    if settings.compact is not None:
        out.append(BETA_COMPACT)
    return tuple(out)
