#!/usr/bin/env python3
"""Cold compress_tool_results, ctxview's against the Ruby original's, on the same input. Prints the ratio.

    python benchmarks/bench_engine_ruby.py --ruby-source PATH/TO/context_manager.rb [SIZE ...]

Needs Ruby (`apt-get install -y ruby`; 3.1 was used) and the original class:
lib/swarm_sdk/agent/context_manager.rb of github.com/parruda/swarm. The messages are
bench_engine.build(n) (half tool results of 1-3 KB shaped like Read, Grep and Glob output),
written once as JSON for the Ruby side (benchmarks/ruby/bench_context_manager.rb). The
two sides run in turns (Python, Ruby, Python, Ruby, ... --rounds times); each side reports
its best CPU seconds of 3 runs, and the ratio is of the best of all rounds. Python's runs
are cold: ctxview's caches are cleared before each. Target: at most 0.5x at 100k.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_engine  # noqa: E402
from ctxview.engine import compression as comp  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", default=["100k"])
    parser.add_argument("--ruby-source", required=True, help="context_manager.rb of the Ruby SwarmSDK")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    ruby = shutil.which("ruby")
    if ruby is None:
        raise SystemExit("bench_engine_ruby: no ruby on PATH (apt-get install -y ruby)")
    for size in args.sizes:
        n = int(size.replace("_", "").replace("k", "000"))
        msgs = bench_engine.build(n)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([{"role": m.role, "content": m.text,
                        "tool_call_id": m.tool_call_id} for m in msgs], f, ensure_ascii=False)
        py_best, rb_best, compressed = float("inf"), float("inf"), None
        for _ in range(args.rounds):
            cpu = bench_engine.cold(lambda: comp.compress_tool_results(msgs, 10))[1]
            py_best = min(py_best, cpu)
            out = subprocess.run([ruby, str(HERE / "ruby" / "bench_context_manager.rb"), args.ruby_source, f.name],
                                 capture_output=True, text=True, check=True)
            result = json.loads(out.stdout)
            rb_best = min(rb_best, result["cpu"])
            compressed = result["compressed"]
        ours = comp.compress_tool_results(msgs, 10)
        same = sum(1 for i, m in enumerate(ours) if m is not msgs[i])
        Path(f.name).unlink()
        print(f"{n:,} messages: ctxview {py_best * 1000:.1f} ms CPU, Ruby {rb_best * 1000:.1f} ms CPU "
              f"(best of {args.rounds} rounds of 3): {py_best / rb_best:.2f}x   target <= 0.5x"
              f"   (compressed: ctxview {same:,}, Ruby {compressed:,})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
