"""How a Claude Code line is decoded: whole (`decode_record`, a dict), or only the fields a message
line's rules read (`decode_fields`, a LineFields).

A transcript line repeats what the rules never read (cwd, version, gitBranch, requestId,
stop_reason ...) and most tool results twice: as the model was sent them, in the message, and
as the tool returned them, in toolUseResult (a file read whole, a command's output). Decoded to a
dict, every one of those becomes a Python object only to be freed. msgspec decodes a line into a
LineFields instead, skipping what it has no field for: of toolUseResult it reads only whether it
names an agent (a Task call's result, when the line is decoded whole after all), of a progress
line's data only its type.

Both decoders read numbers alike: an integer too big for 64 bits stays the integer it was (orjson
would make it a float), so that the one pass (linear.py, LineFields) and the general path (scan.py,
dicts) make the same messages of the same line. In a call's arguments or a result it is kept as
written; as a count it is none (builders.COUNTS). A line msgspec refuses (a lone surrogate, nesting
past its depth) goes to the reader's bad_line(), orjson's and then the standard library's.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["DECODE_ERRORS", "LineFields", "ToolResultFields", "decode_fields", "decode_record", "plain_progress",
           "progress_record"]


class MessageFields(msgspec.Struct, gc=False):
    """A line's message: what records.assistant_fields and user_fields read (None: absent or null)."""

    id: Any = None
    model: Any = None
    content: Any = None
    usage: Any = None


class ToolResultFields(msgspec.Struct, gc=False):
    """A toolUseResult object: whether it names an agent (UNSET: no such key), as a Task call's
    result does; such a line is decoded whole. The rest, a file read whole or a command's output,
    is skipped."""

    agentId: Any = msgspec.UNSET


class ProgressFields(msgspec.Struct, gc=False):
    """A progress line's data: its type (an agent's progress is read whole; the rest is skipped)."""

    type: Any = None


class LineFields(msgspec.Struct, gc=False):
    """The fields the rules read of a user or assistant line, or of a progress line (None: absent or
    null). A line whose message or data is not an object is refused (ValidationError)."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    isSidechain: Any = None
    message: MessageFields | None = None
    toolUseResult: ToolResultFields | str | list | int | float | bool | None = None
    timestamp: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isApiErrorMessage: Any = None
    costUSD: Any = None
    data: ProgressFields | None = None
    agentId: Any = None


# (gc=False: a decoded line holds only what it decoded, never itself)
decode_fields = msgspec.json.Decoder(LineFields).decode
decode_record = msgspec.json.Decoder().decode
# what either decoder raises on a line it will not read (ValidationError is a DecodeError; nesting
# deeper than the interpreter's recursion limit is a RecursionError)
DECODE_ERRORS = (msgspec.DecodeError, RecursionError)


def plain_progress(line: LineFields) -> bool:
    """A progress line whose data is not an agent's (agent_progress: a sub-agent's message, which
    Scan._agent_progress keeps from the line decoded whole)."""
    return line.type == "progress" and (line.data is None or line.data.type != "agent_progress")


def progress_record(line: LineFields) -> dict:
    """What Scan._other_record reads of a plain_progress line: the record without its data (read
    only for agent_progress) and without what it never reads."""
    return {"type": "progress", "uuid": line.uuid, "parentUuid": line.parentUuid, "isSidechain": line.isSidechain,
            "agentId": line.agentId}
