"""The cached pipeline equals the reference pipeline (the specification), row by row.

`prepare` with a cold cache, a warm one and one reused in another order must
give exactly `prepare_reference`'s view, on generated conversations (with
compactions, microcompactions and SwarmSDK compressions recorded) and on
every bundled sample under a grid of settings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.formats import load_session
from ctxview.model import ContextEvent, Conversation, Message, ToolCall, Usage
from ctxview.pipeline import PipelineCache, prepare, prepare_reference
from ctxview.settings import ClearSettings, Settings
from ctxview.engine.tokens import CharsCounter, SwarmEstimate

ROOT = Path(__file__).resolve().parents[1]
REMINDER = "<system-reminder>Keep the todo list current.</system-reminder>"


def assert_same_view(got, want) -> None:
    """got == want, failing on the first field or row that differs (with what differs)."""
    for f in dataclasses.fields(want):
        a, b = getattr(got, f.name), getattr(want, f.name)
        if f.name == "rows":
            a = list(a)
            assert len(a) == len(b), f"{len(a)} rows, the reference has {len(b)}"
            for k, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    diff = [g.name for g in dataclasses.fields(y) if getattr(x, g.name) != getattr(y, g.name)]
                    raise AssertionError(f"row {k} (#{y.index}) differs in {diff}: {x!r} != {y!r}")
        else:
            assert a == b, f"{f.name}: {a!r} != {b!r}"
    assert got == want


# --- generated conversations, with the rewrites a harness records ---------------------------------

BODIES = ["\n".join(f"{n:6d}→code line {n}" for n in range(1, 90)), "Found 4 matches in 2 files\n" + "a.py:1\n" * 60,
          "ok\n" * 70, "short", "x" * 1500 + REMINDER]


@st.composite
def conversations(draw) -> Conversation:
    steps = draw(st.integers(1, 45))
    msgs: list[Message] = [Message("user", "Fix the parser. " + REMINDER)]
    for i in range(steps):
        name = draw(st.sampled_from(["Read", "Grep", "Bash", "Task"]))
        usage = Usage(input_tokens=100 * (i + 1)) if draw(st.booleans()) else None
        msgs.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", name, {"n": i}),), usage=usage))
        policy = draw(st.sampled_from([None, None, {"mode": "bytes", "limit": 300}, {"mode": "tokens", "limit": 50}]))
        msgs.append(Message("tool", draw(st.sampled_from(BODIES)), tool_call_id=f"c{i}",
                            tool_name=name if draw(st.booleans()) else None,
                            meta={} if policy is None else {"truncation_policy": policy}))
        if draw(st.integers(0, 6)) == 0:
            msgs.append(Message("user", f"next {i} {REMINDER}" if draw(st.booleans()) else f"next {i}"))
    msgs.append(Message("assistant", "All done."))
    n = len(msgs)
    events = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["compaction", "microcompaction", "compression"]))
        index = draw(st.integers(0, n))
        if kind == "compaction":
            events.append(ContextEvent("compaction", index, trigger=draw(st.sampled_from([None, "auto", "manual"])),
                                       tokens_before=draw(st.none() | st.integers(0, 200_000))))
        elif kind == "microcompaction":
            ids = draw(st.lists(st.sampled_from([f"c{i}" for i in range(steps)]), max_size=6))
            events.append(ContextEvent("microcompaction", index, meta={"tool_ids": ids}))
        else:
            events.append(ContextEvent("compression", index, meta={"keep_recent": draw(st.sampled_from([10, 2, 0]))}))
    ephemeral = {i: (draw(st.sampled_from(["E", REMINDER, "<system-reminder>x"])),)
                 for i in draw(st.lists(st.integers(0, n + 2), max_size=4))}
    tools = draw(st.sampled_from([None, [{"name": "Read", "input_schema": {"type": "object"}}]]))
    return Conversation("main", tuple(msgs), system_prompt=draw(st.none() | st.just("You are a coder.")),
                        model="claude-sonnet-4-5", ephemeral=ephemeral, events=tuple(events),
                        metadata={} if tools is None else {"tools": tools},
                        context_window=draw(st.sampled_from([None, 3_000, 8_000, 12_000])))


@st.composite
def settings_for(draw, conv: Conversation) -> Settings:
    requests = [i for i, m in enumerate(conv.messages) if m.role == "assistant"]
    return Settings(
        keep_recent=draw(st.integers(0, 30)),
        tiers=draw(st.sampled_from(["off", "off", "default", "light", "aggressive", "swarm-auto",
                                    "5:full,15:300,*:50"])),
        compression=draw(st.booleans()),
        tool_name_from=draw(st.sampled_from(["content", "tool_call"])),
        clear=draw(st.none() | st.builds(ClearSettings, keep=st.integers(0, 5), clear_inputs=st.booleans(),
                                         exclude=st.sampled_from([(), ("Read",)]),
                                         min_saving=st.sampled_from([0, 300]))),
        old_messages=draw(st.sampled_from(["keep", "keep", "truncate", "remove", "llm"])),
        summarize_before=draw(st.none() | st.integers(0, 60)),
        budget=draw(st.none() | st.integers(1, 20_000)),
        embed_ephemeral=draw(st.booleans()),
        request=draw(st.none() | st.sampled_from(requests)),
    )


@st.composite
def cases(draw):
    conv = draw(conversations())
    return conv, draw(st.lists(settings_for(conv), min_size=1, max_size=5))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(), st.sampled_from([SwarmEstimate(), CharsCounter()]))
def test_prepare_equals_the_reference_cold_warm_and_reused(case, counter):
    conv, sequence = case
    cache = PipelineCache()
    wanted = [prepare_reference(conv, s, counter=counter) for s in sequence]
    for s, want in zip(sequence, wanted):
        assert_same_view(prepare(conv, s, counter=counter), want)               # cold
        assert_same_view(prepare(conv, s, counter=counter, cache=cache), want)  # warm
    for s, want in reversed(list(zip(sequence, wanted))):                       # reused, in another order
        assert_same_view(prepare(conv, s, counter=counter, cache=cache), want)


# --- every bundled sample under a grid of settings -------------------------------------------

SAMPLES = [*sorted((ROOT / "sample_sessions").glob("*.json*")), *sorted((ROOT / "sample_sessions").glob("*/*.jsonl"))]
GRID = [
    Settings(),
    Settings(tiers="default"),
    Settings(tiers="aggressive", keep_recent=3),
    Settings(tiers="swarm-auto", context_window=20_000),
    Settings(clear=ClearSettings(keep=2, exclude=("Read",))),
    Settings(old_messages="remove"),
    Settings(old_messages="truncate", summarize_before=30),
    Settings(old_messages="llm", tiers="light"),
    Settings(budget=5_000),
    Settings(tiers="default", budget=8_000, clear=ClearSettings(keep=1, clear_inputs=True)),
    Settings(embed_ephemeral=False, tiers="default", keep_recent=0),
]


def test_the_samples_hold_compactions():  # (else the grid below would not test stage 0)
    kinds = {e.kind for path in SAMPLES for c in load_session(path).conversations for e in c.events}
    assert "compaction" in kinds


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_prepare_equals_the_reference_on_the_samples(path):
    session = load_session(path)
    cache = PipelineCache()
    for conv in session.conversations:
        requests = [i for i, m in enumerate(conv.messages) if m.role == "assistant"]
        picks = [None, *(requests[k] for k in {0, len(requests) // 2, len(requests) - 1} if requests)]
        runs = [dataclasses.replace(s, request=r) for s in GRID for r in picks]
        wanted = [prepare_reference(conv, s) for s in runs]
        for s, want in zip(runs, wanted):
            assert_same_view(prepare(conv, s, cache=cache), want)
        for s, want in zip(reversed(runs), reversed(wanted)):
            assert_same_view(prepare(conv, s, cache=cache), want)
