"""Parsing JSON: one whole document, or one value, with every failure a LoadError naming file, line and column.

A document is read whole (it has to be parsed whole anyway) up to a size cap;
a UTF-8 BOM is skipped, UTF-16 is refused with its own message.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input

__all__ = ["BOM", "MAX_DOCUMENT_BYTES", "UTF16_BOMS", "decode_json", "document_only", "load_document", "loads", "strip_bom"]

BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
MAX_DOCUMENT_BYTES = 2 << 30      # one whole JSON document: 2 GiB


def _utf8_error_column(raw: bytes) -> int | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start + 1
    return None


def loads(raw: bytes | str) -> Any:
    """orjson.loads, and the stdlib's where orjson refuses valid JSON: an escaped lone surrogate
    ("\\ud800"), which JavaScript writers (Claude Code) produce. Not JSON: orjson.JSONDecodeError."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in exc.msg:
            raise
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise exc from None


def decode_json(raw: bytes, name: str, line: int | None, expected: str, line_offset: int = 0) -> Any:
    """Parse `raw` with orjson; every failure becomes a LoadError.

    `line` is the JSONL line number (None for a whole document, where the
    error's own line is used).
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        msg = exc.msg
        if "surrogate" in msg and _utf8_error_column(raw) is None:
            # Escaped lone surrogates ("\ud800") are valid JSON that orjson refuses;
            # JavaScript writers (Claude Code) produce them. The stdlib accepts them.
            try:
                return json.loads(raw)
            except RecursionError:
                msg = "JSON nested too deeply"
            except ValueError as exc2:
                msg = str(exc2)
        err_line = line if line is not None else exc.lineno
        col: int | None = exc.colno
        if "depth limit" in msg or "recursion" in msg.lower():
            text = "JSON nested deeper than 1024 levels"
        elif "UTF-8" in msg and "BOM" not in msg:
            bad = _utf8_error_column(raw)
            if bad is not None:
                if line is None:
                    before = raw[: bad - 1]
                    err_line = before.count(b"\n") + 1
                    col = bad - (before.rfind(b"\n") + 1)
                else:
                    col = bad
            text = "invalid UTF-8 (the file must be UTF-8 text)"
        elif "zero-length" in msg:
            text = "empty JSON document"
            col = None
        else:
            text = f"invalid JSON: {_plain(msg)}"
        raise LoadError(name, text, line=err_line, column=col, expected=expected) from None


def _plain(msg: str) -> str:
    # orjson says "unexpected character, expected ',' or '}'"; keep the useful part.
    if msg.startswith("unexpected character, "):
        return msg[len("unexpected character, "):]
    return msg


def document_only(inp: Input, layout: str, doc: Any, what: str, expected: str) -> Any:
    """The parsed document of a format that is one JSON document (`what`, e.g.
    "an Anthropic request"): `doc` when the sniffer already parsed it, else
    read now; JSON lines are refused with a line-1 error."""
    if layout == "jsonl":
        raise LoadError(inp.name, f"found JSON lines; {what} is one JSON document", line=1, expected=expected)
    return load_document(inp, expected) if doc is None else doc


def load_document(inp: Input, expected: str) -> Any:
    """Read and parse a whole JSON document (BOM accepted and skipped)."""
    if inp.size > MAX_DOCUMENT_BYTES:
        gb = inp.size / (1 << 30)
        raise LoadError(
            inp.name,
            f"{gb:.1f} GB is too large for one JSON document (limit 2 GB; JSONL files are streamed)",
            expected=expected,
        )
    data = strip_bom(_read_all(inp), inp.name, expected)
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        col = nul - (data.rfind(b"\n", 0, nul) + 1) + 1
        raise LoadError(inp.name, "NUL byte in text (is this a binary file?)", line=line, column=col, expected=expected)
    if not data or data.isspace():
        raise LoadError(inp.name, "file is empty", expected=expected)
    return decode_json(data, inp.name, None, expected)


def _read_all(inp: Input) -> bytes:
    if inp.data is not None:
        return inp.data
    with inp.open() as f:
        return f.read()


def strip_bom(data: bytes, name: str, expected: str) -> bytes:
    if data.startswith(BOM):
        return data[3:]
    if data[:2] in UTF16_BOMS:
        raise LoadError(name, "file is UTF-16 encoded; ctxview reads UTF-8", line=1, column=1, expected=expected)
    return data
