"""Parsing a big JSON document a piece of an array at a time (what ctxview's own big files are read with)."""

from __future__ import annotations

import re
import secrets
from typing import Any, BinaryIO, Callable

import orjson

from ctxview.formats.inputs import Input
from ctxview.formats.parsing.json_decode import BOM, MAX_DOCUMENT_BYTES, UTF16_BOMS

__all__ = ["PIECE_BYTES", "parse_in_pieces"]

PIECE_BYTES = 1 << 20             # parse_in_pieces: about this much of an array at a time
# Where one object of an array may end and the next begin. The next one's first key makes
# it rarer inside strings, where a quote is escaped (JSON text in a tool's output: {\"a\"...).
_OBJECT_SEPARATOR = re.compile(rb'\}\s*(,)\s*\{\s*"')
_PIECE_TRIES = 64  # cuts tried per piece (inside a list of objects in a message, say) before parsing whole
_AFTER_DOCUMENT = "unexpected content after document"  # orjson's message when a value ends early


def parse_in_pieces(inp: Input, key: str, depth: int, take: Callable[[int, int, list], None],
                    separator: re.Pattern | None = None) -> tuple[Any, list[str]] | None:
    """Parse a document whose arrays of objects under `key` hold most of its bytes a piece
    of an array at a time, so that neither the file's bytes nor the parsed objects of a
    whole array are ever held at once: `take(k, first, items)` is given items `first`,
    `first + 1`, ... of the k-th such array (in document order) to turn into what is kept;
    the parsed items are dropped after.

    Returns the rest of the document, where the k-th array is `[markers[k]]`, and the
    markers; or None when the document does not read this way (invalid, or not shaped so):
    the caller then parses it whole, which also gives the error. `depth`: how many
    containers hold those arrays, so that pieces hit orjson's depth limit as a whole parse
    would; the caller checks that the markers are where such arrays belong. `separator`: where
    one item may end and the next begin (its group 1: the comma), tried first within a piece's
    length of where a cut is wanted: the items' own start (a ctxview message's `{"role":`), which
    lists of objects inside an item do not match (each such cut costs a parse that fails); then,
    as without one, any "},{" followed by a key.

    Why this is exact: a piece is cut where one object may end and the next begin, and is
    kept only when it parses on its own; a cut inside a string or a nested value leaves
    something open, so it does not. The pieces and the rest then parse as the whole would.
    """
    if inp.size > MAX_DOCUMENT_BYTES:
        return None
    key_at = re.compile(rb'"%s"\s*:\s*\[' % re.escape(key.encode()))
    token = f"ctxview-piece-{secrets.token_hex(8)}"
    markers: list[str] = []
    rest: list[bytes] = []  # the document outside those arrays
    with inp.open() as f:
        ahead = _ReadAhead(f)
        if ahead.data[:2] in UTF16_BOMS:
            return None
        pos = 3 if ahead.data.startswith(BOM) else 0
        while (found := ahead.search(key_at, pos)) is not None:
            k = len(markers)
            markers.append(f"{token}-{k}")
            rest += (ahead.data[pos:found.end()], orjson.dumps(markers[k]))
            start, first = found.end(), 0
            while True:
                ahead.drop(start)  # what is parsed is let go
                piece = _piece(ahead, depth, separator)
                if piece is None:
                    return None
                items, end, last = piece
                take(k, first, items)
                first += len(items)
                del items, piece
                if last:
                    break
                start = end + 1
            pos = end  # the array's "]"
        if not markers:
            return None
        rest += (ahead.data[pos:], f.read())
    skeleton = b"".join(rest)
    del rest
    if skeleton.count(token.encode()) != len(markers):
        return None  # the file holds the token itself: no telling which is ours
    try:
        return orjson.loads(skeleton), markers
    except orjson.JSONDecodeError:
        return None


class _ReadAhead:
    """A file's bytes from some point on (`data`), read a block at a time as searches need."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.data = f.read(PIECE_BYTES)
        self.ended = False  # the file is read to its end: `data` holds all the rest

    def search(self, pattern: re.Pattern, pos: int, until: int | None = None) -> re.Match | None:
        """The first match of `pattern` from `pos` on, reading on until there is one or the
        file ends, or (`until`) the bytes read reach that position (one across the end of what
        was read may be passed over: no harm here)."""
        while (found := pattern.search(self.data, pos)) is None:
            if until is not None and len(self.data) >= until:
                return None
            more = self.f.read(max(PIECE_BYTES, len(self.data)))  # doubling: one huge item is read in linear time
            if not more:
                self.ended = True
                return None
            pos = max(pos, len(self.data) - 256)  # what was searched already
            self.data += more
        return found

    def head(self, n: int) -> bytes:
        """The first `n` bytes (fewer where the file ends)."""
        while len(self.data) < n and not self.ended:
            more = self.f.read(max(PIECE_BYTES, len(self.data)))
            if more:
                self.data += more
            else:
                self.ended = True
        return self.data[:n]

    def drop(self, n: int) -> None:
        """Let go of the first `n` bytes (positions shift down by n)."""
        self.data = self.data[n:]


def _piece(ahead: _ReadAhead, depth: int, separator: re.Pattern | None) -> tuple[list, int, bool] | None:
    """The items at the start of `ahead.data` (the first of an array, or those after a ","),
    about PIECE_BYTES of them: (items, where they end, whether that is the array's end)."""
    search = PIECE_BYTES
    # Whether the items start as `separator` says (this piece's first one does): then, once a cut
    # at any "},{" failed (inside a huge item), the next item's start is looked for however far.
    starts_so = separator is not None and separator.match(b"}," + ahead.head(256)) is not None
    for attempt in range(_PIECE_TRIES):
        if separator is None:
            sep = ahead.search(_OBJECT_SEPARATOR, search)
        else:
            # The items' own start, looked for within a piece's length first; none there (a huge
            # item, or items that do not start so), any "},{" ahead. None by the file's end: the
            # array ends in `data`.
            near = attempt == 0 or not starts_so
            sep = ahead.search(separator, search, search + PIECE_BYTES if near else None)
            if sep is None and near and not ahead.ended:
                sep = ahead.search(_OBJECT_SEPARATOR, search)
        data = ahead.data
        end = sep.start(1) if sep is not None else len(data)
        items = _items(data, end, depth) if sep is not None else None
        if items is not None:
            return items, end, False
        text = data[:end]
        # Not whole items: the array ended inside the piece (its "]" and what follows came
        # along), or the cut was inside a string or a nested value (cut further on).
        try:
            orjson.loads(b"[" + text + b"]")
            return None  # the document ends inside the array, or is nested too deeply
        except orjson.JSONDecodeError as exc:
            if exc.msg == _AFTER_DOCUMENT:
                # the array's "]" is the last one before what follows; exc.pos counts characters
                chars = text.decode(errors="surrogateescape")[:exc.pos - 1]
                end = data.rfind(b"]", 0, len(chars.encode(errors="surrogateescape")))
                items = _items(data, end, depth) if end >= 0 else None
                return None if items is None else (items, end, True)
        if sep is None:
            return None
        search = end + 1
    return None


def _items(data: bytes, end: int, depth: int) -> list | None:
    """`data[:end]` parsed as the items of an array held in `depth` containers; None unless it
    is exactly a run of whole items."""
    # (one copy of the piece, not two: a slice, then the slice in brackets, was ~30 ms at 100 MB)
    wrapped = b"".join((b"[" * (depth + 1), memoryview(data)[:end], b"]" * (depth + 1)))
    try:
        value = orjson.loads(wrapped)
    except orjson.JSONDecodeError:
        return None
    for _ in range(depth):
        if len(value) != 1:  # brackets in `text` closed ours and opened others
            return None
        value = value[0]
    return value if type(value) is list else None
