"""Stage 4 in the cached pipeline: the recorded reminders appended to their messages, remembered.

`embedded` is context_manager.embed_ephemeral for one message, once per (message, reminders)
object pair, with the spans of the appended pieces and of the reminder blocks in the new text,
and its tokens (SwarmSDK's estimate adds the suffix's figures to the body's, without a rescan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from ctxview.model import Message
from ctxview.engine.tokens import SwarmEstimate, TokenCounter
from ctxview.pipeline.builders import with_text
from ctxview.pipeline import limits

if TYPE_CHECKING:
    from ctxview.pipeline.cache import PipelineCache
    from ctxview.pipeline.row_keys import Specs



def embed_table(cache: PipelineCache, counter: TokenCounter) -> dict[int, tuple]:
    """embedded()'s table for a counter: {id(body): (body, texts, new, spans, tokens of new,
    reminder spans of new)}."""
    table = cache.embeds.get(counter.name)
    if table is None:
        table = cache.embeds[counter.name] = {}
    return table

def embedded(cache: PipelineCache, counter: TokenCounter, body: Message, texts: Sequence[str]) -> tuple:
    """(body, texts, `body` with ephemeral `texts` appended, the spans of the appended pieces, its tokens,
    the reminder blocks in its text)."""
    table = embed_table(cache, counter)
    hit = table.get(id(body))
    if hit is not None and hit[0] is body and hit[1] is texts:
        return hit
    base = body.text
    at = len(base) + 2  # where the first appended piece starts
    _, suffix, spans, found, stats = suffix_of(cache, texts)
    new = with_text(body, base + suffix)
    appended = _shifted(spans, at)
    if found is not None and "<system-reminder>" in base:
        own = cache.reminder_spans(base)
        # (an opening tag after the base's last block could close in a piece: scan the whole)
        found = None if not own or "<system-reminder>" in base[own[-1][1]:] else own + _shifted(found, at)
    elif found:
        # one tuple for both when the pieces are whole reminder blocks (the common case)
        found = appended if found == spans else _shifted(found, at)
    if found is None:
        found = cache.reminder_spans(new.text)
    if type(counter) is SwarmEstimate:  # length and code characters add up: only the base is scanned
        n, code = SwarmEstimate.text_stats(base)
        tokens = SwarmEstimate.count_stats(new.role, n + stats[0], code + stats[1])
    else:
        tokens = counter.count_message(new)
    if len(table) >= limits.ENTRIES:
        table.clear()
    hit = table[id(body)] = (body, texts, new, appended, tokens, found)
    return hit

def suffix_of(cache: PipelineCache, texts: Sequence[str]) -> tuple:
    """What `texts` append to any message, once per texts tuple: (texts, the "\n\n"-joined suffix,
    the pieces' spans and their reminder blocks (None: a block could run across pieces), both
    relative to the first piece's start, the suffix's SwarmEstimate.text_stats)."""
    # Texts of strings by value (a loader may give each message its own tuple of the same reminders:
    # 8,586 tuples of 24 texts in the 100k bench file), any other by identity (str(piece) is what counts)
    key: Any = texts if type(texts) is tuple and all(type(p) is str for p in texts) else id(texts)
    hit = cache.suffixes.get(key)
    if hit is not None and (hit[0] is texts or key is texts):
        return hit
    pieces = [piece if isinstance(piece, str) else ("" if piece is None else str(piece)) for piece in texts]
    spans, pos = [], 0
    for piece in pieces:
        spans.append((pos, pos + len(piece)))
        pos += len(piece) + 2
    suffix = "".join("\n\n" + piece for piece in pieces)
    if len(cache.suffixes) >= limits.ENTRIES:
        cache.suffixes.clear()
    hit = cache.suffixes[key] = (texts, suffix, tuple(spans), _joined_spans(pieces, cache.reminder_spans),
                                      SwarmEstimate.text_stats(suffix))
    return hit


def embed_ephemeral_into(cache: PipelineCache, counter: TokenCounter, ephemeral: dict[int, Sequence[str]], n: int,
                     current: list[Message], counts: list[int], specs: Specs,
                     removed: frozenset[int]) -> tuple[dict[int, tuple], dict[int, tuple]]:
    """Stage 4 in place: the reminders recorded for this request appended to the messages still
    sent among the first n (`ephemeral`: _ConversationData.valid_ephemeral()); returns the spans of
    the appended pieces and the reminder blocks of the new texts, by index."""
    eph_spans: dict[int, tuple] = {}
    eph_reminders: dict[int, tuple] = {}
    embeds = embed_table(cache, counter)
    for i, texts in ephemeral.items():
        if not (0 <= i < n) or i in removed:
            continue
        body = current[i]
        hit = embeds.get(id(body))  # cache.embedded inlined: most are known
        if hit is None or hit[0] is not body or hit[1] is not texts:
            hit = embedded(cache, counter, body, texts)
        current[i] = hit[2]
        eph_spans[i] = hit[3]
        tokens = hit[4]
        eph_reminders[i] = hit[5]
        specs.add(i, "ephemeral", len(texts), tokens - counts[i])
        counts[i] = tokens
    return eph_spans, eph_reminders


def _joined_spans(parts: list[str], spans_of: Callable[[str], tuple]) -> tuple | None:
    """reminders.spans("\n\n".join(parts)) from each part's spans (parts are mostly cached already: a
    message's text, a reminder), or None when a block could run from one part into the next (a part
    with an opening tag after its last block). Otherwise the blocks are the parts' own: the regex is
    non-greedy, and no tag can span the "\n\n" between parts."""
    out: list[tuple[int, int]] = []
    pos = 0
    for k, part in enumerate(parts):
        if k:
            pos += 2
        if "<system-reminder>" in part:
            found = spans_of(part)
            if not found or "<system-reminder>" in part[found[-1][1]:]:
                return None
            out.extend((start + pos, end + pos) for start, end in found)
        pos += len(part)
    return tuple(out)


def _shifted(spans: tuple, by: int) -> tuple:
    if len(spans) == 1:
        (start, end), = spans
        return ((start + by, end + by),)
    return tuple([(start + by, end + by) for start, end in spans])
