"""The `ctxview` command: report, prepare, opening the app, errors and exit codes."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.cli import commands as cli
from ctxview.analysis import report_render
from ctxview.formats import DEMO_PATH
from ctxview.engine.view import Settings

READ_BODY = "\n".join(f"{n:6d}→line {n} of the file" for n in range(1, 200))


def chat(tmp_path: Path, name: str = "chat.json", *, hostile: bool = False) -> Path:
    """A small OpenAI chat-completions session with tool calls and a long Read result."""
    msgs = [{"role": "system", "content": "You are a coder."},
            {"role": "user", "content": "Fix the bug. <system-reminder>Be careful.</system-reminder>"}]
    for i in range(14):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": "Read" if not hostile else "\x1b]0;pwned\x07[bold]Read[/bold]",
                          "arguments": json.dumps({"file_path": f"/src/f{i % 3}.py"})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{i}", "content": READ_BODY})
    msgs.append({"role": "assistant", "content": "Done."})
    path = tmp_path / name
    path.write_text(json.dumps(msgs), encoding="utf-8")
    return path


def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, input=input,
                          timeout=120)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- report ---------------------------------------------------------------------------


def test_report_json_document(tmp_path):
    path = chat(tmp_path)
    out = run("report", str(path), "--tiers", "default", "--json", "--keep-recent", "4")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["format"] == "openai" and doc["source"].endswith("chat.json")
    (conv,) = doc["conversations"]
    assert set(conv) >= {"name", "messages", "tokens", "reminders", "tool_results", "bloat"}
    assert conv["messages"] == {"stored": 30, "prepared": 30}
    assert conv["tokens"]["prepared"] < conv["tokens"]["stored"]
    assert conv["tool_results"]["total"] == 14 and conv["tool_results"]["compressed"] > 0
    assert conv["tool_results"]["cleared"] == 0
    assert conv["reminders"]["stored"] > 0
    assert set(conv["bloat"]) >= {"bloated", "recommendations"}
    assert conv["settings"]["keep_recent"] == 4


def test_report_options_change_the_figures(tmp_path):
    path = chat(tmp_path)
    base = json.loads(run("report", str(path), "--tiers", "default", "--json").stdout)["conversations"][0]
    off = json.loads(run("report", str(path), "--json", "--tiers", "off").stdout)["conversations"][0]
    assert off["tokens"]["prepared"] == off["tokens"]["stored"] > base["tokens"]["prepared"]
    budget = json.loads(run("report", str(path), "--json", "--budget", "500", "--context-window", "4000").stdout)
    conv = budget["conversations"][0]
    assert conv["context"]["tokens"] <= 500 or conv["budget"]["shortfall"] > 0
    assert conv["budget"]["basis"] == conv["context"]["basis"]
    assert conv["window"]["size"] == 4000
    assert conv["changes"]["dropped"] > 0


def test_report_plain_text_when_piped(tmp_path):
    out = run("report", str(chat(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert "Messages and tokens:" in out.stdout and "Recommendations:" in out.stdout
    assert "measured on the request as sent, in the model's tokens" in " ".join(out.stdout.split())
    assert "context window 128,000" not in out.stdout  # no model in the file: window unknown
    assert "context window unknown" in out.stdout
    assert "\x1b" not in out.stdout


def test_report_on_the_bundled_demo_has_every_conversation():
    out = run("report", str(DEMO_PATH), "--json")
    doc = json.loads(out.stdout)
    assert [c["name"] for c in doc["conversations"]] == ["lead", "backend", "backend@lead"]
    lead = doc["conversations"][0]
    assert lead["window"]["size"] == 200_000 and lead["reminders"]["ephemeral"] > 0
    assert lead["calibration"]["requests"] > 0 and lead["calibration"]["factor"] > 0
    one = json.loads(run("report", str(DEMO_PATH), "--json", "--agent", "backend").stdout)
    assert [c["name"] for c in one["conversations"]] == ["backend"]


def test_report_rich_tables_keep_hostile_text_inert(tmp_path):
    from ctxview.formats import load_session
    from ctxview.analysis.report import build_report

    session = load_session(chat(tmp_path, hostile=True))
    data = build_report(session)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    report_render.render_report(data, stream)
    text = stream.getvalue()
    assert "\x07" not in text and "]0;pwned" not in text.replace("␛]0;pwned", "")
    assert "␛]0;pwned␇[bold]Read[/bold]" in text       # shown, visibly, not interpreted
    plain = io.StringIO()
    report_render.render_report(data, plain)
    assert "\x1b" not in plain.getvalue() and "␛]0;pwned␇[bold]Read[/bold]" in plain.getvalue()


# --- prepare --------------------------------------------------------------------------


def test_prepare_openai_shape_to_stdout(tmp_path):
    path = chat(tmp_path)
    out = run("prepare", str(path), "--tiers", "default", "--keep-recent", "2")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    msgs = body["messages"]
    assert msgs[0] == {"role": "system", "content": "You are a coder."}
    assert [m["role"] for m in msgs[1:4]] == ["user", "assistant", "tool"]
    call = msgs[2]["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"file_path": "/src/f0.py"}
    assert msgs[3]["tool_call_id"] == "call_0"
    assert "chars truncated for context management]" in msgs[3]["content"]
    assert "re-run the Read tool" in msgs[3]["content"]
    assert msgs[-2]["content"] == READ_BODY           # recent: untouched


def test_prepare_anthropic_shape_alternates_roles(tmp_path):
    out = run("prepare", str(chat(tmp_path)), "--shape", "anthropic")
    body = json.loads(out.stdout)
    assert body["system"] == "You are a coder."
    roles = [t["role"] for t in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:]))
    first_call = body["messages"][1]["content"][0]
    assert first_call["type"] == "tool_use" and first_call["input"] == {"file_path": "/src/f0.py"}
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "call_0"


def test_prepare_writes_atomically_and_never_touches_the_input(tmp_path):
    path = chat(tmp_path)
    before = digest(path)
    target = tmp_path / "out" / "prepared.json"
    target.parent.mkdir()
    target.write_text("old content")
    out = run("prepare", str(path), "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert json.loads(target.read_text())["messages"][0]["role"] == "system"
    assert [p.name for p in target.parent.iterdir()] == ["prepared.json"]   # no temp file left
    assert digest(path) == before
    same = run("prepare", str(path), "-o", str(path))
    assert same.returncode == 2 and "refusing to overwrite the input file" in same.stderr
    assert digest(path) == before


# --- errors and exit codes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["report", "{missing}"], 1, "missing.json"),
        (["report", "{bad}"], 1, "bad.json:1"),
        (["prepare", "{bad}"], 1, "bad.json:1"),
        (["report", "{chat}", "--keep-recent", "-3"], 2, "--keep-recent must be ≥ 0"),
        (["report", "{chat}", "--keep-recent", "many"], 2, "whole number"),
        (["report", "{chat}", "--tiers", "10:full,5:100"], 2, "ascending"),
        (["report", "{chat}", "--format", "nope"], 2, "unknown format 'nope'"),
        (["report", "{chat}", "--agent", "ghost"], 2, "no conversation named 'ghost'"),
        (["report", "{chat}", "--counter", "abacus"], 2, "unknown counter 'abacus'"),
        (["prepare", "{chat}", "--shape", "xml"], 2, "invalid choice"),
        (["report"], 2, "required: FILE"),
        (["report", "{chat}", "--format", "claude-code"], 1, "chat.json"),
    ],
)
def test_errors_are_one_line_with_the_right_status(tmp_path, args, code, needle):
    files = {"missing": str(tmp_path / "missing.json"), "chat": str(chat(tmp_path))}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    files["bad"] = str(bad)
    out = run(*(a.format(**files) for a in args))
    assert out.returncode == code, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxview: error: "), out.stderr
    assert needle in lines[0]
    assert "Traceback" not in out.stderr


def test_version_and_help():
    assert run("--version").stdout.strip().startswith("ctxview ")
    text = run("--help").stdout
    assert "ctxview report FILE" in text and "ctxview prepare FILE" in text and "-- report" in text
    assert "--json" in run("report", "--help").stdout
    assert "--shape" in run("prepare", "--help").stdout


def test_report_and_prepare_do_not_load_textual(tmp_path):
    path = chat(tmp_path)
    code = (
        "import sys, io, contextlib\n"
        "from ctxview.cli.commands import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        f"    assert main(['report', {str(path)!r}, '--json']) == 0\n"
        f"    assert main(['prepare', {str(path)!r}]) == 0\n"
        "assert 'textual' not in sys.modules, 'textual'\n"
        "assert 'rich' not in sys.modules, 'rich'\n"
        f"assert main(['report', {str(path)!r}]) == 0\n"
        "assert 'textual' not in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


# --- opening the app ----------------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch, tmp_path):
    import ctxview.tui.launch as launch

    # The files must exist: the CLI checks the file before the app takes the screen.
    monkeypatch.chdir(tmp_path)
    for name in ("s.jsonl", "s.json", "report", "prepare", "x.jsonl"):
        (tmp_path / name).write_text("{}")
    calls = []

    def fake_run_app(path, settings, agent=None, fmt=None, lenient=False, overrides=None, config=None):
        calls.append((path, settings, agent, fmt, lenient, overrides))
        return 0

    monkeypatch.setattr(launch, "run_app", fake_run_app)
    return calls


def test_open_passes_file_and_settings(opened):
    assert cli.main(["s.jsonl", "--keep-recent", "3", "--tiers", "light", "--budget", "9000",
                     "--context-window", "50000", "--agent", "lead", "--format", "claude-code", "--lenient"]) == 0
    assert opened == [("s.jsonl", Settings(keep_recent=3, tiers="light", budget=9000, context_window=50000),
                       "lead", "claude-code", True,
                       {"keep_recent": 3, "tiers": "light", "budget": 9000, "context_window": 50000})]


def test_open_passes_options_equal_to_the_defaults_as_given(opened):
    # `--keep-recent 10` must beat a file that saved keep_recent=5, though 10 is the default.
    assert cli.main(["s.json", "--keep-recent", "10"]) == 0
    assert opened[0][5] == {"keep_recent": 10}


def test_open_without_file_is_the_demo_and_dashdash_opens_a_file_named_report(opened):
    assert cli.main([]) == 0
    assert cli.main(["--", "report"]) == 0
    assert cli.main(["./prepare"]) == 0
    assert [c[0] for c in opened] == [None, "report", "./prepare"]
    assert opened[0][1] == Settings()


def test_open_reports_a_missing_tui_clearly(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_text("{}")
    monkeypatch.setitem(sys.modules, "ctxview.tui.keymap", None)  # import fails as if not installed
    assert cli.main(["x.jsonl"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ctxview: error: the inspector is not available") and err.count("\n") == 1


# --- more options ----------------------------------------------------------------------


def test_report_messages_lists_every_row(tmp_path):
    path = chat(tmp_path)
    doc = json.loads(run("report", str(path), "--tiers", "default", "--json", "--messages", "--keep-recent", "2").stdout)
    rows = doc["conversations"][0]["rows"]
    assert [r["index"] for r in rows] == list(range(30))
    first_result = rows[2]
    assert first_result["role"] == "tool" and first_result["tool"] == "Read"
    assert first_result["changes"][0]["action"] == "compressed" and first_result["changes"][0]["age"] == 28
    assert first_result["tokens_prepared"] < first_result["tokens_stored"]
    text = run("report", str(path), "--tiers", "default", "--messages").stdout
    assert "Messages:" in text and "compressed: tier" in text
    assert "rows" not in json.loads(run("report", str(path), "--json").stdout)["conversations"][0]


def test_old_messages_and_clearing_options(tmp_path):
    path = chat(tmp_path)
    body = json.loads(run("prepare", str(path), "--old-messages", "remove", "--summarize-before", "10").stdout)
    assert body["messages"][1]["content"] == "[9 earlier messages removed to save context]"
    llm = json.loads(run("prepare", str(path), "--old-messages", "llm").stdout)
    assert llm["messages"][1]["content"].startswith("[Summary of ")
    assert "Read ×" in llm["messages"][1]["content"]
    cleared = json.loads(run("prepare", str(path), "--clear-keep", "2").stdout)
    results = [m for m in cleared["messages"] if m["role"] == "tool"]
    assert [m["content"] == "[tool result cleared to save context]" for m in results] == [True] * 12 + [False] * 2
    bad = run("prepare", str(path), "--old-messages", "shred")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_write_atomic_keeps_mode_and_leaves_nothing_on_failure(tmp_path):
    import os

    from ctxview.export.bodies import write_atomic

    target = tmp_path / "out.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_atomic(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    with pytest.raises(OSError):
        write_atomic(tmp_path / "no-such-dir" / "x.json", "data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_json_output_escapes_terminal_active_characters():
    from ctxview.export.bodies import dumps

    data = {"text": "a\x1b]0;title\x07 b\x9b2J c\u202egnp.exe d\u2066 é 日本 \x7f"}
    out = dumps(data)
    assert json.loads(out) == data
    assert not any(ch in out for ch in "\x1b\x07\x9b\u202e\u2066\x7f")
    assert "é 日本" in out                     # ordinary text stays readable


def native(tmp_path: Path, settings: dict) -> Path:
    doc = json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    doc["conversations"] = doc["conversations"][:1]
    doc["conversations"][0]["settings"] = settings
    path = tmp_path / "session.ctxview.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_settings_saved_in_the_file_are_defaults_and_options_win(tmp_path):
    path = native(tmp_path, {"keep_recent": 3, "tiers": "aggressive", "clear": {"keep": 2, "exclude": ["Read"]}})
    conv = json.loads(run("report", str(path), "--json").stdout)["conversations"][0]
    assert conv["settings"]["keep_recent"] == 3 and conv["settings"]["tiers"] == "aggressive"
    assert conv["settings"]["clear"]["exclude"] == ["Read"] and conv["tool_results"]["cleared"] > 0
    over = json.loads(run("report", str(path), "--json", "--keep-recent", "7").stdout)["conversations"][0]
    assert over["settings"]["keep_recent"] == 7 and over["settings"]["tiers"] == "aggressive"


@pytest.mark.parametrize("settings", [{"keep_recent": "ten"}, {"tiers": "nonsense"}, {"old_messages": "shred"},
                                      {"clear": 5}, {"budget": -1}])
def test_bad_settings_in_the_file_are_one_line_input_errors(tmp_path, settings):
    path = native(tmp_path, settings)
    for cmd in ("report", "prepare"):
        out = run(cmd, str(path))
        assert out.returncode == 1, out.stderr
        assert out.stderr.startswith("ctxview: error: ") and out.stderr.count("\n") == 1
        assert "Traceback" not in out.stderr


@pytest.mark.parametrize("sample, shape", [
    ("claude-code/7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18.jsonl", "anthropic"),
    ("codex/rollout-2026-03-02T09-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl", "openai"),
])
def test_prepare_writes_the_sources_own_shape_by_default_as_w_does(sample, shape):
    path = Path(__file__).parents[1] / "sample_sessions" / sample
    body = json.loads(run("prepare", str(path)).stdout)
    assert ("max_tokens" in body) == (shape == "anthropic")
    assert all(m["role"] in ("user", "assistant") for m in body["messages"]) == (shape == "anthropic")


def test_the_tiers_help_lists_every_preset():
    from ctxview.tiers import PRESETS

    text = " ".join(run("prepare", "--help").stdout.split())
    assert all(name in text for name in PRESETS) and "swarm-auto" in text


# --- what the third QA round found ---------------------------------------------------


def test_jsonl_whose_first_lines_hold_a_lone_surrogate_is_read_as_lines(tmp_path):
    # "\ud800" is valid JSON (Claude Code writes it) that orjson refuses: the file is still JSONL
    base = {"sessionId": "s1", "cwd": "/p", "timestamp": "2026-01-01T00:00:01Z"}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({**base, "type": "user", "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                                        "message": {"role": "user", "content": f"{i} \ud800"}}) + "\n"
                            for i in range(2)))
    out = run("report", str(path), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["format"] == "claude-code"


def test_a_window_too_small_for_any_budget_is_reported_without_one(tmp_path):
    out = run("report", str(chat(tmp_path)), "--context-window", "1", "--json")
    assert out.returncode == 0, out.stderr
    recs = json.loads(out.stdout)["conversations"][0]["bloat"]["recommendations"]
    assert recs and not any(r["setting"].startswith("--budget") for r in recs)


def test_prepare_o_dash_writes_to_stdout(tmp_path):
    out = subprocess.run([sys.executable, "-m", "ctxview", "prepare", str(chat(tmp_path)), "-o", "-"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["messages"] and not (tmp_path / "-").exists()


def test_a_zip_on_stdin_is_named_as_one(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "log.eval", "w") as zf:
        zf.writestr("header.json", "{}")
    out = subprocess.run([sys.executable, "-m", "ctxview", "report", "-"], stdin=(tmp_path / "log.eval").open("rb"),
                         capture_output=True, timeout=120)
    assert out.returncode == 1 and out.stderr.decode() == (
        "ctxview: error: <stdin>: a zip archive (an Inspect AI .eval log?) cannot be read from standard input: "
        "give its path\n")


@pytest.mark.parametrize("typed", ["١٢", "１２", "+5", "²"])
def test_a_count_option_takes_ascii_digits_only(tmp_path, typed):
    out = run("report", str(chat(tmp_path)), "--keep-recent", typed)
    assert out.returncode == 2 and f"--keep-recent must be a whole number, not {typed!r}" in out.stderr


def test_the_bloat_parts_say_they_are_counted(tmp_path):
    # the total may be calibrated to the model's tokens; the tables of parts are the counter's
    path = chat(tmp_path)
    doc = json.loads(run("report", str(path), "--json").stdout)
    assert doc["conversations"][0]["bloat"]["parts_basis"] == "counted"
    text = run("report", str(path)).stdout
    assert "Tokens by tool (counted)" in text and "Largest messages (counted)" in text


@pytest.mark.parametrize("command", [["report"], ["prepare"], []])
def test_options_that_cannot_go_together_are_a_usage_error_before_reading(tmp_path, command):
    missing = tmp_path / "not-read.jsonl"   # (never opened: the options are refused first)
    out = run(*command, str(missing), "--api-edit", "compact", "--old-messages", "llm")
    assert out.returncode == 2 and out.stderr == ("ctxview: error: compact (the API's compaction) and old_messages "
                                                  "both replace the old messages: use one of them\n")


def test_an_image_and_tool_arguments_on_lines_with_a_lone_surrogate_export_as_on_clean_lines(tmp_path):
    # "\ud800" is valid JSON that orjson refuses: the image is read back and the arguments decoded
    from ctxview.formats.parsing.builders import arguments_from

    assert arguments_from('{"cmd": "cat a \\ud800"}') == {"cmd": "cat a \ud800"}
    base = {"sessionId": "s", "cwd": "/p", "isSidechain": False}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    lines = [
        {**base, "type": "user", "uuid": "u0", "parentUuid": None, "timestamp": "2026-03-01T12:00:00Z",
         "message": {"role": "user", "content": "go"}},
        {**base, "type": "assistant", "uuid": "a0", "parentUuid": "u0", "timestamp": "2026-03-01T12:00:01Z",
         "message": {"id": "msg_0", "role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": "x.png"}}],
             "usage": {"input_tokens": 5, "output_tokens": 5}}},
        {**base, "type": "user", "uuid": "u1", "parentUuid": "a0", "timestamp": "2026-03-01T12:00:02Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0",
                                                   "content": [{"type": "text", "text": "x \ud800"}, image]}]}},
    ]
    path = tmp_path / "img.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = run("prepare", str(path), "-o", "-")
    assert out.returncode == 0, out.stderr
    assert '"data": "iVBORw0KGgo="' in out.stdout and "image data" not in out.stderr
