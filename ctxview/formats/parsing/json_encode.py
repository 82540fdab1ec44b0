"""The JSON text of a recorded value, for what is shown or searched (a tool result that is not text,
a call's arguments).

orjson writes it, except a value holding an integer past 64 bits, which orjson refuses and the
decoders may give (msgspec and the standard library read such an integer as written): the standard
library writes that one, compactly as orjson does.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["compact_json"]


def compact_json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
