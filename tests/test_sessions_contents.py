"""What the browser reads of each session whole (sessions/contents.py): its text, searched through
SQLite FTS5, and its recorded usage priced and summed by project and by day; the columns fitted
to the width and the sort orders (sessions/columns.py); `ctxview sessions --search/--by`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.sessions import build_index
from ctxview.sessions.columns import COLUMNS, fit_cell, fit_columns, fit_total_columns, sort_rows, table
from ctxview.sessions.contents import CONTENTS_VERSION, Contents, contents_path, fts_query, open_contents
from ctxview.sessions.index import SessionRow

SONNET = "claude-sonnet-4-5-20250929"


def _claude(home: Path, project: str, name: str, turns: list[tuple[str, str, str, int, int]]) -> Path:
    """A Claude Code file: per turn (day, the user's words, the reply, input tokens, output tokens)."""
    path = home / ".claude" / "projects" / project.replace("/", "-") / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines, parent = [], None
    for k, (day, asks, says, tokens_in, tokens_out) in enumerate(turns):
        base = {"sessionId": name, "cwd": project, "version": "2.0.50", "isSidechain": False}
        lines.append({**base, "type": "user", "uuid": f"u{k}", "parentUuid": parent, "timestamp": f"{day}T10:00:00.000Z",
                      "message": {"role": "user", "content": asks}})
        lines.append({**base, "type": "assistant", "uuid": f"a{k}", "parentUuid": f"u{k}",
                      "timestamp": f"{day}T10:00:05.000Z", "requestId": f"req_{name}_{k}",
                      "message": {"id": f"msg_{name}_{k}", "type": "message", "role": "assistant", "model": SONNET,
                                  "content": [{"type": "text", "text": says}],
                                  "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out,
                                            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
        parent = f"a{k}"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def write_zoo(home: Path, farm: str = "/home/me/farm", goat_day: str = "2026-05-28",
              otter_says: str = "river.py") -> Path:
    """Three sessions in two projects, their usage worked out by hand below."""
    _claude(home, "/home/me/zoo", "walrus", [("2026-05-27", "find the walrus in aquarium.py", "found it", 100_000, 10_000),
                                             ("2026-05-28", "now feed it", "fed", 100_000, 10_000)])
    _claude(home, "/home/me/zoo", "otter", [("2026-05-28", "where is the otter", otter_says, 50_000, 2_000)])
    _claude(home, farm, "goat", [(goat_day, "milk the goat", "done with goats", 20_000, 1_000)])
    return home


@pytest.fixture
def home(tmp_path):
    return write_zoo(tmp_path / "home")


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "CTXVIEW_CACHE_DIR": str(home / "cache")}


def _names(paths) -> list[str]:
    return [os.path.basename(p) for p in paths]


def test_search_finds_words_of_the_text_as_word_starts(home):
    rows = build_index(None, env=_env(home))
    contents = open_contents(_env(home))
    assert contents.update(rows) == 3
    assert _names(contents.search("aquarium")) == ["walrus.jsonl"]       # in a message, not the title
    assert _names(contents.search("goa")) == ["goat.jsonl"]              # a word's start
    assert sorted(_names(contents.search("the"))) == ["goat.jsonl", "otter.jsonl", "walrus.jsonl"]
    assert _names(contents.search("the river")) == ["otter.jsonl"]       # every word
    assert contents.search("elephant") == set()
    assert contents.search("   ") is None
    # what FTS5 would read as syntax is searched as text, never an error
    assert contents.search('"') is None   # (no word in it)
    for odd in ('walrus"', "a*b", "NOT", "(", "walrus OR goat", "col:x", "^", "'; DROP TABLE files; --"):
        assert isinstance(contents.search(odd), set), odd
    assert contents.search("walrus OR goat") == set()   # (OR is a word here: no file holds it)


def test_fts_query_quotes_each_word():
    assert fts_query('say "hi" now') == '"say"* """hi"""* "now"*'
    assert fts_query("") is None


def test_totals_by_project_and_by_day_against_a_hand_computation(home):
    """Sonnet 4.5 below 200k input: $3 a million input, $15 a million output. Walrus: two requests
    of 100k in + 10k out = 2 × ($0.30 + $0.15) = $0.90; otter $0.15 + $0.03 = $0.18; goat $0.06 +
    $0.015 = $0.075."""
    rows = build_index(None, env=_env(home))
    contents = open_contents(_env(home))
    contents.update(rows)
    zoo, farm = contents.totals(rows, "project")
    assert (zoo.key, zoo.sessions, zoo.requests, zoo.input, zoo.output) == ("/home/me/zoo", 2, 3, 250_000, 22_000)
    assert zoo.usd == pytest.approx(0.90 + 0.18) and farm.usd == pytest.approx(0.075)
    days = {t.key: t for t in contents.totals(rows, "day")}
    assert list(days) == ["2026-05-28", "2026-05-27"]
    assert days["2026-05-27"].usd == pytest.approx(0.45) and days["2026-05-27"].sessions == 1
    assert days["2026-05-28"].usd == pytest.approx(0.45 + 0.18 + 0.075) and days["2026-05-28"].sessions == 3
    assert contents.cost_by_path()[str(home / ".claude/projects/-home-me-zoo/walrus.jsonl")] == pytest.approx(0.90)
    # the totals of some rows only (the browser's filter)
    (only,) = contents.totals([r for r in rows if r.path.endswith("goat.jsonl")], "project")
    assert only.key == "/home/me/farm" and only.sessions == 1


def test_a_second_update_reads_only_what_changed_and_forgets_what_is_gone(home):
    env = _env(home)
    contents = open_contents(env)
    contents.update(build_index(None, env=env))
    assert contents.update(build_index(None, env=env)) == 0
    _claude(home, "/home/me/farm", "goat", [("2026-05-29", "shear the goat", "sheared", 20_000, 1_000)])
    os.remove(home / ".claude/projects/-home-me-zoo/otter.jsonl")
    rows = build_index(None, env=env)
    assert contents.update(rows) == 1
    assert _names(contents.search("shear")) == ["goat.jsonl"] and contents.search("milk") == set()
    assert contents.search("otter") == set() and contents.known() == 2
    # a new Contents on the same database starts from what is there
    assert open_contents(env).update(rows) == 0


def test_the_session_files_are_only_read(home):
    files = sorted(home.rglob("*.jsonl"))
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    open_contents(_env(home)).update(build_index(None, env=_env(home)))
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before
    assert sorted(home.rglob("*.jsonl")) == files


def test_no_cache_writes_nothing_beside_the_index(home):
    env = _env(home)
    contents = open_contents(env, cache=False)
    contents.update(build_index(None, env=env, cache=False))
    assert _names(contents.search("walrus")) == ["walrus.jsonl"]
    assert not (home / "cache").exists()


@pytest.mark.parametrize("kind", ["garbage", "directory", "fifo", "old version"])
def test_a_database_that_cannot_be_used_is_said_and_not_used(home, kind):
    env = _env(home)
    path = contents_path(home / "cache" / "sessions-index.json")
    path.parent.mkdir(parents=True)
    if kind == "garbage":
        path.write_bytes(b"not a database\x00" * 100)
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE files (x)")
            db.execute(f"PRAGMA user_version = {CONTENTS_VERSION + 7}")
    said: list[str] = []
    contents = Contents(path, notice=said.append)
    contents.update(build_index(None, env=env))
    assert _names(contents.search("walrus")) == ["walrus.jsonl"]
    if kind == "old version":
        assert not said   # (another version's cache is the cache's own: rebuilt silently)
    else:
        assert len(said) == 1 and str(path) in said[0]
    if kind in ("directory", "fifo"):
        assert contents.path != path   # (never opened; this run's contents are elsewhere)


def test_a_file_its_loader_refuses_is_kept_with_its_problem(home):
    bad = home / ".claude" / "projects" / "-home-me-zoo" / "broken.jsonl"
    bad.write_text('{"type": "user", "cwd": "/home/me/zoo", "message": {"role": "user", "content": "x"}}\n{oops\n')
    env = _env(home)
    rows = build_index(None, env=env)
    contents = open_contents(env)
    contents.update(rows)
    assert contents.known() == len([r for r in rows if r.format is not None])


# --- the columns and the orders ------------------------------------------------------------

@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 160, 200, 300])
def test_the_columns_fit_the_width_by_importance(width):
    shown = fit_columns(width)
    assert sum(w + 2 for _, w in shown) <= width
    names = [n for n, _ in shown]
    assert names == [n for n, _ in COLUMNS if n in names]                # in the table's order
    assert {"last activity", "title"} <= set(names)
    if width >= 80:
        assert {"project", "tokens", "cost"} <= set(names)
    if width >= 160:
        assert names == [n for n, _ in COLUMNS]


def test_the_column_sorted_by_is_kept_at_any_width():
    assert "size" not in dict(fit_columns(80)) and "size" in dict(fit_columns(80, keep="size"))


def test_totals_columns_keep_the_cost_first():
    key, shown = fit_total_columns(80)
    assert "cost" in dict(shown) and key + 2 + sum(w + 2 for _, w in shown) <= 80
    assert len(fit_total_columns(200)[1]) == 7


def test_a_project_is_cut_from_its_start():
    assert fit_cell("project", "/home/me/src/app20", 11) == "…/src/app20"
    assert fit_cell("title", "Task 20: cache spec", 10) == "Task 20: …"


def test_sort_orders_put_rows_without_the_value_last():
    rows = [SessionRow(path=p, format="codex", size_bytes=s, messages=m, updated=u, project=pr)
            for p, s, m, u, pr in [("a", 10, 5, "2026-05-01", "b"), ("b", 30, None, "2026-05-03", None),
                                   ("c", 20, 9, "2026-05-02", "a")]]
    paths = lambda out: [r.path for r in out]
    assert paths(sort_rows(rows, "size")) == ["b", "c", "a"]
    assert paths(sort_rows(rows, "size", reverse=True)) == ["a", "c", "b"]
    assert paths(sort_rows(rows, "msgs")) == ["c", "a", "b"]
    assert paths(sort_rows(rows, "msgs", reverse=True)) == ["a", "c", "b"]
    assert paths(sort_rows(rows, "project")) == ["c", "a", "b"]
    assert paths(sort_rows(rows, "date")) == ["b", "c", "a"]
    assert paths(sort_rows(rows, "cost", cost={"a": 1.0, "c": 2.5})) == ["c", "a", "b"]


def test_the_plain_table_fits_its_width(home):
    rows = build_index(None, env=_env(home))
    for width in (80, 120):
        out = table(rows, width).splitlines()
        assert all(len(line) <= width for line in out)
        assert out[0].split()[:2] == ["last", "activity"] and "tokens" in out[0]


# --- ctxview sessions --search / --by ------------------------------------------------------

def _run(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **_env(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    return subprocess.run([sys.executable, "-m", "ctxview", "sessions", *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_sessions_by_project_and_day_as_json_and_text(home):
    out = _run(home, "--by", "project", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(d["project"], d["sessions"], d["requests"]) for d in doc] == [("/home/me/zoo", 2, 3),
                                                                            ("/home/me/farm", 1, 1)]
    assert doc[0]["usd"] == pytest.approx(1.08)
    days = json.loads(_run(home, "--by", "day", "--json").stdout)
    assert [d["day"] for d in days] == ["2026-05-28", "2026-05-27"]
    text = _run(home, "--by", "project").stdout.splitlines()
    assert text[0].split()[0] == "project" and "$1.08" in text[1]
    assert text[-1] == "2 projects, 3 sessions, 4 requests, $1.16"


def test_sessions_search_lists_the_matches(home):
    out = _run(home, "--search", "goat", "--json")
    assert out.returncode == 0, out.stderr
    assert _names(r["path"] for r in json.loads(out.stdout)) == ["goat.jsonl"]
    assert _run(home, "--search", "nothing-here").stdout.splitlines()[-1] == "0 sessions"


def test_a_file_not_read_whole_is_named_and_said_to_be_left_out(home, monkeypatch):
    import argparse

    from ctxview.cli.sessions_command import sessions_output
    from ctxview.sessions import contents as module
    from ctxview.tui.widgets.session_table import status_text

    env = _env(home)
    rows = build_index(None, env=env)
    walrus = next(r for r in rows if r.path.endswith("walrus.jsonl"))
    monkeypatch.setattr(module, "MAX_FILE_BYTES", walrus.size_bytes - 1)   # the walrus is the biggest
    contents = open_contents(env)
    contents.update(rows)
    unread = contents.unread()
    assert list(unread) == [walrus.path] and "more than the background pass reads" in unread[walrus.path]
    assert walrus.path not in contents.search("walrus")  # (its text is not known: the search cannot find it)

    app = argparse.Namespace(shown=rows, rows=rows, filter_text="", search_text="walrus", view="list", sort="date",
                             reverse=False, totals=[], indexing=False, contents_done=None, unread=unread)
    assert "⚠ 1 not read whole, left out of search and cost" in status_text(app)
    assert "not read whole" not in status_text(argparse.Namespace(**{**vars(app), "unread": {}}))

    said = []
    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.setenv("CTXVIEW_CACHE_DIR", env["CTXVIEW_CACHE_DIR"])
    args = argparse.Namespace(search="walrus", by=None, json=True, no_cache=False)
    assert json.loads(sessions_output(rows, args, said.append)) == []
    assert len(said) == 1 and said[0].startswith("1 session file(s) could not be read whole")


def test_a_file_listed_for_its_problem_is_left_out_by_name_and_why(home):
    binary = home / ".claude" / "projects" / "-home-me-zoo" / "noise.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)   # no JSON line in it: listed with a ⚠, read by no loader
    out = _run(home, "--search", "walrus", "--json")
    assert out.returncode == 0, out.stderr
    assert _names(r["path"] for r in json.loads(out.stdout)) == ["walrus.jsonl"]
    assert out.stderr == (f"ctxview: warning: 1 session file(s) could not be read whole, so the search and the "
                          f"totals leave them out: {binary}: no complete JSON line (half written?)\n")


def test_a_lone_surrogate_in_the_text_or_a_name_that_is_not_utf8_is_searched_and_totalled(home):
    walrus = home / ".claude" / "projects" / "-home-me-zoo" / "walrus.jsonl"
    walrus.write_bytes(walrus.read_bytes().replace(b"aquarium", b"aquarium \\ud800"))   # valid JSON, no UTF-8
    odd = walrus.with_name(os.fsdecode(b"otter-\xff.jsonl"))   # a name Python keeps as a lone surrogate
    walrus.with_name("otter.jsonl").rename(odd)
    out = _run(home, "--search", "aquarium", "--json")
    assert out.returncode == 0 and out.stderr == ""
    assert _names(r["path"] for r in json.loads(out.stdout)) == ["walrus.jsonl"]
    rows = build_index(None, env=_env(home))
    contents = open_contents(_env(home))
    contents.update(rows)
    assert contents.search("otter") == {str(odd)} and contents.unread() == {}
    assert contents.cost_by_path()[str(odd)] is not None
    assert sum(t.sessions for t in contents.totals(rows, "project")) == 3
    out = _run(home, "--by", "day")
    assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("2 days, 3 sessions, 4 requests")


def test_a_day_is_the_utc_day_and_a_session_of_several_days_counts_once():
    from ctxview.sessions.contents import _day

    assert _day("2026-03-02T01:15:00+05:00") == "2026-03-01"   # UTC, as the help says
    assert _day("2026-03-02T10:00:00.000Z") == "2026-03-02"
    assert [_day(t) for t in ("2026-13-45T00:00:00Z", "２０２６-03-02T00:00:00Z", "", None, "\ud800")] == ["unknown"] * 5


def test_a_request_a_continued_session_holds_again_counts_once(home):
    # Claude Code writes the history of a session it continues into the new session's file: the same
    # message ids. ccusage counts each once; so do the totals (each file's own cost keeps them all).
    zoo = home / ".claude" / "projects" / "-home-me-zoo"
    new_turn = _claude(home, "/home/me/zoo", "tmp", [("2026-05-28", "and now?", "asleep", 50_000, 1_000)])
    continued = zoo / "walrus-continued.jsonl"
    lines = [json.loads(line) for line in new_turn.read_text().splitlines()]
    for line in lines:   # (the new turn follows the history it continues)
        line.update(uuid="n" + line["uuid"], parentUuid="a1" if line["parentUuid"] is None else "n" + line["parentUuid"],
                    sessionId="walrus-continued")
    continued.write_text((zoo / "walrus.jsonl").read_text() + "".join(json.dumps(line) + "\n" for line in lines))
    new_turn.unlink()
    rows = build_index(None, env=_env(home))
    contents = open_contents(_env(home))
    contents.update(rows)
    (zoo_total,) = [t for t in contents.totals(rows, "project") if t.key == "/home/me/zoo"]
    # walrus 2 requests ($0.90), otter 1 ($0.18), the new turn 1 (50k in at $3, 1k out at $15: $0.165)
    assert (zoo_total.sessions, zoo_total.requests, zoo_total.input) == (3, 4, 300_000)
    assert zoo_total.usd == pytest.approx(0.90 + 0.18 + 0.165)
    days = {t.key: t for t in contents.totals(rows, "day")}
    assert (days["2026-05-27"].requests, days["2026-05-28"].requests) == (1, 4)   # (goat's on the 28th)
    by_path = {os.path.basename(p): usd for p, usd in contents.cost_by_path().items()}
    assert by_path["walrus-continued.jsonl"] == pytest.approx(0.90 + 0.165) and by_path["walrus.jsonl"] == pytest.approx(0.90)
    # a project of copies only: nothing left, exactly (each cost is taken off unrounded)
    copies = home / ".claude" / "projects" / "-home-me-zz"   # (after the zoo's files by path)
    copies.mkdir()
    (copies / "walrus-again.jsonl").write_text((zoo / "walrus.jsonl").read_text().replace("/home/me/zoo", "/home/me/zz"))
    rows = build_index(None, env=_env(home))
    contents.update(rows)
    (copy_total,) = [t for t in contents.totals(rows, "project") if t.key == "/home/me/zz"]
    assert (copy_total.sessions, copy_total.requests, copy_total.input) == (1, 0, 0)
    assert str(copy_total.usd) == "0.0"


@pytest.mark.parametrize("count", [2**63, 2**64 - 1])
def test_a_usage_count_past_64_bits_is_the_files_problem_not_a_traceback(home, count):
    # (SQLite holds signed 64-bit integers: such a count, which orjson reads as one, gave an
    # OverflowError out of the contents pass)
    lines = [{"type": "user", "uuid": "u0", "cwd": "/home/me/big", "sessionId": "b",
              "timestamp": "2026-05-01T10:00:00Z", "message": {"role": "user", "content": "count me"}},
             {"type": "assistant", "uuid": "u1", "parentUuid": "u0", "timestamp": "2026-05-01T10:00:01Z",
              "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": count, "output_tokens": 2}}}]
    big = home / ".claude" / "projects" / "-home-me-big" / "big.jsonl"
    big.parent.mkdir(parents=True, exist_ok=True)
    big.write_text("".join(json.dumps(r) + "\n" for r in lines))
    env = _env(home)
    rows = build_index(None, env=env)
    contents = open_contents(env)
    contents.update(rows)
    unread = contents.unread()
    assert "a usage count past 64 bits" in unread[str(big)]
    projects = {t.key for t in contents.totals(rows, "project")}
    (row,) = [r for r in rows if r.path == str(big)]
    assert row.project not in projects and projects   # (the other sessions' totals are there)
