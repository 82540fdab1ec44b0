"""The one exception every loader raises for bad input."""

from __future__ import annotations

__all__ = ["LENIENT_HINT", "LoadError"]

# What a malformed JSONL line's error tells the user: the line can be left out.
LENIENT_HINT = "use --lenient to skip bad lines"


class LoadError(Exception):
    """A file that cannot be loaded as the chosen (or detected) format.

    `path` is the name shown to the user ("<stdin>" for standard input),
    `line` and `column` are 1-based where known, `expected` names what the
    file should have been ("Claude Code transcript"), `hint` what the user can do about it (a
    malformed JSONL line: LENIENT_HINT). `str(err)` is one line:
    ``session.jsonl:12:5: invalid JSON: expected ',' or '}' (use --lenient to skip bad lines; Claude Code
    transcript expected)``.
    """

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        expected: str = "",
        hint: str = "",
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        # One line, always: a message built from file content must not break it.
        text = " ".join(self.message.split())
        notes = [self.hint] if self.hint else []
        if self.expected:
            notes.append(f"{self.expected} expected")
        tail = f" ({'; '.join(notes)})" if notes else ""
        return f"{where}: {text}{tail}"

    def __reduce__(self):  # keep the keyword attributes through pickling (xdist, workers)
        return (_rebuild, (self.path, self.message, self.line, self.column, self.expected, self.hint))


def _rebuild(path, message, line, column, expected, hint="") -> LoadError:
    return LoadError(path, message, line=line, column=column, expected=expected, hint=hint)
