"""The hostile corpus, written into a folder at test time (the repository keeps this script,
not the files: some are megabytes, some are FIFOs and sockets that git cannot hold).

    python tests/hostile/make_corpus.py DIR      # write it and list the cases

`write_corpus(folder)` writes every input and returns the cases: each a ctxview command line, what
must come out (exit status, the one error line, strict JSON on stdout), and the files that must not
change. tests/test_hostile_cli.py runs them all as subprocesses.

Classes (from the issue): "hang" (scans that were quadratic, settings that blew up), "special"
(FIFOs, devices, sockets, directories, binary stdin), "limits" (what a file or an option may ask
for), "crash" (what gave a traceback), "escape" (what reached the terminal raw or was not JSON),
"write" (where -o must not write).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Terminal-active and invisible text; MARKERS are pieces of it that must never reach a terminal raw.
PAYLOAD = ("\x1b]0;PWNED\x07 \x1b[31mred\x1b[0m \x1b[2J \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ "
           "\x9b31m \u202eevil\u202c \u2066iso\u2069 zw\u200b tag:\U000e0041\U000e0042 [bold]b[/] [@click=app.quit]q[/]")
MARKERS = ("\x1b]0;PWNED", "\x1b[31mred", "\x1b]8;;https://evil", "\x9b31m", "\u202e", "\u2066", "\u200b",
           "\U000e0041")
EVIL_NAME = "evil\x1b]0;PWNED\x07\u202eemanelif"  # a file name holding an OSC title and a bidi override

OPEN, CLOSE = "<system-reminder>", "</system-reminder>"


@dataclass
class Case:
    name: str
    cls: str                         # hang, special, limits, crash, escape, write
    args: list[str]                  # after `ctxview`; run in the corpus folder
    exit: int = 0
    error: str | None = None         # a substring of the one `ctxview: error:` line (None: success)
    stdin: str | None = None         # a file (in the folder) or a device given as standard input
    stdout: str = "any"              # "json": strict JSON; "closed": fd 1 closed; "full": /dev/full; "tty";
                                     # "broken pipe": a pipe whose reader is gone (`| head -0`)
    unchanged: tuple[str, ...] = ()  # files whose bytes (and kind) must not change
    after: str | None = None         # a named extra check in the test (see test_hostile_cli)
    notes: dict = field(default_factory=dict)


def _chat(*extra: dict, content: str = "hello") -> list[dict]:
    return [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}, *extra]


def _native(messages: list[dict], settings: dict | None = None, name: str = "main") -> dict:
    conv: dict = {"name": name, "messages": messages}
    if settings is not None:
        conv["settings"] = settings
    return {"format": "ctxview", "version": 1, "conversations": [conv]}


def _old_tool_result(content: str, recent: int = 12) -> list[dict]:
    """A Read-like tool result followed by enough turns to be old (compressed by any tier)."""
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": content}]
    for i in range(recent):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"})
    return msgs


def _cc_line(uuid: str, parent: str | None, role: str, content, **extra) -> str:
    rec = {"type": role, "uuid": uuid, "parentUuid": parent, "isSidechain": False, "sessionId": "s",
           "message": {"role": role, "content": content}, **extra}
    if role == "assistant":
        rec["message"]["id"] = f"m-{uuid}"
    return json.dumps(rec)


def write_corpus(folder: str | os.PathLike) -> list[Case]:
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)

    def put(name: str, data) -> str:
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        elif isinstance(data, str):
            p.write_text(data, encoding="utf-8", errors="surrogatepass")
        else:
            p.write_text(json.dumps(data), encoding="utf-8")
        return name

    cases: list[Case] = []
    add = cases.append
    good = put("good.json", _chat({"role": "user", "content": "more"}))

    # --- hang: scans that were quadratic, settings that blew up ---------------------------------
    openers = put("openers.ctxview.json", _native(_chat(content="x" + OPEN * 60_000)))  # 1 MB, no closer
    add(Case("60,000 reminder openers, report", "hang", ["report", openers, "--json"], stdout="json"))
    add(Case("60,000 reminder openers, prepare", "hang", ["prepare", openers], stdout="json"))
    cc = put("openers-cc.jsonl", "\n".join([
        _cc_line("u1", None, "user", OPEN * 30_000),
        _cc_line("a1", "u1", "assistant", [{"type": "text", "text": "ok"}]),
    ]) + "\n")
    add(Case("Claude Code user line of 30,000 openers", "hang", ["report", cc, "--json"], stdout="json"))
    arrow = put("newlines-arrow.json", _old_tool_result("\n" * 60_000 + "→"))
    add(Case("old tool result: 60,000 newlines then an arrow", "hang",
             ["prepare", arrow, "--tiers", "default", "--keep-recent", "2"], stdout="json"))
    add(Case("old tool result: 60,000 newlines then an arrow, report", "hang",
             ["report", arrow, "--tiers", "aggressive", "--json"], stdout="json"))
    blanks = put("blank-lines.json", _old_tool_result(" \t\r\n" * 30_000 + "12x→"))
    add(Case("old tool result: blank lines of every kind", "hang",
             ["prepare", blanks, "--tiers", "default", "--keep-recent", "2"], stdout="json"))
    many_tiers = ",".join(f"{i}:{i + 1}" for i in range(100_000))
    tiers = put("tiers-100k.ctxview.json", _native(_chat(), {"tiers": many_tiers}))
    add(Case("100,000 tiers in a file's settings", "hang", ["report", tiers], exit=1, error="tiers"))
    add(Case("100,000 tiers in a file's settings, prepare", "hang", ["prepare", tiers], exit=1, error="tiers"))
    add(Case("10,000 tiers on the command line", "hang",  # (an argument is at most 128 KiB on Linux)
             ["report", good, "--tiers", ",".join(f"{i}:{i + 1}" for i in range(10_000))], exit=2,
             error="tier spec"))
    side = put("sidechains-100k.jsonl", "\n".join(
        [_cc_line("m0", None, "user", "main")]
        + [json.dumps({"type": "user", "isSidechain": True, "agentId": f"a{i}", "uuid": f"u{i}",
                       "parentUuid": None, "message": {"role": "user", "content": "x"}}) for i in range(100_000)]
    ) + "\n")
    add(Case("100,000 side-chain agents", "hang", ["report", side, "--json"], exit=1, error="conversations",
             notes={"largest": True}))

    # --- special files: refused at once, never opened for reading -------------------------------
    fifo = "pipe.jsonl"
    os.mkfifo(d / fifo)
    add(Case("FIFO with no writer as the file", "special", ["report", fifo], exit=1, error="named pipe"))
    add(Case("FIFO with no writer, prepare", "special", ["prepare", fifo], exit=1, error="named pipe"))
    add(Case("FIFO with no writer, the inspector", "special", [fifo], exit=1, error="named pipe"))
    parent = put("with-fifo-sub.jsonl", _cc_line("u1", None, "user", "hi") + "\n"
                 + _cc_line("a1", "u1", "assistant", [{"type": "text", "text": "ok"}]) + "\n")
    (d / "with-fifo-sub" / "subagents").mkdir(parents=True)
    os.mkfifo(d / "with-fifo-sub" / "subagents" / "agent-1.jsonl")
    # the session opens; the sub-agent is named as unreadable (a warning), never waited on
    add(Case("FIFO as a Claude Code sub-agent file", "special", ["report", parent], exit=0))
    for dev in ("/dev/zero", "/dev/urandom", "/dev/null"):
        add(Case(f"{dev} as the file", "special", ["report", dev], exit=1, error="character device"))
    add(Case("/dev/zero as the file, the inspector", "special", ["/dev/zero"], exit=1, error="character device"))
    add(Case("stdin from /dev/zero", "special", ["report", "-"], exit=1, error="NUL byte", stdin="/dev/zero"))
    add(Case("stdin from /dev/urandom", "special", ["prepare", "-"], exit=1, error="<stdin>", stdin="/dev/urandom"))
    add(Case("stdin from /dev/null", "special", ["report", "-"], exit=1, error="standard input is empty",
             stdin="/dev/null"))
    (d / "adir").mkdir()
    add(Case("a directory", "special", ["report", "adir"], exit=1, error="is a directory"))
    # (the browser on a directory: one line, before the screen, when nothing in it could be a session)
    add(Case("a directory, the inspector", "special", ["adir"], exit=1, error="no session files"))
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(d / "sock"))
        sock.close()
        add(Case("a Unix socket", "special", ["report", "sock"], exit=1, error="socket"))
    except OSError:  # a path too long for AF_UNIX: the socket case is left out
        pass

    # --- limits: what a file or an option may ask for ------------------------------------------
    deep = '{"a":' * 1000 + "1" + "}" * 1000
    deep_file = put("deep-args.json", [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": deep}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"}])
    add(Case("tool arguments nested 1,000 deep, report", "limits", ["report", deep_file, "--json"], exit=1,
             error="nested deeper than"))
    add(Case("tool arguments nested 1,000 deep, prepare", "limits", ["prepare", deep_file], exit=1,
             error="nested deeper than"))
    native_deep = put("deep-args-ctxview.json", (  # (walked by the loader's own string sharing)
        '{"format":"ctxview","conversations":[{"name":"main","messages":[{"role":"user","content":"x"},'
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"Read","arguments":' + deep
        + '}]}]}]}').encode())
    add(Case("ctxview file, tool arguments nested 1,000 deep", "limits", ["report", native_deep], exit=1,
             error="nested deeper than"))
    add(Case("--context-window with 40 digits", "limits", ["report", good, "--context-window", "1" * 40],
             exit=2, error="--context-window"))
    add(Case("--keep-recent with 5,000 digits", "limits", ["prepare", good, "--keep-recent", "9" * 5000],
             exit=2, error="--keep-recent"))
    add(Case("--budget above 10^15", "limits", ["report", good, "--budget", str(10**16)], exit=2, error="--budget"))
    huge_kr = put("huge-keep-recent.ctxview.json",
                  '{"format":"ctxview","version":1,"conversations":[{"name":"m","settings":{"keep_recent":'
                  + "9" * 30 + '},"messages":[{"role":"user","content":"x"}]}]}')
    add(Case("keep_recent of 30 digits in a file", "limits", ["report", huge_kr], exit=1, error="keep_recent"))
    long_age = put("long-tier-number.ctxview.json", _native(_chat(), {"tiers": "9" * 5000 + ":100"}))
    add(Case("a tier age of 5,000 digits in a file", "limits", ["report", long_age], exit=1, error="tier"))
    add(Case("65 tiers on the command line", "limits",
             ["report", good, "--tiers", ",".join(f"{i}:{i + 1}" for i in range(65))], exit=2, error="at most 64"))

    priced = put("priced.json", _chat({"role": "assistant", "content": "ok", "model": "m1",
                                       "usage": {"input_tokens": 10**18, "output_tokens": 10}}))
    add(Case("--price of 10^27 dollars per million", "limits", ["report", priced, "--price", "m1=1e27,1,1,1"],
             exit=2, error="at most"))
    add(Case("the largest --price times 10^18 tokens, report --json", "limits",
             ["report", priced, "--price", "m1=1e15,0,0,0", "--json"], stdout="json", after="cost of 10^27"))
    add(Case("the largest --price times 10^18 tokens, report tables", "limits",
             ["report", priced, "--price", "m1=1e15,0,0,0", "--compare", "default"]))

    # --- crash: what gave a traceback -----------------------------------------------------------
    sur = put("surrogate.json", '[{"role":"user","content":"a\\ud800b \\udfff"},{"role":"assistant","content":"ok"}]')
    add(Case("lone surrogates, prepare", "crash", ["prepare", sur], stdout="json", after="replacement char"))
    add(Case("lone surrogates, report --json", "crash", ["report", sur, "--json"], stdout="json"))
    add(Case("lone surrogates, report tables", "crash", ["report", sur, "--messages"]))
    for label, exclude in (("a number", 5), ("a list of lists", [["Read"]]), ("a string", "Read")):
        f = put(f"clear-exclude-{len(cases)}.ctxview.json", _native(_chat(), {"clear": {"exclude": exclude}}))
        add(Case(f"settings clear.exclude is {label}", "crash", ["report", f], exit=1, error="clear.exclude"))
    bad_clear = put("clear-not-object.ctxview.json", _native(_chat(), {"clear": [1, 2]}))
    add(Case("settings clear is a list", "crash", ["prepare", bad_clear], exit=1, error="clear"))
    zero = put("zero-estimate.json", [{"role": "user", "content": ""},
                                      {"role": "assistant", "content": "",
                                       "usage": {"input_tokens": 100, "output_tokens": 1}}])
    add(Case("recorded usage and an estimate of zero, report", "crash", ["report", zero]))
    add(Case("recorded usage and an estimate of zero, report --json", "crash", ["report", zero, "--json"],
             stdout="json"))
    add(Case("stdout is /dev/full, report --json", "crash", ["report", good, "--json"], exit=1,
             error="standard output", stdout="full"))
    add(Case("stdout is /dev/full, prepare", "crash", ["prepare", good], exit=1, error="standard output",
             stdout="full"))
    add(Case("stdout is /dev/full, report tables", "crash", ["report", good], exit=1, error="standard output",
             stdout="full"))
    add(Case("stdout closed, report --json", "crash", ["report", good, "--json"], exit=1,
             error="standard output is closed", stdout="closed"))
    add(Case("stdout closed, report tables", "crash", ["report", good], exit=1,
             error="standard output is closed", stdout="closed"))
    add(Case("stdout closed, sessions", "crash", ["sessions", "adir"], exit=1, error="standard output is closed",
             stdout="closed"))
    add(Case("stdout a pipe closed by its reader, report tables", "crash", ["report", good, "--messages"],
             stdout="broken pipe"))
    add(Case("stdout a pipe closed by its reader, report --json", "crash", ["report", good, "--json"],
             stdout="broken pipe"))
    add(Case("stdout closed, prepare", "crash", ["prepare", good], exit=1, error="standard output is closed",
             stdout="closed", unchanged=(good,)))
    doc = json.dumps(_native(_chat()))
    two = put("two-docs.ctxview.json", doc + "\n" + doc + "\n")
    add(Case("a ctxview document followed by a second line", "crash", ["report", two], exit=1,
             error="two-docs.ctxview.json:2: unexpected content after"))
    add(Case("`ctxview -- report`, no such file", "crash", ["--", "report"], exit=1, error="report: cannot read"))
    add(Case("a bare unknown word", "crash", ["frobnicate"], exit=1, error="commands: report, prepare"))
    add(Case("an empty file, the inspector", "crash", [put("empty.json", "")], exit=1, error="empty"))

    # --- escape: terminal-active text and strict JSON -------------------------------------------
    hostile = put("hostile.json", _chat({"role": "user", "content": PAYLOAD}, content=PAYLOAD))
    add(Case("prepare to a terminal: tag characters, OSC, bidi", "escape", ["prepare", hostile], stdout="tty"))
    add(Case("prepare piped: escapes as JSON escapes", "escape", ["prepare", hostile], stdout="json"))
    add(Case("report tables on a terminal", "escape", ["report", hostile, "--messages"], stdout="tty"))
    add(Case("report tables piped", "escape", ["report", hostile, "--messages"]))
    named = put(EVIL_NAME + ".json", _chat())
    add(Case("prepare -o a name with OSC and bidi: the 'wrote' line", "escape",
             ["prepare", good, "-o", EVIL_NAME + ".out.json"], after="wrote evil name"))
    add(Case("an error naming a file with OSC and bidi", "escape", ["report", EVIL_NAME + ".missing"], exit=1,
             error="cannot read"))
    add(Case("a report on a file with OSC and bidi in its name", "escape", ["report", named]))
    add(Case("the inspector on a missing file with OSC in its name", "escape", [EVIL_NAME], exit=1,
             error="cannot read"))
    nan = put("nan.ctxview.json",  # Python's json reads NaN (the loader falls back to it for the surrogate)
              '{"format":"ctxview","version":1,"conversations":[{"name":"m","messages":['
              '{"role":"user","content":"x\\ud800"},{"role":"assistant","content":"ok","tool_calls":[{"id":"c",'
              '"name":"Read","arguments":{"a":NaN,"b":Infinity,"c":-Infinity,"d":[NaN]}}]},'
              '{"role":"tool","tool_call_id":"c","content":"r"}]}]}')
    add(Case("NaN and infinities in a session, prepare", "escape", ["prepare", nan], stdout="json",
             after="nan as null"))
    add(Case("NaN and infinities in a session, anthropic shape", "escape", ["prepare", nan, "--shape", "anthropic"],
             stdout="json", after="nan as null"))
    add(Case("NaN and infinities in a session, report --json", "escape", ["report", nan, "--json"],
             stdout="json"))

    # --- write: where -o must not write ---------------------------------------------------------
    target = put("link-target.json", "old")
    os.symlink("link-target.json", d / "link.json")
    add(Case("-o a symbolic link", "write", ["prepare", good, "-o", "link.json"], exit=2, error="symbolic link",
             unchanged=("link.json", target)))
    add(Case("-o a symbolic link with --follow-symlink", "write",
             ["prepare", good, "-o", "link.json", "--follow-symlink"], after="link target written"))
    add(Case("-o /dev/null", "write", ["prepare", good, "-o", "/dev/null"], exit=2, error="character device",
             after="dev null intact"))
    out_fifo = "out.fifo"
    os.mkfifo(d / out_fifo)
    add(Case("-o a FIFO", "write", ["prepare", good, "-o", out_fifo], exit=2, error="named pipe",
             after="fifo intact"))
    add(Case("-o a directory", "write", ["prepare", good, "-o", "adir"], exit=2, error="directory"))
    add(Case("-o the input", "write", ["prepare", good, "-o", good], exit=2, error="input", unchanged=(good,)))
    add(Case("-o the input by another path", "write", ["prepare", good, "-o", f"./adir/../{good}"], exit=2,
             error="input", unchanged=(good,)))
    os.link(d / good, d / "hardlink.json")
    add(Case("-o a hard link of the input", "write", ["prepare", good, "-o", "hardlink.json"], exit=2,
             error="input", unchanged=(good,)))
    os.symlink(good, d / "link-to-input.json")
    add(Case("-o a link to the input, followed", "write",
             ["prepare", good, "-o", "link-to-input.json", "--follow-symlink"], exit=2, error="input",
             unchanged=(good,)))
    add(Case("prepare - -o FILE with stdin from FILE", "write", ["prepare", "-", "-o", good], exit=2,
             error="standard input is read from", stdin=good, unchanged=(good,)))
    add(Case("prepare - -o a link to stdin's file, followed", "write",
             ["prepare", "-", "-o", "link-to-input.json", "--follow-symlink"], exit=2, error="standard input",
             stdin=good, unchanged=(good,)))
    put("stale-target.json", "old")
    kill_mid_write(d / "stale-target.json")  # a real leftover: the folder of a write killed before its rename
    add(Case("a temporary file left by a killed write is removed", "write",
             ["prepare", good, "-o", "stale-target.json"], after="stale temp removed"))
    # Named like a leftover of a dead writer, but no folder of ctxview's: the input, never removed.
    look_alike = put(f".out-b.json.k1ll3d.{dead_pid()}.ctxview-tmp", _chat())
    add(Case("the input named like a dead writer's temporary file", "write",
             ["prepare", look_alike, "-o", "out-b.json"], unchanged=(look_alike,)))
    # A real leftover whose half-written file is given as the input: kept, being the input.
    kill_mid_write(d / "out-c.json", _chat())
    (left,) = d.glob(".out-c.json.*.ctxview-tmp")
    half = str((left / "data" if left.is_dir() else left).relative_to(d))  # (a file alone: before the folders)
    add(Case("the input is the half-written file of a killed write", "write",
             ["prepare", half, "-o", "out-c.json"], unchanged=(half,)))
    add(Case("-o a folder that does not exist, with a trailing slash", "write",
             ["prepare", good, "-o", "newdir/"], exit=2, error="newdir/", after="no newdir"))
    add(Case("-o a 245-character file name", "write", ["prepare", good, "-o", LONG_NAME], after="long name written"))
    return cases


LONG_NAME = "n" * 240 + ".json"  # NAME_MAX is 255 bytes: the name fits, a temporary name built on it must too


def dead_pid() -> int:
    """The PID of a process that has ended (its number not yet reused, as near as can be had)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return dead.pid


_KILLED_WRITE = """
import os, signal, sys
import ctxview.atomic as atomic

def fsync(fd):  # the moment the temporary file is written and not yet renamed
    os.kill(os.getpid(), signal.SIGKILL)

atomic.os.fsync = fsync
atomic.write_atomic(sys.argv[1], sys.argv[2])
"""


def kill_mid_write(target: Path, data=None) -> None:
    """Leave what a ctxview write killed outright (SIGKILL) leaves next to `target`."""
    text = json.dumps(data if data is not None else {"half": "a file"})
    proc = subprocess.run([sys.executable, "-c", _KILLED_WRITE, str(target), text], capture_output=True)
    if proc.returncode != -9:
        raise RuntimeError(f"the write to be killed ended otherwise: {proc.returncode} {proc.stderr[-500:]!r}")


def corpus_size(folder: str | os.PathLike) -> int:
    """Bytes of the regular files the corpus wrote."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink())


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
    if out.exists():
        shutil.rmtree(out)
    written = write_corpus(out)
    by_class: dict[str, int] = {}
    for case in written:
        by_class[case.cls] = by_class.get(case.cls, 0) + 1
    print(f"{len(written)} cases in {out} ({corpus_size(out):,} bytes): "
          + ", ".join(f"{k} {v}" for k, v in by_class.items()))
