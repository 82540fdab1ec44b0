"""Pipeline recompute speed on a large synthetic conversation.

Prints cold / warm timings of `pipeline.prepare` with one long-lived
PipelineCache, the way the inspector recomputes after a control changes.
Every "warm" figure is a real recompute (the cache's memo of the last few
views is emptied first), except the one line marked memoised:

    python benchmarks/bench_pipeline.py [N_MESSAGES] [--no-freeze]

After each timed step the script calls gc.freeze(), as the inspector does
after applying a view (ctxview/tui/app.py); with --no-freeze the cyclic GC's
full passes over the growing caches land in whichever step triggers them
(about 1.5 s each at 100k messages once the caches hold several settings).

Uses benchmarks/make_session.py's generator when it is there, otherwise
builds the messages here (half of them 1-3 KB tool results in
Read / Grep / Glob shapes).
"""

from __future__ import annotations

import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxview.model import Conversation, Message, ToolCall, Usage  # noqa: E402
from ctxview.pipeline import PipelineCache, prepare  # noqa: E402
from ctxview.view import ClearSettings, Settings  # noqa: E402


def _tool_text(rng: random.Random, k: int) -> tuple[str, str]:
    size = rng.randint(1000, 3000)
    kind = k % 3
    if kind == 0:
        lines, i = [], 1
        while sum(map(len, lines)) < size:
            lines.append(f"{i:6d}→    value_{i} = compute({i}, [{i}, {i + 1}])")
            i += 1
        return "Read", "\n".join(lines)
    if kind == 1:
        body = "\n".join(f"src/mod_{j}.py:{j * 7}: def handler_{j}(event):" for j in range(size // 40))
        return "Grep", f"Found 12 matches in {size // 40} files\n{body}"
    body = "\n".join(f"lib/pkg/file_{j}.rb" for j in range(size // 20))
    return "Glob", f"Found {size // 20} files matching **/*.rb\n{body}"


def build_conversation(n: int, seed: int = 7) -> Conversation:
    rng = random.Random(seed)
    msgs: list[Message] = []
    eph: dict[int, tuple[str, ...]] = {}
    k = 0
    while len(msgs) < n:
        phase = len(msgs) % 4
        if phase == 0:
            msgs.append(Message("user", f"Please look at part {k} of the code and fix the bug number {k}."))
        elif phase == 1:
            name, _ = _tool_text(rng, k)
            msgs.append(Message("assistant", f"Looking at part {k}.",
                                tool_calls=(ToolCall(f"call_{k}", name, {"file_path": f"/src/f{k}.py"}),),
                                usage=Usage(input_tokens=1000 + len(msgs) * 300)))
        elif phase == 2:
            name, text = _tool_text(rng, k)
            msgs.append(Message("tool", text, tool_call_id=f"call_{k}"))
        else:
            msgs.append(Message("assistant", f"Part {k} is done: the handler now validates its input."))
            k += 1
    eph[len(msgs) - 1] = ("<system-reminder>Remember the todo list.</system-reminder>",)
    return Conversation(name="bench", messages=tuple(msgs), system_prompt="You are a coding agent.",
                        ephemeral=eph, model="claude-sonnet-4-5")


def load(n: int) -> Conversation:
    """make_session.generate's realistic conversation when available, else build_conversation."""
    try:
        import make_session  # type: ignore[import-not-found]
    except ImportError:
        return build_conversation(n)
    agent = make_session.generate(n, 0, ephemeral_every=3)
    return Conversation(name=agent.name, messages=tuple(agent.messages), system_prompt=agent.system_prompt,
                        ephemeral=agent.ephemeral, model=agent.model, context_window=agent.context_window)


MEMO: list = []   # the caches whose memoised views are dropped before each timing


FREEZE = "--no-freeze" not in sys.argv


def timed(label: str, fn, *, memo: bool = False) -> object:
    if not memo:
        for cache in MEMO:
            cache.views.clear()  # time a real recompute, not the last-views memo
    t = time.perf_counter()
    c = time.process_time()
    out = fn()
    dt = time.perf_counter() - t
    cpu = time.process_time() - c
    print(f"{label:<44} {dt * 1000:9.1f} ms  (cpu {cpu * 1000:7.1f} ms)")
    if FREEZE:
        # As the inspector does after applying a view: long-lived, acyclic
        # objects leave the cyclic GC's full passes (untimed here, as there).
        gc.freeze()
    return out


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 100_000
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    t = time.perf_counter()
    conv = load(n)
    print(f"{len(conv.messages):,} messages built in {time.perf_counter() - t:.2f} s")
    cache = PipelineCache()
    MEMO.append(cache)
    base = Settings()
    view = timed("cold (default settings, swarm estimate)", lambda: prepare(conv, base, cache=cache))
    timed("warm, same settings", lambda: prepare(conv, base, cache=cache))
    timed("same settings again (memoised view)", lambda: prepare(conv, base, cache=cache), memo=True)
    timed("warm after keep_recent 10 → 11", lambda: prepare(conv, Settings(keep_recent=11), cache=cache))
    timed("warm after keep_recent 11 → 10", lambda: prepare(conv, base, cache=cache))
    timed("warm after tiers default → aggressive (first)", lambda: prepare(conv, Settings(tiers="aggressive"), cache=cache))
    timed("warm after tiers → light (first)", lambda: prepare(conv, Settings(tiers="light"), cache=cache))
    timed("warm after tiers → default", lambda: prepare(conv, base, cache=cache))
    timed("warm after compression off", lambda: prepare(conv, Settings(compression=False), cache=cache))
    timed("warm with clearing (keep 3)", lambda: prepare(conv, Settings(clear=ClearSettings()), cache=cache))
    timed("warm, clearing on, keep_recent 10 → 12",
          lambda: prepare(conv, Settings(clear=ClearSettings(), keep_recent=12), cache=cache))
    timed("warm with budget 100k tokens", lambda: prepare(conv, Settings(budget=100_000), cache=cache))
    timed("warm with old_messages=remove", lambda: prepare(conv, Settings(old_messages="remove"), cache=cache))
    timed("warm, request = middle assistant message",
          lambda: prepare(conv, Settings(request=view.requests[len(view.requests) // 2]), cache=cache))
    print(f"tokens stored {view.tokens_stored:,} → prepared {view.tokens_prepared:,}; "
          f"compressed {view.stats['compressed']:,}")
    from ctxview.tokens import exact_available

    if exact_available():
        exact = PipelineCache()
        MEMO.append(exact)
        o200k = Settings(counter="o200k_base")
        timed("cold, exact o200k_base counter (new cache)", lambda: prepare(conv, o200k, cache=exact))
        timed("warm o200k after keep_recent 10 → 11",
              lambda: prepare(conv, Settings(counter="o200k_base", keep_recent=11), cache=exact))


if __name__ == "__main__":
    main()
