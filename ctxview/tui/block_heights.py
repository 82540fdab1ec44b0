"""How many lines a message takes collapsed, from line counts alone (no wrapping).

A collapsed block shows a header, the first PREVIEW_LINES of the text (after its leading blank
lines), a "more" line, the thinking line and up to TOOL_CALL_PREVIEW tool calls; a row is as
tall as its taller side. Counting lines rather than wrapping keeps the layout of 100k rows
cheap enough to build in a worker thread (layout.py).
"""

from __future__ import annotations

import re

from ctxview.model import Message, content_text

__all__ = ["PREVIEW_LINES", "TOOL_CALL_PREVIEW", "block_height", "collapsed_height", "display_text", "preview_start",
           "stored_heights_of", "tallest_collapsed"]

PREVIEW_LINES = 3       # body lines a collapsed message shows
TOOL_CALL_PREVIEW = 2   # tool calls a collapsed assistant message lists


def display_text(message: Message) -> str:
    """The message text as shown: trailing newlines dropped (offsets unchanged)."""
    return message.text.rstrip("\n")


_BLANK_LINES = re.compile(r"(?:[ \t\r\f\v]*\n)+")


def preview_start(text: str) -> int:
    """Where a collapsed preview starts: after the text's leading blank lines, so that a message
    opening with blank lines still shows its first words (offsets into `text` stay as they are)."""
    if not text or text[0] > " ":
        return 0
    if text[0] != "\n":  # (spaces first: often a numbered Read output, whose first line is not blank)
        nl = text.find("\n", 0, 256)
        if nl == -1 or not text[:nl].isspace():
            return 0
    match = _BLANK_LINES.match(text)
    return match.end() if match is not None else 0


def collapsed_height(message: Message | None) -> int:
    """Lines a collapsed message takes: header, preview, "more" line, tool calls."""
    if message is None:
        return 1  # a ghost line
    # Inlined (no .text property, no copy unless the text ends in a newline):
    # this runs for every row of a 100k-message view on each recompute.
    content = message.content
    text = content if type(content) is str else content_text(content)
    if not text:
        lines = 0
    elif text[0] <= " " and (text[0] == "\n" or text[:text.find("\n", 0, 256) + 1].isspace()):
        # (rare: the first line is blank) the preview skips leading blank lines: preview_start
        text = text.rstrip("\n")
        lines = text.count("\n", preview_start(text)) + 1 if text else 0
    elif text[-1] != "\n":
        # (lines past PREVIEW_LINES + 1 do not count: most texts with many show them in their start)
        lines = text.count("\n", 0, 256)
        lines = (lines if lines >= PREVIEW_LINES else text.count("\n")) + 1
    else:
        text = text.rstrip("\n")
        lines = text.count("\n") + 1
    height = 1 + (lines if lines <= PREVIEW_LINES else PREVIEW_LINES + 1)
    if message.thinking:
        height += 1  # the collapsed thinking line
    calls = message.tool_calls
    if calls:
        n = len(calls)
        height += n if n <= TOOL_CALL_PREVIEW else TOOL_CALL_PREVIEW + 1
    elif not lines:
        height += 1  # "(empty)"
    return height


def tallest_collapsed(message: Message) -> int:
    """The most lines `message` can take collapsed, whatever its text: header, a full preview and
    its "more" line, the thinking line, the tool calls (collapsed_height never exceeds it)."""
    calls = len(message.tool_calls)
    return (2 + PREVIEW_LINES + (1 if message.thinking else 0)
            + (calls if calls <= TOOL_CALL_PREVIEW else TOOL_CALL_PREVIEW + 1))


def block_height(stored_height: int, stored: Message | None, prepared: Message | None) -> int:
    """A row's collapsed height, the taller side's: `stored_height` (stored's), or prepared's when
    it can be taller. A cut tool result is measured only when the stored one is not already as
    tall as the cut one could be (tallest_collapsed): most are (their preview is full), and
    counting the lines of 50k cut texts was most of the first layout at 100k messages."""
    if prepared is stored or (prepared is not None and stored_height >= tallest_collapsed(prepared)):
        return stored_height
    hp = collapsed_height(prepared)
    return stored_height if stored_height > hp else hp


def stored_heights_of(messages: tuple[Message, ...]) -> list[int]:
    """Collapsed heights of a conversation's stored messages, computed once."""
    return [collapsed_height(m) for m in messages]
