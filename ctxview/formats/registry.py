"""Which loader reads a file: chosen by name, or sniffed from the content.

Detection never looks at the file name. It first decides the layout (one
JSON document, or JSON lines), then asks each registered format
(contract.SessionFormat) whether the first records (or the document) look
like its own, in a fixed order from the most specific shape to the least.
"""

from __future__ import annotations

import os
from typing import Any

from ctxview.gcpause import paused_gc
from ctxview.model import Session
from ctxview.formats import (anthropic, claude_code, claude_tap, claude_trace, codex, context_lens, gemini, har, inspect_ai,
               inspect_eval_zip, native, openai, swarm_events, swarm_snapshot)
from ctxview.formats.parsing.argument_depth import check_arguments
from ctxview.formats.contract import SessionFormat
from ctxview.formats import limits
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import (
    Input,
    LineReader,
    detect_layout,
    load_document,
    open_input,
)

__all__ = ["FORMATS", "DESCRIPTIONS", "REGISTERED", "detect_format", "load_input", "load_session"]

# Every format ctxview reads, in the order `--help` lists them (contract.SessionFormat says what
# each provides). A new format: its module, and one line here.
REGISTERED: tuple[SessionFormat, ...] = (
    swarm_snapshot.SESSION_FORMAT,
    swarm_events.SESSION_FORMAT,
    claude_code.SESSION_FORMAT,
    claude_trace.SESSION_FORMAT,
    claude_tap.SESSION_FORMAT,
    context_lens.SESSION_FORMAT,
    har.SESSION_FORMAT,
    codex.SESSION_FORMAT,
    gemini.SESSION_FORMAT,
    inspect_ai.SESSION_FORMAT,
    openai.SESSION_FORMAT,
    anthropic.SESSION_FORMAT,
    native.SESSION_FORMAT,
)

FORMATS: list[str] = [f.name for f in REGISTERED]
DESCRIPTIONS = {f.name: f.description for f in REGISTERED}
_BY_NAME = {f.name: f for f in REGISTERED}
# The sniffing order: the most specific shape first (sorted is stable: equal ranks keep list order).
_SNIFFING = tuple(sorted(REGISTERED, key=lambda f: -f.specificity))
_OWN = _BY_NAME[native.FORMAT]  # ctxview's own format: see load_own_in_pieces

_SNIFF_RECORDS = 50



def _check_name(format: str) -> str:
    if format not in _BY_NAME:
        raise ValueError(f"unknown format {format!r} (choices: {', '.join(FORMATS)})")
    return format


def _sniff_lines(inp: Input) -> str:
    records = []
    linenos = []
    reader = LineReader(inp, "JSON lines", lenient=True, peek=True)
    for lineno, rec in reader:
        linenos.append(lineno)
        records.append(rec)
        if len(records) >= _SNIFF_RECORDS:
            break
    first_line = linenos[0] if linenos else 0
    bad = reader.first_error
    if not records:
        if bad is not None:
            raise LoadError(inp.name, bad.message, line=bad.line, column=bad.column, expected=_expected_any())
        raise LoadError(inp.name, "no line holds valid JSON", line=1, expected=_expected_any())
    votes: dict[str, int] = {}
    for fmt in _SNIFFING:
        sniff = fmt.sniff_record
        n = sum(1 for r in records if sniff(r))
        if n:
            votes[fmt.name] = n
    if not votes:
        if bad is not None and bad.line < first_line:
            # a broken first line hides what the file is: report that, not the guess
            raise LoadError(inp.name, bad.message, line=bad.line, column=bad.column, expected=_expected_any())
        whole = _document_format(records[0]) if len(records) > 1 else None
        if whole is not None:
            # A one-line document (ctxview writes its files as one line) with something after it.
            raise LoadError(inp.name, f"unexpected content after the {DESCRIPTIONS[whole]} document on line "
                                      f"{first_line}: a session document must be the only JSON value in its file",
                            line=linenos[1], expected=DESCRIPTIONS[whole])
        raise LoadError(inp.name, _describe_unknown(records[0]), line=first_line, expected=_expected_any())
    best = max(votes.values())
    for fmt in _SNIFFING:  # ties go to the more specific format
        if votes.get(fmt.name) == best:
            return fmt.name
    raise AssertionError("unreachable")


def _document_format(doc: Any) -> str | None:
    for fmt in _SNIFFING:
        if fmt.sniff_document(doc):
            return fmt.name
    return None


def _sniff_document(inp: Input, doc: Any) -> str:
    name = _document_format(doc)
    if name is None:
        raise LoadError(inp.name, _describe_unknown(doc), expected=_expected_any())
    return name


def _describe_unknown(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(str, value))[:8]) or "none"
        return f"not a recognised session format (an object with keys: {keys})"
    if isinstance(value, list):
        return f"not a recognised session format (a list of {len(value)} items)"
    return f"not a recognised session format (a JSON {type(value).__name__})"


def _expected_any() -> str:
    return "one of: " + ", ".join(FORMATS)


def detect_format(path: str | os.PathLike) -> str:
    """The format name `load_session` would choose for `path`."""
    inp = open_input(path)
    if inspect_eval_zip.is_zip(inp):
        return inspect_ai.FORMAT
    if detect_layout(inp) == "jsonl":
        return _sniff_lines(inp)
    return _sniff_document(inp, load_document(inp, "a session file (JSON or JSONL)"))


def load_session(path: str | os.PathLike, format: str | None = None, lenient: bool = False) -> Session:
    """Load a session file ("-" reads stdin) as `format`, or as the detected format.

    Raises LoadError for every kind of bad input (missing, unreadable, not
    the format, malformed); with `lenient`, malformed JSONL lines are
    skipped and counted in `Session.skipped` instead.
    """
    if format is not None:
        _check_name(format)
    return load_input(open_input(path), format, lenient)


def load_input(inp: Input, format: str | None = None, lenient: bool = False, layout: str | None = None, *,
               own_tried: bool = False) -> Session:
    """load_session of an input already opened; `layout`: detect_layout's answer when the caller has it
    (a one-line document is read to its end to tell, 0.3 s on a 500 MB file: once is enough);
    `own_tried`: load_own_in_pieces found no ctxview file to read in pieces."""
    if format is not None:
        _check_name(format)
    session, checked = _load(inp, format, lenient, layout, own_tried)
    return within_limits(inp, session, arguments=not checked)


def load_own_in_pieces(inp: Input, format: str | None = None) -> Session | None:
    """A big ctxview file, read in pieces before its layout is asked: telling a one-line document
    from JSON lines reads it to its end (0.17 s at 500 MB), and ctxview's files say what they are in
    their first bytes (native._HEAD), so no other file is read for it. None: not such a file."""
    if format is not None:
        _check_name(format)
    if format not in (None, native.FORMAT) or inspect_eval_zip.is_zip(inp):
        return None
    with paused_gc(keep=True):
        found = _in_pieces(inp, (_OWN,))
    return None if found is None else within_limits(inp, found[0], arguments=not found[1])


def _in_pieces(inp: Input, formats: tuple[SessionFormat, ...]) -> tuple[Session, bool] | None:
    # A format that overrides load_in_pieces (ctxview's, a SwarmSDK snapshot's, an Inspect AI
    # log's) reads its own big files a piece at a time, never holding the whole parsed document;
    # None means "not such a file".
    for fmt in formats:
        if (session := fmt.load_in_pieces(inp)) is not None:
            return session, fmt.checks_arguments
    return None


def _load(inp: Input, format: str | None, lenient: bool, layout: str | None = None,
          own_tried: bool = False) -> tuple[Session, bool]:
    """The session, and whether its loader checked the arguments' depth (SessionFormat.checks_arguments)."""
    if inspect_eval_zip.is_zip(inp):  # the one binary layout: Inspect AI's .eval archive
        if format not in (None, inspect_ai.FORMAT):
            raise LoadError(inp.name, "a zip archive, not JSON", expected=_BY_NAME[format].expected)
        return inspect_eval_zip.load_eval(inp), False
    candidates = (_BY_NAME[format],) if format else _SNIFFING
    with paused_gc(keep=True):
        if layout is None and not own_tried and _OWN in candidates:  # (see load_own_in_pieces)
            if (found := _in_pieces(inp, (_OWN,))) is not None:
                return found
            own_tried = True
        if layout is None:
            layout = detect_layout(inp)
        if layout == "jsonl":
            fmt = _BY_NAME[format or _sniff_lines(inp)]
            return fmt.load(inp, "jsonl", lenient), fmt.checks_arguments
        if (found := _in_pieces(inp, tuple(f for f in candidates if not (own_tried and f is _OWN)))) is not None:
            return found
        expected = _BY_NAME[format].expected if format else "a session file (JSON or JSONL)"
        doc = load_document(inp, expected)
        fmt = _BY_NAME[format or _sniff_document(inp, doc)]
        return fmt.load(inp, "json", lenient, doc=doc), fmt.checks_arguments


def within_limits(inp: Input, session: Session, arguments: bool = True) -> Session:
    """`session`, or a LoadError when it asks for more than limits.MAX_CONVERSATIONS or MAX_ARGUMENT_DEPTH
    (`arguments` False: the loader checked those itself, SessionFormat.checks_arguments)."""
    count = len(session.conversations)
    if count > limits.MAX_CONVERSATIONS:
        raise LoadError(inp.name, f"{count:,} conversations (agents, side chains, sub-agents); ctxview reads at "
                                  f"most {limits.MAX_CONVERSATIONS:,}")
    if arguments:
        for conv in session.conversations:
            check_arguments(inp.name, conv.name, conv.messages)
    return session
