"""The browser's text search and totals (ctxview/sessions/contents.py) on the session browser's
benchmark tree (bench_sessions.make_tree: N files of Claude Code, Codex and Gemini CLI).

    python benchmarks/bench_search.py [N] [--runs R] [--keep DIR] [--before ROOT]

Prints:
- the contents pass (every file read whole once, in a worker thread as the browser runs it):
  wall and CPU seconds, and what the main thread's work costs meanwhile (a filter of the list as
  a key typed makes it, median and worst, against the same with no pass running): the list is
  not blocked;
- a search once the pass is done, for several queries, median and worst over R runs each
  (target: under 200 ms);
- the totals by project and by day, and a second pass over an unchanged tree (a second start).

`--before ROOT`: a checkout of the release before; it is imported in a subprocess to say whether
it has the search at all (the releases before this one do not, so there is no figure beside).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sessions import tree_in  # noqa: E402

from ctxview.sessions import build_index  # noqa: E402
from ctxview.sessions.columns import RowFilter  # noqa: E402
from ctxview.sessions.contents import open_contents  # noqa: E402

QUERIES = ("redis", "rate limit", "contr", "middleware retry after", "zebra-not-there")
FILTERS = ("app1", "app12 ta", "codex", "task 4")


def _ms(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1000:7.1f} ms, worst {max(seconds) * 1000:7.1f} ms"


def _filter_times(rows, rounds: int = 30) -> list[float]:
    out = []
    for k in range(rounds):
        f = RowFilter(rows)   # (a new filter each time: no kept result to answer from)
        start = time.perf_counter()
        f(FILTERS[k % len(FILTERS)])
        out.append(time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", metavar="DIR", help="generate the tree here and keep it (reused when present)")
    parser.add_argument("--before", metavar="ROOT", help="a checkout of the release before")
    args = parser.parse_args(argv)

    if args.before:
        probe = subprocess.run([sys.executable, "-c", "import ctxview.sessions.contents"], cwd=args.before,
                               capture_output=True, env={**os.environ, "PYTHONPATH": args.before})
        print(f"release before ({args.before}): "
              + ("has the text search" if probe.returncode == 0 else "no text search, no totals: no figure beside"))
    with tree_in(args.keep, args.n, "ctxview-bench-search-") as (work, home, env):
        cache_dir = work / "cache"
        rows = build_index(env=env)
        print(f"listed {len(rows):,} sessions (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        for name in ("sessions-contents.sqlite", "sessions-contents.sqlite-wal", "sessions-contents.sqlite-shm"):
            (cache_dir / name).unlink(missing_ok=True)

        idle = _filter_times(rows)
        contents = open_contents(env)
        during: list[float] = []
        spent: dict[str, float] = {}

        def read() -> None:
            start, cpu = time.perf_counter(), time.thread_time()
            spent["files"] = contents.update(rows)
            spent["wall"], spent["cpu"] = time.perf_counter() - start, time.thread_time() - cpu

        worker = threading.Thread(target=read)
        worker.start()
        while worker.is_alive():
            during.extend(_filter_times(rows, 4))
            time.sleep(0.05)
        worker.join()
        print(f"contents pass: {spent['files']:,} files read in {spent['wall']:.1f} s wall, "
              f"{spent['cpu']:.1f} s CPU (its thread)")
        print(f"  a filter of the list, no pass running:  {_ms(idle)}")
        print(f"  the same while the pass runs:           {_ms(during)} ({len(during)} filters)")

        print(f"search once built (target 200 ms), {args.runs} runs each:")
        for query in QUERIES:
            times, found = [], 0
            for _ in range(args.runs):
                start = time.perf_counter()
                found = len(contents.search(query) or [])
                times.append(time.perf_counter() - start)
            print(f"  {query!r:28} {found:6,} found  {_ms(times)}")
        for by in ("project", "day"):
            times = []
            for _ in range(max(args.runs // 4, 3)):
                start = time.perf_counter()
                totals = contents.totals(rows, by)
                times.append(time.perf_counter() - start)
            print(f"totals by {by:7}: {len(totals):,} rows, {_ms(times)}")
        start = time.perf_counter()
        again = open_contents(env).update(rows)
        print(f"second start (unchanged tree): {again} files read, {(time.perf_counter() - start) * 1000:.0f} ms")
        size = sum(p.stat().st_size for p in cache_dir.glob("sessions-contents.sqlite*"))
        print(f"database: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
