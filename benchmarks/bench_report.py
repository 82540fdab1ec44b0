#!/usr/bin/env python3
"""How long do `ctxview report`, `report --json` and the inspector's `b` take? Prints the figures.

    python benchmarks/bench_report.py                       # 100k-message Claude Code transcript
    python benchmarks/bench_report.py --messages 10000 --format codex
    python benchmarks/bench_report.py --ctxview-root /work/wt-main   # the same, on another checkout

Targets: `report` and `report --json` at most 3x the time of
`load_session` on the same file; `b` (the bloat report the inspector shows)
at most 0.5 s. Each figure is process CPU seconds (the box is shared; wall
time is printed too), best of --repeat runs taken in turns: load, report,
report --json, b, load, ... `report` and `report --json` run the CLI's
command in-process (loading included, output to a byte sink), so their ratio
to `load` is the command's cost over loading alone. `b` is the engine call of
the inspector's bloat worker on a session loaded and prepared once (as the
inspector has it when the key is pressed), with the caches a first press
finds: the pipeline's (the view shown) but no bloat analysis yet.

To compare with a baseline, make a checkout of main (`git worktree add
/work/wt-base main`) and run this script with `--ctxview-root` pointing at it,
alternating with a run on this checkout (A B A B).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--format", default="claude-code")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxview-bench"))
    parser.add_argument("--ctxview-root", default=str(HERE.parent),
                        help="the checkout whose ctxview is measured (default: this one)")
    parser.add_argument("--profile", action="store_true",
                        help="then profile one `b` (cProfile) and print where its time went")
    return parser.parse_args(argv)


class _Sink(io.TextIOWrapper):
    """A text stdout whose bytes go nowhere (what the CLI writes is formatted, then dropped)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape")

    def isatty(self) -> bool:
        return False


def _cli(main, argv: list[str]) -> None:
    sink = _Sink()
    with contextlib.redirect_stdout(sink):
        code = main(argv)
    if code:
        raise SystemExit(f"ctxview {' '.join(argv)}: exit {code}")


def _bloat_call(path: Path):
    """The inspector's `b` on `path`: a function running the bloat worker's engine call, and a reset
    that forgets what an earlier press computed (the session, its pipeline cache and view stay)."""
    from ctxview._fast import compression
    from ctxview.formats import load_session
    from ctxview.pipeline import PipelineCache, prepare
    from ctxview.settings import settings_for

    session = load_session(path)
    conversation = session.conversations[0]
    settings = settings_for(conversation, {})
    cache = PipelineCache()
    view = prepare(conversation, settings, cache=cache)
    try:
        from ctxview.analysis.report import conversation_bloat
    except ImportError:  # a checkout from before conversation_bloat: the worker's own call
        from ctxview.engine.bloat import analyze_context_bloat

        def conversation_bloat(conversation, settings, context_window, cache):
            return analyze_context_bloat(
                conversation.messages, context_window=context_window,
                counter=cache.counter(conversation, settings.counter),
                ephemeral=conversation.ephemeral if settings.embed_ephemeral else None,
                system_prompt=conversation.system_prompt, keep_recent=settings.keep_recent)

    def press():
        return conversation_bloat(conversation, settings, view.context_window, cache)

    def reset():
        # the tiers' cuts are what the first press computes (as sent has no tiers): forget them, and
        # the tool-name detections (the cache's memo holds both; a checkout before kept the cuts there
        # and the detections in a module table, which clear_caches empties)
        compression.clear_caches()
        if hasattr(cache, "memo"):
            cache.memo.clear()
        # and the unchanged rows a press made (cache.BaseRows makes a row when first read: after the
        # first screen only a screenful is made)
        # (a checkout before BaseRows made them all with the first view: nothing to forget)
        made = cache.data(conversation).base_rows
        for name, rows in made.items():
            if hasattr(rows, "made"):
                # (since the detections are the cache's, a table of rows is given where they are kept)
                kept = (rows.tool_names,) if hasattr(rows, "tool_names") else ()
                made[name] = type(rows)(rows.data, rows.counts, *kept)

    return press, reset, len(conversation.messages)


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    sys.path.insert(0, str(Path(args.ctxview_root).resolve()))
    from ctxview.cli.commands import main as cli_main
    from ctxview.formats import load_session

    path = Path(args.dir) / f"{args.format}-{args.messages}.{'json' if args.format in ('ctxview', 'swarm-snapshot', 'openai', 'anthropic', 'openai-responses') else 'jsonl'}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # in a process of its own, so that this one's heap is not grown by the generator
        subprocess.run([sys.executable, str(HERE / "make_session.py"), str(args.messages), "--format", args.format,
                        "-o", str(path)], check=True, stdout=subprocess.DEVNULL)
    import ctxview
    print(f"ctxview from {Path(ctxview.__file__).parent.parent}")
    print(f"file: {path.name}, {path.stat().st_size / 1e6:.1f} MB")

    from ctxview._fast import compression

    press, reset, n = _bloat_call(path)
    fresh = compression.clear_caches  # a command starts in a new process: no cuts from an earlier run
    runs = {
        "load_session": (lambda: load_session(path), None),
        "report": (lambda: _cli(cli_main, ["report", str(path)]), fresh),
        "report --json": (lambda: _cli(cli_main, ["report", str(path), "--json"]), fresh),
        "b (bloat report)": (press, reset),
    }
    best = {k: [float("inf"), float("inf")] for k in runs}
    for _ in range(args.repeat):
        for name, (fn, setup) in runs.items():
            if setup is not None:
                setup()
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            result = fn()
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            del result
            best[name][0] = min(best[name][0], cpu)
            best[name][1] = min(best[name][1], wall)
    load = best["load_session"][0]
    print(f"{n:,} messages; best of {args.repeat}, CPU seconds (wall in brackets)")
    for name, (cpu, wall) in best.items():
        ratio = f"  {cpu / load:.2f}x load_session" if name.startswith("report") else ""
        target = {"report": "   target <= 3x", "report --json": "   target <= 3x",
                  "b (bloat report)": "   target <= 0.5 s"}.get(name, "")
        print(f"  {name:18s} {cpu:7.3f} s ({wall:.3f} s){ratio}{target}")
    if args.profile:
        _profile(press, reset)
    return 0


def _profile(press, reset) -> None:
    """One `b` under cProfile: the calls taking the most time, with what they call (the profiler
    slows calls down, and the small ones most: read the shares, not the seconds)."""
    import cProfile
    import pstats

    reset()
    gc.collect()
    profile = cProfile.Profile()
    profile.runcall(press)
    print("\n`b` under cProfile, by cumulative time:")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    raise SystemExit(main())
