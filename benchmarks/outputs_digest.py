"""Print one digest line per (sample, settings, command) of ctxview's outputs, for before/after diffs.

A refactoring must not change a byte of what ctxview writes. Run this before and
after (`python benchmarks/outputs_digest.py > before.txt`, then again, then
`diff before.txt after.txt`): each line names a bundled sample, a settings
grid entry and `report --json --messages` or `prepare` in both shapes, with
the SHA-256 of the output and its size. Runs in-process (no subprocess per
line), so the whole grid takes seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxview.cli.commands import main  # noqa: E402

GRID = [
    [],
    ["--tiers", "default"],
    ["--tiers", "aggressive", "--keep-recent", "3"],
    ["--tiers", "swarm-auto", "--context-window", "20000"],
    ["--tiers", "default", "--clear-keep", "2"],
    ["--old-messages", "remove"],
    ["--old-messages", "truncate", "--summarize-before", "30"],
    ["--old-messages", "llm", "--tiers", "light"],
    ["--budget", "5000"],
    ["--tiers", "default", "--budget", "8000", "--keep-recent", "3"],
    ["--request", "2"],
    ["--request", "5", "--tiers", "default"],
]


def samples() -> list[Path]:
    base = ROOT / "sample_sessions"
    return [*sorted(base.glob("*.json*")), *sorted(base.glob("*/*.jsonl")), *sorted((ROOT / "tests/fixtures").rglob("*.jsonl"))]


def run(argv: list[str]) -> tuple[int, bytes]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 1
    return code, (out.getvalue() + "\n--stderr--\n" + err.getvalue()).encode("utf-8", "surrogatepass")


def main_digest() -> None:
    for path in samples():
        name = path.relative_to(ROOT)
        for options in GRID:
            for command in (["report", str(path), "--json", "--messages"], ["prepare", str(path)],
                            ["prepare", str(path), "--shape", "anthropic"]):
                code, data = run([*command, *options])
                digest = hashlib.sha256(data).hexdigest()[:16]
                print(f"{name} {command[0]}{' ' + command[-1] if command[-1] == 'anthropic' else ''} "
                      f"{' '.join(options) or '(as sent)'}: exit {code}, {len(data):,} bytes, {digest}")


if __name__ == "__main__":
    main_digest()
