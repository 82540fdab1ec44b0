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

from .model import request_indices
from .tiers import get_policy

if TYPE_CHECKING:
    from .model import Conversation

__all__ = ["AS_SENT", "ClearSettings", "OLD_MESSAGE_STRATEGIES", "Settings", "TOOL_NAME_SOURCES",
           "keep_recent_note", "request_index", "settings_for", "settings_from"]

OLD_MESSAGE_STRATEGIES = ("keep", "truncate", "remove", "llm")
TOOL_NAME_SOURCES = ("content", "tool_call")
_MAX_INT = 10**15  # no setting needs more; bigger numbers are refused, not carried around


@dataclass(frozen=True, slots=True)
class ClearSettings:
    """Anthropic-style clearing of old tool uses (clear_tool_uses)."""

    keep: int = 3                       # most recent tool results left intact
    exclude: tuple[str, ...] = ()       # tool names never cleared
    clear_inputs: bool = False          # also clear the tool-call arguments
    trigger: int = 0                    # only when total tokens exceed this
    min_saving: int = 0                 # clear nothing unless this many tokens are saved
    placeholder: str = "[tool result cleared to save context]"

    def problems(self) -> list[str]:
        out = [f"clear.{name} must be a whole number ≥ 0, not {getattr(self, name)!r}"
               for name in ("keep", "trigger", "min_saving") if not _whole(getattr(self, name), 0)]
        if not isinstance(self.exclude, tuple) or not all(isinstance(x, str) for x in self.exclude):
            out.append(f"clear.exclude must be a list of tool names, not {self.exclude!r}")
        if not isinstance(self.clear_inputs, bool):
            out.append(f"clear.clear_inputs must be true or false, not {self.clear_inputs!r}")
        if not isinstance(self.placeholder, str):
            out.append(f"clear.placeholder must be a string, not {self.placeholder!r}")
        return out


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that decides how stored messages become prepared ones."""

    keep_recent: int = 10
    tiers: str = "off"                  # a preset name or a tier spec (see compression.parse_tiers); "off": as sent
    compression: bool = True            # False turns the tiers off without forgetting them
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
        if self.clear is not None:
            out.append(f"clearing (keep {self.clear.keep})")
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


def _whole(value: Any, minimum: int) -> bool:
    return type(value) is int and minimum <= value <= _MAX_INT


def clear_settings_from(value: Any) -> ClearSettings | None | Any:
    """A `clear` value read from a file (an object, null) as ClearSettings; anything else as it is
    (check() then names it)."""
    if isinstance(value, Mapping):
        return ClearSettings(**{k: (tuple(v) if k == "exclude" and isinstance(v, list) else v)
                                for k, v in value.items() if k in _CLEAR_FIELDS})
    return value


def settings_from(saved: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                  *, where: str = "") -> Settings:
    """Settings from values saved in a session file (unknown keys ignored), then explicit overrides
    (None: not given; an unknown key is a ValueError). A bad value is a ValueError naming it, and
    `where` (the conversation) when it came from the file."""
    values: dict[str, Any] = {}
    for key, value in (saved or {}).items():
        if key in _FIELDS:
            values[key] = clear_settings_from(value) if key == "clear" else value
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
