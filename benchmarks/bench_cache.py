#!/usr/bin/env python3
"""What `ctxview report --compare` costs on a long session: the incremental replay against the naive one.

    python benchmarks/bench_cache.py                 # 10,000 requests, five settings
    python benchmarks/bench_cache.py --requests 2000

Generates a Claude Code transcript (make_session) with at least --requests model calls, then times:

1. `--compare default,light,aggressive,swarm-auto,off`'s work: every request replayed under each
   setting through the prompt-cache simulation, plus the as-sent replay it is measured against
   (prompt_cache.replay: incremental), cold (a new PipelineCache) and in one process;
2. the same through the command, `ctxview report FILE --json --compare ...` (load, report, compare);
3. the baseline: replay_naive (pipeline.prepare for each request, then the shared prefix), on the
   first 250, 500 and 1,000 requests under `default`, beside the incremental replay on the same
   prefix; its growth is quadratic, and the figure for the whole session is projected from the
   largest measured size (marked as projected: running it would take too long);
4. five clearing settings (clear=N, alone and after tiers), incremental, and the request-by-request
   replay they took before on the first 500 requests, projected to the whole session;
5. the same for three budgets and two clearings that spare tools by name (stepwise_replay).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_session  # noqa: E402

from ctxview import load_session  # noqa: E402
from ctxview.model import Conversation, request_indices  # noqa: E402
from ctxview.pipeline import PipelineCache  # noqa: E402
from ctxview.analysis.prices import PriceTable  # noqa: E402
from ctxview.analysis.prompt_cache import CacheRules, outcome, replay, replay_naive, simulate  # noqa: E402
from ctxview.settings import ClearSettings, Settings  # noqa: E402

SETTINGS = ("default", "light", "aggressive", "swarm-auto", "off")
# clearing, alone and after the tiers: replayed incrementally too (prompt_cache.incremental)
CLEARING = (Settings(clear=ClearSettings(keep=3)), Settings(clear=ClearSettings(keep=3, trigger=30_000)),
            Settings(tiers="default", clear=ClearSettings(keep=5)),
            Settings(tiers="aggressive", clear=ClearSettings(keep=3, min_saving=2_000)),
            Settings(tiers="swarm-auto", clear=ClearSettings(keep=10, trigger=50_000)))
# budgets (alone, after tiers, after clearing) and clearing that spares tools by name: stepped too
BUDGETS = (Settings(budget=50_000), Settings(tiers="default", budget=30_000),
           Settings(tiers="aggressive", clear=ClearSettings(keep=5), budget=20_000),
           Settings(clear=ClearSettings(keep=3, exclude=("Read",))),
           Settings(tiers="default", clear=ClearSettings(keep=5, exclude=("Grep", "Glob"), trigger=30_000)))


def compare_work(conv: Conversation, prices: PriceTable) -> tuple[float, dict[str, float]]:
    cache = PipelineCache()
    shares = {}
    t = time.perf_counter()
    for tiers in ("as sent", *SETTINGS):
        s = Settings() if tiers == "as sent" else Settings(tiers=tiers)
        prompts = replay(conv, s, cache=cache)
        o = outcome(conv, prompts, simulate(prompts, CacheRules()), prices)
        shares[tiers] = o.read_share or 0.0
    return time.perf_counter() - t, shares


def prefix(conv: Conversation, requests: int) -> Conversation:
    idx = request_indices(conv.messages)
    return Conversation(name=conv.name, messages=conv.messages[:idx[requests - 1] + 1], model=conv.model,
                        system_prompt=conv.system_prompt, ephemeral=conv.ephemeral, events=conv.events)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        n = int(args.requests * 2.67) + 10
        while True:
            make_session.write(path, n, "claude-code", seed=0)
            conv = load_session(path).conversations[0]
            if len(request_indices(conv.messages)) >= args.requests:
                break
            n = int(n * 1.05)
        count = len(request_indices(conv.messages))
        print(f"session: {len(conv.messages):,} messages, {count:,} requests, {path.stat().st_size / 1e6:.1f} MB")
        prices = PriceTable()
        prices.cost(conv.messages[1].usage, conv.model) if conv.messages[1].usage else None  # (the table's import)
        runs = [compare_work(conv, prices) for _ in range(2)]
        print(f"--compare {','.join(SETTINGS)} (and as sent), incremental: "
              f"{min(r[0] for r in runs):.2f} s, {max(r[0] for r in runs):.2f} s (two cold runs)")
        print("  cache reads: " + ", ".join(f"{k} {v:.0%}" for k, v in runs[0][1].items()))
        part = prefix(conv, 500)
        for title, group, against in (("five clearing settings (clear=N, with and without tiers)", CLEARING, (2,)),
                                      ("three budgets and two clearings by tool name", BUDGETS, (1, 4))):
            t = time.perf_counter()
            cache = PipelineCache()
            for s in group:
                prompts = replay(conv, s, cache=cache)
                outcome(conv, prompts, simulate(prompts, CacheRules()), prices)
            print(f"{title}, stepwise: {time.perf_counter() - t:.2f} s")
            for k in against:  # the request-by-request replay they took before
                s = group[k]
                t = time.perf_counter()
                slow = replay_naive(part, s, cache=PipelineCache())
                naive = time.perf_counter() - t
                assert replay(part, s, cache=PipelineCache()) == slow
                print(f"  request by request, {s.label()}, first 500 requests: {naive:.2f} s; all {count:,} "
                      f"projected (quadratic): about {naive * (count / 500) ** 2:,.0f} s")
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "ctxview", "report", str(path), "--json", "--compare",
                              ",".join(SETTINGS)], capture_output=True, text=True)
        wall = time.perf_counter() - t
        assert out.returncode == 0, out.stderr
        print(f"ctxview report --json --compare {','.join(SETTINGS)}: {wall:.2f} s wall (load and report included)")
        print("baseline, one setting (default):")
        print(f"{'requests':>9}  {'naive':>9}  {'incremental':>11}")
        last = None
        for k in (250, 500, 1000):
            part = prefix(conv, k)
            s = Settings(tiers="default")
            t = time.perf_counter()
            slow = replay_naive(part, s, cache=PipelineCache())
            naive = time.perf_counter() - t
            t = time.perf_counter()
            fast = replay(part, s, cache=PipelineCache())
            inc = time.perf_counter() - t
            assert fast == slow
            print(f"{k:>9,}  {naive:>8.2f}s  {inc:>10.3f}s")
            last = (k, naive)
        k, naive = last
        projected = naive * (count / k) ** 2
        print(f"naive on all {count:,} requests, projected (quadratic from {k:,}): about {projected:,.0f} s per "
              f"setting, {projected * (len(SETTINGS) + 1):,.0f} s for --compare")


if __name__ == "__main__":
    main()
