"""Small hand-built sessions for the TUI tests (no loader involved)."""

from __future__ import annotations

from ctxview.model import Conversation, Message, Session, ToolCall, Usage

REMINDER = "<system-reminder>\nThe user opened file.py in the IDE.\n</system-reminder>"


def read_output(n: int, lines: int = 60) -> str:
    return "\n".join(f"{i:6d}→line {i} of file {n}: some code here = {i * n}" for i in range(1, lines + 1))


def tool_session(pairs: int = 12, name: str = "main") -> Conversation:
    """user, then (assistant tool call, tool result) pairs, then a final answer."""
    msgs = [Message("user", f"Please look at the files.\n{REMINDER}")]
    for n in range(pairs):
        call = ToolCall(id=f"call_{n}", name="Read", arguments={"file_path": f"/src/file{n}.py"})
        msgs.append(Message("assistant", f"Reading file {n}.", tool_calls=(call,), usage=Usage(1000 + 100 * n, 20)))
        msgs.append(Message("tool", read_output(n), tool_call_id=f"call_{n}", tool_name="Read"))
    msgs.append(Message("assistant", "All files read. Summary follows.", usage=Usage(9000, 50)))
    return Conversation(
        name=name,
        messages=tuple(msgs),
        model="claude-sonnet-4",
        context_window=200_000,
        ephemeral={len(msgs) - 1: ("<system-reminder>Ephemeral: 3 todos open.</system-reminder>",)},
    )


def make_session(convs: int = 1) -> Session:
    conversations = [tool_session()]
    for i in range(1, convs):
        conversations.append(tool_session(pairs=3, name=f"sub-agent-{i}"))
    return Session(format="test", source="test.json", conversations=tuple(conversations))
