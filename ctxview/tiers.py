"""Compression tiers and policies as data: `Tier`, `CompressionPolicy`, the presets, tier specs.

Tier spec syntax (what `get_policy` parses and `format_tiers` writes):
`"10:full,20:1000,40:500,60:200,*:100"` — comma-separated `AGE:LIMIT` pairs,
AGE the oldest age in the tier (inclusive) or `*` for every older age, LIMIT
a number of characters or `full` to keep the text whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ctxview.plain_number import plain_number

__all__ = ["DEFAULT_HINT", "DEFAULT_MARKER", "DEFAULT_POLICY", "DEFAULT_RERUNNABLE_TOOLS", "DEFAULT_TIERS",
           "MAX_TIERS", "PRESETS", "CompressionPolicy", "Tier", "describe_tier", "format_tiers", "get_policy",
           "limits_by_age", "parse_tiers", "tier_for_age"]


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
    """A plain decimal number of at most _NUMBER_DIGITS digits; None for anything else."""
    return plain_number(text, _NUMBER_DIGITS)


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


def limits_by_age(policy: CompressionPolicy, longest: int = 4095) -> tuple[list[int | None], int]:
    """(table, top): tier_for_age's max_chars for each age from 0 to min(top, longest), for loops
    over tens of thousands of results; `top` is the oldest age a tier names (-1 if none), past
    which every age has the last tier's max_chars."""
    top = max((t.max_age for t in policy.tiers if t.max_age is not None), default=-1)
    return [tier_for_age(policy, age)[1].max_chars for age in range(min(top, longest) + 1)], top
