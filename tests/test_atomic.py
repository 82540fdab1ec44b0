"""Atomic writes: a reader sees the old file or the new one, never half of one."""

import os
import stat

import pytest

from ctxview.atomic import write_atomic


def test_writes_text_as_utf8_and_bytes_as_is(tmp_path):
    target = tmp_path / "out.json"
    write_atomic(target, "héllo\n")
    assert target.read_bytes() == "héllo\n".encode()
    write_atomic(target, b"\x00raw")
    assert target.read_bytes() == b"\x00raw"


def test_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_new_file_gets_the_umask_mode_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.json", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_old_file_whole_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old content")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new content")
    assert target.read_text() == "old content"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
