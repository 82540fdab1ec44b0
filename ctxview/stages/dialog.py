"""The settings dialog's rows, as values: what each row shows, and the settings its values ask for.

The rows are the stages' own: a row per option with a label, or the stage's
`fields` where an option is an object of several (clearing). The dialog in
tui/screens/settings.py draws them and reads them back through `read`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ctxview.stages import STAGES
from ctxview.stages.declare import Field, Option, Settings, Stage, number_field

__all__ = ["dialog_fields", "palette_entries", "read", "shown"]


def _shows(option: Option) -> Callable[[Settings], Any]:
    name = option.name
    if option.kind == "count":
        return lambda s: "" if getattr(s, name) is None else str(getattr(s, name))
    if option.kind == "switch":
        return lambda s: bool(getattr(s, name))
    return lambda s: getattr(s, name)


def _option_fields(stage: Stage) -> tuple[Field, ...]:
    return tuple(Field(o.name, o.label, o.kind, _shows(o), placeholder=o.placeholder, choices=o.choices)
                 for o in stage.options if o.label is not None)


def dialog_fields(stages: tuple[Stage, ...] = STAGES) -> tuple[Field, ...]:
    """Every row of the dialog, in the stages' order."""
    return tuple(field for stage in stages for field in (stage.fields or _option_fields(stage)))


def palette_entries(stages: tuple[Stage, ...] = STAGES) -> tuple[tuple[str, str], ...]:
    """(title, row id): the palette's entries that open the dialog at a stage's first row."""
    out = []
    for stage in stages:
        rows = stage.fields or _option_fields(stage)
        if rows and stage.palette != "":
            out.append((stage.palette or rows[0].label.strip(), rows[0].id))
    return tuple(out)


def shown(settings: Settings, stages: tuple[Stage, ...] = STAGES) -> dict[str, Any]:
    """What each row shows for `settings`, by row id."""
    return {field.id: field.show(settings) for field in dialog_fields(stages)}


def _read_option(option: Option, base: Settings, text: Any, errors: list[str]) -> Any:
    old = getattr(base, option.name)
    if option.kind == "count":
        return number_field(option.name, text, errors, None if option.off else old)
    if option.kind == "switch":
        return bool(text)
    if option.kind == "text":
        if not text.strip():
            return old
        return option.from_text(text) if option.from_text is not None else text.strip()
    return text if text is not None else old  # (a choice; None: nothing chosen)


def read(base: Settings, values: dict[str, Any], stages: tuple[Stage, ...] = STAGES) -> tuple[Settings, list[str]]:
    """The settings the rows' `values` (row id → the text or bool shown) ask for, on top of `base`,
    and what is wrong with them (empty: they can be applied)."""
    errors: list[str] = []
    changes: dict[str, Any] = {}
    for stage in stages:
        if stage.read_fields is not None:
            changes.update(stage.read_fields(base, values, errors))
            continue
        for option in stage.options:
            if option.label is not None:
                changes[option.name] = _read_option(option, base, values[option.name], errors)
    settings = dataclasses.replace(base, **changes)
    return settings, errors + settings.problems()
