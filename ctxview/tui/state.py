"""The inspector's state and decisions, with no terminal in sight.

The app keeps one `InspectorState`: the settings asked for and every change
to them (keys, the controls panel, the tier editor), request navigation,
conversation switching, which pipeline run to start and whether its result
is still wanted, and the search (its rules: search_state.py). The app calls it and renders what it says;
nothing here imports textual or rich (tests/test_import_hygiene.py keeps it
so), and tests/tui/test_state.py tests every decision without a pilot.

The newest change wins: at most one pipeline run is in flight (they share a
PipelineCache); when it ends, `finished` says whether its view is the one
wanted now, and `next_run` names the run to start for the newest settings,
skipping the ones asked for and changed meanwhile.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ctxview.engine.compression import PRESETS, describe_tier, format_tiers, get_policy
from ctxview.model import Conversation, Message, Session
from ctxview.plain_number import plain_number
from ctxview.sanitize import make_visible, safe_file_name
from ctxview.settings import ClearSettings, Settings, settings_for
from ctxview.stages.tiers import preset_for
from ctxview.tui.search_state import Search

__all__ = ["UNKNOWN_SCROLL", "InspectorState", "Place", "ViewKey", "conversation_title", "editable_tiers", "export_name", "goto_position",
           "loading_note", "opening_settings", "position_of", "preset_for", "renumbered", "request_label",
           "saved_settings_note",
           "subagents_of", "tier_lines", "tiers_label", "tool_partner"]

DEFAULT_TIERS = "default"  # what `c` turns on when no other tiers were chosen


def opening_settings(conversation: Conversation, given: Settings, overrides: Mapping[str, Any] | None) -> Settings:
    """The settings saved with the conversation, overridden by what was given, as `ctxview report` does.

    `overrides` are the options named on the command line (they win even where they equal the
    defaults; `request_number` picks a recorded request, as settings_for reads it); without them,
    the fields of `given` that differ from the defaults count as given."""
    if overrides is None:
        defaults = Settings()
        overrides = {f.name: getattr(given, f.name) for f in dataclasses.fields(Settings)
                     if getattr(given, f.name) != getattr(defaults, f.name)}
    return settings_for(conversation, overrides)


def renumbered(before: Session | None, after: Session, history: bool) -> dict[int, tuple[int, int]]:
    """Each conversation of `before` found by name in `after`, read again: its index there, and the
    messages `after` holds before its own (`history`: the whole file after its tail, whose
    conversations gained their beginnings; else none, a file read again keeps its messages' places)."""
    if before is None:
        return {}
    where = {}
    for index, conversation in enumerate(after.conversations):
        where.setdefault(conversation.name, index)
    out = {}
    for old, conversation in enumerate(before.conversations):
        new = where.get(conversation.name)
        if new is not None:
            gained = len(after.conversations[new].messages) - len(conversation.messages)
            out[old] = (new, max(gained, 0) if history else 0)
    return out


def saved_settings_note(conversation: Conversation, opened: Settings) -> str:
    """'' unless the settings saved in the file made the opening view a what-if it would not
    otherwise be (the bundled demo saves tiers=default); else a line saying so and how to see
    the view as sent."""
    if not conversation.settings or opened.label() == "as sent":
        return ""
    return (f"this file's saved settings open it as a {opened.label()}; "
            "t to tiers=off (or --tiers off) shows the requests as sent")


def request_label(request: int | None, requests: Sequence[int]) -> str:
    """"next", "2/5 (#17)" for a recorded request, or "#17" for an index that is not one."""
    if request is None:
        return "next"
    if request in requests:
        return f"{list(requests).index(request) + 1}/{len(requests)} (#{request})"
    return f"#{request}"


def tiers_label(settings: Settings) -> str:
    """`default`, `custom 10:full,*:100`, with ` (off)` when compression is switched off."""
    tiers = settings.tiers
    name = tiers if tiers in PRESETS else f"custom {tiers}"
    return name if settings.compression or tiers == "off" else f"{name} (off)"


def conversation_title(conversation: Conversation) -> str:
    """Its name, and what the loader says it is: `agent-a1b2 (explore the parser)`, `(compaction agent)`."""
    meta = conversation.metadata
    label = meta.get("label") if isinstance(meta, Mapping) else None
    if isinstance(meta, Mapping) and meta.get("kind") == "compaction":
        label = "compaction agent"
    if not isinstance(label, str) or not label.strip():
        return conversation.name
    return f"{conversation.name} ({' '.join(label.split())})"


def loading_note(session: Session) -> str:
    """What to say of lines skipped and warnings while loading ('' for nothing)."""
    note = f"{session.skipped:,} lines skipped" if session.skipped else ""
    if session.warnings:
        note = (note + "; " if note else "") + make_visible(str(session.warnings[0]))
    return note


def editable_tiers(tiers: str) -> str:
    """The tier spec to start the editor with: a preset written out, or the spec as given."""
    try:
        return format_tiers(get_policy(tiers))
    except ValueError:
        return tiers


def tier_lines(spec: str) -> list[str]:
    """What each tier of `spec` does (the editor shows it as you type); ValueError for a bad spec."""
    policy = get_policy(spec)
    return [f"tier {i + 1}: {describe_tier(policy, i)}" for i in range(len(policy.tiers))]  # 1-based, as the errors


# The suffixes a session file's name ends with that say its format, not what it is: `w` drops them.
_FORMAT_SUFFIXES = frozenset({".json", ".jsonl", ".ctxview", ".prepared", ".eval", ".har", ".lhar", ".ctap",
                              ".log", ".txt", ".gz"})


def export_name(path: str | None) -> str:
    """The file name `w` proposes: `<name>.prepared.json`, the session file's name without the
    suffixes that say its format (demo for the bundled session)."""
    if path is None:
        stem = "demo"
    elif path.startswith("<"):
        stem = "session"  # <stdin>
    else:
        stem = Path(path).name
        while (suffix := Path(stem).suffix).lower() in _FORMAT_SUFFIXES and suffix != stem:
            stem = stem[: -len(suffix)]
        stem = stem.strip(".") or "session"   # (not a hidden file, nor ".." itself)
    return f"{safe_file_name(stem)}.prepared.json"  # (a file name may hold control characters)


@dataclass(frozen=True, slots=True)
class ViewKey:
    """What a view is computed for: the conversation (its index), the settings, and the session's
    generation (each read of a followed file is a new one)."""

    conversation: int
    settings: Settings
    generation: int = 0


def goto_position(answer: str, indices: Sequence[int | None]) -> tuple[int | None, str]:
    """The layout position of message `#N` typed in `g`'s box (`12`, `#12`, `sys`), given each
    position's stored index (`indices`, position 0 being #sys); (None, why) when there is none."""
    text = answer.strip().lstrip("#").strip()
    if text.lower() == "sys":
        return 0, ""
    last = max((i for i in indices if i is not None), default=None)
    span = f"#0–#{last}" if last is not None else "none"
    n = plain_number(text)
    if n is None:
        return None, f"not a message number: {make_visible(answer.strip())[:40]!r} (this conversation has {span}, or sys)"
    pos = position_of(indices, n) if last is not None and n <= last else None
    if pos is not None:
        return pos, ""
    return None, f"no message #{n} (this conversation has {span})"


def position_of(indices: Sequence[int | None], n: int) -> int | None:
    """The layout position showing stored message `n`, given each position's stored index
    (`indices`, position 0 being #sys); None when no row shows it."""
    # positions are the indices shifted by #sys and inserted rows: look near n + 1 first
    for pos in (n + 1, *range(len(indices))):
        if 0 <= pos < len(indices) and indices[pos] == n:
            return pos
    return None


def tool_partner(messages: Sequence[Message | None], position: int) -> tuple[int | None, str]:
    """Where the cursor goes from a tool call to its result and back (linked by tool_call_id):
    from a result, the message holding its call; from a message with calls, the result of its first
    call that has one. (None, why) when there is none. `messages`: each position's message."""
    here = messages[position]
    if here is None:
        return None, "no message here"
    if here.tool_call_id and not here.tool_calls:
        wanted = here.tool_call_id
        for pos in range(position - 1, -1, -1):
            m = messages[pos]
            if m is not None and any(call.id == wanted for call in m.tool_calls):
                return pos, ""
        return None, "no tool call for this result in the conversation"
    if here.tool_calls:
        ids = {call.id for call in here.tool_calls if call.id}
        for pos in range(position + 1, len(messages)):
            m = messages[pos]
            if m is not None and m.tool_call_id in ids and not m.tool_calls:
                return pos, ""
        return None, "no result for this tool call in the conversation"
    return None, "not a tool call or a tool result"


def subagents_of(message: Message | None, conversations: Sequence[Conversation]) -> list[int]:
    """The conversations a message's (Task) tool calls started: those whose
    metadata["parent_tool_call_id"] is one of its calls' ids (as the Claude Code loader links them)."""
    if message is None or not message.tool_calls:
        return []
    ids = {call.id for call in message.tool_calls if call.id}
    out = []
    for i, conv in enumerate(conversations):
        meta = conv.metadata
        if isinstance(meta, Mapping) and meta.get("parent_tool_call_id") in ids:
            out.append(i)
    return out


UNKNOWN_SCROLL = -1.0   # a Place's scroll offset when its rows moved: the cursor's row is scrolled to


@dataclass(frozen=True, slots=True)
class Place:
    """Where the user was in a conversation before opening a sub-agent's: its index, the request
    shown, the cursor row and the scroll offset, and the rows expanded and the folded runs opened
    then (a search or a jump may have unfolded the run the cursor is in: folded again, the cursor's
    row would be hidden and the next move would start from the run's first row)."""

    conversation: int
    request: int | None
    cursor: int
    scroll_y: float
    expanded: frozenset[int] = frozenset()
    unfolded: frozenset[int] = frozenset()


class InspectorState:
    """The settings asked for, the view wanted and on screen, the search."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.conversation = 0        # index in the session
        self.conversations = 0       # how many the session holds; 0 until it is loaded
        self.last_tiers = DEFAULT_TIERS  # the last tiers other than off, for `c`
        self._remember_tiers(settings)
        self.shown: ViewKey | None = None    # the view on screen
        self.failed: ViewKey | None = None   # the last run that failed while it was wanted
        self.running: ViewKey | None = None  # the pipeline run in flight
        self.generation = 0                  # the session's: a followed file read again is a new one
        self.search = Search()
        self.trail: list[Place] = []         # the parents of the sub-agent shown, innermost last
        self.returning: Place | None = None  # the place to restore once its view is on screen

    # -- opening and switching ------------------------------------------------

    def opened(self, conversation: int, count: int, settings: Settings) -> ViewKey:
        """The session is loaded and the first view is being computed (by the load worker)."""
        self.conversation, self.conversations = conversation, count
        self._set(settings)
        self.running = self.wanted
        return self.running

    def reloaded(self, conversation: int, count: int, found: bool = True,
                 renumbered: Mapping[int, tuple[int, int]] | None = None,
                 holds: Callable[[int, int], bool] | None = None) -> bool:
        """The file was read again (followed, or `R`): the same settings want a view of the new session,
        on `conversation`: the one shown, found again by name, or (`found` False: it is gone) the
        first, as for its next request. `renumbered`: each earlier conversation found again, by its
        old index: its new index and the messages the new read holds before its own (the history
        before a tail; None: the same indices, nothing before). A request picked keeps its place,
        and the way back from sub-agents follows them; it is forgotten when one of them, or the
        conversation shown, is gone.
        `holds(conversation, index)`: whether the new session still records that request; one it
        does not (the file was cut short) gives the next request. Whether the request picked was lost."""
        shift = renumbered.get(self.conversation, (conversation, 0))[1] if renumbered is not None else 0
        if renumbered is not None:
            self._renumber_trail(renumbered, holds)
        request = self.settings.request
        if not found:  # (the way back was from the conversation gone)
            request = None
            self.trail.clear()
            self.returning = None
        elif shift and request is not None:
            request += shift
        lost = found and request is not None and holds is not None and not holds(conversation, request)
        if lost:
            request = None
        if request != self.settings.request:
            self.settings = dataclasses.replace(self.settings, request=request)
            self.search.hit = None
        self.conversation, self.conversations = conversation, count
        self.generation += 1
        return lost

    def _renumber_trail(self, renumbered: Mapping[int, tuple[int, int]],
                        holds: Callable[[int, int], bool] | None) -> None:
        if not all(place.conversation in renumbered for place in self.trail):
            self.trail.clear()
            self.returning = None
            return
        for i, place in enumerate(self.trail):
            index, shift = renumbered[place.conversation]
            request = None if place.request is None else place.request + shift
            if request is not None and holds is not None and not holds(index, request):
                request = None
            moved = {}
            if shift:   # (a row a message; the history came before them: the scroll is found anew)
                moved = {"cursor": place.cursor + shift, "scroll_y": UNKNOWN_SCROLL,
                         "expanded": frozenset(r + shift for r in place.expanded),
                         "unfolded": frozenset(r + shift for r in place.unfolded)}
            self.trail[i] = dataclasses.replace(place, conversation=index, request=request, **moved)

    @property
    def loaded(self) -> bool:
        return self.conversations > 0

    def select_conversation(self, index: int, keep_trail: bool = False) -> bool:
        """Switch to another conversation, as for its next request; whether it is another one. A
        switch of the user's own (`a`) forgets the way back from sub-agents."""
        if index == self.conversation or not 0 <= index < self.conversations:
            return False
        self.conversation = index
        self.settings = dataclasses.replace(self.settings, request=None)
        self.search.hit = None
        self.search.matches, self.search.counted = (), None
        if not keep_trail:
            self.trail.clear()
            self.returning = None
        return True

    def enter_subagent(self, index: int, here: Place) -> bool:
        """Open a sub-agent's conversation (Enter on its Task call), remembering `here` for `back`."""
        if not self.select_conversation(index, keep_trail=True):
            return False
        self.trail.append(here)
        self.returning = None
        return True

    def back(self) -> Place | None:
        """Back to the conversation the sub-agent was opened from, at its request; the place to
        restore (`returning`) once its view shows. None when no sub-agent was opened."""
        if not self.trail:
            return None
        place = self.trail.pop()
        self.select_conversation(place.conversation, keep_trail=True)
        self.settings = dataclasses.replace(self.settings, request=place.request)
        self.returning = place
        return place

    # -- settings -------------------------------------------------------------

    def change(self, **changes: Any) -> bool:
        """Apply changes to the settings (`clear` may be a bool: on with the defaults, or off).
        Whether anything changed; a value Settings refuses is a ValueError naming it."""
        if not self.loaded:
            return False  # the opening settings are not known yet
        if isinstance(changes.get("clear"), bool):
            changes["clear"] = ClearSettings() if changes["clear"] else None
        new = dataclasses.replace(self.settings, **changes)
        if new == self.settings:
            return False
        self._set(new.check())
        return True

    def _set(self, settings: Settings) -> None:
        self.settings = settings
        self._remember_tiers(settings)

    def _remember_tiers(self, settings: Settings) -> None:
        if settings.tiers != "off":
            self.last_tiers = settings.tiers

    def keep_recent(self, delta: int) -> bool:
        return self.change(keep_recent=max(self.settings.keep_recent + delta, 0))

    def next_tiers(self) -> bool:
        """The next preset, "off" included, wrapping; a custom spec goes to the first preset."""
        names = list(PRESETS)
        current = self.settings.tiers
        return self.change(tiers=names[(names.index(current) + 1) % len(names)] if current in names else names[0])

    def toggle_compression(self) -> bool:
        """Compression off and on again; on tiers=off (the view as sent) it turns on the tiers
        chosen last, or the default ones."""
        if self.settings.tiers == "off":
            return self.change(tiers=self.last_tiers, compression=True)
        return self.change(compression=not self.settings.compression)

    def edit_tiers(self, spec: str) -> bool:
        """A spec from the tier editor; a preset's name (any case), or a spec with a preset's
        tiers, is that preset (the editor starts from the preset written out)."""
        return self.change(tiers=preset_for(spec))

    def step_request(self, direction: int, requests: Sequence[int]) -> bool:
        """`[` / `]`: the previous or next recorded request; `]` after the last one is the next
        request (None). False when there is none that way."""
        current = self.settings.request
        if not requests:
            return False
        target: int | None
        if direction < 0:
            if current is None:
                target = requests[-1]
            else:
                i = requests.index(current) if current in requests else len(requests)
                if i == 0:
                    return False
                target = requests[i - 1]
        else:
            if current is None:
                return False
            i = requests.index(current) if current in requests else len(requests) - 1
            target = requests[i + 1] if i + 1 < len(requests) else None
        return self.change(request=target)

    # -- pipeline runs ----------------------------------------------------------

    @property
    def wanted(self) -> ViewKey:
        return ViewKey(self.conversation, self.settings, self.generation)

    @property
    def busy(self) -> bool:
        """Whether the view on screen is not (yet) the one asked for."""
        return self.loaded and self.wanted not in (self.shown, self.failed)

    def next_run(self) -> ViewKey | None:
        """The run to start now: the wanted view, unless a run is in flight (its end starts the
        next) or the wanted view is on screen or failed already."""
        if self.running is not None or not self.busy:
            return None
        self.running = self.wanted
        return self.running

    def finished(self, key: ViewKey, ok: bool = True) -> bool:
        """A run ended (with a view, or failed); whether it is the view wanted now."""
        if key == self.running:
            self.running = None
        if key != self.wanted:
            return False  # changed meanwhile: `next_run` has the newer one
        if ok:
            self.shown, self.failed = key, None
        else:
            self.failed = key
        return True
