"""One conversation through one set of Settings: the side-by-side view.

`prepare(conversation, settings)` returns a `PreparedView` (see view.py): one
Row per stored message pairing its stored form with the form sent at the
request, what changed and why, tokens on both sides and reminder spans, plus
rows for messages a stage inserted (a summary checkpoint or removal marker).

What it computes is `reference.prepare_reference`, in stage order:

0. the harness (harness.history_as_sent): what the harness itself sent at
   that request, from the file's records: the messages since the latest
   compaction, microcompacted results as Claude Code's placeholder, and
   SwarmSDK's one-shot compression where the log recorded it (or, as the
   `swarm-auto` what-if, where SwarmSDK's 60% rule would have run). With no
   transform settings this is the view **as sent**; every stage below is a
   ctxview **what-if** (Settings.what_if names them), run on the as-sent
   history.
1. compression: SwarmSDK's age-tiered cut of old tool results (age = n - i,
   the last keep_recent untouched): the seed's compress_tool_results under
   the chosen tiers, on the text as sent, because SwarmSDK rewrites history.
2. clearing: Anthropic-style clear_tool_uses, after compression, so that its
   token trigger and minimum saving see the already-compressed context.
3. summarising old messages (truncate / remove / llm) before an index: it
   too rewrites history, so it sees what compression and clearing left.
4. ephemeral embedding: the reminders recorded for this request appended to
   their messages ("\\n\\n"-joined, as prepare_for_llm does) among those
   still sent. SwarmSDK appends them at call time to the history as it then
   is, so they are never cut by compression or an excerpt, and vanish with a
   removed message. They come before the budget because their tokens are
   part of what must fit.
5. the token budget: oldest units dropped until the rest fits.

`cached.prepare` (exported here as `prepare`) computes the same with a
`PipelineCache` that remembers stages, counts and rows between calls; the
tests hold it equal to the reference, row by row, cold, warm and reused.
"""

from ctxview.pipeline.builders import make_row
from ctxview.pipeline.cache import PipelineCache
from ctxview.pipeline.cached import prepare, request_indices
from ctxview.pipeline.reference import prepare_reference

__all__ = ["PipelineCache", "make_row", "prepare", "prepare_reference", "request_indices"]
