r"""JSON text a terminal can show and a strict reader accepts: what `prepare`, `w`, `Y` and the
`--json` outputs write. NaN and the infinities become null (JSON has no such numbers), a lone
surrogate becomes U+FFFD, and every character a terminal may act on, or that hides or reorders
text, is written as its \uXXXX escape (the same value to a JSON reader).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from ctxview.sanitize import UNSAFE

__all__ = ["arguments_json", "dumps", "escape_unsafe"]


# Characters json.dumps(ensure_ascii=False) leaves raw that a terminal may act on, that reorder or hide
# text, or that cannot be encoded: DEL and C1 controls, bidi marks, overrides and isolates, zero-width,
# tag and other format characters, separators (the sanitizer's set), and lone surrogates. They can only
# occur inside JSON strings (json.dumps escapes C0 controls itself), where a \uXXXX escape means the same.
_ESCAPED = UNSAFE


def _escape(match: re.Match[str]) -> str:
    cp = ord(match.group())
    if 0xD800 <= cp <= 0xDFFF:
        # A lone surrogate is no character: UTF-8 cannot encode it and strict parsers (orjson, serde)
        # refuse its escape. It is written as U+FFFD, as a UTF-8 encoder with errors="replace" does.
        return "\ufffd"
    if cp > 0xFFFF:  # tag characters and other astral format characters: a UTF-16 pair of escapes
        cp -= 0x10000
        return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"
    return f"\\u{cp:04x}"


def _finite(value: Any) -> Any:
    """`value` with NaN and the infinities as None (null), as JavaScript's JSON.stringify writes them:
    JSON has no such numbers, and a session may hold them (Python's json reads NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _json(data: Any, **options: Any) -> str:
    """json.dumps, strict: allow_nan=False, and a value holding NaN or an infinity written with null."""
    try:
        return json.dumps(data, ensure_ascii=False, default=str, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(_finite(data), ensure_ascii=False, default=str, allow_nan=False, **options)


def escape_unsafe(json_text: str) -> str:
    """JSON text with its terminal-active and invisible characters as JSON escapes, as dumps writes
    them (the same value to a JSON reader; a lone surrogate becomes U+FFFD)."""
    return _ESCAPED.sub(_escape, json_text)


def arguments_json(arguments: Any) -> str:
    """A tool call's arguments as the JSON string OpenAI's `function.arguments` holds (strict, like dumps)."""
    return _json(arguments)


def dumps(data: Any) -> str:
    """Indented strict JSON (RFC 8259: no NaN or Infinity, no lone surrogates), UTF-8 text kept readable,
    terminal-active and invisible characters escaped."""
    text = _indented_in_c(data)
    if text is None:
        text = _json(data, indent=2)
    return escape_unsafe(text) + "\n"


# orjson writes what _json(data, indent=2) writes, a report's 50k indices in a fiftieth of the
# time; what it writes otherwise (objects it knows and json does not, keys json refuses) goes to
# default=str as json's does, and what it cannot write (a lone surrogate, an integer past 64 bits,
# very deep nesting) is left to json. A float needing an exponent is written 1e-7 for 1e-07: the
# same number. tests/test_json_text.py holds the two equal.
_AS_JSON_DOES = (orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
                 | orjson.OPT_PASSTHROUGH_DATETIME)


def _indented_in_c(data: Any) -> str | None:
    try:
        return orjson.dumps(data, default=str, option=_AS_JSON_DOES).decode()
    except (TypeError, orjson.JSONEncodeError):
        return None
