"""Regenerate the README screenshots (SVG, headless):

    python docs/make_screenshots.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ctxview.tui.app import CtxviewApp  # noqa: E402
from ctxview.settings import Settings  # noqa: E402

CLAUDE_CODE = next((HERE.parent / "sample_sessions" / "claude-code").glob("*.jsonl"))


def reminder_row(app: CtxviewApp) -> int:
    """The last row whose message holds a stored reminder and gets an ephemeral one (a user turn of the demo)."""
    rows = app.row_layout.rows
    return max(i for i, r in enumerate(rows) if r.stored is not None and r.stored_reminders and r.ephemeral_spans)


def compaction_row(app: CtxviewApp) -> int:
    """The first stored message after the sample's compaction (its summary)."""
    event = next(e for e in app.conversation.events if e.kind == "compaction")
    return next(i for i, r in enumerate(app.row_layout.rows) if r.index == event.index)


SHOTS = {
    # name: (file (None: the demo), settings, keys pressed after loading, or a row to put the cursor on
    # and expand; terminal size)
    "inspector-demo": (None, Settings(counter="swarm"), (), (160, 45)),
    "inspector-reminders": (None, Settings(counter="swarm"), reminder_row, (160, 45)),
    "inspector-budget": (None, Settings(counter="swarm", budget=8000, keep_recent=6), (), (160, 45)),
    "inspector-compaction": (CLAUDE_CODE, Settings(counter="swarm"), compaction_row, (200, 45)),
}


async def shoot(name: str, path: Path | None, settings: Settings, keys, size: tuple[int, int]) -> Path:
    # (the path relative to the repository, as a user would type it: the header shows it)
    app = CtxviewApp(None if path is None else str(path.relative_to(HERE.parent)), settings)
    async with app.run_test(size=size) as pilot:
        while app.busy:
            if app.error:
                raise SystemExit(app.error)
            await pilot.pause(0.05)
        if callable(keys):
            app.set_cursor(keys(app))
            keys = ("enter",)
        for key in keys:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.pause()
        out = HERE / f"{name}.svg"
        app.save_screenshot(str(out))
    return out


async def main() -> None:
    os.chdir(HERE.parent)
    for name, (path, settings, keys, size) in SHOTS.items():
        print(await shoot(name, path, settings, keys, size))


if __name__ == "__main__":
    asyncio.run(main())
