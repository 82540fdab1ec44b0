"""The first screen of a big transcript with a compaction near its end, headless.

    python benchmarks/bench_tail.py [N_MESSAGES] [--format claude-code|codex] [--compact-before K]
                                    [--before ROOT] [--runs R] [--keep FILE]

Writes a Claude Code transcript (or a Codex rollout) of N messages (benchmarks/make_session.py;
default 100,000, about 190 MB) whose compaction comes K messages before its end (default 2,000), then opens it in the inspector
(`App.run_test`, nothing followed) and prints, from creating the app:

- the first full screen: the request after the compaction, read from the file's end
  (tui/workers.tail_first), target 2 s;
- the whole history read and shown (HistoryLoaded applied);
- the resident memory grown by then, and at its peak, against the file's size (target 1.5x).

With --before ROOT (a checkout of the release before, which reads the whole file first), the same
is run there in a subprocess, in turns with this tree, R times each; both checkouts are compiled
first, so that neither pays for compiling the modules it imports while it opens.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write(path: Path, n: int, compact_before: int, fmt: str = "claude-code") -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import make_session as ms

    agent = ms.generate(n, 0, "main", big_reads=False, ephemeral_every=6)
    agent.system_prompt = ms.LEAD_PROMPT
    if fmt == "codex":
        lines = ms.codex_lines(agent, 0, compact_at=n - compact_before)
    else:
        lines = ms.claude_code_lines(agent, 0, compact_at=n - compact_before, pre_tokens=160_000)
    ms._write_lines(path, lines)


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure(path: str) -> tuple[float, float | None, int, int]:
    """(seconds to the first full screen, seconds to the whole history shown (None: no such step),
    resident growth once it is shown, peak resident growth), from creating the app."""
    import gc
    import resource

    from ctxview.settings import Settings
    from ctxview.tui.app import CtxviewApp

    gc.collect()
    before = _rss()
    start = time.perf_counter()
    app = CtxviewApp(path, Settings(), follow_interval=None)
    marks: dict[str, float] = {}

    async def run() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            while app.view is None:
                await pilot.pause(0.01)
            marks["first"] = time.perf_counter() - start
            while getattr(app, "tail_only", False):
                await pilot.pause(0.02)
            await app.workers.wait_for_complete()
            await pilot.pause()
            marks["whole"] = time.perf_counter() - start
            gc.collect()
            marks["rss"] = _rss() - before

    asyncio.run(run())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return marks["first"], (marks["whole"] if "tail_only" in vars(app) else None), int(marks["rss"]), peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--format", default="claude-code", choices=("claude-code", "codex"))
    parser.add_argument("--compact-before", type=int, default=2_000)
    parser.add_argument("--before", metavar="ROOT")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--keep", metavar="FILE")
    parser.add_argument("--measure", metavar="FILE", help=argparse.SUPPRESS)   # (one run, in a subprocess)
    args = parser.parse_args(argv)
    if args.measure:
        first, whole, rss, peak = measure(args.measure)
        print(f"{first:.3f} {whole if whole is not None else -1:.3f} {rss} {peak}")
        return 0
    path = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctxview-bench-tail-")) / "t.jsonl"
    if not path.exists():
        start = time.perf_counter()
        write(path, args.n, args.compact_before, args.format)
        print(f"wrote {args.n:,} messages, {path.stat().st_size / 2**20:,.0f} MiB, the compaction "
              f"{args.compact_before:,} messages before the end, in {time.perf_counter() - start:.0f} s")
    trees = [("this tree", ROOT)] + ([("release before", Path(args.before))] if args.before else [])
    for _, tree in trees:   # (each run a fresh process: neither pays for compiling what it imports)
        compileall.compile_dir(str(tree / "ctxview"), quiet=1)
    for k in range(args.runs):
        for label, tree in trees:
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", str(path)],
                                 cwd=tree, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(tree)})
            if out.returncode:
                print(f"{label}: failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            fields = out.stdout.split()
            first, whole = float(fields[0]), float(fields[1])
            rest = f", the whole history shown {whole:.2f} s" if whole >= 0 else " (the whole file read first)"
            size = path.stat().st_size
            memory = (f"; resident growth {int(fields[2]) / size:.2f}x the file, peak {int(fields[3]) / size:.2f}x"
                      " (target 1.5x)" if len(fields) == 4 else "")
            print(f"run {k + 1}, {label:14}: first full screen {first:.2f} s (target 2 s){rest}{memory}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
