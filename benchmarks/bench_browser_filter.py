"""The session browser's filter at scale: N sessions (rows as bench_sessions.make_tree's files index
to: three agents, 37 projects, "Task i: ..." titles), run headless through Textual's pilot.

    python benchmarks/bench_browser_filter.py [N] [--filter TEXT]

Measured, wall and CPU: typing the filter a key at a time; moving the cursor to the last row the
filter keeps; deleting the filter a key at a time (backspace); then ctrl+c, timed from the key to
the app's exit. No index is built (the rows are given to the app, as launch.py does when it comes
back from the inspector), so the figures are the browser's own.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sessions import _WORDS  # noqa: E402

from ctxview.sessions import SessionRow  # noqa: E402


def make_rows(n: int, seed: int = 0) -> list[SessionRow]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        agent = ("claude-code", "codex", "gemini")[i % 3]
        project = f"/home/me/src/app{i % 37}"
        title = f"Task {i}: " + " ".join(rng.choice(_WORDS) for _ in range(12))
        t = 1_780_000_000 + (n - i) * 600
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
        rows.append(SessionRow(f"/home/me/.sessions/{agent}/{i:08d}.jsonl", agent, project, title, when, when,
                               rng.randint(5, 900), False, rng.randint(4_000, 2_000_000), t * 10**9,
                               "claude-sonnet-4-5" if agent == "claude-code" else "gpt-5.2-codex", rng.randint(0, 200_000)))
    return rows


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> str:
    wall, cpu = time.perf_counter() - start[0], time.process_time() - start[1]
    return f"{wall:6.2f} s wall, {cpu:6.2f} s CPU"


async def _typed_to_the_end(app, pilot, text: str) -> None:
    await pilot.pause()
    for ch in text:
        await pilot.press(ch)
    await pilot.press("ctrl+end")
    await pilot.pause()


def _browser(rows: list[SessionRow]):
    from ctxview.tui.browser import BrowserApp

    app = BrowserApp(rows=rows, cache=False, env={"HOME": "/nonexistent"})
    app._index = lambda: None  # (the rows are given: no index is built)
    return app


async def run(n: int, text: str) -> None:
    from textual import events

    rows = make_rows(n)
    app = _browser(rows)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        start = _clock()
        for ch in text:
            await pilot.press(ch)
        await pilot.pause()
        print(f"type {text!r} ({len(app.shown):,} of {n:,} kept), a key at a time: {_since(start)}")
        start = _clock()
        await pilot.press("ctrl+end")
        await pilot.pause()
        print(f"ctrl+end to the last kept row:                     {_since(start)}")
        start = _clock()
        for _ in text:
            await pilot.press("backspace")
        await pilot.pause()
        print(f"delete the filter, a key at a time ({len(text)} backspaces): {_since(start)} "
              f"(the table holds {app.table.row_count:,} rows)")
    # as a user does it: a key every 50 ms whether or not the app is done with the last one, then ctrl+c
    # (the app runs in this event loop: a sleep ends when the app lets it, as a terminal's keys queue)
    app = _browser(rows)
    async with app.run_test(size=(160, 40)) as pilot:
        await _typed_to_the_end(app, pilot, text)
        start = _clock()
        for key in ["backspace"] * len(text) + ["ctrl+c"]:
            if key == "ctrl+c":
                quit_at = _clock()
            event = events.Key(key, "\x08" if key == "backspace" else None)
            event.set_sender(app)
            app._driver.send_message(event)
            await asyncio.sleep(0.05)
        while app.is_running:
            await asyncio.sleep(0.005)
        print(f"{len(text)} backspaces 50 ms apart, then ctrl+c:    {_since(start)} to the exit, "
              f"{_since(quit_at)} from ctrl+c")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20_000)
    parser.add_argument("--filter", default="app3 task")
    args = parser.parse_args(argv)
    asyncio.run(run(args.n, args.filter))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
