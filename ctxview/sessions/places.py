"""Where the agents keep their sessions, and which files of a directory are worth indexing.

Claude Code: `$CLAUDE_CONFIG_DIR/projects` else `~/.claude/projects`, one folder per project
(`-home-me-src-app`), a session per `<uuid>.jsonl`. Codex: `$CODEX_HOME/sessions` else
`~/.codex/sessions`, `YYYY/MM/DD/rollout-*.jsonl`. Gemini CLI (google-gemini/gemini-cli,
packages/core/src/utils/paths.ts and config/storage.ts): `$GEMINI_CLI_HOME/.gemini` else
`~/.gemini`, then `tmp/<project>/chats/session-*.json` (older releases: one JSON document) or
`.jsonl` (newer: one record a line); `tmp/<project>/.project_root` names the project's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

__all__ = ["Place", "any_files", "any_sessions", "find_files", "known_places"]

# Folders a walk of any directory never enters: tools' own trees, and Claude Code's sub-agent
# transcripts (opened with their session, not on their own).
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "subagents", ".git", ".venv", ".hg", ".svn", ".tox"})
_SUFFIXES = (".jsonl", ".json")


class Place:
    """One known place: the agent that writes there and its root folder."""

    __slots__ = ("agent", "root")

    def __init__(self, agent: str, root: Path) -> None:
        self.agent, self.root = agent, root

    def __repr__(self) -> str:
        return f"Place({self.agent!r}, {str(self.root)!r})"

    def files(self) -> Iterator[str]:
        """The session files under this place (nothing when it does not exist)."""
        root = self.root
        if self.agent == "claude-code":
            yield from _files_in(root, depth=1)
        elif self.agent == "codex":
            yield from (p for p in _walk(str(root)) if os.path.basename(p).startswith("rollout-"))
        else:  # gemini: tmp/<project>/chats/*
            for project in _subdirs(str(root)):
                yield from _files_in(Path(project) / "chats", depth=0)


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def known_places(env: Mapping[str, str] | None = None) -> list[Place]:
    """The places the agents write to on this machine, from the environment (os.environ by default)."""
    env = os.environ if env is None else env
    home = _home(env)
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    gemini = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
    return [Place("claude-code", claude / "projects"), Place("codex", codex / "sessions"),
            Place("gemini", gemini / ".gemini" / "tmp")]


def find_files(root: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """Every candidate session file: under `root` (any directory, walked whole), else in the known places."""
    if root is not None:
        return sorted(_walk(os.path.abspath(root)))
    out: list[str] = []
    for place in known_places(env):
        out.extend(place.files())
    return out


def any_sessions(env: Mapping[str, str] | None = None) -> bool:
    """Whether a known place holds a session file (stops at the first: `ctxview` asks it at start)."""
    return any(next(place.files(), None) is not None for place in known_places(env))


def any_files(root: str | os.PathLike[str]) -> bool:
    """Whether `root` holds a candidate session file (stops at the first)."""
    return next(_walk(os.fspath(root)), None) is not None


def _subdirs(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.path for e in it if e.is_dir(follow_symlinks=False) and e.name not in _SKIP_DIRS]
    except OSError:
        return []


def _files_in(folder: Path, depth: int) -> Iterator[str]:
    """Session files in `folder` and, for depth 1, in its sub-folders (not deeper)."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.name.endswith(_SUFFIXES):
                yield entry.path
            elif depth and entry.is_dir(follow_symlinks=False) and entry.name not in _SKIP_DIRS:
                yield from _files_in(Path(entry.path), depth - 1)
        except OSError:
            continue


def _walk(root: str) -> Iterator[str]:
    """Every .json/.jsonl file under `root`, symbolic links not followed (no cycles), the skipped
    folders and hidden ones left out. A stack, not recursion (os.walk recurses in Python 3.11: a tree
    a thousand folders deep was a RecursionError); a folder that cannot be listed is passed over."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:  # unreadable, vanished, or a path too long for the system
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in _SKIP_DIRS:
                        subdirs.append(entry.path)
                elif name.endswith(_SUFFIXES) and not entry.is_dir():  # (a link to a folder: not walked)
                    yield entry.path  # (a link, a FIFO: index_file says what it is)
            except OSError:
                continue
        stack.extend(reversed(subdirs))
