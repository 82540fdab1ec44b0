"""Building frozen, slotted values without their __init__: the loaders' and the pipeline's fast path.

Private: the engine names what it builds this way with plain names
(formats.linking.new_message, pipeline.builders.make_row, ...).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

__all__ = ["slot_builder"]

_MISSING = object()


def slot_builder(cls: type, name: str, fixed: Mapping[str, str] | None = None, extra: tuple[str, ...] = ()) -> Any:
    """A function building an instance of a frozen, slotted dataclass without its __init__.

    Its parameters are `extra` then every field not in `fixed`, in field order, with the
    fields' defaults; `fixed` maps a field to an expression (over the parameters, e.g.
    "src.role" for a value copied from `src`). Loaders and the pipeline build values by
    the tens of thousands, so this is the fast way: the fields are stored into an instance
    of a plain twin class with the same slots (an ordinary attribute store each), whose
    __class__ is then set to `cls` (CPython allows it between identical layouts, and
    refuses it otherwise). About twice as fast as calling each slot descriptor's __set__,
    and four times dataclasses' frozen __init__. No __post_init__ or validation runs: for
    callers that pass values of the right types.
    """
    fixed = fixed or {}
    fields = [f for f in dataclasses.fields(cls)]
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": tuple(f.name for f in fields)})
    env: dict[str, Any] = {"twin": twin, "cls": cls, "missing": _MISSING}
    params, body = list(extra), []
    for f in fields:
        if f.name in fixed:
            body.append(f"    new.{f.name} = {fixed[f.name]}")
            continue
        if f.default is not dataclasses.MISSING:
            env[f"d_{f.name}"] = f.default
            params.append(f"{f.name}=d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=missing")
            body.append(f"    if {f.name} is missing: {f.name} = f_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"    new.{f.name} = {f.name}")
    # (twin() rather than object.__new__(twin): the type's own call, about 300 instructions less)
    lines = [f"def {name}({', '.join(params)}):", "    new = twin()", *body,
             "    new.__class__ = cls", "    return new"]
    exec("\n".join(lines), env)  # noqa: S102 - generated from the field names only
    return env[name]
