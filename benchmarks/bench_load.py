#!/usr/bin/env python3
"""How fast and how lean is loading a big session? Prints the figures.

    python benchmarks/bench_load.py                    # 100 MB Claude Code transcript
    python benchmarks/bench_load.py --mb 50 --format codex

Targets (issue 3): loading takes at most 2x the time of reading the file and
calling orjson.loads on each line, and peak memory is at most 3x the file
size. Time is the best of --repeat runs of each, in CPU seconds of this
process (wall time is printed too); memory is measured in fresh
subprocesses: the tracemalloc peak of the load, and the growth of the
resident set (VmHWM) over an interpreter that imported ctxview.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import make_session  # noqa: E402

MSGS_PER_MB = {"claude-code": 533, "codex": 700, "swarm-events": 700}

_MEMORY_PROBE = r"""
import gc, os, resource, sys, tracemalloc
from ctxview.formats import load_session
import ctxview.formats.{module}
mode, path = sys.argv[1], sys.argv[2]
gc.collect()
if mode == "tracemalloc":
    tracemalloc.start()
    s = load_session(path)
    print(tracemalloc.get_traced_memory()[1])
else:
    def high_water():
        # VmHWM belongs to this process image; ru_maxrss would carry the parent's over fork+exec
        try:
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) * 1024
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    before = high_water()
    s = load_session(path)
    print(high_water() - before)
"""


def baseline(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def best(fn, repeat: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(repeat):
        t0, w0 = time.process_time(), time.perf_counter()
        result = fn()
        cpu.append(time.process_time() - t0)
        wall.append(time.perf_counter() - w0)
        del result
    return min(cpu), min(wall)


def memory(path: Path, mode: str, module: str) -> int:
    code = _MEMORY_PROBE.replace("{module}", module)
    out = subprocess.run([sys.executable, "-c", code, mode, str(path)], capture_output=True, text=True,
                         check=True, cwd=HERE.parent)
    return int(out.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="approximate file size in MB (default 100)")
    parser.add_argument("--format", default="claude-code", choices=["claude-code", "codex", "swarm-events"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxview-bench"))
    args = parser.parse_args(argv)

    from ctxview.formats import load_session

    n = int(args.mb * MSGS_PER_MB[args.format])
    path = Path(args.dir) / f"{args.format}-{n}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        make_session.write(path, n, args.format, seed=0)
        print(f"wrote {path} in {time.perf_counter() - t:.1f} s")
    size = path.stat().st_size
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    print(f"file: {path.name}, {size / 1e6:.1f} MB, {lines:,} lines, {n:,} messages")

    load_session(path)  # warm: imports, page cache
    base_cpu, base_wall = best(lambda: baseline(path), args.repeat)
    load_cpu, load_wall = best(lambda: load_session(path), args.repeat)
    s = load_session(path)
    msgs = sum(len(c.messages) for c in s.conversations)
    del s
    print(f"read + orjson.loads per line: {base_cpu:.3f} s cpu ({base_wall:.3f} s wall)")
    print(f"load_session:                 {load_cpu:.3f} s cpu ({load_wall:.3f} s wall), {msgs:,} messages")
    print(f"time ratio: {load_cpu / base_cpu:.2f}x cpu, {load_wall / base_wall:.2f}x wall (target <= 2x)")

    module = args.format.replace("-", "_")
    peak = memory(path, "tracemalloc", module)
    rss = memory(path, "rss", module)
    print(f"peak traced memory: {peak / 1e6:.1f} MB = {peak / size:.2f}x file size (target <= 3x)")
    print(f"resident set growth: {rss / 1e6:.1f} MB = {rss / size:.2f}x file size")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
