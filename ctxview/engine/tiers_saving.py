"""What the compression tiers would save on some messages (bloat's recommendation): cut them, then
count. ctxview._fast.bloat measures the cuts without making them where a text's tokens can be told
from its length; tests/test_fast_equals_plain.py holds the two equal."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ctxview.engine.compression import CompressionPolicy, compress_tool_results
from ctxview.engine.tokens import TokenCounter
from ctxview.model import Message

__all__ = ["result_text", "tiers_saving"]


def tiers_saving(messages: Sequence[Message], keep_recent: int, policy: CompressionPolicy, per: Sequence[int],
                 counter: TokenCounter, measure: Callable[[Message], int],
                 tool_indices: Sequence[int] | None = None,
                 by_text: Mapping[str, Sequence[int]] | None = None,
                 compress: Callable[..., list[Message]] = compress_tool_results) -> int:
    """Tokens compress_tool_results(messages, keep_recent, policy) saves: each result it cuts,
    measured (`measure` counts as `counter` does). `tool_indices` and `by_text` are what a caller
    may know of the results already; the rule does not need them (its twin in _fast.bloat does)."""
    compressed = compress(messages, keep_recent, policy)
    return sum(per[i] - measure(c) for i, c in enumerate(compressed) if c is not messages[i])


def result_text(msg: Message) -> Any:
    """A tool result's text as the tally keys it: its content when that is a str, else Message.text
    (which tiers_saving makes a str, as compression's _text_of does)."""
    text = msg.content
    return text if type(text) is str else msg.text
