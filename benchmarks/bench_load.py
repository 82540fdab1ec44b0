#!/usr/bin/env python3
"""How fast and how lean is loading a big session? Prints the figures.

    python benchmarks/bench_load.py                    # 100 MB Claude Code transcript
    python benchmarks/bench_load.py --mb 50 --format codex
    python benchmarks/bench_load.py --small             # the same size in messages of at most 120 characters

With --before ROOT (a checkout of the release before) load_session is also timed with each
checkout in turns, a fresh process for each load, both checkouts compiled first.

Targets: loading a Claude Code transcript takes at most 2.5x the time of reading
the file and calling orjson.loads on each line, a Codex rollout at most 3x (2x was asked of
every format); peak memory is at most 3x the file size, and at most 2x for a large JSON document
(a SwarmSDK snapshot). Time is the median of --repeat runs of each (runs of the two
alternate, after a warm-up that also fills the page cache), in CPU seconds
of this process; wall time and the minimum are printed too. A third
reference run keeps each line's message text (what any loader must keep):
it shows how much of the gap is holding the data rather than the loader's
own work. A fourth builds one bare Message per message line (no checks,
merging, linking or chain): the least any loader building ctxview's model in
Python pays. For a Claude Code transcript a fifth does the transcript's rules for a file
without branches in one pass (uuid dedupe, a response's lines joined, results named, usage and
calls built): the least a pure-Python loader of these files pays before parent links, side
chains and checks. Memory is measured in fresh subprocesses: the tracemalloc peak of
the load, and the growth of the resident set (VmHWM) over an interpreter
that imported ctxview.

`--rewound` measures the same transcript with one line more at its end, a prompt written
after a rewind to its first answer: the worst case of claude_code/linear.py, which reads the
file in one pass until a line leaves the chain and then hands it to the general path whole.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
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
from ctxview.formats.parsing.jsonio import READ_BUFFER  # noqa: E402

# the time targets, as multiples of the read + orjson.loads floor (2x elsewhere)
TIME_TARGET = {"claude-code": 2.5, "codex": 3.0}
MSGS_PER_MB = {"claude-code": 533, "codex": 700, "swarm-events": 700, "swarm-snapshot": 880}
DOCUMENTS = {"swarm-snapshot"}  # one JSON document: the floor is one orjson.loads of the whole file

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
    if path.suffix == ".json":
        with open(path, "rb") as f:
            orjson.loads(f.read())
        return
    loads = orjson.loads
    with open(path, "rb", buffering=READ_BUFFER) as f:  # read the way the loaders read
        for line in f:
            loads(line)


def _message_of(rec: dict) -> object:
    """A line's message: Claude Code's "message", a Codex response item's payload (one per item:
    Codex writes each tool call and output as an item of its own)."""
    msg = rec.get("message")
    return rec.get("payload") if msg is None and rec.get("type") == "response_item" else msg


def _content_of(msg: dict) -> object:
    """A message's content; a Codex tool output's output, a tool call's arguments."""
    return msg.get("content") if "content" in msg else msg.get("output", msg.get("arguments"))


def keep_texts(path: Path) -> list:
    """Reference: read + orjson.loads per line, keeping each message's text (strings only)."""
    loads = orjson.loads
    kept: list = []
    keep = kept.append
    with open(path, "rb", buffering=READ_BUFFER) as f:
        for line in f:
            msg = _message_of(loads(line))
            if type(msg) is dict:
                content = _content_of(msg)
                block = content[0] if type(content) is list and content else content
                if type(block) is dict:
                    keep(block.get("text") or block.get("content") or block.get("thinking") or block.get("input"))
                else:
                    keep(block)
    return kept


def bare_messages(path: Path) -> list:
    """Reference: read + orjson.loads per line, one Message per message line holding its first
    block's text: no checks, no merging of streamed lines, no linking, no chain."""
    from ctxview.formats.parsing.linking import new_message
    from ctxview.gcpause import paused_gc

    loads = orjson.loads
    kept: list = []
    keep = kept.append
    with paused_gc(), open(path, "rb", buffering=READ_BUFFER) as f:  # as load_session does
        for line in f:
            rec = loads(line)
            msg = _message_of(rec)
            if type(msg) is dict:
                content = _content_of(msg)
                block = content[0] if type(content) is list and content else content
                text = block.get("text") or block.get("content") if type(block) is dict else block
                keep(new_message(msg.get("role"), text if type(text) is str else "", None, (), None, None, None,
                                 None, False, None, rec.get("uuid"), {}))
    return kept


def linear_reader(path: Path) -> list:
    """Reference (Claude Code): the transcript's rules for a file without branches, in one pass and
    nothing else: lines deduplicated by uuid, the lines of one response joined into one Message
    (texts, calls, thinking, the last usage), tool results named after their calls. No parent links,
    side chains, checks, metadata or events: what is left between this and the loader is what
    those cost, and the entries the chain is walked over."""
    from ctxview.formats.parsing.builders import anthropic_usage, message, tool_call
    from ctxview.gcpause import paused_gc

    loads = orjson.loads
    seen: set = set()
    out: list = []
    responses: dict = {}
    names: dict = {}
    n = 0
    with paused_gc(keep=True), open(path, "rb", buffering=READ_BUFFER) as f:
        for line in f:
            n += 1
            rec = loads(line)
            uuid = rec.get("uuid")
            if uuid in seen:
                continue
            seen.add(uuid)
            msg = rec.get("message")
            content = msg.get("content") if type(msg) is dict else None
            if rec.get("type") == "assistant" and type(content) is list:
                parts = responses.get(msg.get("id"))
                if parts is None:
                    parts = responses[msg.get("id")] = [n, [], [], [], None, msg.get("model"), rec.get("timestamp")]
                    out.append(parts)
                for b in content:
                    if b.get("type") == "text":
                        parts[1].append(b.get("text"))
                    elif b.get("type") == "tool_use":
                        call = tool_call(b.get("id"), b.get("name"), b.get("input"))
                        names[call.id] = call.name
                        parts[3].append(call)
                    elif b.get("type") == "thinking":
                        parts[2].append({"type": "thinking", "thinking": b.get("thinking"),
                                         "signature": b.get("signature")})
                parts[4] = msg.get("usage")
            elif rec.get("type") == "user":
                origin = "line " + str(n)
                if type(content) is str:
                    out.append(message("user", content, None, (), None, None, None, None, False, origin, uuid, {}))
                elif type(content) is list:
                    for b in content:
                        tid = b.get("tool_use_id")
                        out.append(message("tool", b.get("content"), tid, (), None, names.get(tid), None, None,
                                           False, origin, uuid, {}))
        for i, m in enumerate(out):
            if type(m) is list:
                line_no, texts, thinking, calls, usage, model, ts = m
                meta = {"timestamp": ts, "thinking_blocks": tuple(thinking)} if thinking else {"timestamp": ts}
                out[i] = message("assistant", "\n".join(texts), None, tuple(calls), model, None,
                                 anthropic_usage(usage) if type(usage) is dict else None,
                                 "\n\n".join(b["thinking"] for b in thinking) or None, False, "line " + str(line_no),
                                 None, meta)
    return out


def rewound(path: Path) -> Path:
    """A copy of a transcript with one more line: a prompt hanging off the first assistant line, as a
    rewind to the first answer writes it. The chain leaves all the rest behind."""
    out = path.with_name(path.stem + "-rewound.jsonl")
    if not out.exists():
        with open(path, "rb") as f:
            data = f.read()
        first = next(r for r in map(orjson.loads, data.splitlines()[:20]) if r.get("type") == "assistant")
        rec = {"parentUuid": first["uuid"], "isSidechain": False, "type": "user", "uuid": "rewound-0",
               "message": {"role": "user", "content": "Try that again, another way."},
               "timestamp": first.get("timestamp"), "sessionId": first.get("sessionId")}
        with open(out, "wb") as f:
            f.write(data)
            f.write(orjson.dumps(rec) + b"\n")
    return out


def timed(fns: dict, repeat: int) -> dict[str, tuple[list[float], list[float]]]:
    """CPU and wall seconds of each function, run in turns so that load from other processes hits all alike."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, w0 = time.process_time(), time.perf_counter()
            result = fn()
            out[name][0].append(time.process_time() - t0)
            out[name][1].append(time.perf_counter() - w0)
            del result
    return out


def memory(path: Path, mode: str, module: str) -> int:
    code = _MEMORY_PROBE.replace("{module}", module)
    out = subprocess.run([sys.executable, "-c", code, mode, str(path)], capture_output=True, text=True,
                         check=True, cwd=HERE.parent)
    return int(out.stdout.strip())


# One load_session in a fresh process, on the checkout named first (after one load that imports what
# a load imports lazily): its CPU seconds.
_LOAD_PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from ctxview.formats import load_session
load_session(sys.argv[2])
t = time.process_time()
load_session(sys.argv[2])
print(time.process_time() - t)
"""


def in_turns(path: Path, trees: list[Path], repeat: int) -> list[float]:
    """The median CPU seconds of one load_session of `path` with each checkout, taken in turns, each
    in a fresh process; the checkouts are compiled first (where bytecode is not written, a checkout
    would compile what it imports lazily during the load timed)."""
    for tree in trees:
        compileall.compile_dir(str(tree / "ctxview"), quiet=1)
    times: list[list[float]] = [[] for _ in trees]
    for _ in range(repeat):
        for k, tree in enumerate(trees):
            out = subprocess.run([sys.executable, "-c", _LOAD_PROBE, str(tree), str(path)], capture_output=True,
                                 text=True, check=True, cwd=tree)
            times[k].append(float(out.stdout.strip().splitlines()[-1]))
    return [statistics.median(t) for t in times]


def write_small(path: Path, n: int) -> None:
    """A Claude Code transcript of `n` messages whose texts (and tool results) are at most 120
    characters: the lines are the same records, with little text in them."""
    import dataclasses

    agent = make_session.generate(n, 0, "main", big_reads=False)
    agent.system_prompt = make_session.LEAD_PROMPT
    agent.messages[:] = [dataclasses.replace(m, content=m.text[:120]) if len(m.text) > 120 else m
                         for m in agent.messages]
    make_session._write_lines(path, make_session.claude_code_lines(agent, 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="approximate file size in MB (default 100)")
    parser.add_argument("--format", default="claude-code", choices=sorted(MSGS_PER_MB))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ctxview-bench"))
    parser.add_argument("--small", action="store_true",
                        help="(claude-code) every message's text cut to 120 characters: the per-line work alone")
    parser.add_argument("--rewound", action="store_true",
                        help="(claude-code) the transcript with a rewind at its last line: read twice")
    parser.add_argument("--before", metavar="ROOT",
                        help="also load the file with this checkout (the release before), in turns with this one, "
                             "each load in a fresh process")
    args = parser.parse_args(argv)

    from ctxview.formats import load_session

    n = int(args.mb * MSGS_PER_MB[args.format])
    small = args.small and args.format == "claude-code"
    if small:
        n *= 6   # (the same megabytes of short messages)
    path = Path(args.dir) / f"{args.format}-{n}{'-small' if small else ''}.{'json' if args.format in DOCUMENTS else 'jsonl'}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        if small:
            write_small(path, n)
        else:
            make_session.write(path, n, args.format, seed=0)
        print(f"wrote {path} in {time.perf_counter() - t:.1f} s")
    if args.rewound and args.format == "claude-code":
        path = rewound(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    print(f"file: {path.name}, {size / 1e6:.1f} MB, {lines:,} lines, {n:,} messages")

    s = load_session(path)  # warm: imports, page cache
    msgs = sum(len(c.messages) for c in s.conversations)
    del s
    baseline(path)
    runs = {"base": lambda: baseline(path), "load": lambda: load_session(path)}
    if args.format not in DOCUMENTS:  # (the references read lines)
        runs.update(keep=lambda: keep_texts(path), bare=lambda: bare_messages(path))
    if args.format == "claude-code":
        runs.update(linear=lambda: linear_reader(path))
    t = timed(runs, args.repeat)
    med = {k: (statistics.median(c), statistics.median(w), min(c)) for k, (c, w) in t.items()}
    for label, key in (("read + orjson.loads per line:", "base"), ("load_session:", "load"),
                       ("reference, keeping the texts:", "keep"), ("reference, bare messages:", "bare"),
                       ("reference, one linear pass:", "linear")):
        if key not in med:
            continue
        cpu, wall, low = med[key]
        extra = f", {msgs:,} messages" if key == "load" else ""
        print(f"{label:30s}{cpu:.3f} s cpu median, {low:.3f} min ({wall:.3f} s wall){extra}")
    (bc, bw, bl), (lc, lw, ll) = med["base"], med["load"]
    refs = (f"; keeping the texts alone: {med['keep'][0] / bc:.2f}x, bare messages alone: {med['bare'][0] / bc:.2f}x"
            if "keep" in med else "")
    refs += f", one linear pass: {med['linear'][0] / bc:.2f}x" if "linear" in med else ""
    print(f"time ratio (medians of {args.repeat}): {lc / bc:.2f}x cpu, {lw / bw:.2f}x wall, "
          f"{ll / bl:.2f}x of the minima (target <= {TIME_TARGET.get(args.format, 2)}x){refs}")

    if args.before:
        mine, before = in_turns(path, [HERE.parent, Path(args.before)], args.repeat)
        print(f"load_session in turns with the release before (medians of {args.repeat}, a fresh process each): "
              f"{mine:.3f} s cpu ({mine / bc:.2f}x), the release before {before:.3f} s ({before / bc:.2f}x)")

    module = args.format.replace("-", "_")
    peak = memory(path, "tracemalloc", module)
    rss = memory(path, "rss", module)
    print(f"peak traced memory: {peak / 1e6:.1f} MB = {peak / size:.2f}x file size "
          f"(target <= {2 if args.format in DOCUMENTS else 3}x)")
    print(f"resident set growth: {rss / 1e6:.1f} MB = {rss / size:.2f}x file size")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
