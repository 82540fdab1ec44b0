"""The prompt cache, simulated: what each request would read from and write to it.

Anthropic's rules, as ctxview models them:

- a prompt is the system prompt and tools (one block, with a breakpoint after it, as Claude
  Code sends it), then the messages, with a breakpoint on the last message (automatic
  caching); a message counts as one block;
- a request reads the longest prefix a live cache entry holds, where an entry is a previous
  prompt up to one of its breakpoints; the lookup only looks 20 blocks back from the last
  breakpoint, so a prefix more than 20 messages short of the prompt is missed (the system
  block still hits: it is a breakpoint of its own);
- it writes the rest, up to its last breakpoint, as a new entry; nothing is cached (all of it
  is plain input) when the prompt is shorter than the model's minimum cacheable length;
- an entry lives `ttl` seconds (5 minutes by default, or 1 hour) from its last use, a read
  refreshing it; the file's timestamps say how far apart requests were (without them, the
  cache is taken as warm).

`simulate(prompts, rules)` applies these rules to abstract prompts (size, prefix shared with
the previous prompt, time); `replay(conversation, settings)` builds the prompts of every
request of a conversation as prepared under `settings`, each stepped from the one before
(`stepwise_replay`: tiers, clearing and budgets; `age_replay` where what is sent depends on
each message's age alone: the tiers, or nothing; `rank_replay` where it depends on each
result's rank alone: clearing without tiers or a budget); summaries and the clearing of call arguments
are replayed request by request through `pipeline.prepare` (`replay_naive`, also the oracle
the tests hold the stepwise replay to).
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

from ctxview.engine.context_tokens import TokenUnits
from ctxview.model import Conversation, Message, request_indices
from ctxview.pipeline import PipelineCache, prepare
from ctxview.analysis.prices import CostSum, dollars
from ctxview.settings import Settings
from ctxview.analysis.age_replay import by_age, replay_by_age
from ctxview.analysis.rank_replay import by_rank, replay_by_rank
from ctxview.analysis.stepwise_replay import NotStepwise, StepwiseReplay, scaled
from ctxview.analysis.usage import seconds, timestamp_of

__all__ = ["CacheRules", "CachedRequest", "Prompt", "RequestRuns", "TTL_SECONDS", "min_cacheable_tokens", "outcome",
           "replay", "replay_fields", "replay_naive", "request_runs", "simulate"]

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
LOOKBACK_BLOCKS = 20

# The minimum cacheable prompt length by model (Anthropic's prompt-caching documentation);
# first match wins; other models: 1,024 (also OpenAI's minimum).
_MINIMUMS = (("opus-4-5", 4096), ("opus-4-6", 4096), ("haiku-4-5", 4096), ("sonnet-4-6", 2048),
             ("haiku-3", 2048), ("3-haiku", 2048), ("3-5-haiku", 2048))


def min_cacheable_tokens(model: str | None) -> int:
    name = (model or "").lower()
    for part, minimum in _MINIMUMS:
        if part in name:
            return minimum
    return 1024


@dataclass(frozen=True, slots=True)
class CacheRules:
    ttl: float = TTL_SECONDS["5m"]
    minimum: int = 1024               # tokens; see min_cacheable_tokens
    lookback: int = LOOKBACK_BLOCKS


class Prompt(NamedTuple):
    """One request's prompt, as the simulation needs it (a named tuple: a replay makes one per
    request and setting, tens of thousands)."""

    index: int                  # the assistant message the request produced
    blocks: int                 # messages sent
    tokens: int                 # all of it: system block and messages
    shared_blocks: int          # messages identical, in order, with the previous prompt's first ones
    shared_tokens: int          # tokens of the system block and those messages
    system_tokens: int          # the system block (system prompt, tools): its own breakpoint
    time: float | None = None   # seconds (POSIX), where the file recorded it


class CachedRequest(NamedTuple):
    """What one request reads from the cache, writes to it and sends as plain input (a named tuple,
    as Prompt)."""

    index: int
    read: int
    write: int
    input: int

    @property
    def total(self) -> int:
        return self.read + self.write + self.input


def simulate(prompts: Iterable[Prompt], rules: CacheRules = CacheRules(), *,
             warm: int = 0) -> list[CachedRequest]:
    """The cache's effect on each prompt, in order (see the module docstring for the rules).
    `prompts`: Prompts, or tuples of their fields. `warm`: tokens of the system block already in the
    cache before the first prompt (written by another session or the parent agent; a file does not
    say, its first recorded read does)."""
    out = []
    entries: list[list] = []  # [blocks, tokens, last used], each a prefix of the last prompt, longest last
    system_used: float | None = None
    system_cached = warm      # tokens of the system block in the cache
    ttl, minimum, lookback = rules.ttl, rules.minimum, rules.lookback
    # (a Prompt's fields unpacked: one per request and setting replayed, tens of thousands)
    for index, blocks, tokens, shared_blocks, _, system_tokens, now in prompts:
        while entries and entries[-1][0] > shared_blocks:
            entries.pop()  # no longer a prefix of what is sent
        if now is not None and entries and entries[-1][2] is not None and now - entries[-1][2] > ttl:
            entries.clear()  # the newest entry expired, and the others were used no later
        if now is not None and system_used is not None and now - system_used > ttl:
            system_cached = 0
        if tokens < minimum:
            out.append(CachedRequest(index, 0, 0, tokens))
            continue
        hit = entries[-1] if entries and entries[-1][0] >= blocks - lookback else None
        if hit is not None:
            read = hit[1]
            hit[2] = now if now is not None else hit[2]
        else:
            read = min(system_cached, system_tokens)
        out.append(CachedRequest(index, read, tokens - read, 0))
        if hit is None or hit[0] < blocks:
            entries.append([blocks, tokens, now])
        if system_tokens >= minimum:
            system_cached, system_used = system_tokens, now
    return out


def incremental(settings: Settings) -> bool:
    """Whether `replay` can step from request to request (stepwise_replay): every setting but
    summaries (the API's compaction too), the clearing of call arguments and the API's thinking
    clearing (those rewrite messages far from the change)."""
    return (settings.old_messages == "keep" and settings.compact is None
            and (settings.clear is None or not (settings.clear.clear_inputs or settings.clear.api
                                                 or settings.clear.trigger_unit != "input_tokens"))
            and (settings.clear_thinking is None or settings.clear_thinking.keep == "all"))


def replay(conversation: Conversation, settings: Settings, *, cache: PipelineCache | None = None,
           overhead: int = 0, scale: float = 1.0) -> list[Prompt]:
    """The prompt of every request of `conversation` as prepared under `settings`.

    `overhead`: tokens every request carried that the file does not store (tool definitions,
    the harness's own system prompt: the calibration's fitted constant); `scale`: the
    calibration's slope, turning ctxview's estimate into the provider's tokens. A budget, a
    clearing trigger and a minimum saving are in the provider's tokens, read through the two."""
    return list(map(Prompt._make, replay_fields(conversation, settings, cache=cache, overhead=overhead, scale=scale)))


def replay_fields(conversation: Conversation, settings: Settings, *, cache: PipelineCache | None = None,
                  overhead: int = 0, scale: float = 1.0) -> list[tuple]:
    """`replay`'s prompts as tuples of a Prompt's fields, in its order (what `simulate` and `outcome`
    read, without a Prompt made for each request of each setting)."""
    cache = cache or PipelineCache()
    if incremental(settings):
        try:
            step = StepwiseReplay(conversation, settings, cache, overhead, scale)
            return list(replay_by_age(step) if by_age(step) else replay_by_rank(step) if by_rank(step)
                        else step.run())
        except NotStepwise:
            pass  # (a call id used twice, say: see stepwise_replay)
    return replay_naive(conversation, settings, cache=cache, overhead=overhead, scale=scale)


def replay_naive(conversation: Conversation, settings: Settings, *, cache: PipelineCache | None = None,
                 overhead: int = 0, scale: float = 1.0) -> list[Prompt]:
    """`replay` by preparing each request whole and comparing it with the one before (n²)."""
    cache = cache or PipelineCache()
    out: list[Prompt] = []
    previous: tuple[Message, ...] = ()
    for r in request_indices(conversation.messages):
        view = prepare(conversation, dataclasses.replace(settings, request=r), cache=cache,
                       units=TokenUnits(overhead, scale))
        sent = view.prepared
        tokens = [row.tokens_prepared for row in view.rows if row.prepared is not None]
        shared = 0
        for a, b in zip(previous, sent):
            if a is not b and a != b:
                break
            shared += 1
        system = overhead + scaled(view.system_tokens, scale)
        msg_tokens = [scaled(t, scale) for t in tokens]
        out.append(Prompt(r, len(sent), system + sum(msg_tokens), shared, system + sum(msg_tokens[:shared]),
                          system, seconds(timestamp_of(conversation.messages[r]))))
        previous = sent
    return out


@dataclass(frozen=True, slots=True)
class Outcome:
    """A conversation's requests under one setting, summed: tokens, what the cache did, dollars."""

    requests: int
    tokens: int                 # every input token, read, written or plain
    read: int
    write: int
    input: int
    usd: object = None          # Decimal, or None when the model has no price

    @property
    def read_share(self) -> float | None:
        return self.read / self.tokens if self.tokens else None

    def to_dict(self) -> dict:
        return {"requests": self.requests, "tokens": self.tokens, "cache_read": self.read, "cache_write": self.write,
                "input": self.input, "read_share": None if self.read_share is None else round(self.read_share, 4),
                "usd": dollars(self.usd)}


def outcome(conversation: Conversation, prompts: Sequence[Prompt], simulated: Sequence[CachedRequest],
            prices, ttl: str = "5m", runs: RequestRuns | None = None) -> Outcome:
    """Sum simulated requests, priced with each request's recorded output tokens and model (prices.CostSum).
    `runs`: request_runs of the prompts' indices, where the caller keeps them for several replays."""
    usd = _priced(conversation, prompts, simulated, prices, ttl, runs) if simulated else None
    read, write, plain = sum(map(_READ, simulated)), sum(map(_WRITE, simulated)), sum(map(_INPUT, simulated))
    return Outcome(len(simulated), read + write + plain, read, write, plain, usd)


class RequestRuns(NamedTuple):
    """The messages that answered the requests at `indices` (the prompts' indices), their output
    tokens, and where each run of requests alike in model and hour of day starts among them (their
    prices are the same)."""
    indices: list[int]
    answers: list[Message]
    starts: list[int]
    outputs: list[int]


def request_runs(conversation: Conversation, indices: Sequence[int]) -> RequestRuns:
    msgs, model = conversation.messages, conversation.model
    answers = [msgs[i] for i in indices]
    starts, key = [], None
    for k, m in enumerate(answers):
        ts = timestamp_of(m)
        if (m.model_id or model, ts[:13] if ts else None) != key:
            key = (m.model_id or model, ts[:13] if ts else None)
            starts.append(k)
    return RequestRuns(list(indices), answers, starts, [m.usage.output_tokens if m.usage else 0 for m in answers])


def _priced(conversation: Conversation, prompts: Sequence[Prompt], simulated: Sequence[CachedRequest], prices,
            ttl: str, runs: RequestRuns | None = None):
    """The dollars of the requests: CostSum.add of each request's model, time and tokens. Requests
    in runs alike in model and hour are added as one call where one price tier holds the whole run
    (CostSum.add_sums; tests/test_prompt_cache.py holds this to the request-by-request sum)."""
    total = CostSum(prices, ttl)
    model = conversation.model
    if runs is None:
        runs = request_runs(conversation, [p[0] for p in prompts])   # (p.index, of a Prompt or its fields)
    answers, starts = runs.answers, runs.starts
    for lo, hi in zip(starts, [*starts[1:], len(answers)]):
        cached, first, outputs = simulated[lo:hi], answers[lo], runs.outputs[lo:hi]
        sizes = list(map(operator.add, map(operator.add, map(_READ, cached), map(_WRITE, cached)),
                         map(_INPUT, cached)))   # (CachedRequest.total, in C)
        if not total.add_sums(first.model_id or model, timestamp_of(first), (min(sizes), max(sizes)),
                              sum(map(_INPUT, cached)), sum(outputs), sum(map(_READ, cached)),
                              sum(map(_WRITE, cached))):
            for m, s, output in zip(answers[lo:hi], cached, outputs):
                total.add(m.model_id or model, timestamp_of(m), s.input, output, s.read, s.write)
    return total.usd()


_INPUT, _READ, _WRITE = (operator.attrgetter(field) for field in ("input", "read", "write"))
