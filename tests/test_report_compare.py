"""`report --compare`: the same figures as before, in memory that does not grow with the settings.

The session is written at test time by benchmarks/make_session.py (deterministic: the same bytes for
the same arguments). tests/fixtures/expected/compare-golden-1500.json holds the compare section that the
code before this change printed for it (every figure but the dollars, which follow the price
table's version); the replays must still give exactly these. The memory test measures the peak of
what Python allocates (tracemalloc) while the report is built: a report comparing four settings
whose tiers cut at different lengths must peak no higher than one comparing a single setting
(each setting's cut messages are let go before the next is replayed), where it peaked 2.3x higher.
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from ctxview._fast import compression
from ctxview.cli.arguments import _compare
from ctxview.formats import load_session
from ctxview.analysis.report import build_report

HERE = Path(__file__).parent
SPECS = "default,aggressive,light,10:full,*:500,default+clear=3,budget=50000,default+keep=5"
FIGURES = ("requests", "tokens", "cache_read", "cache_write", "input", "read_share")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    sys.path.insert(0, str(HERE.parent / "benchmarks"))
    import make_session

    path = tmp_path_factory.mktemp("compare") / "s.jsonl"
    make_session.write(path, 1500, "claude-code", seed=0)
    return load_session(path)


def test_the_figures_are_the_ones_printed_before(session):
    doc = build_report(session, {}, compare=_compare(SPECS))
    got = doc["conversations"][0]["compare"]
    expected = json.loads((HERE / "fixtures" / "expected" / "compare-golden-1500.json").read_text())
    assert {k: got["as_sent"][k] for k in FIGURES} == expected["as_sent"]
    rows = [{"label": r["label"], **{k: r[k] for k in FIGURES}, "tokens_change": r["tokens_change"]}
            for r in got["settings"]]
    by_label = lambda rs: sorted(rs, key=lambda r: r["label"])  # (the table is ranked by dollars: its order may move)
    assert by_label(rows) == by_label(expected["settings"])


def test_each_setting_alone_gives_its_figures_among_others(session):
    """Letting one setting's messages go before the next changes no figure (usd included)."""
    together = build_report(session, {}, compare=_compare(SPECS))["conversations"][0]["compare"]["settings"]
    for label, values in _compare(SPECS)[::3]:
        compression.clear_caches()
        alone = build_report(session, {}, compare=[(label, values)])["conversations"][0]["compare"]["settings"]
        assert alone == [r for r in together if r["label"] == label]


def _peak(session, specs: str) -> int:
    compression.clear_caches()  # (module memos another test filled would count here otherwise)
    gc.collect()
    tracemalloc.start()
    try:
        build_report(session, {}, compare=_compare(specs))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_settings_compared(session):
    one = _peak(session, "default")
    four = _peak(session, "default,aggressive,light,10:full,*:500")   # four sets of cut lengths
    assert four <= one * 1.2, f"one setting {one / 1e6:.1f} MB, four {four / 1e6:.1f} MB"
