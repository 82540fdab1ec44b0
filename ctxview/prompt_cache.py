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
request of a conversation as prepared under `settings`. For the age-tiered settings (tiers,
keep_recent, swarm-auto, as sent) it is incremental: between two requests a tool result
changes only where its age crosses a tier boundary, so each request touches the results
that just crossed one, and a Fenwick tree gives the tokens of the shared prefix. Clearing
(clear=N, trigger, min_saving) is incremental too: the old results are a prefix of the results
that only grows, and Fenwick trees of their savings and of the context's tokens decide its
trigger and minimum saving. Clearing by tool name (exclude) or of call arguments
(clear_inputs), summaries and budgets read the whole context and are replayed request by
request through `pipeline.prepare` (`replay_naive`, also the oracle the tests hold the fast
path to).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Sequence

from .compression import _plan, compress_tool_message
from .context_manager import embed_ephemeral
from .harness import history_as_sent
from .model import Conversation, Message, request_indices
from .pipeline import PipelineCache, prepare
from .pipeline.sent_history import events_for
from .settings import Settings
from .usage import timestamp_of

__all__ = ["CacheRules", "CachedRequest", "Prompt", "TTL_SECONDS", "min_cacheable_tokens", "replay",
           "replay_naive", "simulate"]

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


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's prompt, as the simulation needs it."""

    index: int                  # the assistant message the request produced
    blocks: int                 # messages sent
    tokens: int                 # all of it: system block and messages
    shared_blocks: int          # messages identical, in order, with the previous prompt's first ones
    shared_tokens: int          # tokens of the system block and those messages
    system_tokens: int          # the system block (system prompt, tools): its own breakpoint
    time: float | None = None   # seconds (POSIX), where the file recorded it


@dataclass(frozen=True, slots=True)
class CachedRequest:
    """What one request reads from the cache, writes to it and sends as plain input."""

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
    `warm`: tokens of the system block already in the cache before the first prompt (written by
    another session or the parent agent; a file does not say, its first recorded read does)."""
    out = []
    entries: list[list] = []  # [blocks, tokens, last used], each a prefix of the last prompt, longest last
    system_used: float | None = None
    system_cached = warm      # tokens of the system block in the cache
    for p in prompts:
        while entries and entries[-1][0] > p.shared_blocks:
            entries.pop()  # no longer a prefix of what is sent
        now = p.time
        if now is not None and entries and entries[-1][2] is not None and now - entries[-1][2] > rules.ttl:
            entries.clear()  # the newest entry expired, and the others were used no later
        if now is not None and system_used is not None and now - system_used > rules.ttl:
            system_cached = 0
        if p.tokens < rules.minimum:
            out.append(CachedRequest(p.index, 0, 0, p.tokens))
            continue
        hit = entries[-1] if entries and entries[-1][0] >= p.blocks - rules.lookback else None
        if hit is not None:
            read = hit[1]
            hit[2] = now if now is not None else hit[2]
        else:
            read = min(system_cached, p.system_tokens)
        out.append(CachedRequest(p.index, read, p.tokens - read, 0))
        if hit is None or hit[0] < p.blocks:
            entries.append([p.blocks, p.tokens, now])
        if p.system_tokens >= rules.minimum:
            system_cached, system_used = p.system_tokens, now
    return out


def _seconds(timestamp: str | None) -> float | None:
    if not timestamp:
        return None
    try:
        t = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _scale(tokens: int, scale: float) -> int:
    return round(tokens * scale)


class _Fenwick:
    """Prefix sums of a list that changes in place."""

    def __init__(self, values: Sequence[int]) -> None:
        n = len(values)
        tree = [0] * (n + 1)
        for i, v in enumerate(values, 1):
            tree[i] += v
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self.tree = tree

    def append(self, value: int) -> None:
        tree = self.tree
        i = len(tree)
        # the new node covers (i - lowbit(i), i]: its value plus the nodes that end inside that range
        total, j, stop = value, i - 1, i - (i & -i)
        while j > stop:
            total += tree[j]
            j -= j & -j
        tree.append(total)

    def add(self, position: int, delta: int) -> None:
        i, n, tree = position + 1, len(self.tree) - 1, self.tree
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        total, i, tree = 0, count, self.tree
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total


def incremental(settings: Settings) -> bool:
    """Whether `replay` can step from request to request: age-tiered rewrites, and clearing that
    needs no tool names or call arguments (those read the calls of the whole window)."""
    clear = settings.clear
    return (settings.old_messages == "keep" and settings.budget is None
            and (clear is None or (not clear.exclude and not clear.clear_inputs)))


def replay(conversation: Conversation, settings: Settings, *, cache: PipelineCache | None = None,
           overhead: int = 0, scale: float = 1.0) -> list[Prompt]:
    """The prompt of every request of `conversation` as prepared under `settings`.

    `overhead`: tokens every request carried that the file does not store (tool definitions,
    the harness's own system prompt: the calibration's fitted constant); `scale`: the
    calibration's slope, turning ctxview's estimate into the provider's tokens."""
    if not incremental(settings):
        return replay_naive(conversation, settings, cache=cache, overhead=overhead, scale=scale)
    return _Replay(conversation, settings, cache or PipelineCache(), overhead, scale).run()


def replay_naive(conversation: Conversation, settings: Settings, *, cache: PipelineCache | None = None,
                 overhead: int = 0, scale: float = 1.0) -> list[Prompt]:
    """`replay` by preparing each request whole and comparing it with the one before (n²)."""
    cache = cache or PipelineCache()
    out: list[Prompt] = []
    previous: tuple[Message, ...] = ()
    for r in request_indices(conversation.messages):
        view = prepare(conversation, dataclasses.replace(settings, request=r), cache=cache)
        sent = view.prepared
        tokens = [row.tokens_prepared for row in view.rows if row.prepared is not None]
        shared = 0
        for a, b in zip(previous, sent):
            if a is not b and a != b:
                break
            shared += 1
        system = overhead + _scale(view.system_tokens, scale)
        msg_tokens = [_scale(t, scale) for t in tokens]
        out.append(Prompt(r, len(sent), system + sum(msg_tokens), shared, system + sum(msg_tokens[:shared]),
                          system, _seconds(timestamp_of(conversation.messages[r]))))
        previous = sent
    return out


class _Replay:
    """The incremental replay: per stored position, the limit its tool result is cut to (None: sent
    whole), whether clearing blanked it, its tokens before clearing (clearing's trigger and saving
    read those) and as sent, updated where a result's age crosses a boundary or it becomes old
    enough to clear."""

    def __init__(self, conversation: Conversation, settings: Settings, cache: PipelineCache, overhead: int,
                 scale: float) -> None:
        self.conversation, self.settings, self.cache, self.scale = conversation, settings, cache, scale
        self.counter = counter = cache.counter(conversation, settings.counter)
        data = cache.data(conversation)
        self.system = overhead + _scale(cache.system_tokens(data, counter), scale)
        self.events = events_for(cache, conversation, settings, counter)
        policy = cache.policy(settings)
        self.policy = policy if settings.compression and policy.enabled else None
        self.plan = _plan(policy) if self.policy is not None else None
        self.keep = settings.keep_recent
        ages = {t.max_age for t in policy.tiers if t.max_age is not None} if self.policy is not None else set()
        self.boundaries = sorted(a for a in ages | {self.keep} if a >= self.keep) if self.policy is not None else []
        self.names = data.names
        self.ephemeral = data.valid_ephemeral() if settings.embed_ephemeral else {}
        self.clear = settings.clear
        self.lengths: dict[int, int] = {}

    # -- one position
    def _limit(self, i: int, n: int, msg: Message) -> int | None:
        age = n - i
        if self.plan is None or age <= self.keep or msg.role != "tool":
            return None
        limit = self.plan.limit(age)
        if limit is None:
            return None
        length = self.lengths.get(id(msg))
        if length is None:
            length = self.lengths[id(msg)] = len(msg.text)
        return None if length <= limit else limit

    def _compressed(self, i: int, n: int, msg: Message, limit: int | None) -> Message:
        if limit is None:
            return msg
        return compress_tool_message(msg, n - i, self.policy,
                                     self.names.get(msg.tool_call_id) if msg.tool_call_id else None)

    def _sent_tokens(self, i: int, msg: Message) -> int:
        texts = self.ephemeral.get(i)
        if texts is not None:
            msg = embed_ephemeral([msg], {0: texts})[0]
        return _scale(self.cache.count(self.counter, msg), self.scale)

    # -- the requests
    def run(self) -> list[Prompt]:
        conv, clear, cache, counter = self.conversation, self.clear, self.cache, self.counter
        msgs = conv.messages
        events = self.events
        out: list[Prompt] = []
        epoch = -1
        start = 0
        base: Sequence[Message] = ()
        # by stored index - start: the compressed message, its limit, its tokens before clearing,
        # whether clearing blanked it, its tokens as sent
        comp: list[Message] = []
        limits: list[int | None] = []
        counts: list[int] = []
        cleared: list[bool] = []
        toks: list[int] = []
        tree = _Fenwick([])
        saving = _Fenwick([])      # by position: what blanking a clearable result saves
        clearable = _Fenwick([])   # by position: 1 for a clearable result
        results: list[int] = []    # positions of tool results, in order
        total = 0
        active, old = False, 0     # clearing at the last request: on, and how many results were old
        n_prev = 0

        def state(j: int) -> object:
            return "cleared" if cleared[j] else limits[j]

        def measure(j: int, i: int) -> tuple[int, int, int]:
            """(tokens before clearing, saving if cleared, clearable) of position j."""
            m = comp[j]
            c = cache.count(counter, m)
            if clear is None or m.role != "tool" or m.text == clear.placeholder:
                return c, 0, 0
            return c, c - cache.count_cleared(counter, cache.blanked(m, clear.placeholder)), 1

        def sent_tokens(j: int, i: int) -> int:
            m = comp[j]
            if cleared[j]:
                m = cache.blanked(m, clear.placeholder)
            return self._sent_tokens(i, m)

        for r in request_indices(msgs):
            n = r
            applied = sum(1 for e in events if e.index <= n)
            change = n_prev
            rebuilt = applied != epoch
            if rebuilt:
                old_start, old_base = start, base
                old_states = [state(j) for j in range(len(limits))]
                sent = history_as_sent(conv, len(msgs), events[:applied])
                start, base, epoch = sent.start, sent.messages, applied
                comp, limits, counts, cleared, toks, results = [], [], [], [], [], []
                tree, saving, clearable = _Fenwick([]), _Fenwick([]), _Fenwick([])
                total, active, old, first = 0, False, 0, start
            else:
                first = n_prev
                for b in self.boundaries:  # results whose age went past b since the last request
                    for i in range(max(start, n_prev - b), min(n - b, n_prev)):
                        j = i - start
                        new = self._limit(i, n, base[j])
                        if new != limits[j]:
                            limits[j] = new
                            comp[j] = self._compressed(i, n, base[j], new)
                            c, s, k = measure(j, i)
                            total += c - counts[j]
                            counts[j] = c
                            saving.add(j, s - (saving.prefix(j + 1) - saving.prefix(j)))
                            clearable.add(j, k - (clearable.prefix(j + 1) - clearable.prefix(j)))
                            if not cleared[j] or not k:
                                cleared[j] = False
                                t = sent_tokens(j, i)
                                tree.add(j, t - toks[j])
                                toks[j] = t
                                change = min(change, i)
            for i in range(first, n):
                j = i - start
                limit = self._limit(i, n, base[j])
                limits.append(limit)
                comp.append(self._compressed(i, n, base[j], limit))
                cleared.append(False)
                c, s, k = measure(j, i)
                counts.append(c)
                total += c
                saving.append(s)
                clearable.append(k)
                t = sent_tokens(j, i)
                toks.append(t)
                tree.append(t)
                if base[j].role == "tool":
                    results.append(j)
            if clear is not None:
                # plan_clearing: all but the `keep` newest results, once over the trigger, if it saves enough
                now_old = max(len(results) - clear.keep, 0)
                bound = results[now_old - 1] + 1 if now_old else 0
                now_active = ((not clear.trigger or total > clear.trigger) and clearable.prefix(bound) > 0
                              and saving.prefix(bound) >= clear.min_saving)
                if now_active and active:
                    todo = results[old:now_old]
                elif now_active != active:
                    todo = results[:max(old, now_old)]
                else:
                    todo = []
                for k, j in enumerate(todo, old if (now_active and active) else 0):
                    want = now_active and k < now_old and clearable.prefix(j + 1) - clearable.prefix(j) == 1
                    if want != cleared[j]:
                        cleared[j] = want
                        t = sent_tokens(j, start + j)
                        tree.add(j, t - toks[j])
                        toks[j] = t
                        change = min(change, start + j)
                active, old = now_active, now_old
            if rebuilt:
                shared = 0
                if start == old_start:
                    top = min(n_prev, n) - start
                    while shared < top and old_base[shared] is base[shared] and old_states[shared] == state(shared):
                        shared += 1
            else:
                shared = max(change - start, 0)
            blocks = n - start
            out.append(Prompt(r, blocks, self.system + tree.prefix(blocks), shared, self.system + tree.prefix(shared),
                              self.system, _seconds(timestamp_of(msgs[r]))))
            n_prev = n
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
                "usd": None if self.usd is None else float(round(self.usd, 6))}


def outcome(conversation: Conversation, prompts: Sequence[Prompt], simulated: Sequence[CachedRequest],
            prices, ttl: str = "5m") -> Outcome:
    """Sum simulated requests, priced with each request's recorded output tokens and model."""
    from .model import Usage  # (the values; prices is any PriceTable)

    msgs = conversation.messages
    usd = None
    priced = True
    for p, s in zip(prompts, simulated):
        m = msgs[p.index]
        cost = prices.cost(Usage(s.input, m.usage.output_tokens if m.usage else 0, s.read, s.write),
                           m.model_id or conversation.model, timestamp_of(m), ttl)
        if cost is None:
            priced = False
        else:
            usd = cost if usd is None else usd + cost
    return Outcome(len(simulated), sum(s.total for s in simulated), sum(s.read for s in simulated),
                   sum(s.write for s in simulated), sum(s.input for s in simulated), usd if priced else None)
