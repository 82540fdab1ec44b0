"""Atomic writes: a reader sees the old file or the new one, never half of one."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview import atomic
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


# --- a dead writer's leftovers: only ctxview's own are removed ----------------------------------


_KILLED = """
import os, signal, sys
import ctxview.atomic as atomic
atomic.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # written, not yet renamed
atomic.write_atomic(sys.argv[1], sys.argv[2])
"""


def killed_write(target, text="half") -> Path:
    """What a write killed outright leaves: its folder, with the marker and the half-written `data`."""
    before = set(target.parent.iterdir())
    proc = subprocess.run([sys.executable, "-c", _KILLED, str(target), text], capture_output=True)
    assert proc.returncode == -9, proc.stderr
    (left,) = set(target.parent.iterdir()) - before
    assert sorted(p.name for p in left.iterdir()) == ["ctxview-writer", "data"]
    return left


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_writers_folder_is_removed_by_the_next_write(tmp_path):
    left = killed_write(tmp_path / "out.json")
    write_atomic(tmp_path / "out.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"] and not left.exists()


def test_a_file_named_like_a_dead_writers_leftover_is_never_removed(tmp_path):
    # a regular file (an input, say) with a dead PID in a temporary name: nothing proves it is ctxview's
    look_alike = tmp_path / f".out.json.abc.{dead_pid()}.ctxview-tmp"
    look_alike.write_text("the user's data")
    write_atomic(tmp_path / "out.json", "{}")
    assert look_alike.read_text() == "the user's data"


def test_a_folder_named_like_a_leftover_without_the_marker_is_kept(tmp_path):
    folder = tmp_path / f".out.json.abc.{dead_pid()}.ctxview-tmp"
    folder.mkdir()
    (folder / "data").write_text("x")
    write_atomic(tmp_path / "out.json", "{}")
    assert (folder / "data").read_text() == "x"


@pytest.mark.parametrize("change", ["other target", "other pid", "other host", "extra file", "a link"])
def test_a_leftover_whose_marker_or_contents_differ_is_kept(tmp_path, change):
    left = killed_write(tmp_path / "out.json")
    marker = left / "ctxview-writer"
    stamp = marker.read_text()
    if change == "other target":
        marker.write_text(stamp.replace(os.fsencode("out.json").hex(), os.fsencode("in.json").hex()))
    elif change == "other pid":
        marker.write_text(stamp.replace("pid ", "pid 1"))
    elif change == "other host":
        marker.write_text(stamp.replace("host ", "host 00"))
    elif change == "extra file":
        (left / "notes.txt").write_text("mine")
    else:
        link = tmp_path / f".out.json.zzz.{dead_pid()}.ctxview-tmp"
        link.symlink_to(left)  # a link to a leftover: the link's name is not the folder the marker names
        marker.write_text(stamp.replace(f"pid {left.name.split('.')[-2]}", f"pid {link.name.split('.')[-2]}"))
    write_atomic(tmp_path / "out.json", "{}")
    assert (left / "data").read_text() == "half" and marker.exists()


def test_a_leftover_given_as_the_input_or_open_elsewhere_is_kept(tmp_path):
    left = killed_write(tmp_path / "out.json")
    write_atomic(tmp_path / "out.json", "{}", keep=[left / "data"])  # the input
    assert (left / "data").read_text() == "half"
    with open(left / "data", "rb"):  # open for reading (here; another process's counts as well)
        write_atomic(tmp_path / "out.json", "{}")
    assert (left / "data").read_text() == "half"
    other = subprocess.Popen([sys.executable, "-c", "import sys; f = open(sys.argv[1]); print('open', flush=True); "
                              "sys.stdin.read()", str(left / "data")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert other.stdout.readline() == b"open\n"  # another process has it open, until its stdin ends
        write_atomic(tmp_path / "out.json", "{}")
        assert (left / "data").read_text() == "half"
    finally:
        other.communicate(b"")
    write_atomic(tmp_path / "out.json", "{}")  # no one has it open now, and it is no input
    assert not left.exists()


def test_a_hard_linked_leftover_is_kept(tmp_path):
    left = killed_write(tmp_path / "out.json")
    os.link(left / "data", tmp_path / "saved.json")
    write_atomic(tmp_path / "out.json", "{}")
    assert (left / "data").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_another_users_leftover_is_kept(tmp_path):
    left = killed_write(tmp_path / "out.json")
    os.chown(left, 12345, 12345)
    write_atomic(tmp_path / "out.json", "{}")
    assert (left / "data").exists()


def test_the_temporary_name_fits_name_max_for_a_long_target(tmp_path):
    name = "é" * 120 + ".json"  # 245 bytes in UTF-8: the longest names leave no room for a suffix
    assert len(os.fsencode(name)) == 245
    left = killed_write(tmp_path / name)
    assert len(os.fsencode(left.name)) <= 255
    write_atomic(tmp_path / name, "{}")
    assert json.loads((tmp_path / name).read_text()) == {} and not left.exists()


def test_targets_sharing_the_cut_name_keep_each_others_leftovers(tmp_path):
    a, b = "x" * 240 + "-a.json", "x" * 240 + "-b.json"  # the same first 200-odd bytes
    left = killed_write(tmp_path / a)
    write_atomic(tmp_path / b, "{}")
    assert left.exists()
    write_atomic(tmp_path / a, "{}")
    assert not left.exists()


@pytest.mark.parametrize("name", ["newdir/", "newdir/.", "out/..", "."])
def test_a_path_naming_a_directory_is_refused(tmp_path, name):
    with pytest.raises(atomic.UnsafeTarget, match="names a directory"):
        write_atomic(os.path.join(tmp_path, name), "{}")
    assert list(tmp_path.iterdir()) == []


def test_without_leases_a_leftover_open_in_this_process_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "fcntl", None)  # a system or file system without write leases
    left = killed_write(tmp_path / "out.json")
    with open(left / "data", "rb"):
        write_atomic(tmp_path / "out.json", "{}")
    assert (left / "data").exists()
    write_atomic(tmp_path / "out.json", "{}")
    assert not left.exists()
