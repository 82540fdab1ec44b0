"""What decides how stored messages become the messages sent: `Settings`.

One place for the settings, their validation and their name on screen. The
CLI, the inspector, the session-file reader and the JSON schema all go
through `settings_from` / `Settings.check()`.

The default is **as sent**: no ctxview transform, only the harness's own
rules from the file's records (compactions, the recorded reminders). Every
other value of a transform setting is a *what-if*, and `what_if()` names
each one (`Settings.label()`: "as sent", or "what-if: tiers=default, budget
50,000"), so that a simulation is never mistaken for what the model saw.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ctxview.model import request_indices
from ctxview.tiers import get_policy

if TYPE_CHECKING:
    from ctxview.model import Conversation

__all__ = ["AS_SENT", "COMPACT_MIN_TRIGGER", "ClearSettings", "CompactSettings", "OLD_MESSAGE_STRATEGIES", "Settings",
           "TOOL_NAME_SOURCES", "ThinkingClearSettings", "keep_recent_note", "request_index", "settings_for",
           "settings_from"]

OLD_MESSAGE_STRATEGIES = ("keep", "truncate", "remove", "llm")
TOOL_NAME_SOURCES = ("content", "tool_call")
TRIGGER_UNITS = ("input_tokens", "tool_uses")
_MAX_INT = 10**15  # no setting needs more; bigger numbers are refused, not carried around


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
               for name in ("keep", "trigger", "min_saving") if not _whole(getattr(self, name), 0)]
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
        if self.keep == "all" or _whole(self.keep, 1):
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
        if not _whole(self.trigger, COMPACT_MIN_TRIGGER):
            out.append(f"compact.trigger must be a whole number ≥ {COMPACT_MIN_TRIGGER:,} (the API's minimum), "
                       f"not {self.trigger!r}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            out.append(f"compact.instructions must be a string, not {self.instructions!r}")
        return out

    def describe(self) -> str:
        extra = ", own instructions" if self.instructions and self.instructions.strip() else ""
        return f"API compact_20260112 (trigger {self.trigger:,} input tokens{extra})"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides how stored messages become prepared ones."""

    keep_recent: int = 10
    tiers: str = "off"                  # a preset name or a tier spec (see compression.parse_tiers); "off": as sent
    compression: bool = True            # False turns the tiers off without forgetting them
    tool_name_from: str = "content"     # "content" (the seed's detection) or "tool_call"
    clear: ClearSettings | None = None  # None: no clearing
    clear_thinking: ThinkingClearSettings | None = None  # the API's clear_thinking_20251015; None: off
    compact: CompactSettings | None = None  # the API's compact_20260112; None: off
    old_messages: str = "keep"          # one of OLD_MESSAGE_STRATEGIES
    summarize_before: int | None = None  # index; None with a strategy: everything before the recent part
    budget: int | None = None           # token budget for truncate_to_fit; None: no budget
    context_window: int | None = None   # overrides the conversation's / model table's
    embed_ephemeral: bool = True        # add the conversation's recorded ephemeral reminders
    request: int | None = None          # prepare as for the model call that produced the
                                        # assistant message at this index; None: the next call
    counter: str = "auto"               # token counter name (see tokens.get_counter)

    # -- what the settings do --------------------------------------------------
    @property
    def compresses(self) -> bool:
        """Whether a what-if tier compression runs (before the policy says whether it has tiers)."""
        return self.compression and self.tiers != "off"

    def what_if(self) -> tuple[str, ...]:
        """Each ctxview transform these settings apply, named; () when the view is as sent."""
        out = []
        if self.compresses:
            out.append(f"tiers={self.tiers}" + (f", keep_recent={self.keep_recent}"
                                                 if self.keep_recent != 10 and self.tiers != "swarm-auto" else ""))
        if self.clear_thinking is not None:
            out.append(self.clear_thinking.describe())
        if self.clear is not None:
            out.append(self.clear.describe())
        if self.compact is not None:
            out.append(self.compact.describe())
        if self.old_messages != "keep":
            where = f" before #{self.summarize_before}" if self.summarize_before is not None else ""
            out.append(f"old messages: {self.old_messages}{where}")
        if self.budget is not None:
            out.append(f"budget {self.budget:,}")
        if not self.embed_ephemeral:
            out.append("ephemeral reminders left out")
        return tuple(out)

    @property
    def view(self) -> str:
        """"as-sent" or "what-if" (the `"view"` of report --json)."""
        return "what-if" if self.what_if() else "as-sent"

    def label(self) -> str:
        """The view's name on screen: "as sent" or "what-if: tiers=default, budget 50,000"."""
        parts = self.what_if()
        return "what-if: " + ", ".join(parts) if parts else "as sent"

    # -- validation ------------------------------------------------------------
    def problems(self) -> list[str]:
        """What is wrong with these settings, one line each (empty when they are valid)."""
        out = []
        if not _whole(self.keep_recent, 0):
            out.append(f"keep_recent must be a whole number ≥ 0, not {self.keep_recent!r}")
        if not isinstance(self.tiers, str):
            out.append(f"tiers must be a preset name or a tier spec, not {self.tiers!r}")
        else:
            try:
                get_policy(self.tiers)
            except ValueError as exc:
                out.append(f"tiers: {exc}")
        for name in ("compression", "embed_ephemeral"):
            if not isinstance(getattr(self, name), bool):
                out.append(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.tool_name_from not in TOOL_NAME_SOURCES:
            out.append(f"tool_name_from must be one of {', '.join(TOOL_NAME_SOURCES)}, not {self.tool_name_from!r}")
        if self.clear is not None:
            out.extend(self.clear.problems() if isinstance(self.clear, ClearSettings)
                       else [f"clear must be an object of clearing settings, not {self.clear!r}"])
        for name, kind in (("clear_thinking", ThinkingClearSettings), ("compact", CompactSettings)):
            value = getattr(self, name)
            if value is not None:
                out.extend(value.problems() if isinstance(value, kind)
                           else [f"{name} must be an object of its settings, not {value!r}"])
        if self.compact is not None and self.old_messages != "keep":
            out.append("compact (the API's compaction) and old_messages both replace the old messages: "
                       "use one of them")
        if self.old_messages not in OLD_MESSAGE_STRATEGIES:
            out.append(f"unknown old_messages strategy {self.old_messages!r} "
                       f"(valid: {', '.join(OLD_MESSAGE_STRATEGIES)})")
        if self.summarize_before is not None and not _whole(self.summarize_before, 0):
            out.append(f"summarize_before must be a message index ≥ 0, not {self.summarize_before!r}")
        for name in ("budget", "context_window"):
            value = getattr(self, name)
            if value is not None and not _whole(value, 1):
                out.append(f"{name} must be a whole number ≥ 1, not {value!r}")
        if self.request is not None and not _whole(self.request, 0):
            out.append(f"request must be a message index ≥ 0, not {self.request!r}")
        if not isinstance(self.counter, str):
            out.append(f"counter must be a counter name, not {self.counter!r}")
        return out

    def check(self) -> Settings:
        """These settings, or a ValueError naming the first problem."""
        found = self.problems()
        if found:
            raise ValueError(found[0])
        return self


AS_SENT = Settings()

_FIELDS = {f.name for f in dataclasses.fields(Settings)}
_CLEAR_FIELDS = {f.name for f in dataclasses.fields(ClearSettings)}
_PART_FIELDS = {"clear_thinking": ThinkingClearSettings, "compact": CompactSettings}


def _whole(value: Any, minimum: int) -> bool:
    return type(value) is int and minimum <= value <= _MAX_INT


def clear_settings_from(value: Any) -> ClearSettings | None | Any:
    """A `clear` value read from a file (an object, null) as ClearSettings; anything else as it is
    (check() then names it)."""
    if isinstance(value, Mapping):
        return ClearSettings(**{k: (tuple(v) if k in ("exclude", "clear_inputs") and isinstance(v, list) else v)
                                for k, v in value.items() if k in _CLEAR_FIELDS})
    return value


def part_settings_from(name: str, value: Any) -> Any:
    """A clear_thinking or compact value read from a file (an object, null) as its settings; anything
    else as it is (check() then names it)."""
    if isinstance(value, Mapping):
        kind = _PART_FIELDS[name]
        names = {f.name for f in dataclasses.fields(kind)}
        return kind(**{k: v for k, v in value.items() if k in names})
    return value


def settings_from(saved: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                  *, where: str = "") -> Settings:
    """Settings from values saved in a session file (unknown keys ignored), then explicit overrides
    (None: not given; an unknown key is a ValueError). A bad value is a ValueError naming it, and
    `where` (the conversation) when it came from the file."""
    values: dict[str, Any] = {}
    for key, value in (saved or {}).items():
        if key in _FIELDS:
            values[key] = (clear_settings_from(value) if key == "clear" else
                           part_settings_from(key, value) if key in _PART_FIELDS else value)
    found = Settings(**values).problems() if values else []
    if found:
        prefix = f"{where}: " if where else ""
        raise ValueError(f"{prefix}the file's settings: {found[0]}")
    for key, value in (overrides or {}).items():
        if key not in _FIELDS:
            raise ValueError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = value
    return Settings(**values).check()


def settings_for(conversation: Conversation, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Settings for a conversation: its open-with settings, then explicit overrides (settings.settings_from).
    The override `request_number` (1-based, as the inspector numbers requests) picks `request`."""
    overrides = dict(overrides or {})
    number = overrides.pop("request_number", None)
    if number is not None:
        overrides["request"] = request_index(conversation, number)
    return settings_from(conversation.settings, overrides, where=conversation.name)


def request_index(conversation: Conversation, number: int) -> int | None:
    """The stored index of request `number` (1-based); one past the last is the next request (None)."""
    requests = request_indices(conversation.messages)
    if number == len(requests) + 1:
        return None
    if not 1 <= number <= len(requests):
        raise ValueError(f"{conversation.name}: no request {number} (the file holds requests 1 to "
                         f"{len(requests)}, and {len(requests) + 1} is the next one)")
    return requests[number - 1]


def keep_recent_note(settings: Settings) -> str:
    """Why keep_recent changes nothing under these settings, in words ("" when it can change something).

    keep_recent is read in three places: the tiers (the last keep_recent messages are never cut),
    the summary of old messages (its boundary, unless summarize_before sets one) and the budget
    (the recent part it protects). When only the tiers read it and their first tier keeps ages up to
    A whole, a keep_recent of A or less leaves every message as it was: a tool result at age A or
    less is kept whole by the tier anyway (the default tiers: 10:full)."""
    if settings.budget is not None or (settings.old_messages != "keep" and settings.summarize_before is None):
        return ""
    if settings.tiers == "swarm-auto" and settings.compresses:
        return ""  # (SwarmSDK's own rule: its own keep_recent)
    policy = get_policy(settings.tiers) if settings.compresses else None
    if policy is None or not policy.enabled:
        return "keep_recent changes nothing here: no tiers, summary or budget read it"
    first = policy.tiers[0]
    if first.max_chars is None and first.max_age is not None and settings.keep_recent <= first.max_age:
        return (f"keep_recent {settings.keep_recent} changes nothing: the tiers keep ages 0-{first.max_age} whole "
                f"already (first tier {first.max_age}:full); it counts above {first.max_age}")
    return ""
