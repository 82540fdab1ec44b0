"""Age-tiered compression of old tool results, with tiers and policies as data.

The default policy is SwarmSDK's ContextManager exactly: a tool result more
than `keep_recent` messages from the end is cut by age (ages 0-10 kept,
11-20 → 1000 chars, 21-40 → 500, 41-60 → 200, older → 100), gets the marker
`\\n...[N chars truncated for context management]`, and, when the tool that
produced it can simply be run again, a re-run hint.

Deliberate improvement over the original: a compressed message keeps every
field (tool_calls, model_id, usage, ids, ...). Role, content and tool_call_id
are computed as the original does (the role becomes "tool", the content a
plain string).

Tier spec syntax (what `get_policy` parses and `format_tiers` writes):
`"10:full,20:1000,40:500,60:200,*:100"` — comma-separated `AGE:LIMIT` pairs,
AGE the oldest age in the tier (inclusive) or `*` for every older age, LIMIT
a number of characters or `full` to keep the text whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Container, Iterable, Mapping, Sequence

from .gcpause import paused_gc
from .identity_table import IdentityTable
from ._slots import slot_builder
from .model import Content, Message

__all__ = [
    "DEFAULT_HINT",
    "DEFAULT_MARKER",
    "DEFAULT_POLICY",
    "DEFAULT_RERUNNABLE_TOOLS",
    "DEFAULT_TIERS",
    "PRESETS",
    "CompressionPolicy",
    "Tier",
    "clear_caches",
    "compress_text",
    "compress_tool_message",
    "compress_tool_results",
    "compress_tool_results_between",
    "describe_tier",
    "detect_tool_name",
    "detect_tool_name_cached",
    "format_tiers",
    "get_policy",
    "is_rerunnable",
    "parse_tiers",
    "tier_for_age",
    "tool_names_by_call_id",
]


@dataclass(frozen=True, slots=True)
class Tier:
    """One age band: ages up to `max_age` (inclusive) are cut to `max_chars`.

    max_age None: every age older than the previous tier (last tier only).
    max_chars None: keep the text in full.
    """

    max_age: int | None
    max_chars: int | None


DEFAULT_TIERS: tuple[Tier, ...] = (
    Tier(10, None),
    Tier(20, 1000),
    Tier(40, 500),
    Tier(60, 200),
    Tier(None, 100),
)
DEFAULT_RERUNNABLE_TOOLS = frozenset({"Read", "MemoryRead", "Grep", "MemoryGrep", "Glob", "MemoryGlob"})
DEFAULT_MARKER = "\n...[{n} chars truncated for context management]"
DEFAULT_HINT = "\n\n💡 If you need the full output, re-run the {tool} tool with the same parameters."
TOOL_NAME_SOURCES = ("content", "tool_call")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _coerce_tiers(tiers: Any) -> tuple[Tier, ...]:
    if isinstance(tiers, str):
        return parse_tiers(tiers)
    out = []
    for item in tiers:
        if isinstance(item, Tier):
            out.append(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            out.append(Tier(item[0], item[1]))
        else:
            raise ValueError(f"a tier must be a Tier or an (age, max_chars) pair, not {item!r}")
    return tuple(out)


# What a tier spec may ask for (it can come from a session file): real specs
# have a handful of tiers; a file asking for 100,000 made every result walk them.
MAX_TIERS = 64
MAX_TIER_NUMBER = 10**15  # an age or a length; bigger numbers mean nothing here


def _validate_tiers(tiers: tuple[Tier, ...]) -> tuple[Tier, ...]:
    """Check the tier list; return it ending with a catch-all (None-aged) tier."""
    if not tiers:
        raise ValueError("compression tiers: at least one tier is needed")
    if len(tiers) > MAX_TIERS:
        raise ValueError(f"compression tiers: {len(tiers):,} tiers, at most {MAX_TIERS} are allowed")
    previous = -1
    for pos, tier in enumerate(tiers, 1):
        age, chars = tier.max_age, tier.max_chars
        if age is None:
            if pos != len(tiers):
                raise ValueError(f"compression tiers: only the last tier may cover all older ages (tier {pos} does)")
        elif not _is_int(age) or not 0 <= age <= MAX_TIER_NUMBER:
            raise ValueError(f"compression tiers: tier {pos} age must be a whole number from 0 to {MAX_TIER_NUMBER:.0e}, "
                             f"not {age!r}")
        elif age <= previous:
            raise ValueError(
                f"compression tiers: ages must be strictly ascending (tier {pos} has age {age} after {previous})"
            )
        else:
            previous = age
        if chars is not None and (not _is_int(chars) or not 0 < chars <= MAX_TIER_NUMBER):
            raise ValueError(
                f"compression tiers: tier {pos} length must be a positive number of characters (at most "
                f"{MAX_TIER_NUMBER:.0e}) or full, not {chars!r}"
            )
    if tiers[-1].max_age is not None:
        # Ages beyond the last listed tier are kept whole; making that an
        # explicit tier means every age falls in exactly one tier.
        tiers = (*tiers, Tier(None, None))
    return tiers


@dataclass(frozen=True, slots=True)
class CompressionPolicy:
    """Everything that decides how an old tool result is compressed.

    tool_name_from: "content" detects the tool from the result's text with the
    seed's patterns; "tool_call" takes `message.tool_name`, else the name of
    the assistant tool call whose id is the result's tool_call_id.
    """

    name: str = "default"
    tiers: tuple[Tier, ...] = DEFAULT_TIERS
    rerunnable_tools: frozenset[str] = DEFAULT_RERUNNABLE_TOOLS
    marker: str = DEFAULT_MARKER
    hint: str = DEFAULT_HINT
    tool_name_from: str = "content"
    enabled: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "tiers", _validate_tiers(_coerce_tiers(self.tiers)))
        if not isinstance(self.rerunnable_tools, frozenset):
            if isinstance(self.rerunnable_tools, str):
                raise ValueError("rerunnable_tools must be a collection of tool names, not one string")
            object.__setattr__(self, "rerunnable_tools", frozenset(self.rerunnable_tools))
        if self.tool_name_from not in TOOL_NAME_SOURCES:
            raise ValueError(
                f"tool_name_from must be one of {', '.join(TOOL_NAME_SOURCES)}, not {self.tool_name_from!r}"
            )
        if not isinstance(self.marker, str) or not isinstance(self.hint, str):
            raise ValueError("marker and hint must be strings")


PRESETS: dict[str, CompressionPolicy] = {
    "default": CompressionPolicy(),
    "light": CompressionPolicy(
        name="light", tiers=(Tier(20, None), Tier(40, 2000), Tier(80, 1000), Tier(None, 500))
    ),
    "aggressive": CompressionPolicy(
        name="aggressive", tiers=(Tier(5, None), Tier(10, 500), Tier(20, 200), Tier(40, 100), Tier(None, 50))
    ),
    "off": CompressionPolicy(name="off", tiers=(Tier(None, None),), enabled=False),
    # SwarmSDK's own rule, a what-if the pipeline's stage 0 runs (harness.swarm_auto_event): no cut
    # per request, one compression with the default tiers when a request first reaches 60% of the window
    "swarm-auto": CompressionPolicy(name="swarm-auto", enabled=False),
}
DEFAULT_POLICY = PRESETS["default"]


# --- tier specs --------------------------------------------------------------

_MAX_SPEC_CHARS = 4096  # MAX_TIERS tiers of big numbers fit well within this
_NUMBER_DIGITS = len(str(MAX_TIER_NUMBER))


def _shown(spec: str) -> str:
    """The spec as an error message quotes it: a long one cut, so the message stays one short line."""
    return repr(spec) if len(spec) <= 80 else repr(spec[:60]) + f"… ({len(spec):,} chars)"


def _tier_number(text: str) -> int | None:
    """A plain decimal number of at most _NUMBER_DIGITS digits (int() of a 5,000-digit string raises
    its own ValueError, and a longer one takes quadratic time); None for anything else."""
    if text.isascii() and text.isdigit() and len(text.lstrip("0") or "0") <= _NUMBER_DIGITS:
        return int(text)
    return None


def parse_tiers(spec: str) -> tuple[Tier, ...]:
    """Tiers from a spec such as "10:full,20:1000,*:100" (ValueError naming the bad part)."""
    if not spec.strip():
        raise ValueError('tier spec is empty (expected e.g. "10:full,20:1000,*:100")')
    if len(spec) > _MAX_SPEC_CHARS:
        raise ValueError(f"tier spec {_shown(spec)} is too long (at most {_MAX_SPEC_CHARS:,} characters, "
                         f"{MAX_TIERS} tiers)")
    shown = _shown(spec)
    tiers = []
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) > MAX_TIERS:
        raise ValueError(f"tier spec {shown}: {len(parts):,} tiers, at most {MAX_TIERS} are allowed")
    for part in parts:
        age_text, sep, limit_text = part.partition(":")
        age_text, limit_text = age_text.strip(), limit_text.strip()
        if not sep or not age_text or not limit_text:
            raise ValueError(f'tier spec {shown}: {part!r} is not AGE:LIMIT (e.g. "20:1000", "10:full", "*:100")')
        if age_text == "*":
            age = None
        elif (age := _tier_number(age_text)) is None:
            raise ValueError(f"tier spec {shown}: age {age_text!r} in {part!r} must be a whole number "
                             f"(at most {_NUMBER_DIGITS} digits) or *")
        if limit_text.lower() == "full":
            chars = None
        elif (chars := _tier_number(limit_text)) is None or chars <= 0:
            raise ValueError(
                f"tier spec {shown}: limit {limit_text!r} in {part!r} must be a positive number of characters "
                f"(at most {_NUMBER_DIGITS} digits) or full"
            )
        tiers.append(Tier(age, chars))
    try:
        return _validate_tiers(tuple(tiers))
    except ValueError as exc:
        raise ValueError(f"tier spec {shown}: {str(exc).removeprefix('compression tiers: ')}") from None


def get_policy(spec: str | CompressionPolicy) -> CompressionPolicy:
    """A policy from a preset name ("default", "light", "aggressive", "off") or a tier spec."""
    if isinstance(spec, CompressionPolicy):
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"a compression policy is a preset name or a tier spec, not {spec!r}")
    key = spec.strip().lower()
    if not key:
        raise ValueError('compression policy is empty (give a preset name or tiers such as "10:full,20:1000,*:100")')
    if key in PRESETS:
        return PRESETS[key]
    if ":" not in spec:
        raise ValueError(
            f"unknown compression preset {_shown(spec)} (presets: {', '.join(PRESETS)}; "
            'or give tiers such as "10:full,20:1000,*:100")'
        )
    return CompressionPolicy(name="custom", tiers=parse_tiers(spec))


def format_tiers(policy: CompressionPolicy | Sequence[Tier]) -> str:
    """The tier spec of a policy (or tier list); get_policy reads it back."""
    tiers = policy.tiers if isinstance(policy, CompressionPolicy) else policy
    return ",".join(
        f"{'*' if t.max_age is None else t.max_age}:{'full' if t.max_chars is None else t.max_chars}" for t in tiers
    )


def _first_age(tiers: Sequence[Tier], index: int) -> int:
    return 0 if index == 0 else tiers[index - 1].max_age + 1  # type: ignore[operator]


def describe_tier(policy: CompressionPolicy, index: int) -> str:
    """One human line for a tier, e.g. "ages 21-40 → 500 chars"."""
    tiers = policy.tiers
    tier = tiers[index]
    first = _first_age(tiers, index)
    if tier.max_age is None:
        ages = "all ages" if first == 0 else f"ages {first}+"
    elif tier.max_age == first:
        ages = f"age {first}"
    else:
        ages = f"ages {first}-{tier.max_age}"
    keep = "full" if tier.max_chars is None else f"{tier.max_chars} chars"
    return f"{ages} → {keep}"


def tier_for_age(policy: CompressionPolicy, age: int) -> tuple[int, Tier]:
    """(index, tier) of the tier an age falls in.

    Like the original's `case age`, an age below 0 falls in the last tier.
    """
    tiers = policy.tiers
    if age >= 0:
        for index, tier in enumerate(tiers):
            if tier.max_age is None or age <= tier.max_age:
                return index, tier
    return len(tiers) - 1, tiers[-1]


# --- tool names --------------------------------------------------------------

# Ruby's \s is [ \t\r\n\f\v] and \d is [0-9]; Python's are Unicode-wide, so the
# classes are spelled out. Ruby's ^ is line-anchored: re.MULTILINE.
# The seed's Read pattern is /^\s*\d+→/, whose \s takes newlines: tried at every
# line start, it runs over all the blank lines that follow, so 60,000 newlines
# and a "→" took half a minute. A match whose leading blanks hold a newline is
# also a match from the line start after that newline, so leaving "\n" out of
# the class finds a match exactly when the seed's does, in linear time.
_READ_RE = re.compile(r"^[ \t\r\f\v]*[0-9]+→", re.MULTILINE)
_GLOB_RE = re.compile(r"^Found [0-9]+ files? matching", re.MULTILINE)
_GREP_RE = re.compile(r"matches in [0-9]+ files?|No matches found")


def _line_start_test(literal: str):
    # Same as re.compile("^" + literal, re.M).search, at substring-search speed.
    after_newline = "\n" + literal
    return lambda text: text.startswith(literal) or after_newline in text


_MEMORY_GLOB_AT = _line_start_test("Memory entries matching")
_MEMORY_WRITE_AT = _line_start_test("Stored at memory://")
_MEMORY_DELETE_AT = _line_start_test("Deleted memory://")


def detect_tool_name(text: str | None) -> str | None:
    """The tool that produced a result, guessed from its text as the original does.

    The seed's `case` in its order; each regex runs only when a substring
    every match must contain is present (" matching" for both globs,
    "matches " for Grep, "memory://" for the memory writes), so a text costs
    a few substring scans rather than six regex scans.
    """
    if not isinstance(text, str) or not text:
        return None
    if "→" in text and _READ_RE.search(text):
        return "MemoryRead" if "memory://" in text else "Read"
    if " matching" in text:
        if _MEMORY_GLOB_AT(text):
            return "MemoryGlob"
        if "Found " in text and _GLOB_RE.search(text):
            return "Glob"
    if "matches " in text and _GREP_RE.search(text):
        return "MemoryGrep" if "memory://" in text else "Grep"
    if "memory://" in text:
        if _MEMORY_WRITE_AT(text):
            return "MemoryWrite"
        if _MEMORY_DELETE_AT(text):
            return "MemoryDelete"
    return None


# {id(text): (text, name)}: detection depends on the text only, so it is
# shared by every policy and survives tier changes.
_NAMES: dict[int, tuple[str, str | None]] = {}
# Bounded: a cache is emptied when it reaches this many entries.
_CACHE_LIMIT = 400_000


def _detect_cached(text: str) -> str | None:
    hit = _NAMES.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    name = detect_tool_name(text)
    if len(_NAMES) >= _CACHE_LIMIT:
        _NAMES.clear()
    _NAMES[id(text)] = (text, name)
    return name


def detect_tool_name_cached(text: str) -> str | None:
    """detect_tool_name, remembered per text object (the texts of a loaded session do not change)."""
    return _detect_cached(text)


def is_rerunnable(name: str | None, policy: CompressionPolicy = DEFAULT_POLICY) -> bool:
    """Whether re-running the tool gets the same data back (so a hint is worth adding)."""
    return name is not None and name in policy.rerunnable_tools


def tool_names_by_call_id(messages: Iterable[Message]) -> dict[str, str]:
    """{tool call id: tool name} for every tool call of the given messages."""
    names: dict[str, str] = {}
    for msg in messages:
        for call in msg.tool_calls:
            if call.id:
                names[call.id] = call.name
    return names


# --- compression -------------------------------------------------------------

def _text_of(content: str | Content | None) -> str:
    # Ruby's `msg.content.to_s`: "" for nil, the text of a Content.
    if content is None:
        return ""
    if isinstance(content, Content):
        return content.text
    return content if isinstance(content, str) else str(content)


def compress_text(text: str, max_chars: int, tool_name: str | None, policy: CompressionPolicy = DEFAULT_POLICY) -> str:
    """`text` cut to `max_chars` code points plus the marker, and the hint for a re-runnable tool.

    Text already within the limit is returned as it is.
    """
    if len(text) <= max_chars:
        return text
    out = text[:max_chars] + policy.marker.replace("{n}", str(len(text) - max_chars))
    if is_rerunnable(tool_name, policy):
        out += policy.hint.replace("{tool}", tool_name)  # type: ignore[arg-type]
    return out


# Message(role="tool", content=...) with every other field of `src`.
_as_tool_result = slot_builder(Message, "_as_tool_result",
                               {f: ('"tool"' if f == "role" else f"src.{f}") for f in Message.__slots__
                                if f != "content"}, ("src",))


class _Plan:
    """What one policy needs per message, precomputed once, plus its cache.

    The cache maps max_chars to an IdentityTable of {id(message): (message, tool name, result)}.
    Messages are immutable, so a hit is always still right.
    """

    __slots__ = ("policy", "limits", "top", "last_limit", "marker_parts", "hints", "by_content", "msgs", "cuts")

    def __init__(self, policy: CompressionPolicy, msgs: dict) -> None:
        self.policy = policy
        tiers = policy.tiers
        self.top = max((t.max_age for t in tiers if t.max_age is not None), default=-1)
        # A table by age for the common ages; huge tier ages fall back to a search.
        self.limits = [tier_for_age(policy, age)[1].max_chars for age in range(min(self.top, 4095) + 1)]
        self.last_limit = tiers[-1].max_chars
        self.marker_parts = policy.marker.split("{n}")
        # the hint of each re-runnable tool, formatted once
        self.hints = {tool: policy.hint.replace("{tool}", tool) for tool in policy.rerunnable_tools}
        self.by_content = policy.tool_name_from == "content"
        self.msgs = msgs
        # {max_chars: IdentityTable of {id(text): (text, tool name given, cut text)}}: a text several
        # messages share (a file read twice, loaded as one string) is cut into one string too
        self.cuts: dict[int, IdentityTable] = {}

    def limit(self, age: int) -> int | None:
        if 0 <= age < len(self.limits):
            return self.limits[age]
        if age < 0 or age > self.top:
            return self.last_limit
        return tier_for_age(self.policy, age)[1].max_chars

    def render(self, text: str, max_chars: int, tool_name: str | None) -> str:
        """compress_text for a text longer than max_chars; detects the name by content if so set."""
        out = text[:max_chars] + str(len(text) - max_chars).join(self.marker_parts)
        if self.by_content:
            tool_name = _detect_cached(text)
        hint = self.hints.get(tool_name) if tool_name is not None else None
        return out if hint is None else out + hint

    def cut(self, text: str, max_chars: int, tool_name: str | None, shared: bool = True) -> str:
        """render(), remembered by text: a text several messages hold is cut into one string.
        shared=False: the caller knows no other message holds `text`, so it is not looked up or
        remembered by text (its message's result is)."""
        if not shared:
            return self.render(text, max_chars, tool_name)
        cuts = self.cuts.get(max_chars)
        if cuts is None:
            cuts = self.cuts[max_chars] = IdentityTable(_CACHE_LIMIT)
        key = id(text)
        hit = cuts.results.get(key)  # (IdentityTable.get inlined: this runs once per compressed result)
        if hit is not None and cuts.sources[key] is text and cuts.names.get(key) == tool_name:
            return hit
        given = tool_name
        out = self.render(text, max_chars, tool_name)
        if given is None and not cuts.names and len(cuts.results) < _CACHE_LIMIT:
            cuts.sources[key] = text  # (IdentityTable.put inlined for the common case)
            cuts.results[key] = out
        else:
            cuts.put(text, out, given)
        return out


_PLANS: dict[CompressionPolicy, _Plan] = {}
_SHARED: dict[tuple, dict] = {}


def _plan(policy: CompressionPolicy) -> _Plan:
    plan = _PLANS.get(policy)
    if plan is None:
        if len(_PLANS) > 64:
            _PLANS.clear()
        # Policies that render alike (same marker, hint, tools, name source)
        # share a cache: keys hold the limit, so other tiers reuse the cuts.
        render = (policy.marker, policy.hint, policy.rerunnable_tools, policy.tool_name_from)
        msgs = _SHARED.get(render)
        if msgs is None:
            if len(_SHARED) > 16:
                _SHARED.clear()
            msgs = _SHARED[render] = {}
        plan = _PLANS[policy] = _Plan(policy, msgs)
    return plan


def clear_caches() -> None:
    """Forget every cached result (they are bounded; this frees memory at once)."""
    _PLANS.clear()
    _SHARED.clear()
    _NAMES.clear()
    _LINKS.clear()


def compress_tool_message(
    message: Message,
    age: int,
    policy: CompressionPolicy = DEFAULT_POLICY,
    tool_name: str | None = None,
) -> Message:
    """One tool message compressed for its age (the original's compress_tool_message).

    The result's role is "tool" and its content a plain string, as the
    original rebuilds it; every other field is kept.
    tool_name: with a "tool_call" policy, the linked call's name (message.tool_name wins).
    """
    if not policy.enabled:
        return message
    plan = _plan(policy)
    limit = plan.limit(age)
    if limit is None:
        return message
    text = _text_of(message.content)
    if len(text) <= limit:
        return message
    return _as_tool_result(message, plan.cut(text, limit, message.tool_name or tool_name))


def compress_tool_results(
    messages: Sequence[Message],
    keep_recent: int = 10,
    policy: CompressionPolicy = DEFAULT_POLICY,
    *,
    shared_texts: Container[int] | None = None,
) -> list[Message]:
    """A new list with old tool results compressed by age (the original's compress_tool_results).

    The last `keep_recent` messages and every non-tool message are returned as
    they are; a tool result at index i has age len(messages) - i.
    shared_texts: when the caller has it, shared_text_ids() of these messages (or of a sequence
    they start): a text outside it is cut without the by-text table (one lookup and two
    stores less per result; its message's result is still remembered).
    """
    out = list(messages)
    if not policy.enabled:
        return out
    n = len(out)
    stop = min(n - keep_recent, n)
    if stop <= 0:
        return out
    plan = _plan(policy)
    # A tuple (a Conversation's messages) cannot change, so its call-id map is kept.
    names = _LINKS.get(id(messages)) if type(messages) is tuple else None
    names = names[1] if names is not None and names[0] is messages else None
    if stop > 2000:
        with paused_gc():
            names = _compress_into(out, stop, plan, names, shared=shared_texts)
    else:
        names = _compress_into(out, stop, plan, names, shared=shared_texts)
    if names is not None and type(messages) is tuple:
        if len(_LINKS) >= 8:
            _LINKS.clear()
        _LINKS[id(messages)] = (messages, names)
    return out


def compress_tool_results_between(
    messages: Sequence[Message],
    keep_recent: int,
    policy: CompressionPolicy,
    start: int,
    stop: int,
) -> list[Message]:
    """`compress_tool_results(messages, keep_recent, policy)[start:stop]`, computing only that range.

    Ages still count from the end of `messages`; the results come from the
    same cache, so they are the very objects a full call returns.
    """
    start = max(start, 0)
    part = list(messages[start:stop])
    end = min(stop, len(messages) - keep_recent)
    if not policy.enabled or end <= start:
        return part
    out = list(messages)
    plan = _plan(policy)
    names = _LINKS.get(id(messages)) if type(messages) is tuple else None
    names = names[1] if names is not None and names[0] is messages else None
    _compress_into(out, end, plan, names, start)
    return out[start:stop]


# {id(messages tuple): (messages, {call id: tool name})}
_LINKS: dict[int, tuple[tuple, Mapping[str, str]]] = {}


def shared_text_ids(messages: Iterable[Message]) -> set[int]:
    """Ids of the content strings that more than one tool result holds (a loader may share
    repeated texts): only these need cutting into one shared string."""
    seen: set[int] = set()
    shared: set[int] = set()
    for msg in messages:
        if msg.role == "tool":
            key = id(msg.content)
            if key in seen:
                shared.add(key)
            else:
                seen.add(key)
    return shared


def _compress_into(out: list[Message], stop: int, plan: _Plan, names: Mapping[str, str] | None,
                   start: int = 0, shared: Container[int] | None = None) -> Mapping[str, str] | None:
    """Compress out[start:stop] in place; returns the call-id map if one was built or given.
    shared: see compress_tool_results' shared_texts."""
    n = len(out)
    limits, n_limits, limit_of = plan.limits, len(plan.limits), plan.limit
    top, last_limit = plan.top, plan.last_limit
    cache = plan.msgs
    by_content = plan.by_content
    cut = plan.cut
    name = None
    current = None
    sources: dict = {}
    names_of: dict = {}
    results: dict = {}
    entries: IdentityTable | None = None
    for i in range(start, stop):
        msg = out[i]
        if msg.role != "tool":
            continue
        age = n - i
        # (plan.limit inlined: past the last finite tier age every age has the last limit)
        limit = limits[age] if age < n_limits else (last_limit if age > top else limit_of(age))
        if limit is None:
            continue
        if limit != current:  # ages run in long stretches of one tier
            current = limit
            entries = cache.get(limit)
            if entries is None:
                entries = cache[limit] = IdentityTable(_CACHE_LIMIT)
            sources, names_of, results = entries.sources, entries.names, entries.results
        if not by_content:
            name = msg.tool_name
            if name is None and msg.tool_call_id:
                if names is None:
                    names = tool_names_by_call_id(out)
                name = names.get(msg.tool_call_id)
        key = id(msg)
        hit = results.get(key)
        if hit is not None and sources[key] is msg and (by_content or names_of.get(key) == name):
            out[i] = hit
            continue
        text = msg.content
        if type(text) is str:
            remember = shared is None or id(text) in shared
        else:
            text = _text_of(text)
            remember = True  # (the set holds content ids: a Content's text may be shared)
        result = msg if len(text) <= limit else _as_tool_result(msg, cut(text, limit, name, remember))
        if len(results) >= _CACHE_LIMIT or name is not None or names_of:
            entries.put(msg, result, name)  # type: ignore[union-attr]
        else:  # IdentityTable.put inlined for the common case (no name to store)
            sources[key] = msg
            results[key] = result
        out[i] = result
    return names
