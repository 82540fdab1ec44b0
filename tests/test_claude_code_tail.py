"""A transcript from its last compaction on, read from the file's end (formats/claude_code/tail.py):
the boundary found in blocks from the end, and the next request as sent from the tail alone equal
to the whole file's. The real session: spotter-258c7280 (MIT, marot/spotter, tests/LICENSES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.formats import load_session
from ctxview.formats.parsing import backwards
from ctxview.formats.claude_code.tail import boundary_line_start, load_tail
from ctxview.pipeline import prepare
from ctxview.settings import Settings

SPOTTER = (Path(__file__).parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
           / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
DATA = SPOTTER.read_bytes()
BOUNDARY = DATA.rindex(b"\n", 0, DATA.index(b'"subtype":"compact_boundary"')) + 1


def _sent(conversation):
    view = prepare(conversation, Settings())
    return [(m.role, m.text, tuple((c.name, c.arguments) for c in m.tool_calls)) for m in view.prepared]


@pytest.mark.parametrize("block", [1 << 20, 4096, 97, 13])   # (13: shorter than the mark)
def test_the_boundary_is_found_from_the_end_in_blocks_of_any_size(tmp_path, monkeypatch, block):
    monkeypatch.setattr(backwards, "BLOCK", block)
    path = tmp_path / "t.jsonl"
    path.write_bytes(DATA)
    assert boundary_line_start(str(path), len(DATA), len(DATA)) == BOUNDARY
    # looking back less far than the boundary: none
    assert boundary_line_start(str(path), len(DATA), len(DATA) - BOUNDARY - 1) is None


def test_a_line_that_only_quotes_the_mark_is_passed_over(tmp_path):
    quoted = (b'{"type":"user","uuid":"q1","parentUuid":null,"message":{"role":"user","content":'
              b'"what is a \\"compact_boundary\\" line?"}}\n')
    path = tmp_path / "t.jsonl"
    path.write_bytes(DATA + quoted)
    assert boundary_line_start(str(path), path.stat().st_size, path.stat().st_size) == BOUNDARY
    path.write_bytes(quoted * 3)
    assert boundary_line_start(str(path), path.stat().st_size, path.stat().st_size) is None


def test_the_next_request_from_the_tail_is_the_whole_files(tmp_path):
    path = tmp_path / SPOTTER.name
    path.write_bytes(DATA)
    part = load_tail(str(path))
    whole = load_session(str(path))
    assert part is not None and len(part.conversations[0].messages) < len(whole.conversations[0].messages)
    assert _sent(part.conversations[0]) == _sent(whole.conversations[0])


def test_as_the_file_grows_after_its_compaction_the_tail_keeps_up(tmp_path):
    """The file cut at lines after the boundary (a live transcript): each cut's tail gives the cut's
    own next request."""
    path = tmp_path / SPOTTER.name
    ends = [i + 1 for i in range(BOUNDARY, len(DATA)) if DATA[i] == 10]
    for end in ends[2::20] + [len(DATA)]:
        path.write_bytes(DATA[:end])
        part = load_tail(str(path), share=1.0)
        assert part is not None
        assert _sent(part.conversations[0]) == _sent(load_session(str(path)).conversations[0]), end


def test_no_tail_without_a_boundary_in_the_share_looked_at(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(DATA[:BOUNDARY])   # before the compaction
    assert load_tail(str(path), share=1.0) is None
    path.write_bytes(DATA)
    share = (len(DATA) - BOUNDARY) / len(DATA)
    assert load_tail(str(path), share=share * 0.9) is None and load_tail(str(path), share=share * 1.1) is not None


def test_the_rows_after_a_compaction_are_named_by_stored_index_without_a_list_of_them():
    conversation = load_session(str(SPOTTER)).conversations[0]
    view = prepare(conversation, Settings())
    indices = view.rows.indices
    assert type(indices) is range   # (a whole history's worth of ints is memory a big file cannot spare)
    assert list(indices) == [row.index for row in view.rows] == list(range(len(conversation.messages)))
    assert view.stats["compacted"] > 0


def test_a_tail_with_arguments_nested_too_deep_is_refused_as_the_whole_file_is(tmp_path):
    """What every load ends with holds for the tail too: a call nested past MAX_ARGUMENT_DEPTH after
    the boundary gives no tail, and the whole file, read next, names it."""
    from ctxview.formats.errors import LoadError
    from ctxview.formats.tails import load_tail as load_any_tail

    last = DATA.rstrip().rsplit(b"\n", 1)[1]
    uuid = last.split(b'"uuid":"', 1)[1].split(b'"', 1)[0]
    deep = b'{"k":' * 150 + b"1" + b"}" * 150
    line = (b'{"type":"assistant","uuid":"deep1","parentUuid":"' + uuid + b'","message":{"id":"m1",'
            b'"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"X","input":' + deep + b"}]}}\n")
    path = tmp_path / SPOTTER.name
    path.write_bytes(DATA + line)
    assert load_any_tail(str(path), "claude-code") is None
    with pytest.raises(LoadError, match="nested deeper than"):
        load_session(str(path))
    path.write_bytes(DATA)
    assert load_any_tail(str(path), "claude-code") is not None
