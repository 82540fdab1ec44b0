"""How a what-if stage is declared: its options, its names on screen, its rule.

A stage is one module that makes one `Stage`; the registry (stages/__init__.py)
lists them in the order the pipeline runs them. Everything that offers a
setting reads the declarations, not a list of its own:

- the settings model (settings.Settings has a field per option, checked by it);
- the command line (an option's `flag`, with its `help`);
- the config file and the session files (an option's `name` is their key);
- the settings dialog (an option's `label`, or the stage's own `fields`);
- the status bar and the view's name (the stage's `status` and `describe`);
- the pipelines: a stage with a `rewrite` rule runs it on each message, in
  both the plain pipeline and the cached one, from this declaration alone.

The stages ctxview was built with run as the pipeline's own steps (their rules
in the engine, pipeline/reference.py their order) and declare `rewrite=None`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ctxview.edit_settings import MAX_SETTING, whole_number
from ctxview.plain_number import plain_number
from ctxview.sanitize import make_visible

if TYPE_CHECKING:
    from ctxview.model import Message

# A stage's functions take the settings: a ctxview.settings.Settings, the class made from these
# declarations, which sits above this layer (so it is named here, not imported).
Settings = Any

__all__ = ["KINDS", "Field", "Option", "Settings", "Stage", "count_from_text", "number_field", "object_from", "short_number"]

KINDS = ("count", "switch", "choice", "text", "object")
_WORDS = {"on": True, "true": True, "yes": True, "off": False, "false": False, "no": False}
_DIGITS = 20  # int() of thousands of digits is slow, and no setting needs them


def count_from_text(text: str, minimum: int, what: str) -> int:
    """A whole number typed by a person (`50,000` and `50_000` too), or a ValueError naming `what`."""
    digits = text.strip().replace("_", "").replace(",", "")
    negative = digits.startswith("-")
    value = plain_number(digits[1:] if negative else digits, _DIGITS)
    if value is None:
        body = digits[negative:]
        if len(body) > _DIGITS and body.isascii() and body.isdigit():
            raise ValueError(f"{what} must be at most {MAX_SETTING:,}, not a {len(digits):,}-digit number")
        raise ValueError(f"{what} must be a whole number, not {make_visible(text)!r}")
    value = -value if negative else value
    if value < minimum:
        raise ValueError(f"{what} must be ≥ {minimum}, not {value}")
    if value > MAX_SETTING:
        raise ValueError(f"{what} must be at most {MAX_SETTING:,}, not {value:,}")
    return value


@dataclass(frozen=True)
class Option:
    """One setting: a field of Settings, its key in files, its flag and its row in the dialog.

    kind: "count" (a whole number ≥ minimum), "switch" (true or false), "choice" (one of
    `choices`), "text" (a string `check` accepts) or "object" (a value of `type`, whose own
    problems() names what is wrong). With `off`, None is a value too: the setting is off.
    """

    name: str
    default: Any
    help: str
    kind: str = "count"
    label: str | None = None            # its row in the settings dialog (None: no row of its own)
    minimum: int = 0
    off: bool = False
    choices: tuple[str, ...] = ()
    type: type | None = None            # an "object"'s class
    check: Callable[[Any], str | None] | None = None  # a "text"'s rule (a "choice"'s words for a wrong one)
    flag: str | None = None             # "--keep-recent" (None: not on the command line)
    metavar: str | None = None
    from_text: Callable[[str], Any] | None = None  # the flag's text → the value (default: by kind)
    from_file: Callable[[Any], Any] | None = None  # a table read from a file → the value (an "object")
    placeholder: str = ""               # what an empty dialog field stands for

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: unknown kind {self.kind!r} (kinds: {', '.join(KINDS)})")

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` for this option, in one line (None: nothing)."""
        if value is None and self.off:
            return None
        name, kind = self.name, self.kind
        if kind == "count":
            if not whole_number(value, self.minimum):
                return f"{name} must be a whole number ≥ {self.minimum}, not {value!r}"
        elif kind == "switch":
            if not isinstance(value, bool):
                return f"{name} must be true or false, not {value!r}"
        elif kind == "choice":
            if value not in self.choices:
                return (self.check(value) if self.check is not None
                        else f"{name} must be one of {', '.join(self.choices)}, not {value!r}")
        elif kind == "text":
            if not isinstance(value, str):
                return f"{name} must be a string, not {value!r}"
            return self.check(value) if self.check is not None else None
        elif not isinstance(value, self.type):  # type: ignore[arg-type]
            return f"{name} must be an object of its settings, not {value!r}"
        else:
            found = value.problems()
            return found[0] if found else None
        return None

    def parse(self, text: str) -> Any:
        """The value a flag's (or a dialog field's) text gives, or a ValueError saying why not."""
        if self.from_text is not None:
            value = self.from_text(text)
        elif self.kind == "count":
            value = count_from_text(text, self.minimum, self.flag or self.name)
        elif self.kind == "switch":
            word = text.strip().lower()
            if word not in _WORDS:
                raise ValueError(f"{self.flag or self.name} must be on or off, not {make_visible(text)!r}")
            value = _WORDS[word]
        elif self.kind == "object":
            raise ValueError(f"{self.name} has no text form")
        else:
            value = text
        found = self.problem(value)
        if found:
            raise ValueError(found)
        return value

    def read(self, value: Any) -> Any:
        """A value as a session file or the config file holds it (a table for an object)."""
        return self.from_file(value) if self.from_file is not None else value


@dataclass(frozen=True)
class Field:
    """One row of the settings dialog that is not one option's (a part of an object's settings).

    `show(settings)` is what the row shows: a string for "count" and "text", a bool for "switch",
    one of `choices` for "choice". `under` names the switch row that must be on for it to count."""

    id: str
    label: str
    kind: str
    show: Callable[[Settings], Any]
    placeholder: str = ""
    choices: tuple[str, ...] = ()
    under: str | None = None


@dataclass(frozen=True)
class Stage:
    """A what-if stage: the options that steer it, how it is named, and its rule.

    describe(settings): its part of the view's name ("budget 50,000"), None while it is off.
    status(settings): its pieces of the status bar, each in three widths (full, abbreviated,
        shortest); none while it is off. Default: describe's words at every width.
    problems(settings): what is wrong across its options (each option checks its own value).
    reads_whole(settings): the parts of the stage, running under these settings, whose result for
        one message depends on the others (the cache steps keep_recent per message only when none do).
    rewrite(message, settings): a rule on one message: the message as sent, or None to leave it;
        run on each message still sent, after the stages before it in the registry.
    fields / read_fields: the dialog's rows for an "object" option and how their values become
        settings (`read_fields(base, values, errors)` → the changed fields).
    palette: the command palette's entry that opens the dialog at the stage's first row (None: that
        row's label; "": no entry).
    """

    name: str
    options: tuple[Option, ...]
    describe: Callable[[Settings], str | None]
    status: Callable[[Settings], tuple[tuple[str, str, str], ...]] | None = None
    problems: Callable[[Settings], list[str]] | None = None
    reads_whole: Callable[[Settings], tuple[str, ...]] | None = None
    rewrite: Callable[[Message, Settings], Message | None] | None = None
    fields: tuple[Field, ...] = ()
    read_fields: Callable[[Settings, dict[str, Any], list[str]], dict[str, Any]] | None = None
    palette: str | None = None

    def status_pieces(self, settings: Settings) -> tuple[tuple[str, str, str], ...]:
        if self.status is not None:
            return self.status(settings)
        words = self.describe(settings)
        return () if words is None else ((words, words, words),)

    def runs(self, settings: Settings) -> bool:
        return self.describe(settings) is not None


def short_number(n: int) -> str:
    """12 → 12, 12,345 → 12k, 1,234,567 → 1.2M (the status bar's narrowest words)."""
    if n < 1000:
        return f"{n}"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return f"{n / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"


def number_field(name: str, text: str, errors: list[str], empty: int | None = None) -> int | None:
    """A whole number typed in a dialog field (`50,000` and `50_000` too); `empty` for an empty field.
    A wrong one is named in `errors` and gives `empty`."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return empty
    number = plain_number(text, 16)
    if number is not None:
        return number
    errors.append(f"{name}: expected a whole number, not {make_visible(text)!r}")
    return empty


def object_from(kind: type) -> Callable[[Any], Any]:
    """How an "object" option reads a table from a file: its known keys as `kind`'s fields (null
    and anything else as it is, for the check to name)."""
    names = {f.name for f in dataclasses.fields(kind)}

    def read(value: Any) -> Any:
        if isinstance(value, Mapping):
            return kind(**{k: v for k, v in value.items() if k in names})
        return value

    return read
