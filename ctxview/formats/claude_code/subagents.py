"""Claude Code sub-agents: their own files, conversations rebuilt from the parent's progress lines, and the
Task call in the parent that started each one."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import orjson

from ctxview.model import Conversation, Usage
from ctxview.formats.parsing.blocks import anthropic_assistant
from ctxview.formats.parsing.builders import message
from ctxview.formats.parsing.json_decode import loads
from ctxview.formats.parsing.linking import last_model
from ctxview.formats.claude_code.conversation import build, scan_warnings
from ctxview.formats.claude_code.persisted import marked
from ctxview.formats.claude_code.records import origin_text
from ctxview.formats.errors import LoadError
from ctxview.formats.parsing.jsonio import open_input
from ctxview.formats.claude_code.scan import Scan, scan_lines

def subagent_files(path: Path, expected: str, lenient: bool, warnings: list[str],
                   unreadable: dict[str, str] | None = None) -> tuple[list[Conversation], int]:
    """The conversations of the sub-agent transcripts next to the parent, <dir>/<session>/subagents/agent-*.jsonl
    (each file one conversation), and how many records they skipped.

    A sub-agent file that cannot be read (a FIFO, a device, a directory, no permission, gone since the
    folder was listed) does not stop the session: it is left out with a warning naming it and why, and
    named in `unreadable` (file name -> reason). open_input stats before it opens, and opens with
    O_NONBLOCK, so a FIFO never blocks. What a readable file holds is judged as the parent's lines are
    (a malformed line is an error unless lenient)."""
    subagents: list[Conversation] = []
    skipped = 0
    sub_dir = path.with_suffix("") / "subagents"
    try:
        if not sub_dir.is_dir():
            return subagents, skipped
        subs = sorted(sub_dir.glob("agent-*.jsonl"))
    except OSError as exc:  # the folder itself cannot be listed
        _unreadable(sub_dir.name + "/", exc.strerror or type(exc).__name__, warnings, unreadable)
        return subagents, skipped
    for sub in subs:
        try:
            sub_inp = open_input(sub)
        except LoadError as err:
            if "empty" in err.message:
                warnings.append(f"{sub.name}: sub-agent file is empty")
            else:
                _unreadable(sub.name, err.message, warnings, unreadable)
            continue
        try:
            sub_scan, sub_reader = scan_lines(sub_inp, expected, lenient)
        except LoadError as err:
            if err.line is not None:  # a malformed line: what the file holds, not whether it can be read
                raise
            _unreadable(sub.name, err.message, warnings, unreadable)  # (gone or cut off while read)
            continue
        skipped += sub_reader.skipped + sub_scan.malformed + sum(sub_scan.unknown.values())
        sub_reader.warn_skipped(warnings, f"{sub.name}: ")
        warnings.extend(scan_warnings(sub_scan, sub.name))
        # the whole file is the sub-agent's side chain: one conversation
        sub_convs, sw = build(sub_scan, name_main=sub.stem, all_main=True)
        warnings.extend(sw)
        subagents.extend(marked(c, sub_scan) for c in sub_convs if c.messages)
    return subagents, skipped


def _unreadable(name: str, reason: str, warnings: list[str], unreadable: dict[str, str] | None) -> None:
    warnings.append(f"{name}: sub-agent file is unreadable ({reason}); the session opens without it")
    if unreadable is not None:
        unreadable[name] = reason


def with_subagents(scan: Scan, convs: list[Conversation], subagents: list[Conversation], path: Path | None,
                   warnings: list[str]) -> list[Conversation]:
    """The file's conversations with its sub-agents': their own files first, else rebuilt from the
    parent's progress lines; each labelled with the Task call that started it."""
    # The sub-agent's own file is the whole of it: it replaces a side chain of the same agent.
    subagents = [_final_usage(c, scan.task_answer.get(c.name[len("agent-"):])) for c in subagents]
    own = {c.name for c in subagents}
    convs = [c for c in convs if c.name not in own] + subagents
    names = {c.name for c in convs}
    for agent, items in scan.progress.items():
        if f"agent-{agent}" not in names:
            rebuilt = from_progress(agent, items, scan.task_answer.get(agent), warnings)
            if rebuilt.messages:
                convs.append(rebuilt)
    task_call, calls = scan.task_call, task_calls(convs, set(scan.task_call.values()))
    if path is not None and not task_call:
        task_call, calls = from_parent(path, [c.name[len("agent-"):] for c in convs if c.name.startswith("agent-")])
    return labelled(convs, task_call, calls)


def _final_usage(conv: Conversation, answer: tuple[str, Any, Usage | None] | None) -> Conversation:
    """A sub-agent's file records each reply as its stream began (output_tokens 1: Claude Code does
    not write the reply again when it ends), while the Task call's result in the parent records the
    last call's final usage (toolUseResult.usage). Where the file's last recorded call is that call
    (the same input, cache read and write) and recorded fewer output tokens, it takes the result's
    usage (its meta says so: usage_from); the other calls' outputs stay as recorded, which no record
    corrects. (No warning: nearly every session with sub-agents would carry one.)"""
    final = answer[2] if answer is not None else None
    last = max((i for i, m in enumerate(conv.messages) if m.usage is not None), default=None)
    if final is None or last is None:
        return conv
    u = conv.messages[last].usage
    assert u is not None
    if ((u.input_tokens, u.cache_read_tokens, u.cache_write_tokens)
            != (final.input_tokens, final.cache_read_tokens, final.cache_write_tokens)
            or u.output_tokens >= final.output_tokens):
        return conv
    messages = list(conv.messages)
    messages[last] = dataclasses.replace(messages[last], usage=final,
                                         meta={**messages[last].meta, "usage_from": "task_result"})
    return dataclasses.replace(conv, messages=tuple(messages))


def from_progress(agent: str, items: list[tuple[Any, dict]], answer: tuple[str, Any, Usage | None] | None,
                   warnings: list[str]) -> Conversation:
    """A sub-agent's conversation rebuilt from the parent's agent_progress lines, for when its
    own file is absent. Those lines carry the prompt, the tool calls and their results; the
    text of a response can be missing from them (Claude Code 2.1 sends only some lines), so
    the final answer is taken from what the Task call returned, where the parent holds it."""
    name = f"agent-{agent}"
    sub = Scan()
    sub.run([rec for _, rec in items], None, [origin for origin, _ in items])
    convs, w = build(sub, name_main=name, all_main=True)
    warnings.extend(w)
    conv = convs[0]
    messages = conv.messages
    if answer is not None and answer[0] and not (messages and messages[-1].role == "assistant"
                                                  and messages[-1].text == answer[0]):
        messages = messages + (message(role="assistant", content=answer[0], origin=origin_text(answer[1]),
                                       usage=answer[2], meta={"rebuilt_from": "task_result"}),)
    return Conversation(name=name, messages=messages, model=conv.model or last_model(messages), events=conv.events,
                        metadata={"rebuilt_from": "agent_progress"})


def task_calls(convs: list[Conversation], wanted: set[str]) -> dict[str, tuple[str, Any]]:
    """The tool calls with the wanted ids: id -> (conversation name, ToolCall)."""
    calls: dict[str, tuple[str, Any]] = {}
    if wanted:
        for conv in convs:
            if conv.name.startswith("agent-"):
                continue
            for m in conv.messages:
                for c in m.tool_calls:
                    if c.id in wanted:
                        calls[c.id] = (conv.name, c)
    return calls


def labelled(convs: list[Conversation], task_call: dict[str, str],
              calls: dict[str, tuple[str, Any]]) -> list[Conversation]:
    """Sub-agent conversations (agent-<id>) with a label, their kind, and the Task call in the
    main conversation that started them (metadata["parent_tool_call_id"]) where the file shows it."""
    out = []
    for conv in convs:
        if not conv.name.startswith("agent-"):
            out.append(conv)
            continue
        agent = conv.name[len("agent-"):]
        meta = dict(conv.metadata)
        if agent.startswith("acompact"):
            meta["kind"] = "compaction"
            meta["label"] = "compaction (writes the summary that replaces the conversation)"
        else:
            meta["kind"] = "subagent"
        call_id = task_call.get(agent)
        if call_id is not None:
            meta["parent_tool_call_id"] = call_id
            found = calls.get(call_id)
            if found is not None:
                meta["parent"] = found[0]
                args = found[1].arguments
                label = args.get("description") or args.get("subagent_type")
                if isinstance(label, str) and label and "label" not in meta:
                    meta["label"] = label
        out.append(dataclasses.replace(conv, metadata=meta))
    return out


def _parent_file(path: Path) -> Path | None:
    """<dir>/<session>.jsonl, the parent of <dir>/<session>/subagents/agent-<id>.jsonl."""
    if path.parent.name != "subagents" or not path.name.startswith("agent-"):
        return None
    parent = path.parent.parent.with_suffix(".jsonl")
    return parent if parent.is_file() else None


def _records_naming(data: bytes, needle: str) -> list[Any]:
    """The parsed lines of a JSONL text that contain `needle` (the others are not parsed)."""
    out = []
    key = needle.encode()
    at = data.find(key)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        try:
            out.append(loads(data[start:end]))
        except orjson.JSONDecodeError:
            pass
        at = data.find(key, end)
    return out


def from_parent(path: Path, agents: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, Any]]]:
    """For a sub-agent file opened alone: the Task calls that started its agents, read from the
    parent transcript next to it (only the lines naming the agent, and those naming its call)."""
    parent = _parent_file(path)
    if parent is None or not agents:
        return {}, {}
    try:
        data = parent.read_bytes()
    except OSError:
        return {}, {}
    scan = Scan()
    for agent in agents:
        scan.run(_records_naming(data, agent), "/")
    calls: dict[str, tuple[str, Any]] = {}
    for call_id in set(scan.task_call.values()):
        for rec in _records_naming(data, call_id):
            msg = rec.get("message") if type(rec) is dict and rec.get("type") == "assistant" else None
            if type(msg) is dict:
                for c in anthropic_assistant(msg.get("content"))[2]:
                    if c.id == call_id:
                        calls[call_id] = ("main", c)
    return scan.task_call, calls
