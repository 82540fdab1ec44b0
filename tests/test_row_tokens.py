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


def _by_role_of_made_rows(view) -> dict:
    """The report's messages and tokens by role, summed over the rows made one by one."""
    out: dict = {}
    for r in view.rows:
        entry = out.setdefault((r.stored or r.prepared).role,
                               {"stored": 0, "prepared": 0, "tokens_stored": 0, "tokens_prepared": 0})
        if r.stored is not None:
            entry["stored"] += 1
            entry["tokens_stored"] += r.tokens_stored
        if r.prepared is not None:
            entry["prepared"] += 1
            entry["tokens_prepared"] += r.tokens_prepared
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).name)
def test_the_report_by_role_is_the_sum_of_the_rows(path):
    from ctxview.analysis.report import _by_role

    for conv in load_session(path).conversations:
        for s in SETTINGS:
            told = _by_role(prepare(conv, s, cache=PipelineCache()))   # (its rows not made)
            made = _by_role_of_made_rows(prepare(conv, s, cache=PipelineCache()))
            assert told == made and list(told) == list(made), (conv.name, s.label())
