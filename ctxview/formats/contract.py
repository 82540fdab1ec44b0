"""The loader contract: what a session format provides, and what the registry does with it.

A format is one module holding a `SessionFormat` named `SESSION_FORMAT`; the
registry (`registry.REGISTERED`) lists those, one line each. Adding a format
is that module and that line. A subclass says it all in one place:

    class Acme(SessionFormat):
        name = "acme"                               # --format acme; Session.format
        description = "Acme agent log (JSONL)"      # the line `ctxview --help` shows
        expected = "Acme agent log"                 # what a LoadError says was expected
        specificity = 35                            # sniffing order: higher is asked first

        def sniff_record(self, record): ...         # JSON lines: does this record look like ours?
        def sniff_document(self, doc): ...          # one document: does it look like ours?
        def load(self, inp, layout, lenient=False, doc=None): ...   # -> Session, or LoadError

    SESSION_FORMAT = Acme()

and `ModuleFormat` (below) makes one of a module's functions, which is how the
bundled formats are written.

How the registry uses it (see registry.py): for JSON lines it parses the
first records and asks every format's `sniff_record` about each; the format
claiming the most records wins, ties going to the higher `specificity`. For
one document it asks `sniff_document` in `specificity` order, first yes
wins. Then `load` is called with the input, its layout ("jsonl" or "json"),
`lenient` (skip and count malformed lines instead of failing) and, for a
document the sniffer already parsed, `doc`. A format that can read its big
files without parsing them whole overrides `load_in_pieces`, which is asked
first (before any whole parse) and returns None for a file it does not read
that way. Sniffers never raise; loaders raise only LoadError for bad input.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar

from ctxview.model import Session
from ctxview.formats.inputs import Input

__all__ = ["ModuleFormat", "SessionFormat"]


class SessionFormat(ABC):
    """One session file format: its names, how to recognise it from content, how to load it."""

    name: ClassVar[str]
    description: ClassVar[str]
    expected: ClassVar[str]
    specificity: ClassVar[int]
    # True: load() itself refuses a tool call nested past argument_depth.MAX_ARGUMENT_DEPTH, as the
    # registry's check after every load would (which then does not walk the messages again)
    checks_arguments: ClassVar[bool] = False

    def sniff_record(self, record: Any) -> bool:
        """Whether one parsed JSON line looks like a record of this format (default: never)."""
        return False

    def sniff_document(self, doc: Any) -> bool:
        """Whether a parsed JSON document looks like this format (default: never)."""
        return False

    @abstractmethod
    def load(self, inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
        """The session in `inp`, laid out as `layout`; `doc`: the document, when already parsed."""

    def load_in_pieces(self, inp: Input) -> Session | None:
        """The session of a big document read a piece at a time, or None: not such a file (default)."""
        return None

    def __repr__(self) -> str:
        return f"<SessionFormat {self.name}>"


class ModuleFormat(SessionFormat):
    """A SessionFormat made of one module's functions, as every bundled format is:

        SESSION_FORMAT = ModuleFormat(FORMAT, "Codex CLI rollout (JSONL)", EXPECTED, 30, load,
                                      sniff_record=sniff_record, sniff_document=sniff_document)
    """

    def __init__(self, name: str, description: str, expected: str, specificity: int, load: Callable[..., Session],
                 sniff_record: Callable[[Any], bool] | None = None, sniff_document: Callable[[Any], bool] | None = None,
                 load_in_pieces: Callable[[Input], Session | None] | None = None, checks_arguments: bool = False) -> None:
        self.name, self.description, self.expected, self.specificity = name, description, expected, specificity  # type: ignore[misc]
        self.checks_arguments = checks_arguments  # type: ignore[misc]
        self._load, self._in_pieces = load, load_in_pieces
        if sniff_record is not None:
            self.sniff_record = sniff_record  # type: ignore[method-assign]
        if sniff_document is not None:
            self.sniff_document = sniff_document  # type: ignore[method-assign]

    def load(self, inp: Input, layout: str, lenient: bool = False, doc: Any = None) -> Session:
        return self._load(inp, layout, lenient, doc)

    def load_in_pieces(self, inp: Input) -> Session | None:
        return None if self._in_pieces is None else self._in_pieces(inp)
