"""The bloat analysis of the request shown, as the harness sent it, in the model's tokens: the
report's `"bloat"` and the inspector's `b`."""

from __future__ import annotations

import dataclasses
from functools import partial

from ctxview._fast import compression as fast
from ctxview._fast.bloat import FAST, scan_linear
from ctxview.analysis.stepwise_replay import SCANNED_UNITS
from ctxview.engine.bloat import analyze_context_bloat
from ctxview.engine.bloat_scan import scan_by_id
from ctxview.engine.harness import SentHistory, history_as_sent
from ctxview.gcpause import paused_gc
from ctxview.model import Conversation
from ctxview.pipeline import PipelineCache
from ctxview.pipeline.context import context_fit
from ctxview.pipeline.sent_history import sent_as_stored
from ctxview.settings import Settings

__all__ = ["conversation_bloat"]


def conversation_bloat(conversation: Conversation, settings: Settings, context_window: int | None,
                       cache: PipelineCache, threshold: float = 0.7):
    """The bloat analysis of the request shown as the harness sent it (the report's `"bloat"`, the
    inspector's `b`), in the model's tokens (context_tokens: the request's figure, savings scaled by
    the file's fit and never more than the messages hold), with the pipeline cache's counts and rows:
    what prepare counted or found already is not again."""
    with paused_gc():  # (see gcpause: the collector would walk the session again and again)
        return _bloat(conversation, settings, context_window, cache, threshold)


def _bloat(conversation: Conversation, settings: Settings, context_window: int | None, cache: PipelineCache,
           threshold: float):
    counter = cache.counter(conversation, settings.counter)
    data = cache.data(conversation)
    n = len(conversation.messages) if settings.request is None else settings.request
    fit = context_fit(cache, conversation, counter, settings.request)
    figure = fit.figure()
    # (where the harness sent the stored history, it is not walked again)
    sent = SentHistory(0, conversation.messages) if sent_as_stored(cache, conversation) else history_as_sent(
        conversation, n)
    ephemeral = conversation.ephemeral if settings.embed_ephemeral else None
    common = dict(system_prompt=conversation.system_prompt, keep_recent=settings.keep_recent,
                  measure=lambda m: cache.count(counter, m), measure_cleared=lambda m: cache.count_cleared(counter, m),
                  blank=cache.blanked, figure=(figure.tokens, figure.basis, fit.scale),
                  compress=partial(fast.compress_tool_results, memo=cache.memo),
                  measures=dataclasses.replace(FAST, tiers_saving=partial(FAST.tiers_saving, memo=cache.memo)))
    if not sent.plain or n != len(conversation.messages):
        if ephemeral:
            ephemeral = {i - sent.start: v for i, v in ephemeral.items() if sent.start <= i < n}
        messages = list(sent.messages)
        return analyze_context_bloat(messages, threshold, context_window, counter, ephemeral=ephemeral,
                                     counts=[cache.count(counter, m) for m in messages], **common)
    stored_counts, _ = cache.stored_counts(data, counter)
    common["measures"] = dataclasses.replace(common["measures"], scan=partial(_scan_keeping_units, data.derived))
    # The unchanged rows are made when first read (BaseRows): after the first screen only a screenful
    # is. Making the rest here costs more (a Row each) than the analysis's own pass over the texts.
    rows = cache.base_rows(data, counter)
    return analyze_context_bloat(
        conversation.messages, threshold, context_window, counter, ephemeral=ephemeral, counts=stored_counts,
        rows=rows if rows.made == len(rows) else None, **common)


def _scan_keeping_units(derived: dict, messages, per):
    """FAST's scan of the stored messages (scan_messages), the units kept for the budget's replay
    where the one-pass scan found them (stepwise_replay.SCANNED_UNITS says why)."""
    found = scan_linear(messages, per)
    if found is None:
        return scan_by_id(messages, per)
    derived[SCANNED_UNITS] = (messages, found.units)
    return found
