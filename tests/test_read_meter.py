"""ReadMeter: a loader's read, watched from another thread, says how far into the file it is."""

from __future__ import annotations

import threading

from ctxview.formats import load_session
from ctxview.formats.inputs import READ_BUFFER, ReadMeter, open_input


def test_a_read_inside_watching_reports_each_buffer_fill(tmp_path):
    path = tmp_path / "three.jsonl"
    path.write_bytes(b"x" * (3 * READ_BUFFER))
    meter = ReadMeter()
    assert meter.percent() is None                     # nothing read yet
    with meter.watching():
        with open_input(path).open() as f:
            assert meter.size == 3 * READ_BUFFER and meter.done == 0
            f.read(1)                                   # one buffer fill: the first MB
            assert meter.done == READ_BUFFER and meter.percent() == 33
            f.read()
            assert meter.percent() == 100
    with open_input(path).open() as f:                  # outside watching: the meter is not told
        f.read(1)
    assert meter.done == 3 * READ_BUFFER


def test_a_meter_sees_only_the_reads_of_its_own_thread(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_bytes(b"y" * READ_BUFFER)
    meter = ReadMeter()
    other = threading.Thread(target=lambda: open_input(path).open().read())
    with meter.watching():
        other.start()
        other.join()
    assert meter.percent() is None


def test_a_whole_load_watched_ends_at_the_end_of_the_file(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [b'{"type":"user","uuid":"u%d","parentUuid":%s,"message":{"role":"user","content":"hi %d"}}'
             % (i, b"null" if i == 0 else b'"u%d"' % (i - 1), i) for i in range(3)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    meter = ReadMeter()
    with meter.watching():
        session = load_session(str(path))
    assert len(session.conversations[0].messages) == 3
    assert meter.size == path.stat().st_size and meter.percent() == 100


def test_finding_what_the_file_is_is_not_reading_it(tmp_path):
    """detect_format peeks at the head and the first lines: no figure until the load reads."""
    from ctxview.formats.registry import detect_format

    path = tmp_path / "s.jsonl"
    line = b'{"type":"user","uuid":"u%d","parentUuid":null,"message":{"role":"user","content":"%s"}}\n'
    path.write_bytes(b"".join(line % (i, b"x" * 3000) for i in range(1000)))   # 3 MB: three buffer fills
    meter = ReadMeter()
    with meter.watching():
        assert detect_format(str(path)) == "claude-code"
        assert meter.percent() is None
        load_session(str(path))
    assert meter.percent() == 100
