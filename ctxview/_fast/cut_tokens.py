"""The tokens of a tool result cut to a tier's limit, under SwarmSDK's estimate, without making the cut.

The rule: `counter.count_message(as_tool_result(msg, plan.render(text, limit, name)))`. Under the
estimate a message's tokens follow from its text's length and code characters, and a cut text is
three pieces (the kept head, the marker with the number of characters cut, maybe the hint) whose
lengths and code characters add up; the digits of the number are no code characters.
tests/test_fast_equals_plain.py holds it equal to the rule.

The tool a text names (a "content" policy's hint) is detected once per text and remembered: a
Memo keeps one CutTokens for each way of rendering a cut (`Memo.cut_tokens`), so the bloat
analysis and the replays of one report detect each text once between them.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ctxview.engine.tokens import SwarmEstimate
from ctxview.engine.tool_names import detect_tool_name
from ctxview.tiers import CompressionPolicy

__all__ = ["CutTokens"]

DETECTED_LIMIT = 400_000  # texts whose tool is remembered before the table is emptied
_UNSEEN = object()


class CutTokens:
    """`tokens(text, limit, name(text, name))`: the tokens of the tool result holding `text` cut to
    `limit` characters (len(text) > limit); with a "content" policy the tool whose hint is added is
    detected from the text by `detect` (detect_tool_name by default, remembered per text)."""

    __slots__ = ("marker_chars", "marker_code", "slots", "hints", "by_content", "detect", "detected")

    def __init__(self, policy: CompressionPolicy, detect: Callable[[str], str | None] | None = None) -> None:
        stats = SwarmEstimate.text_stats
        marker_parts = policy.marker.split("{n}")
        self.marker_chars, self.marker_code = stats("".join(marker_parts))
        self.slots = len(marker_parts) - 1   # where the number of chars cut goes
        self.hints = {tool: stats(policy.hint.replace("{tool}", tool)) for tool in policy.rerunnable_tools}
        self.by_content = policy.tool_name_from == "content"
        self.detected: dict[str, str | None] = {}   # text -> the tool it names (detect_tool_name)
        self.detect = detect if detect is not None else self._detect

    def _detect(self, text: str) -> str | None:
        """detect_tool_name(text), remembered."""
        name = self.detected.get(text, _UNSEEN)
        if name is _UNSEEN:
            if len(self.detected) >= DETECTED_LIMIT:
                self.detected.clear()
            name = self.detected[text] = detect_tool_name(text)
        return name  # type: ignore[return-value]

    def name(self, text: str, name: str | None) -> str | None:
        """The tool whose hint a cut of `text` gets: `name` (the result's, or its call's), or the
        one detected from the text under a "content" policy."""
        return self.detect(text) if self.by_content else name

    def tokens(self, text: str, limit: int, name: str | None) -> int:
        """The tokens of `text` cut to `limit`, with the hint of `name` (see name())."""
        return self.tokens_at(text, (limit,), name)[0]

    def tokens_at(self, text: str, limits: Sequence[int | None], name: str | None) -> list[int | None]:
        """tokens(text, limit, name) for each limit (None for None): the marker and hint once."""
        hint = self.hints.get(name) if name is not None else None
        extra_chars, extra_code = self.marker_chars, self.marker_code
        if hint is not None:
            extra_chars += hint[0]
            extra_code += hint[1]
        stats, count, slots, length = SwarmEstimate.text_stats, SwarmEstimate.count_stats, self.slots, len(text)
        out: list[int | None] = []
        for limit in limits:
            if limit is None:
                out.append(None)
                continue
            chars, code = stats(text[:limit])
            out.append(count("tool", chars + extra_chars + slots * len(str(length - limit)), code + extra_code))
        return out
