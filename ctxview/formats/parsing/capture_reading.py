"""Reading a capture log's records into requests: what every request-capture loader does the same way.

A loader says how one record becomes a request (`make(line, number, record, seen)`: a
sent_requests.TraceRequest, the reason it is skipped, or None for a record that is
no call, such as LHAR's session line) and, for a JSON document, which records it
holds; `read_log` does the rest: JSON lines read (lenient: malformed lines skipped
and said), records numbered, skipped ones counted by reason.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Union

from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import (
    Input,
    LineReader,
    detect_layout,
    load_document,
    open_input,
)
from ctxview.formats.sent_requests import Seen, TraceRequest

__all__ = ["Make", "read_log", "requests_of_file"]

# (log line or None for a JSON document, the record's number, the record, the log's Seen) ->
# a request, why the record is skipped, or None: no call (not counted)
Make = Callable[[Union[int, None], int, Any, Seen], Union[TraceRequest, str, None]]
Read = Callable[..., tuple[list[TraceRequest], dict[str, int], int]]


def _keep(records: Iterable[tuple[int | None, int, Any]], make: Make) -> tuple[list[TraceRequest], dict[str, int]]:
    kept: list[TraceRequest] = []
    skipped: dict[str, int] = {}
    seen = Seen()
    for line, number, rec in records:
        got = make(line, number, rec, seen)
        if isinstance(got, str):
            skipped[got] = skipped.get(got, 0) + 1
        elif got is not None:
            kept.append(got)
    return kept, skipped


def read_log(inp: Input, layout: str, lenient: bool, doc: Any, warnings: list[str] | None, expected: str,
             make: Make, records_of: Callable[[Any], Iterable[tuple[int | None, int, Any]]] | None = None,
             ) -> tuple[list[TraceRequest], dict[str, int], int]:
    """(the kept requests in log order, the skipped records by reason, malformed lines skipped).
    JSON lines: each line a record, numbered by its line; a document: `records_of(doc)` gives its
    records (default: the document is the one record, line 1). Lenient: what was left out of the
    lines is said in `warnings`."""
    if layout == "jsonl":
        reader = LineReader(inp, expected, lenient)
        kept, skipped = _keep(((n, n, rec) for n, rec in reader), make)
        if warnings is not None:
            reader.warn_skipped(warnings)
        return kept, skipped, reader.skipped
    doc = load_document(inp, expected) if doc is None else doc
    kept, skipped = _keep(records_of(doc) if records_of is not None else [(1, 1, doc)], make)
    return kept, skipped, 0


def requests_of_file(path: Any, expected: str, sniff_document: Callable[[Any], bool], not_this: str,
                     read: Read) -> list[TraceRequest]:
    """The kept requests of the log at `path` as `read` (a loader's read_requests) gives them; a JSON
    document the loader's sniffer does not claim is refused with `not_this`."""
    inp = open_input(path)
    layout = detect_layout(inp)
    doc = None
    if layout == "json":
        doc = load_document(inp, expected)
        if not sniff_document(doc):
            raise LoadError(inp.name, not_this, expected=expected)
    return read(inp, layout, doc=doc)[0]
