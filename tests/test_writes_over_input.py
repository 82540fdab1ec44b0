"""Nothing is written over a file a session is read from: the session file, the files in its
companion folder (a Claude Code transcript's sub-agents and tool outputs), the transcript a sub-agent
file belongs to, a capture log given with --trace."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from ctxview.formats.inputs import writes_over_input

SPOTTER = Path(__file__).resolve().parent / "fixtures" / "samples" / "claude-code" / "spotter-258c7280"
NAME = "258c7280-ae70-4798-800f-63464d01a85d"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(SPOTTER, tmp_path / "s")
    main = tmp_path / "s" / f"{NAME}.jsonl"
    return main, next((tmp_path / "s" / NAME / "subagents").glob("agent-*.jsonl"))


def test_the_rule(tmp_path):
    main, sub = _copy(tmp_path)
    other = tmp_path / "out.json"
    link = tmp_path / "link.jsonl"
    link.symlink_to(sub)
    assert writes_over_input(main, [main]) and writes_over_input(sub, [main])      # the file; its folder
    assert writes_over_input(link, [main])                                         # however named
    assert writes_over_input(main, [sub])                                          # a sub-agent's transcript
    assert writes_over_input(other, [tmp_path / "trace.json", None, other])        # a capture log
    assert not writes_over_input(other, [main, None, "-"])
    assert not writes_over_input(tmp_path / "s" / "elsewhere.json", [main])


def _digests(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_prepare_refuses_to_write_over_a_sub_agent_transcript_or_its_parent(tmp_path):
    main, sub = _copy(tmp_path)
    before = _digests(tmp_path / "s")
    for source, target in ((main, sub), (sub, main)):
        out = subprocess.run([sys.executable, "-m", "ctxview", "prepare", str(source), "-o", str(target)],
                             capture_output=True, text=True)
        assert out.returncode == 2 and "refusing to overwrite a file the session is read from" in out.stderr
        assert "Traceback" not in out.stderr
    assert _digests(tmp_path / "s") == before
    ok = subprocess.run([sys.executable, "-m", "ctxview", "prepare", str(main), "-o", str(tmp_path / "p.json")],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


async def test_w_in_the_inspector_refuses_them_too(tmp_path):
    from ctxview.settings import Settings
    from ctxview.tui.app import CtxviewApp

    main, sub = _copy(tmp_path)
    before = _digests(tmp_path / "s")
    app = CtxviewApp(str(main), Settings(), follow_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(300):
            await pilot.pause(0.02)
            if app.view is not None and not app.busy:
                break
        app._write_to((str(sub), "anthropic"))
        await pilot.pause()
        notes = [n.message for n in app._notifications]
    assert "refusing to overwrite a file the session is read from" in notes
    assert _digests(tmp_path / "s") == before
