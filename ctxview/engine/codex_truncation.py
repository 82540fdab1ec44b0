"""Codex CLI's truncation of tool outputs, as the model sees them.

A Codex rollout stores each function_call_output whole: the session records the
same items into its history (ContextManager.record_items, which truncates tool
outputs) and into the rollout (untouched), and rebuilds the history from a
rollout by truncating again with the turn's policy. What the model read is
therefore the stored output cut by the turn's `truncation_policy`
({"mode": "bytes" | "tokens", "limit": N}, recorded in turn_context and kept
by ctxview's Codex loader on each tool message as meta["truncation_policy"]).

This reproduces codex-rs (openai/codex): ContextManager.process_item applies
`policy * 1.2` (the allowance for serialisation, rounded up) and then
utils/output-truncation's truncate_text, which keeps the head and the tail
within the byte budget and puts "…N chars truncated…" (bytes mode, N the
characters removed) or "…N tokens truncated…" (tokens mode, N the approximate
tokens over the budget) between them. Tokens are approximated as 4 bytes of
UTF-8, as Codex does. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["approx_token_count", "history_policy", "truncate_output", "truncate_text"]

_BYTES_PER_TOKEN = 4
# ContextManager.process_item: `policy * 1.2`, the allowance for serialisation and headers
_SERIALIZATION_ALLOWANCE = 1.2


def approx_token_count(text: str) -> int:
    """Codex's token estimate: UTF-8 bytes / 4, rounded up."""
    return _tokens_for_bytes(len(text.encode("utf-8", "surrogatepass")))


def _tokens_for_bytes(nbytes: int) -> int:
    return (nbytes + _BYTES_PER_TOKEN - 1) // _BYTES_PER_TOKEN


def _policy(policy: Mapping[str, Any]) -> tuple[str, int]:
    mode, limit = policy.get("mode"), policy.get("limit")
    if mode not in ("bytes", "tokens"):
        raise ValueError(f"truncation policy mode must be \"bytes\" or \"tokens\", not {mode!r}")
    if type(limit) is not int or limit < 0:
        raise ValueError(f"truncation policy limit must be a non-negative integer, not {limit!r}")
    return mode, limit


def history_policy(policy: Mapping[str, Any]) -> dict[str, Any]:
    """The policy Codex's history applies for a recorded turn policy: its limit times 1.2,
    rounded up (Rust's `(limit as f64 * 1.2).ceil()`, the same IEEE double arithmetic)."""
    mode, limit = _policy(policy)
    return {"mode": mode, "limit": math.ceil(limit * _SERIALIZATION_ALLOWANCE)}


def truncate_output(text: str, policy: Mapping[str, Any]) -> str:
    """A stored Codex tool output as the model saw it under the turn's recorded policy."""
    return truncate_text(text, history_policy(policy))


def truncate_text(text: str, policy: Mapping[str, Any]) -> str:
    """Codex's truncate_text(content, policy) for a text output, budget as given."""
    mode, limit = _policy(policy)
    if mode == "bytes":
        return _truncate(text, limit, use_tokens=False)
    # truncate_middle_with_token_budget
    if not text:
        return ""
    max_bytes = limit * _BYTES_PER_TOKEN
    return _truncate(text, max_bytes, use_tokens=True)


def _truncate(text: str, max_bytes: int, use_tokens: bool) -> str:
    # truncate_with_byte_estimate: the head and the tail halves of the byte budget, cut at
    # character boundaries, with the marker between them
    if not text:
        return ""
    data = text.encode("utf-8", "surrogatepass")
    total = len(data)
    if max_bytes == 0:
        removed = _tokens_for_bytes(total) if use_tokens else len(text)
        return _marker(use_tokens, removed)
    if total <= max_bytes:
        return text
    left = max_bytes // 2
    prefix_end, suffix_start, removed_chars = split_at(data, left, max_bytes - left)
    removed = _tokens_for_bytes(total - max_bytes) if use_tokens else removed_chars
    return (data[:prefix_end].decode("utf-8", "surrogatepass") + _marker(use_tokens, removed)
            + data[suffix_start:].decode("utf-8", "surrogatepass"))


def split_at(data: bytes, beginning_bytes: int, end_bytes: int) -> tuple[int, int, int]:
    """Codex's split_string on UTF-8 bytes: (end of the head, start of the tail, characters
    between them). The head is the characters that end within `beginning_bytes`; the tail
    starts at the first character at or after len - `end_bytes` that is not in the head."""
    n = len(data)
    prefix_end = _boundary_at_or_before(data, min(beginning_bytes, n))
    start = max(n - end_bytes, prefix_end) if end_bytes < n else prefix_end
    suffix_start = _boundary_at_or_after(data, start)
    removed = len(data[prefix_end:suffix_start].decode("utf-8", "surrogatepass"))
    return prefix_end, suffix_start, removed


def _boundary_at_or_before(data: bytes, i: int) -> int:
    while 0 < i < len(data) and data[i] & 0xC0 == 0x80:
        i -= 1
    return i


def _boundary_at_or_after(data: bytes, i: int) -> int:
    n = len(data)
    while i < n and data[i] & 0xC0 == 0x80:
        i += 1
    return i


def _marker(use_tokens: bool, removed: int) -> str:
    return f"…{removed} tokens truncated…" if use_tokens else f"…{removed} chars truncated…"
