"""Engine speed: compress_tool_results (cold and after a keep_recent change),
prepare_for_llm and detect_tool_name over 10k- and 100k-message conversations.

Half of the messages are tool results of 1-3 KB shaped like Read, Grep and
Glob output (each text distinct); the other half are assistant messages whose
tool calls link the results. Run from the repository root:

    .venv/bin/python benchmarks/bench_engine.py [SIZE ...]

Targets (issue 2): a cold compress over 100k messages in ≤ 0.4 s (the Ruby
original's time), and a repeat after keep_recent changes by one ≥ 10× faster.
"""

from __future__ import annotations

import gc
import random
import sys
import time

from ctxview import ContextManager, Message, ToolCall
from ctxview import compression as comp
from ctxview.compression import CompressionPolicy


def _read(rng: random.Random, size: int) -> str:
    lines, n = [], 0
    while n < size:
        lines.append(f"{len(lines) + 1:6d}→    {'code ' * rng.randint(1, 14)}{rng.random():.6f}")
        n += len(lines[-1]) + 1
    return "\n".join(lines)


def _grep(rng: random.Random, size: int) -> str:
    lines = [f"{rng.randint(5, 90)} matches in {rng.randint(1, 9)} files"]
    n = len(lines[0])
    while n < size:
        lines.append(f"src/mod{rng.randint(0, 999)}.py:{rng.randint(1, 999)}:    call_thing({rng.random():.5f})")
        n += len(lines[-1]) + 1
    return "\n".join(lines)


def _glob(rng: random.Random, size: int) -> str:
    lines = [f"Found {rng.randint(10, 200)} files matching **/*.py"]
    n = len(lines[0])
    while n < size:
        lines.append(f"src/pkg{rng.randint(0, 99)}/module_{rng.randint(0, 99999)}.py")
        n += len(lines[-1]) + 1
    return "\n".join(lines)


SHAPES = (("Read", _read), ("Grep", _grep), ("Glob", _glob))


def build(n: int, seed: int = 7) -> list[Message]:
    rng = random.Random(seed)
    msgs: list[Message] = [Message("user", "Please look through the project.")]
    while len(msgs) < n:
        name, make = SHAPES[rng.randrange(3)]
        call_id = f"call_{len(msgs)}"
        msgs.append(Message("assistant", "Checking.", tool_calls=(ToolCall(call_id, name, {"q": "x"}),), model_id="m"))
        if len(msgs) < n:
            msgs.append(Message("tool", make(rng, rng.randint(1000, 3000)), tool_call_id=call_id))
    return msgs


def timed(fn, repeat: int = 3) -> float:
    # Each run starts after a full collection, so garbage collections owed by
    # earlier runs are not billed to this one (GC stays enabled while timing).
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def cold(fn) -> float:
    def run():
        comp.clear_caches()
        fn()
    return timed(run)


def line(label: str, seconds: float, count: int) -> None:
    print(f"  {label:<48} {seconds * 1000:9.1f} ms  {count / seconds:14,.0f} msg/s")


def bench(n: int) -> None:
    msgs = build(n)
    tools = [m for m in msgs if m.role == "tool"]
    size = sum(len(m.text) for m in tools)
    print(f"{n:,} messages ({len(tools):,} tool results, {size / 1e6:.1f} M chars)")

    c_cold = cold(lambda: comp.compress_tool_results(msgs, 10))
    line("compress_tool_results cold", c_cold, n)
    comp.clear_caches()
    comp.compress_tool_results(msgs, 10)
    flip = iter(range(10**9))
    c_warm = timed(lambda: comp.compress_tool_results(msgs, 11 + next(flip) % 2))
    line("compress_tool_results, keep_recent ±1 (cached)", c_warm, n)
    print(f"  {'':<48} speed-up {c_cold / c_warm:6.1f}×   (target ≥ 10×; cold target ≤ 400 ms at 100k)")
    comp.clear_caches()
    gc.collect()
    comp.compress_tool_results(msgs, 10)
    t0 = time.perf_counter()
    gc.collect()
    line("(a full gc.collect() right after a cold run)", time.perf_counter() - t0, n)

    by_call = CompressionPolicy(tool_name_from="tool_call")
    t_cold = cold(lambda: comp.compress_tool_results(msgs, 10, by_call))
    line("compress_tool_results cold, tool_call names", t_cold, n)
    comp.compress_tool_results(msgs, 10, by_call)
    line("  … keep_recent ±1 (cached)", timed(lambda: comp.compress_tool_results(msgs, 11 + next(flip) % 2, by_call)), n)

    frozen = tuple(msgs)
    comp.compress_tool_results(frozen, 10, by_call)
    line("  … same, messages as a tuple (call-id map kept)",
         timed(lambda: comp.compress_tool_results(frozen, 11 + next(flip) % 2, by_call)), n)

    def switch() -> float:
        comp.clear_caches()
        comp.compress_tool_results(msgs, 10)
        gc.collect()
        t0 = time.perf_counter()
        comp.compress_tool_results(msgs, 10, comp.get_policy("light"))
        return time.perf_counter() - t0
    line("first run after switching default → light", min(switch() for _ in range(3)), n)

    cm = ContextManager()
    line("prepare_for_llm, no ephemeral content", timed(lambda: cm.prepare_for_llm(msgs)), n)
    cm.add_ephemeral_reminder("<system-reminder>Be careful.</system-reminder>", messages_array=msgs)
    for i in range(0, n, 1000):
        cm.add_ephemeral_content_for_message(i, "<system-reminder>todo list changed</system-reminder>")
    line(f"prepare_for_llm, ephemeral on {cm.ephemeral_count()} messages", timed(lambda: cm.prepare_for_llm(msgs)), n)

    texts = [m.text for m in tools]
    t = timed(lambda: [comp.detect_tool_name(x) for x in texts])
    line("detect_tool_name (tool results only)", t, len(texts))
    names = {comp.detect_tool_name(x) for x in texts}
    assert names == {"Read", "Grep", "Glob"}, names


def main(argv: list[str]) -> None:
    sizes = [int(a.replace("_", "").replace("k", "000")) for a in argv] or [10_000, 100_000]
    print(f"Python {sys.version.split()[0]}")
    for n in sizes:
        bench(n)


if __name__ == "__main__":
    main(sys.argv[1:])
