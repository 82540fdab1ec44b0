"""Reading JSON and JSONL input safely: the names the loaders (and the CLI) read input with.

The work is split by concern; this module gathers their public names:

    inputs       Input, open_input, check_path, read_stdin: which files may be read, opened read-only
    json_decode  decode_json, load_document, document_only: one JSON value or document, errors located
    json_lines   detect_layout, LineReader, SKIP: JSON lines streamed, malformed lines refused or counted
    json_pieces  parse_in_pieces: a big document a piece of an array at a time

Every failure becomes a LoadError naming the file, line and column. The size
limits live in the module that applies them (patch them there).
"""

from __future__ import annotations

from ctxview.formats.inputs import GROWTH_ALLOWANCE, MAX_STDIN_BYTES, READ_BUFFER, Input, check_path, open_input, read_stdin
from ctxview.formats.parsing.json_decode import (
    BOM,
    MAX_DOCUMENT_BYTES,
    decode_json,
    document_only,
    load_document,
)
from ctxview.formats.parsing.json_lines import MAX_LINE_BYTES, SKIP, LineReader, detect_layout
from ctxview.formats.parsing.json_pieces import parse_in_pieces

__all__ = [
    "document_only",
    "BOM",
    "check_path",
    "Input",
    "LineReader",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_STDIN_BYTES",
    "GROWTH_ALLOWANCE",
    "READ_BUFFER",
    "SKIP",
    "decode_json",
    "detect_layout",
    "load_document",
    "open_input",
    "parse_in_pieces",
    "read_stdin",
]
