"""What decides how stored messages become the messages sent: `Settings`.

One place for the settings, their validation and their name on screen.
`Settings` has a field per option of the what-if stages (ctxview/stages, each
declaring its options, checks and words) and of BASE_OPTIONS (which request,
counted how). The CLI, the inspector and the session-file reader all go
through `settings_from` / `Settings.check()`.

The default is **as sent**: no ctxview transform, only the harness's own
rules from the file's records (compactions, the recorded reminders). Every
other value of a transform setting is a *what-if*, and `what_if()` names
each one (`Settings.label()`: "as sent", or "what-if: tiers=default, budget
50,000"), so that a simulation is never mistaken for what the model saw.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

from ctxview.edit_settings import COMPACT_MIN_TRIGGER, ClearSettings, CompactSettings, ThinkingClearSettings
from ctxview.model import request_indices
from ctxview.stages import STAGES, Option, Stage, options
from ctxview.stages.clearing import clear_settings_from
from ctxview.stages.old_messages import OLD_MESSAGE_STRATEGIES
from ctxview.stages.tiers import keep_recent_note
from ctxview.tiers import TOOL_NAME_SOURCES

if TYPE_CHECKING:
    from ctxview.model import Conversation

__all__ = ["AS_SENT", "BASE_OPTIONS", "COMPACT_MIN_TRIGGER", "ClearSettings", "CompactSettings",
           "OLD_MESSAGE_STRATEGIES", "Settings", "TOOL_NAME_SOURCES", "ThinkingClearSettings", "clear_settings_from",
           "keep_recent_note", "request_index", "settings_class", "settings_for", "settings_from"]

# The settings that are not a what-if: which request, counted how, in what window.
BASE_OPTIONS: tuple[Option, ...] = (
    Option("tool_name_from", "content", "how a tool result's tool is found: its content (the seed's detection) "
           "or its call", kind="choice", choices=TOOL_NAME_SOURCES),
    Option("context_window", None, "overrides the conversation's and the model table's", minimum=1, off=True),
    # prepare as for the model call that produced the assistant message at this index; None: the next call
    Option("request", None, "the index of the request's assistant message (None: the next request)", off=True),
    Option("counter", "auto", "the token counter's name (see tokens.get_counter)", kind="text"),
)


class SettingsRules:
    """What the settings do and what is wrong with them; `Settings` adds a field per option."""

    __slots__ = ()
    STAGES: tuple[Stage, ...] = STAGES
    OPTIONS: tuple[Option, ...] = ()

    @property
    def compresses(self) -> bool:
        """Whether a what-if tier compression runs (before the policy says whether it has tiers)."""
        return self.compression and self.tiers != "off"  # type: ignore[attr-defined]

    def what_if(self) -> tuple[str, ...]:
        """Each ctxview transform these settings apply, named; () when the view is as sent."""
        return tuple(name for stage in self.STAGES if (name := stage.describe(self)) is not None)

    @property
    def view(self) -> str:
        """"as-sent" or "what-if" (the `"view"` of report --json)."""
        return "what-if" if self.what_if() else "as-sent"

    def label(self) -> str:
        """The view's name on screen: "as sent" or "what-if: tiers=default, budget 50,000"."""
        parts = self.what_if()
        return "what-if: " + ", ".join(parts) if parts else "as sent"

    def problems(self) -> list[str]:
        """What is wrong with these settings, one line each (empty when they are valid)."""
        out = [found for option in self.OPTIONS if (found := option.problem(getattr(self, option.name)))]
        if out:
            return out  # (a stage's checks across its options read values known to be right)
        for stage in self.STAGES:
            if stage.problems is not None:
                out.extend(stage.problems(self))
        return out

    def check(self):
        """These settings, or a ValueError naming the first problem."""
        found = self.problems()
        if found:
            raise ValueError(found[0])
        return self


def settings_class(stages: tuple[Stage, ...] = STAGES):
    """The Settings of these stages: a frozen dataclass with a field per option (the stages' in
    their order, then BASE_OPTIONS), each defaulting to the option's default."""
    every = (*options(stages), *BASE_OPTIONS)
    names = [o.name for o in every]
    if len(set(names)) != len(names):
        raise ValueError(f"two options share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return dataclasses.make_dataclass(
        "Settings", [(o.name, Any, dataclasses.field(default=o.default)) for o in every], bases=(SettingsRules,),
        namespace={"STAGES": stages, "OPTIONS": every, "__module__": __name__,
                   "__doc__": "Everything that decides how stored messages become prepared ones: a field per "
                              "option of the stages (ctxview/stages) and of BASE_OPTIONS."},
        frozen=True, slots=True)


# (a class made from the declarations: its fields are the stages' options, which type checkers
# cannot see; `Settings.OPTIONS` lists them)
Settings = settings_class()
AS_SENT = Settings()
_OPTIONS = {o.name: o for o in Settings.OPTIONS}


def settings_from(saved: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                  *, where: str = "") -> Settings:
    """Settings from values saved in a session file (unknown keys ignored), then explicit overrides
    (None: not given; an unknown key is a ValueError). A bad value is a ValueError naming it, and
    `where` (the conversation) when it came from the file."""
    values: dict[str, Any] = {}
    for key, value in (saved or {}).items():
        if key in _OPTIONS:
            values[key] = _OPTIONS[key].read(value)
    found = Settings(**values).problems() if values else []
    if found:
        prefix = f"{where}: " if where else ""
        raise ValueError(f"{prefix}the file's settings: {found[0]}")
    for key, value in (overrides or {}).items():
        if key not in _OPTIONS:
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
