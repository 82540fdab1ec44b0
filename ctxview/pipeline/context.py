"""The figures of a conversation's requests in the model's tokens (context_tokens.ContextTokens),
made once per conversation and counter from the pipeline cache's counts."""

from __future__ import annotations

from typing import Callable

from ctxview.engine.context_tokens import ContextFit, ContextTokens
from ctxview.engine.harness import sent_tokens
from ctxview.model import Conversation
from ctxview.engine.tokens import TokenCounter
from ctxview.pipeline.cache import PipelineCache
from ctxview.pipeline.sent_history import sent_as_stored

__all__ = ["context_fit", "context_tokens", "sent_estimate"]


def context_tokens(cache: PipelineCache, conversation: Conversation, counter: TokenCounter) -> ContextTokens:
    """The conversation's ContextTokens under `counter`: each request's estimate as sent (the
    system block, the history the harness sent), fitted to what the file recorded."""
    data = cache.data(conversation)
    hit = data.context.get(counter.name)
    if hit is None:
        estimate = sent_estimate(cache, conversation, counter, cache.system_tokens(data, counter))
        hit = data.context[counter.name] = ContextTokens(conversation, estimate)
    return hit


def sent_estimate(cache: PipelineCache, conversation: Conversation, counter: TokenCounter,
                  system: int) -> Callable[[int], int]:
    """k -> `system` plus the counter's tokens of the history as sent at the request that sends
    messages[:k] (harness.sent_tokens, from the cache's counts). Where the harness rewrote nothing
    (no rewrite event, no output sent rewritten from the start: the cache looked once), that is
    the stored prefix sum, and the messages are not walked again."""
    counts, prefix = cache.stored_counts(cache.data(conversation), counter)
    if sent_as_stored(cache, conversation):
        return lambda k: system + prefix[k]
    return sent_tokens(conversation, counts, lambda m: cache.count(counter, m), system, prefix)


def context_fit(cache: PipelineCache, conversation: Conversation, counter: TokenCounter,
                request: int | None) -> ContextFit:
    """What the figure of the request that sends messages[:request] rests on (None: the next)."""
    return context_tokens(cache, conversation, counter).fit(request)
