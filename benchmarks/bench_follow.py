#!/usr/bin/env python3
"""What does a line appended to a followed session cost? Prints the figures.

    python benchmarks/bench_follow.py                 # Claude Code transcripts of 10,000 and 100,000 messages
    python benchmarks/bench_follow.py 10000 --rounds 7

For each size, a transcript is written (make_session.py) and cut before its last
APPEND messages; then, round after round, the cut file is read, the rest is
appended, and the two ways of bringing the session up to date run one after the
other (A B A B ...):

  appended   formats/growing.py as the inspector follows a file: poll, then read only
             the bytes after the last complete line and rebuild the session
  whole      load_session on the grown file (what a reload reads)

and after each, what the inspector then computes in its worker before it repaints
(the first pipeline run on the new conversation, with a fresh PipelineCache, and
the layout's heights; and the same run on the cache the view before the append
was computed with, which finds the messages read before by their identity). Times are wall seconds, best of the rounds (the machine is
shared); the ratio is whole ÷ appended. The poll interval (0.5 s) comes on top.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import make_session  # noqa: E402
from ctxview.formats import load_session  # noqa: E402
from ctxview.formats.growing import APPENDED, GrowingSession  # noqa: E402
from ctxview.pipeline import PipelineCache, prepare  # noqa: E402
from ctxview.settings import Settings  # noqa: E402
from ctxview.tui.workers import Layouts  # noqa: E402

APPEND = 4   # messages appended: a user prompt, a tool call, its result, an answer


def repaint_work(session, cache: PipelineCache | None = None) -> float:
    """What the inspector's worker computes after a reload, before the screen repaints (wall seconds):
    with a fresh PipelineCache, or with `cache`, the one the view before the append was computed with."""
    conv = session.conversations[0]
    t = time.perf_counter()
    view = prepare(conv, Settings(), cache=cache or PipelineCache())
    Layouts().build(conv, view)
    return time.perf_counter() - t


def split(path: Path, n: int) -> tuple[bytes, bytes]:
    """The file's bytes before the lines of its last APPEND messages, and those lines."""
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    session = load_session(path)
    first = session.conversations[0].messages[n - APPEND].origin  # "line K"
    k = int(first.split()[1]) - 1
    return b"".join(lines[:k]), b"".join(lines[k:])


def one_size(n: int, rounds: int, work: Path) -> None:
    src = make_session.write(work / f"cc-{n}.jsonl", n, "claude-code")
    head, tail = split(src, n)
    live = work / "live.jsonl"
    best = {"appended": float("inf"), "whole": float("inf"), "repaint appended": float("inf"),
            "repaint whole": float("inf"), "repaint kept cache": float("inf")}
    for _ in range(rounds):
        live.write_bytes(head)
        grow = GrowingSession(live)
        kept = PipelineCache()
        prepare(grow.load().conversations[0], Settings(), cache=kept)  # the view before the append
        with live.open("ab") as f:
            f.write(tail)
        gc.collect()
        # A: the follower's read
        t = time.perf_counter()
        change = grow.poll()
        r = grow.refresh(change)
        best["appended"] = min(best["appended"], time.perf_counter() - t)
        assert change == APPENDED and not r.whole
        best["repaint appended"] = min(best["repaint appended"], repaint_work(r.session))
        best["repaint kept cache"] = min(best["repaint kept cache"], repaint_work(r.session, kept))
        grown = r.session
        del r, grow, kept
        gc.collect()
        # B: the whole read
        t = time.perf_counter()
        whole = load_session(live)
        best["whole"] = min(best["whole"], time.perf_counter() - t)
        best["repaint whole"] = min(best["repaint whole"], repaint_work(whole))
        assert whole.conversations == grown.conversations  # the same session either way
        del whole, grown
    size = len(head) + len(tail)
    print(f"{n:,} messages ({size / 1e6:.1f} MB, {APPEND} messages = {len(tail):,} bytes appended), "
          f"best of {rounds}:")
    print(f"  read appended lines, rebuild  {best['appended']:.3f} s   (whole read {best['whole']:.3f} s: "
          f"{best['whole'] / best['appended']:.1f}x)")
    print(f"  then pipeline + layout        {best['repaint appended']:.3f} s   (with the cache of the view "
          f"before: {best['repaint kept cache']:.3f} s)")
    total_a = best["appended"] + best["repaint appended"]
    total_b = best["whole"] + best["repaint whole"]
    print(f"  append to view                {total_a:.3f} s   (by a whole read {total_b:.3f} s: "
          f"{total_b / total_a:.1f}x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="ctxview-bench-follow-"))
    try:
        for n in args.sizes:
            one_size(n, args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
