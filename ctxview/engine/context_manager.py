"""SwarmSDK's `Agent::ContextManager`, in Python, with the original's names.

A thin stateful facade over `reminders` and `compression`: it holds the
ephemeral content for the next model call and the compression flag; the
work is done by pure functions. With no policy it behaves exactly as the
Ruby class (see tests/test_parity.py). Messages are never mutated.

Deliberate improvement: a prepared or compressed message keeps every field
of the original (tool_calls, model_id, usage, ids, ...); the Ruby class
rebuilt it with role, content and tool_call_id only. Those three are
computed exactly as the original does.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ctxview.engine import compression, reminders
from ctxview.engine.compression import CompressionPolicy
from ctxview.model import Content, Message

__all__ = ["ContextManager", "embed_ephemeral"]


def _to_s(value: object) -> str:
    # Ruby's Array#join calls to_s: nil becomes "".
    if value is None:
        return ""
    if isinstance(value, Content):
        return value.text
    return value if isinstance(value, str) else str(value)


def embed_ephemeral(messages: Sequence[Message], ephemeral: Mapping[int, Sequence[str]]) -> list[Message]:
    """A new list where each message with ephemeral content has it appended.

    As the original: "\\n\\n"-joined after the message's text, Content stays
    Content (with its attachments), and indices outside the list attach to
    nothing.
    """
    out = list(messages)
    n = len(out)
    for index, extra in ephemeral.items():
        # Ruby looks the hash up with integer indices 0..n-1 only.
        # `ephemeral&.any?`: a list of only nil/false entries attaches nothing.
        if type(index) is not int or not 0 <= index < n or all(x is None or x is False for x in extra):
            continue
        msg = out[index]
        content = msg.content
        text = _to_s(content)
        embedded = "\n\n".join([text, *map(_to_s, extra)])
        if isinstance(content, Content):
            out[index] = msg.with_content(Content(embedded, content.attachments))
        else:
            out[index] = msg.with_content(embedded)
    return out


class ContextManager:
    """Ephemeral content, system reminders and tool-result compression for one agent.

    `ContextManager()` is the original; `ContextManager(policy="light")` or
    `ContextManager(policy=CompressionPolicy(...))` compresses with other tiers.
    """

    SYSTEM_REMINDER_REGEX = reminders.SYSTEM_REMINDER_REGEX

    def __init__(self, policy: str | CompressionPolicy | None = None) -> None:
        self.policy: CompressionPolicy = (
            compression.DEFAULT_POLICY if policy is None else compression.get_policy(policy)
        )
        # {message index: [text, ...]}: appended for the next call only.
        self._ephemeral: dict[int, list[str]] = {}
        # None until auto compression runs (as the original: not False).
        self.compression_applied: bool | None = None

    def __repr__(self) -> str:
        return (
            f"ContextManager(policy={self.policy.name!r}, ephemeral={self.ephemeral_count()}, "
            f"compression_applied={self.compression_applied!r})"
        )

    # --- ephemeral content ---------------------------------------------------

    def add_ephemeral_content_for_message(self, message_index: int, content: str) -> None:
        """Append `content` to message `message_index` in the next prepare_for_llm only."""
        self._ephemeral.setdefault(message_index, []).append(content)

    def add_ephemeral_reminder(self, content: str, messages_array: Sequence[Message]) -> None:
        """Append `content` to the last message of `messages_array` (nothing if it is empty)."""
        index = len(messages_array) - 1
        if index < 0:
            return
        self.add_ephemeral_content_for_message(index, content)

    def prepare_for_llm(self, persistent_messages: Sequence[Message]) -> list[Message]:
        """A new list of the messages with ephemeral content embedded; the input is untouched."""
        if not self._ephemeral:
            return list(persistent_messages)
        return embed_ephemeral(persistent_messages, self._ephemeral)

    def clear_ephemeral(self) -> None:
        """Forget all ephemeral content (after the model answered)."""
        self._ephemeral.clear()

    def has_ephemeral(self) -> bool:
        return bool(self._ephemeral)

    def ephemeral_count(self) -> int:
        """How many message indices have ephemeral content (indices outside the list count too)."""
        return len(self._ephemeral)

    @property
    def ephemeral_content(self) -> dict[int, tuple[str, ...]]:
        """A copy of the pending ephemeral content: {message index: texts}."""
        return {index: tuple(texts) for index, texts in self._ephemeral.items()}

    # --- system reminders ----------------------------------------------------

    def extract_system_reminders(self, content: str | None) -> list[str]:
        return reminders.extract(content)

    def strip_system_reminders(self, content: str | None) -> str | None:
        return reminders.strip(content)

    def has_system_reminders(self, content: str | None) -> bool:
        return reminders.has(content)

    # --- compression ---------------------------------------------------------

    def compress_tool_results(self, messages: Sequence[Message], keep_recent: int = 10) -> list[Message]:
        """Old tool results cut by age; user/assistant/system and the last keep_recent kept."""
        return compression.compress_tool_results(messages, keep_recent=keep_recent, policy=self.policy)

    def compress_tool_message(self, message: Message, age: int, tool_name: str | None = None) -> Message:
        """One tool message cut for its age (the role of the result is "tool", as in the original)."""
        return compression.compress_tool_message(message, age, self.policy, tool_name=tool_name)

    def detect_tool_name(self, content: str | None) -> str | None:
        return compression.detect_tool_name(content)

    def is_rerunnable_tool(self, tool_name: str | None) -> bool:
        return compression.is_rerunnable(tool_name, self.policy)

    rerunnable_tool = is_rerunnable_tool  # the Ruby name without its "?"

    def auto_compress_on_threshold(self, messages: Sequence[Message], keep_recent: int = 10) -> list[Message]:
        """Compress once: the first call compresses and sets compression_applied; later calls return a copy."""
        if self.compression_applied:
            return list(messages)
        self.compression_applied = True
        return self.compress_tool_results(messages, keep_recent=keep_recent)

    def reset_compression(self) -> None:
        """Allow auto compression again (the flag becomes False, not None)."""
        self.compression_applied = False

    # --- beyond the seed: budget, summarising, bloat, clearing -----------------
    # (the seed's "Future" methods; the work is in budget.py, bloat.py and
    # clearing.py, imported here on first use to keep this module light)

    def truncate_to_fit(
        self, messages: Sequence[Message], max_tokens: int, keep_recent: int = 10, counter=None
    ) -> list[Message]:
        """Oldest messages dropped until the rest fits max_tokens (see budget.truncate_to_fit)."""
        from ctxview.engine.budget import truncate_to_fit

        return truncate_to_fit(messages, max_tokens, keep_recent, counter)

    def summarize_old_messages(
        self, messages: Sequence[Message], before_index: int, strategy: str = "truncate", summarizer=None
    ) -> list[Message]:
        """Messages before before_index truncated, removed or summarised (see budget.summarize_old_messages)."""
        from ctxview.engine.budget import summarize_old_messages

        return summarize_old_messages(messages, before_index, strategy, summarizer=summarizer)

    def analyze_context_bloat(
        self, messages: Sequence[Message], threshold: float = 0.7, context_window: int | None = None, counter=None
    ):
        """A BloatReport (report["bloated"], report["recommendations"], report.to_dict()); see bloat.py."""
        from ctxview.engine.bloat import analyze_context_bloat

        return analyze_context_bloat(messages, threshold, context_window, counter, ephemeral=self._ephemeral)

    def clear_tool_uses(self, messages: Sequence[Message], keep: int = 3, **options) -> list[Message]:
        """All but the `keep` most recent tool results cleared (see clearing.clear_tool_uses)."""
        from ctxview.engine.clearing import clear_tool_uses

        return clear_tool_uses(messages, keep, **options)
