"""A view's rows tell their tokens without being made (view.Rows.tokens): the same figures as the
rows made, on every bundled sample, as sent and under what-ifs that cut, clear, summarise, drop
and insert."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from ctxview import load_session
from ctxview.engine.view import Rows, row_tokens
from ctxview.pipeline import PipelineCache, prepare
from ctxview.settings import ClearSettings, Settings

ROOT = Path(__file__).parent.parent
FILES = sorted(glob.glob(str(ROOT / "tests" / "fixtures" / "samples" / "**" / "*.jsonl"), recursive=True))
FILES += [str(ROOT / "sample_sessions" / "swarm-demo.ctxview.json")]

SETTINGS = [Settings(), Settings(tiers="aggressive", keep_recent=2), Settings(budget=3000),
            Settings(old_messages="remove"), Settings(old_messages="llm", budget=2000),
            Settings(clear=ClearSettings(keep=2), budget=2500), Settings(old_messages="truncate"),
            Settings(clear=ClearSettings(keep=1, exclude=("Read",))), Settings(tiers="default", keep_recent=0)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).name)
def test_rows_tell_the_tokens_of_the_rows_they_make(path):
    told_without_making = 0
    for conv in load_session(path).conversations:
        for s in SETTINGS:
            view = prepare(conv, s, cache=PipelineCache())
            rows = view.rows
            assert isinstance(rows, Rows)
            unmade = sum(1 for item in rows.entries() if type(item).__name__ != "Row")
            told = list(row_tokens(rows))          # first: before any row is made
            made = [(r.tokens_stored, r.tokens_prepared) for r in rows]
            assert told == made, (conv.name, s.label())
            told_without_making += unmade
    assert told_without_making > 0   # (the rows were told, not made and read)
