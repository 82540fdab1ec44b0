"""The report's shortcuts give what their plain definitions give."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.engine.harness import sent_tokens
from ctxview.pipeline import PipelineCache, prepare
from ctxview.analysis.report import as_sent_calibration
from ctxview.settings import settings_for
from ctxview.engine.tokens import calibrate

ROOT = Path(__file__).parents[1]
CORPUS = sorted(glob.glob(str(ROOT / "tests" / "fixtures" / "samples" / "**" / "*.jsonl"), recursive=True)
                + glob.glob(str(ROOT / "sample_sessions" / "*.json*"))
                + glob.glob(str(ROOT / "sample_sessions" / "*" / "*.jsonl")))


def test_the_corpus_holds_rewritten_and_plain_histories():
    from ctxview.engine.harness import rewrite_events, rewritten_outputs

    convs = [c for p in CORPUS for c in load_session(p).conversations]
    assert any(rewrite_events(c) for c in convs) and any(rewritten_outputs(c)[0] for c in convs)
    assert any(not rewrite_events(c) and not rewritten_outputs(c)[0] for c in convs)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: Path(p).name)
def test_the_as_sent_calibration_equals_sent_tokens_fit(path):
    for conv in load_session(path).conversations:
        settings = settings_for(conv, {})
        cache = PipelineCache()
        prepare(conv, settings, cache=cache)
        counter = cache.counter(conv, settings.counter)
        counts = [counter.count_message(m) for m in conv.messages]
        system = counter.count(conv.system_prompt) if conv.system_prompt else 0
        plain = calibrate(conv.messages, counter, system_prompt=conv.system_prompt, counts=counts,
                          estimate=sent_tokens(conv, counts, counter.count_message, system))
        assert as_sent_calibration(conv, settings, cache).to_dict() == plain.to_dict(), (path, conv.name)
