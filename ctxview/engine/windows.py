"""Context-window sizes of common models, and how ctxview picks one.

The table holds published input-context sizes in tokens, matched by the
longest prefix of the model id (after any "provider/" part), so that dated or
suffixed ids ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") resolve.
An explicit size (`--context-window N`) always wins, then what the session
recorded, then this table.
"""

from __future__ import annotations

__all__ = ["CONTEXT_WINDOWS", "WARNING_MARKS", "context_window_for", "resolve_context_window", "gauge_level"]

# SwarmSDK's marks: 60% triggers its automatic compression, 80% and 90% warn.
WARNING_MARKS = (0.6, 0.8, 0.9)

CONTEXT_WINDOWS: dict[str, int] = {
    # Anthropic
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-sonnet": 200_000,
    "claude-3-haiku": 200_000,
    "claude-2": 100_000,
    "claude": 200_000,
    # OpenAI
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-oss": 131_072,
    "o1-mini": 128_000,
    "o1": 200_000,
    "o3-mini": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    # Google
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini": 1_048_576,
}

_BY_LENGTH = sorted(CONTEXT_WINDOWS, key=len, reverse=True)


def context_window_for(model: str | None) -> int | None:
    """The table's window for a model id, or None when no entry matches."""
    if not model:
        return None
    m = model.strip().lower().rsplit("/", 1)[-1]
    if m.startswith("anthropic.") or m.startswith("us.anthropic."):  # Bedrock ids
        m = m.split("anthropic.", 1)[1]
    for prefix in _BY_LENGTH:
        if m.startswith(prefix):
            return CONTEXT_WINDOWS[prefix]
    return None


def resolve_context_window(override: int | None, recorded: int | None, model: str | None) -> int | None:
    """Explicit override, else the session's own figure, else the table."""
    if override:
        return override
    if recorded:
        return recorded
    return context_window_for(model)


def gauge_level(share: float | None) -> int:
    """How many of SwarmSDK's marks a window share has reached (0-3)."""
    if share is None:
        return 0
    return sum(1 for mark in WARNING_MARKS if share >= mark)
