"""Pipeline recompute speed on a large synthetic conversation.

Prints timings of `pipeline.prepare` with one long-lived PipelineCache, the
way the inspector recomputes after a control changes, as medians (and
minima) over rounds that each start from a fresh cache and empty
compression caches, so "first time" lines are first times in every round.
Every line but the one marked memoised is a real recompute: the cache's memo
of the last few views is emptied first. The cache's last view stays, as in
the inspector: a keep_recent change is applied to it as a delta. What the
cache remembers below the views stays too (stage results, counts, cuts):
"first time" lines are settings no earlier step of the round used.
Views are returned as the pipeline makes them, with their changed rows made
when first read; the last lines time reading every row of one first-time
view (what `ctxview report --messages` does) and a screenful of it.
Then the size of what the caches hold after one round (objects reached
from them, the loaded session left out) and the process's resident memory.

    python benchmarks/bench_pipeline.py [N_MESSAGES [ROUNDS]] [--no-freeze] [--as-inspector] [--exact]

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
import os
import random
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxview._fast import compression  # noqa: E402
from ctxview.gcpause import paused_gc  # noqa: E402
from ctxview.identity_table import IdentityTable  # noqa: E402
from ctxview.model import Conversation, Message, ToolCall, Usage  # noqa: E402
from ctxview.pipeline import PipelineCache, prepare  # noqa: E402
from ctxview.engine.view import ClearSettings, Settings  # noqa: E402


def DefaultTiers(**changes):  # noqa: N802 - the settings these figures were always taken with
    """Settings with SwarmSDK's default tiers (the default view is as sent, which compresses nothing)."""
    return Settings(**{"tiers": "default", **changes})



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


FREEZE = "--no-freeze" not in sys.argv
# --as-inspector: time each step as ctxview/tui/app.py runs it, the collector paused
# around the recompute and gc.freeze() inside the timed region (so the collector's
# pass over what the recompute allocated, which the inspector never runs, is left out).
AS_INSPECTOR = "--as-inspector" in sys.argv
TIMES: dict[str, list[tuple[float, float]]] = {}   # label -> (wall, cpu) per round


def timed(cache: PipelineCache, label: str, fn, *, memo: bool = False) -> object:
    if not memo:
        # Time a real recompute, not the memo of the last few views. The
        # cache's last view (the base a keep_recent delta starts from) stays,
        # as it does in the inspector.
        cache.views.clear()
    t = time.perf_counter()
    c = time.process_time()
    if AS_INSPECTOR:
        with paused_gc():
            out = fn()
            gc.freeze()
    else:
        out = fn()
    dt = time.perf_counter() - t
    cpu = time.process_time() - c
    TIMES.setdefault(label, []).append((dt, cpu))
    if FREEZE:
        # As the inspector does after applying a view: long-lived, acyclic
        # objects leave the cyclic GC's full passes (untimed here, as there).
        gc.freeze()
    return out


def rss_mb() -> float:
    """Resident memory now (Linux /proc), in MB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:  # pragma: no cover - not Linux
        return float("nan")


def one_round(conv: Conversation) -> tuple[PipelineCache, object]:
    """The inspector's sequence of recomputes, from a fresh cache and empty compression caches."""
    compression.clear_caches()
    cache = PipelineCache()
    base = DefaultTiers()
    view = timed(cache, "cold (default settings, swarm estimate)", lambda: prepare(conv, base, cache=cache))
    timed(cache, "same settings, full path (stages remembered)", lambda: prepare(conv, base, cache=cache))
    timed(cache, "same settings again (memoised view)", lambda: prepare(conv, base, cache=cache), memo=True)
    timed(cache, "keep_recent 10 → 11 (new value)", lambda: prepare(conv, DefaultTiers(keep_recent=11), cache=cache))
    timed(cache, "keep_recent 11 → 10", lambda: prepare(conv, base, cache=cache))
    timed(cache, "keep_recent 10 → 25 (new value)", lambda: prepare(conv, DefaultTiers(keep_recent=25), cache=cache))
    timed(cache, "keep_recent 25 → 10", lambda: prepare(conv, base, cache=cache))
    # (a delta's cost follows the rows between the two boundaries: 1 row above, 50 here)
    timed(cache, "keep_recent 10 → 60 (new value)", lambda: prepare(conv, DefaultTiers(keep_recent=60), cache=cache))
    timed(cache, "keep_recent 60 → 10", lambda: prepare(conv, base, cache=cache))
    timed(cache, "keep_recent 10 → 11 again (memo emptied)",
          lambda: prepare(conv, DefaultTiers(keep_recent=11), cache=cache))
    timed(cache, "keep_recent 11 → 10 again (memo emptied)", lambda: prepare(conv, base, cache=cache))
    as_sent = Settings()
    timed(cache, "as sent (tiers=off), first time", lambda: prepare(conv, as_sent, cache=cache))
    timed(cache, "as sent, keep_recent 10 → 11", lambda: prepare(conv, Settings(keep_recent=11), cache=cache))
    timed(cache, "as sent, keep_recent 11 → 60", lambda: prepare(conv, Settings(keep_recent=60), cache=cache))
    timed(cache, "back to the default tiers", lambda: prepare(conv, base, cache=cache))
    timed(cache, "tiers default → aggressive (first time)",
          lambda: prepare(conv, DefaultTiers(tiers="aggressive"), cache=cache))
    timed(cache, "tiers → light (first time)", lambda: prepare(conv, DefaultTiers(tiers="light"), cache=cache))
    timed(cache, "tiers → default (seen)", lambda: prepare(conv, base, cache=cache))
    timed(cache, "compression off", lambda: prepare(conv, DefaultTiers(compression=False), cache=cache))
    timed(cache, "clearing keep 3 (first time)", lambda: prepare(conv, DefaultTiers(clear=ClearSettings()), cache=cache))
    timed(cache, "clearing on, keep_recent 10 → 12",
          lambda: prepare(conv, DefaultTiers(clear=ClearSettings(), keep_recent=12), cache=cache))
    timed(cache, "budget 100k tokens (first time)", lambda: prepare(conv, DefaultTiers(budget=100_000), cache=cache))
    timed(cache, "old_messages=remove (first time)",
          lambda: prepare(conv, DefaultTiers(old_messages="remove"), cache=cache))
    timed(cache, "request = middle assistant message (switch)",
          lambda: prepare(conv, DefaultTiers(request=view.requests[len(view.requests) // 2]), cache=cache))
    timed(cache, "request → last call (switch back)", lambda: prepare(conv, base, cache=cache))
    fresh = timed(cache, "tiers 3:full,*:80 (first time; rows read below)",
                  lambda: prepare(conv, DefaultTiers(tiers="3:full,*:80"), cache=cache))
    timed(cache, "  then its first 60 rows read", lambda: fresh.rows[:60], memo=True)
    timed(cache, "  then all its rows read", lambda: list(fresh.rows), memo=True)
    return cache, view


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 100_000
    rounds = int(args[1]) if len(args) > 1 else 3
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    t = time.perf_counter()
    conv = load(n)
    print(f"{len(conv.messages):,} messages built in {time.perf_counter() - t:.2f} s; "
          f"{rounds} rounds, each from a fresh cache; medians (and minima) over the rounds")
    gc.collect()
    before = rss_mb()
    held, sizes, owned = 0.0, {}, 0
    for r in range(rounds):
        cache, view = one_round(conv)
        if r == 0:
            gc.collect()
            # Later rounds reuse memory freed by earlier ones, so the first
            # round's figure is the one that says what a cache holds.
            held, sizes = rss_mb() - before, cache_sizes(cache)
            _, session = deep_size([conv])
            # (the tool-name detections: the cache's own memo's, in a release before a module global)
            owned, _ = deep_size([cache, *filter(None, [getattr(compression, "_NAMES", None)])], session)
            del session
        del cache
        compression.clear_caches()
        gc.collect()
    for label, runs in TIMES.items():
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        print(f"{label:<46} {statistics.median(walls) * 1000:8.1f} ms  (min {min(walls) * 1000:7.1f}, "
              f"cpu median {statistics.median(cpus) * 1000:7.1f})")
    print(f"tokens stored {view.tokens_stored:,} → prepared {view.tokens_prepared:,}; "
          f"compressed {view.stats['compressed']:,}")
    print(f"held by the cache and the compression caches after the first round: {owned / 1e6:,.0f} MB of "
          f"objects ({owned / len(conv.messages):,.0f} bytes per message; the session itself not counted), "
          f"{held:,.0f} MB RSS "
          f"({', '.join(f'{k} {v:,}' for k, v in sizes.items())})")
    del view
    from ctxview.engine.tokens import exact_available

    if exact_available() and "--exact" in sys.argv:
        exact = PipelineCache()
        o200k = DefaultTiers(counter="o200k_base")
        timed(exact, "cold, exact o200k_base counter (new cache)", lambda: prepare(conv, o200k, cache=exact))
        timed(exact, "o200k after keep_recent 10 → 11",
              lambda: prepare(conv, DefaultTiers(counter="o200k_base", keep_recent=11), cache=exact))
        for label in ("cold, exact o200k_base counter (new cache)", "o200k after keep_recent 10 → 11"):
            print(f"{label:<46} {TIMES[label][0][0] * 1000:8.1f} ms")


def deep_size(roots: list, skip: set[int] | None = None) -> tuple[int, set[int]]:
    """Bytes (sys.getsizeof) of every object reachable from `roots` once, leaving out ids in `skip`;
    also returns the ids seen. Follows containers, __slots__ and instance dicts, not classes or functions."""
    seen: set[int] = set(skip or ())
    visited: set[int] = set()
    total = 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType,
                                                types.BuiltinFunctionType, types.MethodType)):
            continue
        seen.add(id(obj))
        visited.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (tuple, list, set, frozenset)):
            stack.extend(obj)
        elif not isinstance(obj, (str, bytes, int, float, bool)):
            for klass in type(obj).__mro__:
                for name in getattr(klass, "__slots__", ()):
                    value = getattr(obj, name, None)
                    if value is not None:
                        stack.append(value)
            if hasattr(obj, "__dict__"):
                stack.append(vars(obj))
    return total, visited


def cache_sizes(cache: PipelineCache) -> dict[str, int]:
    """Entries per table of a PipelineCache (and the compression module's cut cache)."""
    sizes = {}
    for name, table in vars(cache).items():
        if isinstance(table, dict):
            inner = list(table.values())
            # tables of tables (per counter, placeholder, policy...): their entries
            nested = bool(inner) and all(isinstance(t, (dict, IdentityTable)) for t in inner)
            sizes[name] = sum(len(t) for t in inner) if nested else len(table)
    sizes["compressed cuts"] = sum(len(e) for msgs in cache.memo.shared.values() for e in msgs.values())
    return {k: v for k, v in sizes.items() if v}


if __name__ == "__main__":
    main()
