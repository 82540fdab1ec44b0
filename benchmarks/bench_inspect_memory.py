"""Peak memory of loading a big Inspect AI `.json` log, a piece of its samples at a time or whole.

    python benchmarks/bench_inspect_memory.py [--samples 300] [--turns 30] [--repeat 3]

Writes a generated log (samples of an agent loop; each model event repeats the conversation so
far as its input, as Inspect records it, so the events hold most of the bytes) and loads it in
fresh subprocesses, alternating the two ways: `pieces` (what ctxview does for a log of 8 MB and
more) and `whole` (orjson parse of the document, then the same conversion). Prints the
tracemalloc peak of each as a multiple of the file's size, and the best of each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

CHILD = r"""
import sys, tracemalloc
from ctxview.formats import inspect_ai
from ctxview.formats.parsing.jsonio import load_document, open_input
path, mode = sys.argv[1], sys.argv[2]
tracemalloc.start()
inp = open_input(path)
if mode == "pieces":
    session = inspect_ai.load_in_pieces(inp)
    assert session is not None
else:
    session = inspect_ai.load(inp, "json", doc=load_document(inp, "x"))
print(tracemalloc.get_traced_memory()[1], sum(len(c.messages) for c in session.conversations))
"""


def make_log(path: Path, samples: int, turns: int) -> None:
    out = []
    for k in range(samples):
        messages = [{"id": f"s{k}", "role": "system", "content": "You are an agent with a bash tool."},
                    {"id": f"u{k}", "role": "user", "content": f"Task {k}: find the bug in module {k}."}]
        events = []
        for t in range(turns):
            call = f"call_{k}_{t}"
            reply = {"id": f"a{k}_{t}", "role": "assistant", "model": "gpt-5", "content": f"Step {t}: look at file {t}.",
                     "tool_calls": [{"id": call, "function": "bash", "arguments": {"cmd": f"cat src/f{t}.py"}}]}
            events.append({"event": "model", "model": "openai/gpt-5", "input": list(messages), "tools": [],
                           "tool_choice": "auto", "config": {},
                           "output": {"model": "gpt-5", "choices": [{"message": reply}],
                                      "usage": {"input_tokens": 1000 + t, "output_tokens": 50}}})
            messages.append(reply)
            messages.append({"id": f"t{k}_{t}", "role": "tool", "tool_call_id": call, "function": "bash",
                             "content": f"# file {t} of sample {k}\n" + "".join(f"line {i}: value = {k * i + t}\n"
                                                                             for i in range(40))})
        out.append({"id": k, "epoch": 1, "input": f"Task {k}", "target": "fixed", "messages": messages,
                    "events": events, "model_usage": {"openai/gpt-5": {"input_tokens": 30000, "output_tokens": 1500}}})
    log = {"version": 2, "status": "success",
           "eval": {"task": "bugfind", "model": "openai/gpt-5", "created": "2026-08-01T00:00:00Z", "dataset": {},
                    "config": {}},
           "plan": {}, "results": {}, "stats": {}, "samples": out}
    path.write_bytes(orjson.dumps(log))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        make_log(path, args.samples, args.turns)
        size = path.stat().st_size
        print(f"log: {size / 1e6:.1f} MB, {args.samples} samples of {args.turns} turns")
        best: dict[str, float] = {}
        for r in range(args.repeat):
            for mode in ("pieces", "whole"):  # interleaved: A B A B
                peak, messages = map(int, subprocess.run([sys.executable, "-c", CHILD, str(path), mode], check=True,
                                                         capture_output=True, text=True).stdout.split())
                ratio = peak / size
                best[mode] = min(best.get(mode, ratio), ratio)
                print(f"run {r + 1} {mode:6}: peak {peak / 1e6:7.1f} MB = {ratio:.2f}x the file ({messages:,} messages)")
        print(f"best: pieces {best['pieces']:.2f}x, whole {best['whole']:.2f}x the file "
              f"(pieces / whole = {best['pieces'] / best['whole']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
