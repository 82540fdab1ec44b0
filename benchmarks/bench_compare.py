#!/usr/bin/env python3
"""Peak memory and time of `ctxview report FILE --compare SPECS`, on this checkout and on another.

    python benchmarks/bench_compare.py                               # 27,000 messages, 4 then 8 specs
    python benchmarks/bench_compare.py --ctxview-root /work/wt/config-base --ctxview-root .
    python benchmarks/bench_compare.py --messages 30000 --specs default,aggressive --repeat 3

Each run is `python -m ctxview report FILE --compare SPECS --json` in a fresh process (the checkout's
ctxview first on sys.path), its stdout kept; peak RSS is the child's ru_maxrss, CPU the child's user +
system seconds, wall the elapsed time (the box is shared: CPU is the steadier figure). With several
--ctxview-root the runs go in turns (A B A B ...), and the outputs of the checkouts must be
byte-identical: the script says so, or which differ. The transcript is a Claude Code one from
make_session.py (deterministic), written once into --dir.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC_SETS = ("default,aggressive,light,10:full,*:500",
             "default,10:full,*:500,aggressive,20:2000,*:200,light,5:full,*:1000,default+keep=5,30:full,*:50")


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=27_000)
    parser.add_argument("--specs", action="append", help="a --compare value (repeatable; default: 4 then 8 specs)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxview-bench"))
    parser.add_argument("--ctxview-root", action="append", help="a checkout to measure (repeatable; default: this)")
    return parser.parse_args(argv)


def _transcript(folder: str, messages: int) -> Path:
    path = Path(folder) / f"compare-{messages}.jsonl"
    if not path.exists():
        sys.path.insert(0, str(HERE))
        import make_session

        path.parent.mkdir(parents=True, exist_ok=True)
        make_session.write(path, messages, "claude-code", seed=0)
    return path


def run_once(root: str, path: Path, specs: str) -> tuple[float, float, int, str]:
    """(wall s, CPU s, peak RSS bytes, sha256 of stdout) of one report in a new process."""
    env = {**os.environ, "PYTHONPATH": str(Path(root).resolve())}
    # (one child at a time: RUSAGE_CHILDREN's ru_maxrss is the largest child so far, so each run
    # goes in a fresh grandchild whose own figures the wrapper prints)
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
            "w = time.perf_counter() - t\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "sys.stderr.buffer.write(p.stderr)\n"
            "import hashlib; print(p.returncode, w, u.ru_utime + u.ru_stime, u.ru_maxrss, "
            "hashlib.sha256(p.stdout).hexdigest())\n")
    # (cwd: the transcript's folder; `-m` puts the cwd first on sys.path, a checkout there would win)
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "ctxview", "report", str(path),
                           "--compare", specs, "--json"], capture_output=True, text=True, env=env, cwd=path.parent)
    fields = done.stdout.split()
    if done.returncode != 0 or len(fields) != 5 or fields[0] != "0":
        raise SystemExit(f"the report failed in {root}: {done.stdout} {done.stderr[-2000:]}")
    return float(fields[1]), float(fields[2]), int(fields[3]) * 1024, fields[4]


def _check_root(root: str, folder: Path) -> None:
    """That `python -m ctxview` run as run_once runs it imports the checkout's ctxview."""
    env = {**os.environ, "PYTHONPATH": str(Path(root).resolve())}
    found = subprocess.run([sys.executable, "-c", "import ctxview; print(ctxview.__file__)"], capture_output=True,
                           text=True, env=env, cwd=folder).stdout.strip()
    if not Path(found).resolve().is_relative_to(Path(root).resolve()):
        raise SystemExit(f"{root}: python imports ctxview from {found}, not from the checkout")


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    roots = args.ctxview_root or [str(HERE.parent)]
    path = _transcript(args.dir, args.messages)
    for root in roots:
        _check_root(root, path.parent)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB, {args.messages:,} messages)")
    for specs in args.specs or SPEC_SETS:
        print(f"--compare {specs}")
        digests: dict[str, set[str]] = {r: set() for r in roots}
        for turn in range(args.repeat):
            for root in roots:
                wall, cpu, rss, digest = run_once(root, path, specs)
                digests[root].add(digest)
                print(f"  {root}: peak RSS {rss / 2**30:.2f} GiB, CPU {cpu:.1f} s, wall {wall:.1f} s "
                      f"(turn {turn + 1}, output {digest[:12]})", flush=True)
        every = set().union(*digests.values())
        print("  outputs: identical" if len(every) == 1 else f"  outputs DIFFER: {digests}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
