"""The settings of clearing and of the Anthropic API's context edits, each its own value.

`Settings` (settings.py) holds them; the engine's rules read them. They sit
below the engine so that its rules can take them without reaching up to the
settings model, which is made from the stages' declarations (ctxview/stages).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["COMPACT_MIN_TRIGGER", "ClearSettings", "CompactSettings", "MAX_SETTING", "ThinkingClearSettings",
           "TRIGGER_UNITS", "whole_number"]

TRIGGER_UNITS = ("input_tokens", "tool_uses")
MAX_SETTING = 10**15  # no setting needs more; bigger numbers are refused, not carried around


def whole_number(value: Any, minimum: int) -> bool:
    """Whether `value` is an int (not a bool) from `minimum` to MAX_SETTING."""
    return type(value) is int and minimum <= value <= MAX_SETTING


@dataclass(frozen=True, slots=True)
class ClearSettings:
    """Clearing of old tool uses: ctxview's own, or (api=True) Anthropic's clear_tool_uses_20250919 edit.

    The fields are the edit's: keep (`keep`, tool uses), trigger (`trigger`), clear_at_least
    (`min_saving`), exclude_tools (`exclude`), clear_tool_inputs (`clear_inputs`: true, or the
    names of the tools whose inputs are cleared). With api=True the trigger counts the whole
    prompt as the API does (system prompt and tool definitions too; ctxview's own counts the
    messages) and the view is named as the API's edit.
    """

    keep: int = 3                       # most recent tool results left intact
    exclude: tuple[str, ...] = ()       # tool names never cleared
    clear_inputs: bool | tuple[str, ...] = False  # also clear the tool-call arguments (all, or these tools')
    trigger: int = 0                    # only when the context is over this (0: always)
    min_saving: int = 0                 # clear nothing unless this many tokens are saved
    placeholder: str = "[tool result cleared to save context]"
    api: bool = False                   # Anthropic's clear_tool_uses_20250919 (see the class docstring)
    trigger_unit: str = "input_tokens"  # what `trigger` counts: "input_tokens", or "tool_uses" (the results)

    def problems(self) -> list[str]:
        out = [f"clear.{name} must be a whole number ≥ 0, not {getattr(self, name)!r}"
               for name in ("keep", "trigger", "min_saving") if not whole_number(getattr(self, name), 0)]
        if not isinstance(self.exclude, tuple) or not all(isinstance(x, str) for x in self.exclude):
            out.append(f"clear.exclude must be a list of tool names, not {self.exclude!r}")
        if not (isinstance(self.clear_inputs, bool) or isinstance(self.clear_inputs, tuple)
                and all(isinstance(x, str) for x in self.clear_inputs)):
            out.append(f"clear.clear_inputs must be true, false or a list of tool names, not {self.clear_inputs!r}")
        if not isinstance(self.placeholder, str):
            out.append(f"clear.placeholder must be a string, not {self.placeholder!r}")
        if not isinstance(self.api, bool):
            out.append(f"clear.api must be true or false, not {self.api!r}")
        if self.trigger_unit not in TRIGGER_UNITS:
            out.append(f"clear.trigger_unit must be one of {', '.join(TRIGGER_UNITS)}, not {self.trigger_unit!r}")
        return out

    def describe(self) -> str:
        """The what-if's name on screen: "clearing (keep 3)", or the API edit with its values."""
        if not self.api:
            return f"clearing (keep {self.keep})"
        unit = "input tokens" if self.trigger_unit == "input_tokens" else "tool uses"
        parts = [f"trigger {self.trigger:,} {unit}", f"keep {self.keep:,} tool uses"]
        if self.min_saving:
            parts.append(f"clear at least {self.min_saving:,}")
        if self.exclude:
            parts.append("exclude " + "|".join(self.exclude))
        if self.clear_inputs:
            parts.append("inputs too" if self.clear_inputs is True else "inputs of " + "|".join(self.clear_inputs))
        return f"API clear_tool_uses_20250919 ({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class ThinkingClearSettings:
    """Anthropic's clear_thinking_20251015 edit: the thinking of the `keep` most recent assistant
    turns that have thinking is kept ("all": every turn's), the older turns' thinking is cleared."""

    keep: int | str = 1

    def problems(self) -> list[str]:
        if self.keep == "all" or whole_number(self.keep, 1):
            return []
        return [f"clear_thinking.keep must be a whole number ≥ 1 or \"all\", not {self.keep!r}"]

    def describe(self) -> str:
        kept = "all" if self.keep == "all" else f"{self.keep:,} turn" + ("" if self.keep == 1 else "s")
        return f"API clear_thinking_20251015 (keep thinking: {kept})"


COMPACT_MIN_TRIGGER = 50_000  # the API refuses a compact_20260112 trigger below this


@dataclass(frozen=True, slots=True)
class CompactSettings:
    """Anthropic's server-side compaction, compact_20260112: once a request's input reaches
    `trigger` tokens, the conversation before it is replaced by a summary (a compaction block).
    `instructions` replace the API's summarization prompt; ctxview's stand-in summary is
    extractive (it cannot run the model), so they only go into the request body."""

    trigger: int = 150_000
    instructions: str | None = None

    def problems(self) -> list[str]:
        out = []
        if not whole_number(self.trigger, COMPACT_MIN_TRIGGER):
            out.append(f"compact.trigger must be a whole number ≥ {COMPACT_MIN_TRIGGER:,} (the API's minimum), "
                       f"not {self.trigger!r}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            out.append(f"compact.instructions must be a string, not {self.instructions!r}")
        return out

    def describe(self) -> str:
        extra = ", own instructions" if self.instructions and self.instructions.strip() else ""
        return f"API compact_20260112 (trigger {self.trigger:,} input tokens{extra})"
