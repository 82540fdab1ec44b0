"""Conversations from the scanned entries: messages in model order, their compactions, the warnings."""

from __future__ import annotations

from typing import Any

from ctxview.model import Conversation, Message
from ctxview.formats.parsing.blocks import is_reminder_only, thinking_text
from ctxview.formats.parsing.builders import EMPTY_META, anthropic_usage, message
from ctxview.formats.parsing.linking import last_model, unlinked_warning
from ctxview.formats.claude_code.chain import chain_of, split_chains
from ctxview.formats.claude_code.compaction import compaction_spec, context_events
from ctxview.formats.claude_code.records import ASSISTANT, BOUNDARY, DATA, KIND, MICRO, O, USER
from ctxview.formats.claude_code.scan import Scan

def assistant_message(parts: list) -> Message:
    """One assistant message from its lines' data (parts[0] is the first line's origin).

    The lines of one streamed response each hold one block: texts, thinking and
    calls are joined in line order; each line repeats the response's usage, so the
    last one is final; the first model named wins.
    """
    origin = parts[0]
    mid, model, texts, thinking, calls, usage, uuid, error, ts = parts[1]
    if len(parts) > 2:
        for data in parts[2:]:  # (most lines add one block to one of the three: made anew, no copies)
            if data[2]:
                texts = (*texts, *data[2])
            if data[3]:
                thinking = (*thinking, *data[3])
            if data[4]:
                calls = (*calls, *data[4])
            if data[5] is not None:
                usage = data[5]
            if data[1] and not model:
                model = data[1]
            error = error or data[7]
    meta: dict = {"api_error": True} if error else {}
    if type(ts) is str:  # the response's first line: when the request was answered (the prompt cache's clock)
        meta["timestamp"] = ts
    if thinking:
        # the blocks as recorded, signatures included, so that an export can send them back
        meta["thinking_blocks"] = thinking if type(thinking) is tuple else tuple(thinking)
    return message("assistant", (texts[0] if len(texts) == 1 else "\n".join(texts)) if texts else "", None,
                   calls if type(calls) is tuple else tuple(calls),
                   model, None, None if usage is None else anthropic_usage(usage),
                   thinking_text(thinking) if thinking else None, False,
                   origin if type(origin) is str else "line " + str(origin), mid or uuid, meta or EMPTY_META)


def messages_of(chain: list[tuple], made: dict | None = None) -> tuple[list[Message], list[dict], int]:
    """Messages in model order (tool results named after their calls), compaction specs, unlinked count.

    `made` (a resumable scan's, kept across builds): the messages built before, by the id of the entry
    data they came from, so that a build after lines were appended makes only the new ones (the same
    Message objects for the rest, which is what the pipeline's caches go by)."""
    out: list[Any] = []            # a Message, or an assistant message's parts (a list) to join at the end
    out_append = out.append
    open_ids: dict[str, list] = {}
    names: dict[str, str] = {}
    boundaries: list[tuple[int, tuple]] = []
    summary_at: set[int] = set()
    unlinked = 0
    for e in chain:
        kind = e[KIND]
        if kind == ASSISTANT:
            data = e[DATA]
            mid = data[0]
            if mid:
                parts = open_ids.get(mid)
                if parts is None:
                    parts = open_ids[mid] = [e[O], data]
                    out_append(parts)
                else:
                    parts.append(data)
            else:
                out_append([e[O], data])
            for c in data[4]:
                names[c.id] = c.name
        elif kind == USER:
            data = e[DATA]
            origin = e[O]
            if type(origin) is not str:
                origin = "line " + str(origin)
            if made is not None:
                found = [names.get(r[0]) for r in data[0]]
                hit = made.get(id(data))
                if hit is not None and hit[0] is data and hit[1] == found:
                    unlinked += found.count(None)
                    if hit[3]:
                        summary_at.add(len(out) + len(hit[2]) - 1)
                    out.extend(hit[2])
                    continue
                start = len(out)
            unlinked += add_user(out, data, origin, names, summary_at)
            if made is not None:  # (a compact summary is the last message a line adds)
                made[id(data)] = (data, found, out[start:], len(out) > start and len(out) - 1 in summary_at)
        elif kind == BOUNDARY or kind == MICRO:
            boundaries.append((len(out), e))
    if made is None:
        messages = [m if type(m) is not list else assistant_message(m) for m in out]
    else:
        messages = [m if type(m) is not list else _made_assistant(m, made) for m in out]
    specs = [compaction_spec(index, e, messages, summary_at) for index, e in boundaries]
    return messages, specs, unlinked


def add_user(out: list, data: tuple, origin: str, names: dict[str, str], summary_at: set[int]) -> int:
    """Append the messages of a user line (its entry data) to `out`: its tool results, named after
    their calls, then its text; the number of results whose call is unknown."""
    results, text, flags, uuid = data
    unlinked = 0
    for tool_use_id, rtext, is_error in results:
        name = names.get(tool_use_id)
        if name is None:
            unlinked += 1
        out.append(message("tool", rtext, tool_use_id, (), None, name, None, None, False, origin, uuid,
                           {"is_error": True} if is_error else EMPTY_META))
    if text is not None and (text or not results):
        injected = bool(flags & 3) or is_reminder_only(text)
        if flags & 2:
            summary_at.add(len(out))
        out.append(message(role="user", content=text, injected=injected, origin=origin, id=uuid,
                           meta={"compact_summary": True} if flags & 2 else EMPTY_META))
    return unlinked


def _made_assistant(parts: list, made: dict) -> Message:
    """assistant_message(parts), or the one made before from the same lines (a response's lines may
    still be coming: a part more is another message)."""
    key = id(parts[1])
    hit = made.get(key)
    if hit is not None and len(hit[0]) == len(parts) and all(a is b for a, b in zip(hit[0], parts)):
        return hit[1]
    msg = assistant_message(parts)
    made[key] = (parts, msg)
    return msg


def conversation_of(name: str, chain: list[tuple], warnings: list[str], made: dict | None = None) -> Conversation:
    return conversation(name, *messages_of(chain, made), warnings)


def conversation(name: str, messages: list[Message], specs: list[dict], unlinked: int,
                 warnings: list[str]) -> Conversation:
    """The conversation of messages in model order and their compaction specs (messages_of's)."""
    w = unlinked_warning(name, unlinked)
    if w:
        warnings.append(w)
    events = context_events(messages, specs)
    return Conversation(name=name, messages=tuple(messages), system_prompt=None, model=last_model(messages),
                        events=tuple(events))


def build(scan: Scan, name_main: str = "main", all_main: bool = False) -> tuple[list[Conversation], list[str]]:
    warnings: list[str] = []
    main, sides = split_chains(scan.entries, all_main or not scan.sided, scan.linked)
    # Without a single parent link (hand-written files, claude-code-log's fixtures) there is
    # no chain to follow: file order is the conversation.
    linked = scan.linked
    convs = []
    if main or not sides:
        convs.append(conversation_of(name_main, chain_of(main, linked and (scan.branched or bool(sides))), warnings,
                                     scan.made))
    for gid, group in sides:
        convs.append(conversation_of(gid, chain_of(group, linked), warnings, scan.made))
    return convs, warnings


def scan_warnings(scan: Scan, name: str) -> list[str]:
    out = []
    if scan.unknown:
        total = sum(scan.unknown.values())
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(scan.unknown.items()))
        out.append(f"{name}: skipped {total} record(s) of unknown type ({kinds})")
    if scan.malformed:
        out.append(f"{name}: skipped {scan.malformed} malformed record(s) ({'; '.join(scan.malformed_notes)})")
    if scan.duplicates:
        out.append(f"{name}: dropped {scan.duplicates} repeated record(s) (same uuid)")
    return out
