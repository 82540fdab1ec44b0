"""The tiers, a what-if: old tool results cut by their age.

The rule is the seed's (engine/compression.py, compress_tool_results): a tool
result more than `keep_recent` messages from the request's end falls in the tier
of its age and is cut to that tier's length. `compression` turns the tiers off
without forgetting them. keep_recent is read by the summary and the budget too.
"""

from __future__ import annotations

from ctxview.stages.declare import Option, Settings, Stage
from ctxview.tiers import PRESETS, get_policy

__all__ = ["STAGE", "keep_recent_note", "preset_for"]

_SHORT_PRESETS = {"default": "def", "light": "light", "aggressive": "aggr", "swarm-auto": "swarm", "off": "off"}


def preset_for(spec: str) -> str:
    """The name of the preset `spec` names or writes out (`10:full,20:1000,40:500,60:200,*:100` is
    `default`), else the spec as typed. Only presets that cut: `off` and `swarm-auto` are not
    tier lists."""
    key = spec.strip().lower()
    if key in PRESETS:
        return key
    try:
        tiers = get_policy(spec).tiers
    except ValueError:
        return spec.strip()  # (the change's check names what is wrong)
    for name, policy in PRESETS.items():
        if policy.enabled and policy.tiers == tiers:
            return name
    return spec.strip()


def _tiers_problem(spec: str) -> str | None:
    try:
        get_policy(spec)
    except ValueError as exc:
        return f"tiers: {exc}"
    return None


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


def _describe(settings: Settings) -> str | None:
    if not settings.compresses:
        return None
    shown_keep = settings.keep_recent != 10 and settings.tiers != "swarm-auto"
    return f"tiers={settings.tiers}" + (f", keep_recent={settings.keep_recent}" if shown_keep else "")


def _status(settings: Settings) -> tuple[tuple[str, str, str], ...]:
    """keep_recent and the tiers are always on the status bar: the keys change them."""
    tiers = settings.tiers
    preset = tiers in PRESETS
    full = f"tiers={tiers}" if preset else f"tiers=custom {tiers}"
    abbr = f"tiers={tiers}" if preset else "tiers=custom"
    short = f"t={_SHORT_PRESETS[tiers]}" if preset else "t=custom"
    if not settings.compression and tiers != "off":
        full, abbr, short = f"{full} (off)", f"{abbr} (off)", f"{short}(off)"
    k = settings.keep_recent
    # marked while the tiers are on (with them off, as sent, nothing reads it, and +/- say so when pressed)
    idle = " (no effect)" if settings.compresses and keep_recent_note(settings) else ""
    return (f"keep_recent={k}{idle}", f"keep={k}{idle}", f"k={k}" + ("·" if idle else "")), (full, abbr, short)


STAGE = Stage(
    name="compression",
    options=(
        Option("keep_recent", 10, "recent messages never compressed (default 10)", label="keep_recent",
               flag="--keep-recent", metavar="N"),
        Option("tiers", "off", f"compression tiers, a what-if: {', '.join(n for n in PRESETS if n != 'off')}, off "
               "(the default: the requests as sent), or e.g. '10:full,20:1000,*:100'", kind="text",
               label="tiers (preset or spec)", check=_tiers_problem, from_text=preset_for, flag="--tiers",
               metavar="PRESET|SPEC"),
        Option("compression", True, "the tiers on or off (off keeps them for later)", kind="switch",
               label="compression"),
    ),
    describe=_describe,
    status=_status,
    palette="",  # (the tiers have keys of their own: t, c, e, + and -)
)
