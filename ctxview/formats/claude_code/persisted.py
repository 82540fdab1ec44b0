"""Large tool results Claude Code sent as a `<persisted-output>` preview.

Claude Code (2.1.2 on) saves a tool result over its size limit (about 30,000 characters) to
<session>/tool-results/<id>.txt and sends the model, in its place, the first 2 KB and the path:

    <persisted-output>
    Output too large (29.6KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/b1.txt

    Preview (first 2KB):
    ...
    </persisted-output>

A transcript records it one of two ways:

- the tool_result's own content is that text (the result was persisted when the tool ran; a Bash
  toolUseResult also names persistedOutputPath and persistedOutputSize): what the file stores is
  what was sent;
- the tool_result holds the whole output and a later `content-replacement` record,
  {"type": "content-replacement", "replacements": [{"kind": "tool-result", "toolUseId": ...,
  "replacement": "<persisted-output>..."}]}, gives the text the model was sent instead (the
  per-message budget of tool results persisted the largest; the decision is kept per tool_use_id,
  from the first request that sent the result, so that every later request sends the same bytes).

Either way the tool message gets meta["persisted_output"] = {"path", "size"} (from the preview's own
words) and, for the second, "sent": the replacement. The as-sent stage (harness.history_as_sent) sends
that text from the start and marks the message.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable, Sequence

from ctxview.model import Conversation, Message
from ctxview.formats.claude_code.deferred import with_deferred

TAG = "<persisted-output>"
_SAVED = re.compile(r"Output too large \(([^)\n]{1,40})\)\. Full output saved to: ([^\n]{1,4096})")


def replacements_of(rec: dict) -> dict[str, str]:
    """The tool results a content-replacement record replaces: tool_use_id -> the text sent."""
    out: dict[str, str] = {}
    items = rec.get("replacements")
    for r in items if type(items) is list else ():
        if type(r) is not dict:
            continue
        kind, tid, text = r.get("kind"), r.get("toolUseId"), r.get("replacement")
        if kind in (None, "tool-result") and type(tid) is str and type(text) is str:
            out[tid] = text
    return out


def _described(text: str) -> dict[str, Any]:
    """What the preview says of the saved file: its path and size as written ("29.6KB")."""
    found = _SAVED.search(text, 0, 4096 + 200)
    return {"path": found.group(2).strip(), "size": found.group(1)} if found else {}


def with_persisted(conv: Conversation, replacements: dict[str, str], at: Iterable[int] | None = None) -> Conversation:
    """`conv` with its persisted tool results marked (meta["persisted_output"]); itself when it has none.
    `at`: the positions of the only messages that can be (linear.py's marks); None: any. A
    content-replacement record can name any result: with one, every message is looked at."""
    messages = conv.messages
    looked_at = enumerate(messages) if at is None or replacements else ((i, messages[i]) for i in at)
    changed: dict[int, Message] = {}
    for i, m in looked_at:  # (a plain loop: it runs over every message of a big file)
        if m.role != "tool":
            continue
        sent = replacements.get(m.tool_call_id) if replacements else None  # type: ignore[arg-type]
        if sent is not None:
            info = {**_described(sent), "sent": sent}
        else:
            c = m.content
            if type(c) is not str or not c.startswith(TAG):
                continue
            info = _described(c)
        changed[i] = m.replace(meta={**m.meta, "persisted_output": info})
    if not changed:
        return conv
    messages = tuple(changed.get(i, m) for i, m in enumerate(messages))
    return dataclasses.replace(conv, messages=messages)


def marked(conv: Conversation, scan: Any, at: Sequence[int] | None = None) -> Conversation:
    """`conv` with what the file's other records say of its tool results: the persisted previews
    (content-replacement records) and the deferred tools (deferred.py), from `scan` (a Scan).
    `at`: the positions of the only messages either can mark, in order (linear.py's); None: any."""
    return with_deferred(with_persisted(conv, scan.replacements, at), scan.deferred, at)
