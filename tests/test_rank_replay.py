"""The replay of clearing by rank (rank_replay.py) against the request-by-request replay, on
generated conversations (test_age_replay.py's: results of every length, the placeholder's own
text among them, reminders on any message): triggers, minimum savings, tools spared by name,
both kinds of counter, calibrated or not."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.analysis.prompt_cache import replay, replay_naive
from ctxview.analysis.rank_replay import by_rank
from ctxview.analysis.stepwise_replay import StepwiseReplay
from ctxview.model import Conversation, Message
from ctxview.pipeline import PipelineCache
from ctxview.settings import ClearSettings, Settings
from test_age_replay import conversations


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conv=conversations(), keep=st.integers(0, 5), trigger=st.sampled_from([0, 0, 300, 1_500, 4_000]),
       min_saving=st.sampled_from([0, 0, 50, 400, 2_000]), exclude=st.sampled_from([(), ("Read",), ("Bash", "Grep")]),
       counter=st.sampled_from(["swarm", "chars4"]), embed=st.booleans(), overhead=st.sampled_from([0, 700]),
       scale=st.sampled_from([1.0, 1.37]))
def test_the_replay_by_rank_equals_request_by_request(conv, keep, trigger, min_saving, exclude, counter, embed,
                                                      overhead, scale):
    s = Settings(clear=ClearSettings(keep=keep, trigger=trigger, min_saving=min_saving, exclude=exclude),
                 counter=counter, embed_ephemeral=embed)
    assert by_rank(StepwiseReplay(conv, s, PipelineCache(), overhead, scale))
    assert replay(conv, s, overhead=overhead, scale=scale) == replay_naive(conv, s, overhead=overhead, scale=scale)


def test_only_clearing_alone_is_replayed_by_rank():
    conv = Conversation("main", (Message("user", "u"), Message("assistant", "a")))
    clear = ClearSettings(keep=1)
    for s, expected in [(Settings(clear=clear), True), (Settings(), False),
                        (Settings(clear=clear, tiers="default"), False), (Settings(clear=clear, budget=1000), False)]:
        assert by_rank(StepwiseReplay(conv, s, PipelineCache(), 0, 1.0)) is expected
