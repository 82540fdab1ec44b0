"""Fast constructors for the values the pipeline builds by the hundred thousand.

Plain names for _slots.slot_builder's functions: each builds a frozen value
without its __init__ (the caller passes values of the right types).
"""

from __future__ import annotations

import dataclasses

from ctxview._slots import slot_builder
from ctxview.model import Content, Message
from ctxview.engine.view import Change, Row

__all__ = ["make_row", "with_content", "with_text"]

assert not hasattr(Row, "__post_init__") and not hasattr(Change, "__post_init__")
# Row(...) with every field given by position.
make_row = slot_builder(Row, "make_row", {})
# Message.with_content(content) as straight-line slot copies.
with_content = slot_builder(Message, "with_content",
                            {f.name: f"src.{f.name}" for f in dataclasses.fields(Message) if f.name != "content"},
                            ("src",))


def with_text(msg: Message, text: str) -> Message:
    """`msg` with its text replaced (a Content keeps its attachments)."""
    content = Content(text, msg.content.attachments) if isinstance(msg.content, Content) else text
    return with_content(msg, content)
