"""The images a body sends as images: read back from the source file's recorded lines.

The loaders keep no binary data: an image becomes its placeholder text ("[image: image/png,
66 bytes]", formats.blocks) so that a session of screenshots costs no memory. An export that
should send the image reads it back, only then, from the line the message came from (its
origin, "line 12", in a JSON-lines file such as Claude Code's): the image blocks of the user
message's content, or of the tool_result answering the message's tool call, in order. A message
whose placeholders and recorded images do not match one for one keeps its text (and is listed
as changed, as before).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import orjson

from ctxview.model import Message
from ctxview.formats.parsing.json_decode import loads

__all__ = ["IMAGE_PLACEHOLDER", "PLACEHOLDER", "body_messages", "images_as_text", "recorded_images", "sent_as_image",
           "split_at_images"]

IMAGE_PLACEHOLDER = re.compile(r"\[image(?:: [^\]\n]{0,300})?\]")
_LINE = re.compile(r"line ([0-9]{1,18})$")


def _images_of(blocks: Any) -> list[dict[str, Any]]:
    out = []
    for b in blocks if isinstance(blocks, list) else ():
        if isinstance(b, Mapping) and b.get("type") == "image" and isinstance(b.get("source"), Mapping):
            source = b["source"]
            if source.get("type") == "base64" and isinstance(source.get("data"), str) and \
                    isinstance(source.get("media_type"), str):
                out.append({"type": "base64", "media_type": source["media_type"], "data": source["data"]})
            elif source.get("type") == "url" and isinstance(source.get("url"), str):
                out.append({"type": "url", "url": source["url"]})
            else:
                out.append({})  # (an image the export cannot send: keeps the message as text)
    return out


def _from_record(rec: Any, message: Message) -> list[dict[str, Any]]:
    msg = rec.get("message") if isinstance(rec, Mapping) else None
    content = msg.get("content") if isinstance(msg, Mapping) else None
    if not isinstance(content, list):
        return []
    if message.role == "tool":
        for b in content:
            if isinstance(b, Mapping) and b.get("type") == "tool_result" and \
                    b.get("tool_use_id") == message.tool_call_id:
                return _images_of(b.get("content"))
        return []
    # the line must be this message's (a sub-agent's lines are numbered in its own file): its texts are in it
    texts = [b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
    if not all(isinstance(t, str) and t in message.text for t in texts):
        return []
    return _images_of(content)


def recorded_images(source: str | None, prepared: Sequence[Message]) -> dict[int, list[dict[str, Any]]]:
    """id(message) -> the image sources (Anthropic's `source` objects) of each prepared message whose
    image placeholders the source file's line holds as images, one for one; {} when none can be."""
    wanted: dict[int, list[Message]] = {}
    for m in prepared:
        if m.role in ("user", "tool") and "[image" in m.text and m.origin:
            found = _LINE.match(m.origin)
            if found:
                wanted.setdefault(int(found.group(1)), []).append(m)
    if not wanted or not source:
        return {}
    out: dict[int, list[dict[str, Any]]] = {}
    try:
        with open(source, "rb") as f:
            for number, line in enumerate(f, 1):
                messages = wanted.get(number)
                if messages is None:
                    continue
                try:
                    rec = loads(line)
                except orjson.JSONDecodeError:
                    continue
                for m in messages:
                    images = _from_record(rec, m)
                    if images and all(images) and len(images) == len(IMAGE_PLACEHOLDER.findall(m.text)):
                        out[id(m)] = images
                if number >= max(wanted):
                    break
    except OSError:
        return {}
    return out


def split_at_images(text: str) -> list[str]:
    """The text around each image placeholder: n placeholders give n + 1 pieces."""
    return IMAGE_PLACEHOLDER.split(text)


# An image (or other binary block) the loaders turned into text: blocks.binary_placeholder's shape
PLACEHOLDER = re.compile(r"\[(?:image|document|audio|file)(?:: [^\]\n]{0,300})?\]")


def sent_as_image(message: Message, images: Mapping[int, Any] | None, shape: str) -> bool:
    """Whether the message's images go out as images (read back; a Chat Completions tool message
    carries text only)."""
    return bool(images) and id(message) in images and not (shape == "openai" and message.role == "tool")


def images_as_text(prepared: Sequence[Message], images: Mapping[int, Any] | None = None,
                   shape: str = "anthropic") -> list[tuple[int, str, str]]:
    """(position in the prepared messages, role, placeholder) of each image, document, audio or file
    the body carries as its placeholder text: the loaders keep no binary data, and an image goes out
    as one only where export.media read it back (`images`)."""
    out = []
    for k, m in enumerate(prepared):
        if sent_as_image(m, images, shape):
            continue
        text = m.text
        if "[" in text:
            out.extend((k, m.role, p.group()) for p in PLACEHOLDER.finditer(text))
    return out


def body_messages(body: Mapping[str, Any], shape: str) -> int:
    """How many messages a body holds besides the system prompt (0: nothing for the model to answer)."""
    messages = body.get("messages") or []
    if shape == "openai":
        return sum(1 for m in messages if m.get("role") not in ("system", "developer"))
    return len(messages)
