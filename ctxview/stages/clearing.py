"""Clearing, a what-if: old tool results blanked, the most recent kept.

The rule is engine/clearing.py (plan_clearing): ctxview's own clearing, or with
`api` the Anthropic API's clear_tool_uses_20250919 edit (given by --api-edit,
whose trigger counts the whole prompt). The settings are one ClearSettings.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ctxview.edit_settings import ClearSettings
from ctxview.sanitize import make_visible
from ctxview.stages.declare import Field, Option, Settings, Stage, count_from_text, number_field, short_number

__all__ = ["STAGE", "clear_settings_from"]

_NAMES = {f.name for f in dataclasses.fields(ClearSettings)}


def clear_settings_from(value: Any) -> ClearSettings | None | Any:
    """A `clear` value read from a file (an object, null) as ClearSettings; anything else as it is
    (the option's check then names it)."""
    if isinstance(value, Mapping):
        return ClearSettings(**{k: (tuple(v) if k in ("exclude", "clear_inputs") and isinstance(v, list) else v)
                                for k, v in value.items() if k in _NAMES})
    return value


def _status(settings: Settings) -> tuple[tuple[str, str, str], ...]:
    clear = settings.clear
    if clear is None:
        return ()
    api = "API clear_tool_uses_20250919: " if clear.api else ""
    full, abbr = [f"{api}{'' if api else 'clearing: '}keep {clear.keep}"], [f"{'API ' if api else ''}clear {clear.keep}"]
    if clear.trigger:
        unit = "tool uses" if clear.trigger_unit == "tool_uses" else "tok"
        full.append(f"over {clear.trigger:,} {unit}")
        abbr.append(f">{short_number(clear.trigger)}" + (" uses" if clear.trigger_unit == "tool_uses" else ""))
    if clear.min_saving:
        full.append(f"saving ≥ {clear.min_saving:,}")
        abbr.append(f"≥{short_number(clear.min_saving)}")
    if clear.exclude:
        full.append("not " + ", ".join(make_visible(x) for x in clear.exclude))
        abbr.append(f"-{len(clear.exclude)} tools")
    if clear.clear_inputs:
        full.append("inputs too" if clear.clear_inputs is True else
                    "inputs of " + ", ".join(make_visible(x) for x in clear.clear_inputs))
        abbr.append("+inputs")
    return ((", ".join(full), " ".join(abbr),
             f"{'api-' if api else ''}clr={clear.keep}" + ("+in" if clear.clear_inputs else "")),)


def _reads_whole(settings: Settings) -> tuple[str, ...]:
    """Clearing is per message once it applies; its token trigger reads the whole context, and the
    cache's keep_recent step knows clear_inputs True, not a list of tools."""
    clear = settings.clear
    if clear is None:
        return ()
    return (("clearing trigger",) if clear.trigger else ()) + (
        ("clearing inputs by tool",) if type(clear.clear_inputs) is tuple else ())


def _show(name: str):
    def show(settings: Settings) -> Any:
        clear = settings.clear or ClearSettings()
        if name == "clear_inputs":
            return bool(clear.clear_inputs)
        if name == "clear_exclude":
            return ", ".join(clear.exclude)
        value = getattr(clear, name.removeprefix("clear_"))
        return str(value) if value or name == "clear_keep" else ""
    return show


_FIELDS = (
    Field("clear", "clear old tool uses", "switch", lambda s: s.clear is not None),
    Field("clear_keep", "  keep most recent", "count", _show("clear_keep"), under="clear"),
    Field("clear_trigger", "  only over (model tokens)", "count", _show("clear_trigger"), placeholder="0",
          under="clear"),
    Field("clear_min_saving", "  min saving (model tokens)", "count", _show("clear_min_saving"), placeholder="0",
          under="clear"),
    Field("clear_exclude", "  never clear (tools)", "text", _show("clear_exclude"), placeholder="none", under="clear"),
    Field("clear_inputs", "  clear inputs too", "switch", _show("clear_inputs"), under="clear"),
)


def _read_fields(base: Settings, values: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    if not values["clear"]:
        return {"clear": None}
    old = base.clear or ClearSettings()
    exclude = tuple(x.strip() for x in values["clear_exclude"].split(",") if x.strip())
    return {"clear": dataclasses.replace(
        old, keep=number_field("clear keep", values["clear_keep"], errors, old.keep),
        trigger=number_field("clear trigger", values["clear_trigger"], errors, 0),
        min_saving=number_field("clear min saving", values["clear_min_saving"], errors, 0),
        exclude=exclude,
        # (the switch says on or off; a list of tools from the command line stays while it is on)
        clear_inputs=old.clear_inputs if values["clear_inputs"] and type(old.clear_inputs) is tuple
        else values["clear_inputs"])}


STAGE = Stage(
    name="clearing",
    options=(
        Option("clear", None, "clear old tool results, keeping the N most recent (ctxview's clearing, no trigger)",
               kind="object", type=ClearSettings, off=True, flag="--clear-keep", metavar="N",
               from_text=lambda text: ClearSettings(keep=count_from_text(text, 0, "--clear-keep")),
               from_file=clear_settings_from),
    ),
    describe=lambda s: s.clear.describe() if s.clear is not None else None,
    status=_status,
    reads_whole=_reads_whole,
    fields=_FIELDS,
    read_fields=_read_fields,
    palette="Clearing of old tool uses (keep N, trigger, excluded tools, inputs)",
)
