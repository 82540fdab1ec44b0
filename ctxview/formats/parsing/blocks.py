"""Content blocks and parts of the provider formats, turned into plain text.

Anthropic (and Claude Code) messages hold lists of typed blocks; OpenAI chat
and Responses messages hold lists of typed parts. ctxview shows one string
per message: text blocks are joined, images and other binary blocks become a
short placeholder with their size, thinking is kept apart.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ctxview.engine import reminders
from ctxview.model import ToolCall
from ctxview.formats.parsing.builders import arguments_from, tool_call_from
from ctxview.formats.parsing.json_encode import compact_json

__all__ = [
    "anthropic_assistant",
    "anthropic_user",
    "arguments_from",
    "binary_placeholder",
    "human_size",
    "is_reminder_only",
    "openai_parts_text",
    "result_text",
    "thinking_block",
    "thinking_text",
]



def human_size(nbytes: int) -> str:
    if nbytes < 1024:
        return f"{nbytes} bytes"
    if nbytes < 1024 * 1024:
        return f"{nbytes / 1024:.1f} KB"
    return f"{nbytes / (1024 * 1024):.1f} MB"


def base64_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    pad = data[-2:].count("=")
    return max(0, len(data) * 3 // 4 - pad)


def binary_placeholder(kind: str, media_type: str | None, nbytes: int | None, extra: str | None = None) -> str:
    """"[image: image/png, 48.2 KB]" and the like."""
    parts = [p for p in (media_type, human_size(nbytes) if nbytes else None, extra) if p]
    return f"[{kind}: {', '.join(parts)}]" if parts else f"[{kind}]"


def _anthropic_source_placeholder(kind: str, source: Any) -> str:
    if not isinstance(source, Mapping):
        return binary_placeholder(kind, None, None)
    stype = source.get("type")
    media = source.get("media_type") if isinstance(source.get("media_type"), str) else None
    if stype == "base64":
        return binary_placeholder(kind, media, base64_size(source.get("data")))
    if stype == "url":
        url = source.get("url")
        return binary_placeholder(kind, media, None, str(url)[:200] if url else None)
    if stype == "text" and isinstance(source.get("data"), str):
        return binary_placeholder(kind, media or "text/plain", len(source["data"].encode("utf-8", "replace")))
    if stype == "file":
        return binary_placeholder(kind, media, None, str(source.get("file_id") or "")[:80] or None)
    return binary_placeholder(kind, media, None)


def _block_text(block: Any) -> str | None:
    """Text of one non-tool block of a message or tool result (None: nothing to show)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, Mapping):
        return None
    btype = block.get("type")
    if btype == "text" or (btype is None and isinstance(block.get("text"), str)):
        text = block.get("text")
        return text if isinstance(text, str) else None
    if btype == "image":
        return _anthropic_source_placeholder("image", block.get("source"))
    if btype == "document":
        return _anthropic_source_placeholder("document", block.get("source"))
    if btype in ("tool_reference",):
        return f"[tool reference: {block.get('tool_name') or ''}]"
    if btype in ("search_result",):
        title = block.get("title") or ""
        return f"[search result: {str(title)[:120]}]"
    if btype in ("redacted_thinking",):
        return None
    if isinstance(btype, str):
        return f"[{btype} block]"
    return None


def result_text(content: Any) -> str:
    """The text of a tool result's content: a string or a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [t for t in (_block_text(b) for b in content) if t is not None]
        return texts[0] if len(texts) == 1 else "\n".join(texts)
    if isinstance(content, Mapping):
        t = _block_text(content)
        if t is not None:
            return t
    return compact_json(content)


def thinking_block(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """A thinking or redacted_thinking block in the API's shape, for re-sending it exactly:
    only the keys the API takes, and the signature only where one was recorded (a block
    without one cannot be sent back; the exporter decides). None for anything else."""
    btype = block.get("type")
    if btype == "thinking":
        t = block.get("thinking")
        if not isinstance(t, str):
            return None
        sig = block.get("signature")
        return {"type": "thinking", "thinking": t, "signature": sig} if isinstance(sig, str) else \
            {"type": "thinking", "thinking": t}
    if btype == "redacted_thinking":
        data = block.get("data")
        return {"type": "redacted_thinking", "data": data} if isinstance(data, str) else None
    return None


def thinking_text(blocks: Iterable[Mapping[str, Any]]) -> str | None:
    """Message.thinking from recorded blocks: their texts, a stand-in for redacted ones."""
    parts = [b["thinking"] if b["type"] == "thinking" else "[redacted thinking]" for b in blocks
             if b["type"] != "thinking" or b["thinking"]]
    return "\n\n".join(parts) if parts else None


def anthropic_assistant(content: Any) -> tuple[list[str], list[dict[str, Any]], list[ToolCall]]:
    """(text parts, thinking blocks as thinking_block() gives them, tool calls) of an
    assistant message's content."""
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    if isinstance(content, str):
        if content:
            texts.append(content)
        return texts, thinking, calls
    if not isinstance(content, list):
        return texts, thinking, calls
    for block in content:
        if not isinstance(block, Mapping):
            if isinstance(block, str) and block:
                texts.append(block)
            continue
        btype = block.get("type")
        if btype in ("tool_use", "server_tool_use", "mcp_tool_use"):
            inp = block.get("input")
            calls.append(tool_call_from(block.get("id"), block.get("name"), inp))
        elif btype == "thinking" or btype == "redacted_thinking":
            tb = thinking_block(block)
            if tb is not None:
                thinking.append(tb)
        else:
            t = _block_text(block)
            if t:
                texts.append(t)
    return texts, thinking, calls


def anthropic_user(content: Any) -> tuple[list[tuple[str, str, bool]], list[str]]:
    """(tool results as (tool_use_id, text, is_error), other text parts) of a user message."""
    results: list[tuple[str, str, bool]] = []
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
        return results, texts
    if not isinstance(content, list):
        return results, texts
    for block in content:
        if isinstance(block, Mapping) and block.get("type") in ("tool_result", "mcp_tool_result", "web_search_tool_result"):
            results.append((str(block.get("tool_use_id") or ""), result_text(block.get("content")), bool(block.get("is_error"))))
        else:
            t = _block_text(block)
            if t is not None:
                texts.append(t)
    return results, texts


def openai_parts_text(content: Any) -> str | None:
    """Text of an OpenAI chat / Responses message content (string or list of parts)."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return compact_json(content)
    out: list[str] = []
    for part in content:
        if type(part) is not dict:  # (the common case first)
            if isinstance(part, str):
                out.append(part)
                continue
            if not isinstance(part, Mapping):
                continue
        ptype = part.get("type")
        if ptype in ("text", "input_text", "output_text", "summary_text", "reasoning_text") or (
            ptype is None and isinstance(part.get("text"), str)
        ):
            t = part.get("text")
            if isinstance(t, str):
                out.append(t)
        elif ptype == "refusal":
            out.append(f"[refusal] {part.get('refusal') or ''}")
        elif ptype in ("image_url", "input_image"):
            url = part.get("image_url")
            if isinstance(url, Mapping):
                url = url.get("url")
            out.append(data_url_placeholder("image", url))
        elif ptype in ("input_audio",):
            audio = part.get("input_audio") or {}
            out.append(binary_placeholder("audio", f"audio/{audio.get('format') or '?'}", base64_size(audio.get("data"))))
        elif ptype in ("file", "input_file"):
            f = part.get("file") if isinstance(part.get("file"), Mapping) else part
            data = f.get("file_data")
            out.append(binary_placeholder("file", None, base64_size(data) if data else None, f.get("filename") or f.get("file_id")))
        elif isinstance(ptype, str):
            out.append(f"[{ptype}]")
    return out[0] if len(out) == 1 else "\n".join(out)


def data_url_placeholder(kind: str, url: Any) -> str:
    if isinstance(url, str) and url.startswith("data:"):
        head, _, data = url.partition(",")
        media = head[5:].split(";")[0] or None
        return binary_placeholder(kind, media, base64_size(data))
    if isinstance(url, str):
        return binary_placeholder(kind, None, None, url[:200])
    return binary_placeholder(kind, None, None)


def is_reminder_only(text: str) -> bool:
    """True when the text is nothing but <system-reminder> blocks (and whitespace)."""
    if "<system-reminder>" not in text:
        return False
    return not reminders.remove(text).strip()  # linear: the regex is quadratic on unclosed openers


def join_texts(parts: Iterable[str]) -> str | None:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "\n".join(parts)
