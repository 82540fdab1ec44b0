#!/usr/bin/env python3
"""Write synthetic agent sessions, deterministically, in any format ctxview reads.

    python benchmarks/make_session.py 100000 --format claude-code -o big.jsonl
    python benchmarks/make_session.py --samples      # regenerate sample_sessions/ and the bundled demo

Importable too (other benchmarks use it):

    import make_session
    make_session.write("big.jsonl", 100_000, "claude-code", seed=0)

One generator builds a realistic coding-agent conversation (user turns,
assistant steps with Read / Grep / Glob / Bash / Edit / TodoWrite calls,
tool results shaped like the real tools' output, system reminders), and one
writer per format serialises it the way that tool writes its files. Same
arguments, same bytes.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ctxview.model import Conversation, Message, Session, ToolCall, Usage  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import shop_api  # noqa: E402  (the fictional repository the sessions work on)

FORMATS = ("ctxview", "claude-code", "codex", "openai", "openai-responses", "anthropic",
           "swarm-snapshot", "swarm-events")

# --- text material: tool results cut from the fictional repository in shop_api.py ---------------

REPO = shop_api.ROOT
BRANCH = "feature/account-rate-limits"
_LINES = shop_api.LINES
_PATHS = shop_api.PATHS
_SPECS = tuple(p for p in _PATHS if p.endswith("_spec.rb"))


def _abs(path: str) -> str:
    return f"{REPO}/{path}"


def _numbered(lines: list[str], start: int) -> str:
    """Lines as Claude Code's and SwarmSDK's Read show them: `     1→text`."""
    return "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))


# Claude Code's own reminder texts (stored in the history, inside tool results and user turns)
_REMINDER_READ = ("<system-reminder>\nWhenever you read a file, you should consider whether it would be considered "
                  "malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you MUST refuse to "
                  "improve or augment the code. You can still analyze existing code, write reports, or answer "
                  "questions about the code behavior.\n</system-reminder>")
_REMINDER_TODO = ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. If you're working on tasks that "
                  "would benefit from tracking progress, consider using the TodoWrite tool to track progress. Also "
                  "consider cleaning up the todo list if has become stale and no longer matches what you are working "
                  "on. Only use it if it's relevant to the current work. This is just a gentle reminder - ignore if "
                  "not applicable. Make sure that you NEVER mention this reminder to the user\n</system-reminder>")


def _reminder_modified(path: str, line: int) -> str:
    lines = _LINES[path][line - 1:line + 5]
    return (f"<system-reminder>\nNote: {_abs(path)} was modified, either by the user or by a linter. This change was "
            "intentional, so make sure to take it into account as you proceed (ie. don't revert it unless the user "
            "asks you to). Don't tell the user this, since they are already aware. Here are the relevant changes "
            f"(shown with line numbers):\n{_numbered(lines, line)}\n</system-reminder>")


_TODOS = [
    ("Read how API requests are throttled today", "Reading the throttle middleware"),
    ("Key the throttle on the account for authenticated requests", "Adding the account key"),
    ("Lower the default limit to 100 requests a minute", "Lowering the default limit"),
    ("Add specs for the account key and the 429 response", "Writing the throttle specs"),
    ("Run the full suite and RuboCop", "Running the suite"),
]


def _todo_list(done: int) -> list[dict]:
    return [{"content": c, "status": "completed" if i < done else "in_progress" if i == done else "pending",
             "activeForm": a} for i, (c, a) in enumerate(_TODOS)]


# Ephemeral reminders (SwarmSDK adds these to the prepared request only; they are never stored)
def _ephemeral(rng: random.Random, pct: int, window: int, kind: int | None = None) -> str:
    kind = rng.randrange(3) if kind is None else kind
    if kind == 0:
        return (f"<system-reminder>\nContext usage: {pct}% of {window:,} tokens. Prefer targeted reads "
                "(offset/limit) over whole files.\n</system-reminder>")
    if kind == 1:
        done = rng.randint(0, len(_TODOS) - 1)
        items = "\n".join(f"{i + 1}. [{t['status']}] {t['content']}" for i, t in enumerate(_todo_list(done)))
        return f"<system-reminder>\nYour todo list ({done} of {len(_TODOS)} completed):\n{items}\n</system-reminder>"
    return (f"<system-reminder>\nWorking directory: {REPO}\nGit branch: {BRANCH}\nToday's date: 2026-03-02\n"
            "</system-reminder>")


def _read(path: str, want: int, rng: random.Random) -> tuple[dict, str]:
    """A Read call and its result: the whole file, or `want` lines of it from a random offset."""
    lines = _LINES[path]
    if want >= len(lines):
        return {"file_path": _abs(path)}, _numbered(lines, 1)
    start = rng.randint(1, len(lines) - want + 1)
    return ({"file_path": _abs(path), "offset": start, "limit": want},
            _numbered(lines[start - 1:start - 1 + want], start))


def _grep(pattern: str, under: str = ".") -> str:
    """`path:line:text` for every line of the repository under `under` that matches."""
    rx = re.compile(pattern)
    hits, files = [], set()
    for path in _PATHS:
        if under not in (".", "") and path != under and not path.startswith(under.rstrip("/") + "/"):
            continue
        for no, line in enumerate(_LINES[path], 1):
            if rx.search(line):
                hits.append(f"{path}:{no}:{line.rstrip()}")
                files.add(path)
    if not hits:
        return "No matches found"
    # "matches" even for one: the form SwarmSDK's Grep writes and ContextManager recognises
    return (f"Found {len(hits)} matches in {len(files)} file{'s' if len(files) != 1 else ''} "
            f"for /{pattern}/:\n\n" + "\n".join(hits))


def _glob_rx(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def _glob(pattern: str) -> str:
    rx = _glob_rx(pattern)
    found = [_abs(p) for p in _PATHS if rx.match(p)]
    if not found:
        return "No files found"
    return f"Found {len(found)} file{'s' if len(found) != 1 else ''} matching {pattern}:\n" + "\n".join(found)


def _spec_tree(path: str) -> list[tuple[int, str, int, bool]]:
    """(depth, title, line, is an example) for the describe/context/it lines of a spec file."""
    out = []
    for no, line in enumerate(_LINES[path], 1):
        m = re.match(r'(\s*)(?:RSpec\.)?(describe|context|it) "?([^"]+?)"? do$', line)
        if m:
            out.append((len(m.group(1)) // 2, m.group(3), no, m.group(2) == "it"))
    return out


def _with_extra(path: str, extra: tuple[tuple[str, str], ...]) -> list[tuple[int, str, int, bool]]:
    # an example an edit added sits before "does not throttle paths outside /api" (see EDITS[2])
    tree = _spec_tree(path)
    for p, title in extra:
        if p == path:
            at = next(i for i, t in enumerate(tree) if t[1] == "does not throttle paths outside /api")
            tree.insert(at, (1, title, tree[at][2], True))
    return tree


def _failing_line(path: str, example_line: int, failure: str) -> int:
    """The line of the example (from `example_line` on) that the Failure/Error line quotes."""
    code = failure.removeprefix("Failure/Error: ")
    lines = _LINES[path]
    for no in range(example_line, min(len(lines), example_line + 12) + 1):
        if lines[no - 1].strip() == code:
            return no
    return example_line + 2  # an example an edit added: its failing line is its third


def _rspec(paths: tuple[str, ...], rng: random.Random, fail: tuple[str, str, list[str]] | None = None,
           extra: tuple[tuple[str, str], ...] = ()) -> str:
    """`rspec --format documentation` output for spec files of the repository.

    `fail` is (spec path, example title, failure lines); `extra` adds (path, title)
    examples that an edit put into a file.
    """
    out, examples, failed = [], 0, None
    for path in paths:
        tree = _with_extra(path, extra)
        for depth, title, no, is_example in tree:
            hit = fail is not None and fail[:2] == (path, title)
            out.append("  " * depth + title + (" (FAILED - 1)" if hit else ""))
            examples += is_example
            if hit:  # RSpec names an example by its enclosing groups' titles and its own
                names, want = [title], depth
                for d, t, n_, _ in reversed(tree[:tree.index((depth, title, no, is_example))]):
                    if d < want:
                        names.insert(0, t)
                        want = d
                failed = (path, " ".join(names), no)
        out.append("")
    if failed and fail:
        path, full, no = failed
        out += ["Failures:", "", f"  1) {full}", *[f"     {x}" if x else "" for x in fail[2]],
                f"     # ./{path}:{_failing_line(path, no, fail[2][0])}:in `block (2 levels) in <top (required)>'", ""]
    out.append(f"Finished in {rng.uniform(0.3, 4.5):.2f} seconds (files took {rng.uniform(1.8, 3.1):.2f} seconds to load)")
    out.append(f"{examples} examples, {1 if failed else 0} failure{'' if failed else 's'}")
    if failed:
        path, full, no = failed
        out += ["", "Failed examples:", "", f"rspec ./{path}:{no} # {full}"]
    return "\n".join(out)


_ROUTES = """\
                  Prefix Verb   URI Pattern                                              Controller#Action
   cancel_api_v1_order POST   /api/v1/orders/:id/cancel(.:format)                      api/v1/orders#cancel
   refund_api_v1_order POST   /api/v1/orders/:id/refund(.:format)                      api/v1/orders#refund
api_v1_order_line_items GET    /api/v1/orders/:order_id/line_items(.:format)            api/v1/line_items#index
                        POST   /api/v1/orders/:order_id/line_items(.:format)            api/v1/line_items#create
 api_v1_order_line_item DELETE /api/v1/orders/:order_id/line_items/:id(.:format)        api/v1/line_items#destroy
          api_v1_orders GET    /api/v1/orders(.:format)                                 api/v1/orders#index
                        POST   /api/v1/orders(.:format)                                 api/v1/orders#create
           api_v1_order GET    /api/v1/orders/:id(.:format)                             api/v1/orders#show
                        PATCH  /api/v1/orders/:id(.:format)                             api/v1/orders#update
                        PUT    /api/v1/orders/:id(.:format)                             api/v1/orders#update
                        DELETE /api/v1/orders/:id(.:format)                             api/v1/orders#destroy"""

# Edits the agents make: (path, old text, new text, what the assistant says first)
EDITS = [
    ("app/middleware/request_throttle.rb",
     '  # One bucket per client address. Clients behind the same NAT share it.\n  def throttle_key(request)\n'
     '    "ip:#{request.remote_ip}"\n  end',
     '  # Authenticated clients get a bucket per account; anonymous ones one per address.\n'
     '  def throttle_key(request)\n    account_id = account_id_for(request)\n'
     '    account_id ? "account:#{account_id}" : "ip:#{request.remote_ip}"\n  end\n\n'
     '  # The middleware runs before authentication, so it resolves the token itself.\n'
     '  def account_id_for(request)\n    token = request.authorization.to_s.delete_prefix("Bearer ")\n'
     '    return if token.empty?\n\n'
     '    ApiToken.active.joins(:user).where(digest: ApiToken.digest(token)).pick("users.account_id")\n  end',
     "The limiter keys on IP only; I'll add an account key for authenticated requests and keep the IP key for "
     "anonymous ones."),
    ("app/middleware/request_throttle.rb", "  DEFAULT_LIMIT = 300\n  WINDOW = 60",
     '  DEFAULT_LIMIT = 100\n  PLAN_LIMITS = { "free" => 60, "pro" => 600, "enterprise" => 3_000 }.freeze\n  WINDOW = 60',
     "Now the limit itself: 100 a minute by default, with room for per-plan limits."),
    ("spec/middleware/request_throttle_spec.rb", '  it "does not throttle paths outside /api" do',
     '  it "keys authenticated requests on the account" do\n    token = create(:api_token)\n'
     '    auth = { "HTTP_AUTHORIZATION" => "Bearer #{token.plain}" }\n'
     '    2.times { request(ip: "10.0.0.1", headers: auth) }\n    status, = request(ip: "10.0.0.9", headers: auth)\n'
     '    expect(status).to eq(429)\n  end\n\n  it "does not throttle paths outside /api" do',
     "Adding a spec: two addresses with the same token must share one bucket."),
    ("app/services/rate_limiter.rb", "  def retry_after(_key)\n    window - (now % window)\n  end",
     "  def retry_after(_key)\n    [window - (now % window), 1].max\n  end",
     "Retry-After must never be 0, or clients retry at once; clamping it to at least one second."),
    ("config/application.rb", "    config.middleware.insert_before Rack::Runtime, RequestThrottle",
     '    config.middleware.insert_before Rack::Runtime, RequestThrottle,\n'
     '                                    limit: Integer(ENV.fetch("API_RATE_LIMIT", 100))',
     "Making the limit configurable per environment through API_RATE_LIMIT."),
    ("app/middleware/request_throttle.rb",
     '    @logger.info("[throttle] #{key} over limit, retry in #{retry_after}s")',
     '    @logger.info("[throttle] #{key} over limit (#{@limiter.limit}/#{WINDOW}s), retry in #{retry_after}s")',
     "Logging the limit that was hit, so throttled requests are easy to find in the logs."),
]
_FIX = ("spec/middleware/request_throttle_spec.rb", "token.plain", "token.raw_token",
        "The factory exposes the plain token as `raw_token`, not `plain`. Fixing the spec.")
_NEW_EXAMPLE = ("spec/middleware/request_throttle_spec.rb", "keys authenticated requests on the account")
_NEW_FAILURE = ['Failure/Error: auth = { "HTTP_AUTHORIZATION" => "Bearer #{token.plain}" }', "",
                "NoMethodError:", "  undefined method `plain' for an instance of ApiToken"]
_OLD_FAILURE = ["Failure/Error: expect(status).to eq(429)", "", "  expected: 429", "       got: 200", "",
                "  (compared using ==)"]
_REQUEST_FAILURE = ["Failure/Error: expect(response).to have_http_status(:too_many_requests)", "",
                    "  expected the response to have status code :too_many_requests (429) but it was :ok (200)"]
_HELPER = ("spec/support/throttle_helpers.rb", '''\
# frozen_string_literal: true

# Request specs share one Redis database; clear the throttle counters between
# examples so one spec's requests never count against the next one's limit.
module ThrottleHelpers
  def reset_throttle!
    REDIS_POOL.with { |conn| conn.scan_each(match: "rl:*") { |key| conn.del(key) } }
  end
end

RSpec.configure do |config|
  config.include ThrottleHelpers, type: :request
  config.before(:each, type: :request) { reset_throttle! }
end
''')


def _edit_result(path: str, old: str, new: str) -> str:
    text = shop_api.FILES[path]
    at = text.find(old)
    line = text.count("\n", 0, max(at, 0)) + 1
    lines = text.replace(old, new, 1).splitlines()
    lo, hi = max(1, line - 4), min(len(lines), line + new.count("\n") + 5)
    return (f"The file {_abs(path)} has been updated. Here's the result of running `cat -n` on a snippet of the "
            f"edited file:\n" + _numbered(lines[lo - 1:hi], lo))


_GREPS = [("RateLimiter", "."), (r"allow\?", "."), (r"REDIS_POOL|Redis\.current", "."), ("def perform", "app"),
          ("throttle", "."), ("current_account", "app"), ("retry_after", "."), ("account_id", "app"),
          (r"have_http_status", "spec"), ("Retry-After", "."), (r"\.limit\b", "app"), ("plan", "app"),
          ("def ", "app"), ("Redis|redis", "."), ("account", "app"), ("status", "app"), ("limit", ".")]
_GLOBS = ["**/*.rb", "app/**/*.rb", "spec/**/*_spec.rb", "config/**/*.rb", "app/models/*.rb", "**/*throttle*"]
_BASH = ["rspec", "rspec", "rspec", "git status --short", "git diff --stat", "bin/rails routes -g orders",
         "bundle exec rubocop app/middleware app/services spec/middleware"]
_SAY = {
    "Read": ["Let me look at {path} to see how it is wired today.",
             "I'll read {path} before changing anything, so the edit fits the existing style.",
             "Let me check {name} as well; the change must not break what it expects.",
             "Reading {path} for the surrounding code."],
    "Grep": ["Let me find where `{pat}` is used, so nothing that depends on it breaks.",
             "Searching for `{pat}` across the code to see every caller.",
             "Where else does `{pat}` appear? A change here may need to reach those places too."],
    "Glob": ["Let me list the files matching {pat} to get the lay of the land.",
             "Which files match {pat}? I want to be sure no spec or initializer is missed."],
    "Bash": ["Running `{cmd}` to check the change before moving on.", "Let me run `{cmd}` to see where we stand.",
             "Checking with `{cmd}`; it should be green after the last edit."],
    "TodoWrite": ["Updating the todo list.", "Let me mark progress on the todo list."],
    "Write": ["I'll add a spec helper that clears the throttle counters between request specs."],
    "Delegate": ["The limiter's Redis side belongs to backend; I'll hand that part over."],
}
# the same, for a second call in one step
_ALSO = {"Read": "I'll also read {path}.", "Grep": "And I'll search for `{pat}`.", "Glob": "Also listing {pat}.",
         "Bash": "And running `{cmd}`.", "TodoWrite": "And updating the todo list.", "Write": "And adding the spec helper."}
_THINK = [
    "The throttle runs as Rack middleware, before the controllers authenticate, so there is no current_account "
    "there yet. Resolving the API token in the middleware costs one indexed query per request; acceptable.",
    "Fixed windows allow a burst of 2x the limit across a window boundary. The task asks for 100 a minute, not a "
    "smooth rate, so a fixed window is fine; a sliding log would need a sorted set per key.",
    "Keys: 'account:<id>' for authenticated requests, 'ip:<addr>' otherwise. Counters expire with their window, "
    "so changing the key format needs no migration of old counters.",
    "The request spec stubs DEFAULT_LIMIT; with the limit passed in from config/application.rb that stub no longer "
    "reaches the middleware instance. Check the spec still exercises the 429 path.",
    "MockRedis supports MULTI, INCR and EXPIRE, so the limiter spec can stay in memory; only the request specs "
    "touch the test Redis database.",
]
_ORDERS_SPEC = "spec/requests/api/v1/orders_spec.rb"
# (what the user says, the steps that answer it)
_FOLLOW_UPS: list[tuple[str, list[tuple[str, list[tuple[str, Any]]]]]] = [
    ("Looks good so far. Also make the limit configurable per plan (free: 60, pro: 600).",
     [("Per-plan limits need the account's plan at the point where the key is resolved. Let me read Account first.",
       [("Read", "app/models/account.rb")])]),
    ("The CI run failed on the request spec; can you look at it?",
     [("Let me reproduce it with the request spec alone.",
       [("Bash", ("rspec", (_ORDERS_SPEC,), (_ORDERS_SPEC, "answers 429 once the account is over its limit",
                                              _REQUEST_FAILURE), ()))]),
      ("The spec stubs RequestThrottle::DEFAULT_LIMIT, but the middleware now gets its limit from "
       "config/application.rb when the app boots, so the stub never reaches it. Let me look at that example.",
       [("Read", _ORDERS_SPEC)])]),
    ("Please don't touch the billing code, it belongs to another team.",
     [("Understood, I'll leave app/services/billing alone. None of the changes so far touch it:",
       [("Bash", "git status --short")])]),
    ("Can you also log when a request is throttled?", [(EDITS[5][3], [("Edit", EDITS[5])])]),
]
_SUMMARY = ("Done. Per-account rate limiting is in place:\n\n"
            "- `RequestThrottle` keys authenticated requests on `account:<id>` (resolved from the API token) and "
            "anonymous ones on the client IP.\n"
            "- The default limit is 100 requests a minute (`API_RATE_LIMIT` overrides it); over the limit the API "
            "answers 429 with `Retry-After` (never 0) and logs the key and limit.\n"
            "- `RateLimiter` (backend's part) counts per key in a fixed Redis window.\n"
            "- Specs: a new middleware example for the account key, and `spec/support/throttle_helpers.rb` clears "
            "the counters between request specs. The full suite and RuboCop pass.\n\n"
            "Per-plan limits (`PLAN_LIMITS`) are defined but not wired in yet.")

_SUMMARIES = {
    "backend": ("The app uses redis-rb 5.1 (with redis-client 0.20) through a connection_pool 2.4 pool. It is "
                "configured in config/initializers/redis.rb: `REDIS_POOL` (size RAILS_MAX_THREADS, 0.5 s timeouts, "
                "REDIS_URL or redis://localhost:6379/0; database 15 in test). `Redis.current` is patched to borrow a "
                "pooled connection for legacy callers (SHOP-412). Sidekiq has its own pool."),
    "backend@lead": ("RateLimiter is in app/services/rate_limiter.rb: `RateLimiter.new(limit:, window: 60)`; "
                     "`allow?(key)` counts the request (INCR + EXPIRE in one MULTI) and returns false once `limit` "
                     "requests hit the same key inside the window; `remaining(key)` and `retry_after(key)` (now at "
                     "least 1 s) feed the headers; `reset!(key)` clears a key. Spec: "
                     "spec/services/rate_limiter_spec.rb (10 examples, green)."),
}


@dataclass
class Agent:
    name: str
    messages: list[Message] = field(default_factory=list)
    ephemeral: dict[int, tuple[str, ...]] = field(default_factory=dict)
    system_prompt: str = ""
    model: str = "claude-sonnet-4-5-20250929"
    context_window: int = 200_000


# A step is (tool, argument): ("Read", path), ("Grep", (pattern, under)), ("Glob", pattern),
# ("Bash", command or ("rspec", paths, fail, extra)), ("Edit", edit), ("TodoWrite", done),
# ("Write", None), ("Delegate", None).

_LEAD_SCRIPT: list[tuple[str, list[tuple[str, Any]]]] = [
    ("I'll track the work first, then look at how requests are throttled today.", [("TodoWrite", 0)]),
    ("Let me look at how requests are throttled today.", [("Grep", ("throttle|RateLimiter", "."))]),
    ("The throttle is a Rack middleware. Let me read it and the limiter it uses.",
     [("Read", "app/middleware/request_throttle.rb"), ("Read", "app/services/rate_limiter.rb")]),
    ("Now the Redis configuration, as you asked.", [("Read", "config/initializers/redis.rb")]),
    ("Where is the middleware inserted into the stack?", [("Grep", ("RequestThrottle", "config")),
                                                          ("Read", "config/application.rb")]),
    ("The limiter keys on IP only, and it runs before authentication. Let me see how controllers resolve the "
     "token so the middleware can do the same.", [("Read", "app/controllers/api/v1/base_controller.rb"),
                                                  ("Read", "app/models/user.rb")]),
    ("", [("TodoWrite", 1)]),
    (EDITS[0][3], [("Edit", EDITS[0])]),
    (EDITS[1][3], [("Edit", EDITS[1])]),
    ("Let me read the middleware spec before adding to it.", [("Read", "spec/middleware/request_throttle_spec.rb")]),
    (EDITS[2][3], [("Edit", EDITS[2])]),
    ("Running the middleware spec.", [("Bash", ("rspec", ("spec/middleware/request_throttle_spec.rb",),
                                                (*_NEW_EXAMPLE, _NEW_FAILURE), (_NEW_EXAMPLE,)))]),
    (_FIX[3], [("Edit", _FIX)]),
    ("Again:", [("Bash", ("rspec", ("spec/middleware/request_throttle_spec.rb",), None, (_NEW_EXAMPLE,)))]),
    ("", [("TodoWrite", 3)]),
    (_SAY["Delegate"][0], [("Delegate", None)]),
    (EDITS[4][3], [("Edit", EDITS[4])]),
    (_SAY["Write"][0], [("Write", None)]),
    ("Now the whole suite.", [("Bash", ("rspec", _SPECS, None, (_NEW_EXAMPLE,)))]),
    ("", [("TodoWrite", 4)]),
]
_BACKEND_SCRIPT = [
    ("Let me find where Redis is used.", [("Grep", (r"REDIS_POOL|Redis\.current", "."))]),
    ("It is configured in one initializer.", [("Read", "config/initializers/redis.rb")]),
    ("And the client gem versions:", [("Grep", ("redis|connection_pool", "Gemfile.lock"))]),
]
_LIMITER_SCRIPT = [
    ("Let me read the limiter and its spec.", [("Read", "app/services/rate_limiter.rb"),
                                               ("Read", "spec/services/rate_limiter_spec.rb")]),
    (EDITS[3][3], [("Edit", EDITS[3])]),
    ("Running the limiter spec.", [("Bash", ("rspec", ("spec/services/rate_limiter_spec.rb",), None, ()))]),
]
_EXPLORE_SCRIPT = [
    ("Searching the whole repository for Redis.current.", [("Grep", (r"Redis\.current", "."))]),
    ("The initializer patches it; let me read that part.", [("Read", "config/initializers/redis.rb")]),
    ("And the request spec that calls it:", [("Grep", (r"flushdb|REDIS_POOL", "spec"))]),
]
_SCRIPTS = {"backend": _BACKEND_SCRIPT, "backend@lead": _LIMITER_SCRIPT, "explore": _EXPLORE_SCRIPT}


def _random_step(rng: random.Random, tool: str) -> tuple[str, Any]:
    if tool == "Read":
        return "Read", None
    if tool == "Grep":
        return "Grep", rng.choice(_GREPS)
    if tool == "Glob":
        return "Glob", rng.choice(_GLOBS)
    if tool == "Bash":
        cmd = rng.choice(_BASH)
        if cmd != "rspec":
            return "Bash", cmd
        paths = _SPECS if rng.random() < 0.5 else tuple(sorted(rng.sample(_SPECS, rng.randint(1, len(_SPECS)))))
        fail = None
        if rng.random() < 0.2 and "spec/middleware/request_throttle_spec.rb" in paths:
            fail = ("spec/middleware/request_throttle_spec.rb", "answers 429 with Retry-After over the limit",
                    _OLD_FAILURE)
        return "Bash", ("rspec", paths, fail, ())
    if tool == "Edit":
        return "Edit", rng.choice(EDITS)
    if tool == "TodoWrite":
        return "TodoWrite", rng.randint(0, len(_TODOS))
    return "Write", None


def _run_step(rng: random.Random, step: tuple[str, Any], call_id: Callable[[], str], big: bool
              ) -> tuple[ToolCall, str, str]:
    """(call, result, what the assistant says before it) for one step."""
    tool, arg = step
    if tool == "Read":
        if arg is None:  # a random read: big files are read more often, as agents do
            path = rng.choices(_PATHS, weights=[len(_LINES[p]) ** 2 for p in _PATHS])[0]
            # big: the whole file half the time (Read's default), else a window of it
            want = (2000 if rng.random() < 0.5 else rng.randint(60, 420)) if big else rng.randint(10, 80)
        else:
            path, want = arg, 2000
        args, text = _read(path, want, rng)
        if rng.random() < 0.3:
            text += "\n\n" + _REMINDER_READ
        say = rng.choice(_SAY["Read"]).format(path=path, name=path.rsplit("/", 1)[-1].removesuffix(".rb"))
        return ToolCall(call_id(), "Read", args), text, say
    if tool == "Grep":
        pat, under = arg
        say = rng.choice(_SAY["Grep"]).format(pat=pat)
        return (ToolCall(call_id(), "Grep", {"pattern": pat, "path": under, "output_mode": "content", "-n": True}),
                _grep(pat, under), say)
    if tool == "Glob":
        return ToolCall(call_id(), "Glob", {"pattern": arg}), _glob(arg), rng.choice(_SAY["Glob"]).format(pat=arg)
    if tool == "Bash":
        if isinstance(arg, tuple):
            _, paths, fail, extra = arg
            cmd = "bundle exec rspec" + ("" if paths == _SPECS else " " + " ".join(paths)) + " --format documentation"
            text = _rspec(paths, rng, fail, extra)
        else:
            cmd = arg
            if cmd.startswith("git status"):
                text = "\n".join(f" M {p}" for p in sorted({e[0] for e in EDITS})) + "\n?? " + _HELPER[0]
            elif cmd.startswith("git diff"):
                text = (" app/middleware/request_throttle.rb       | 19 +++++++++++++++----\n"
                        " config/application.rb                    |  3 ++-\n"
                        " spec/middleware/request_throttle_spec.rb |  8 ++++++++\n"
                        " 3 files changed, 26 insertions(+), 4 deletions(-)")
            elif cmd.startswith("bin/rails routes"):
                text = _ROUTES
            else:
                text = "Inspecting 4 files\n....\n\n4 files inspected, no offenses detected"
        say = rng.choice(_SAY["Bash"]).format(cmd=cmd)
        return ToolCall(call_id(), "Bash", {"command": cmd, "description": "Run " + cmd.split()[0]}), text, say
    if tool == "Edit":
        path, old, new, say = arg
        args = {"file_path": _abs(path), "old_string": old, "new_string": new}
        if shop_api.FILES[path].count(old) > 1 or old == "token.plain":
            args["replace_all"] = True
        if old == "token.plain":  # the fix edits the example added by EDITS[2]
            return (ToolCall(call_id(), "Edit", args),
                    f"The file {_abs(path)} has been updated. All occurrences of 'token.plain' were successfully "
                    f"replaced with 'token.raw_token'.", say)
        return ToolCall(call_id(), "Edit", args), _edit_result(path, old, new), say
    if tool == "TodoWrite":
        return (ToolCall(call_id(), "TodoWrite", {"todos": _todo_list(arg)}),
                "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
                "progress. Please proceed with the current tasks if applicable", rng.choice(_SAY["TodoWrite"]))
    return (ToolCall(call_id(), "Write", {"file_path": _abs(_HELPER[0]), "content": _HELPER[1]}),
            f"File created successfully at: {_abs(_HELPER[0])}", _SAY["Write"][0])


_TOOLS = ("Read", "Read", "Read", "Grep", "Grep", "Glob", "Bash", "Bash", "Edit", "Edit", "TodoWrite", "Write")
_READ_ONLY = ("Read", "Read", "Grep", "Glob")  # agents that only answer a question
DELEGATED_TASK = ("Review RateLimiter (app/services/rate_limiter.rb)"
                  " for per-account keys: Retry-After must never be 0; keep its spec green and report the public API.")


OVERHEAD_TOKENS = 3000  # system prompt and tool definitions: sent, and cached, at every request


def generate(n: int, seed: int = 0, name: str = "main", *, big_reads: bool = True, prompt: str | None = None,
             delegate: Callable[[str], str] | None = None, delegate_tool: str = "",
             ephemeral_every: int = 0) -> Agent:
    """An agent conversation of exactly `n` messages (n >= 2).

    It opens with a scripted piece of the task (the lead's, or the one for
    `name`), then goes on with steps drawn at random from the same repository.
    """
    rng = random.Random(f"{seed}:{name}")
    agent = Agent(name)
    msgs = agent.messages
    counter = [0]
    script = list(_SCRIPTS.get(name, _LEAD_SCRIPT))
    if delegate is None:
        script = [s for s in script if s[1][0][0] != "Delegate"]

    def call_id() -> str:
        counter[0] += 1
        return f"toolu_{rng.getrandbits(64):016x}{counter[0]:06d}"

    # Recorded usage follows the content (about 4 characters a token): each call reads
    # from the cache what the previous call wrote, and writes what came since. That is the
    # history as sent while nothing compacts it (record_usage_as_sent re-records a compacted one).
    cached = 0
    pending = OVERHEAD_TOKENS
    msgs.append(Message(role="user", content=prompt or
                        "Add per-account rate limiting to the orders API: 100 requests a minute, a 429 with "
                        "Retry-After when exceeded, and specs. Check how Redis is configured first."))
    pending += len(msgs[0].text) // 4

    def record(out_tokens: int) -> Usage:
        nonlocal cached, pending
        fresh = min(pending, rng.randint(3, 40))
        usage = Usage(input_tokens=fresh, output_tokens=out_tokens, cache_read_tokens=cached,
                      cache_write_tokens=pending - fresh)
        cached += pending
        pending = out_tokens
        return usage

    steps = 0
    while len(msgs) < n - 1:
        steps += 1
        room = n - 1 - len(msgs)
        if room == 1 and msgs[-1].role != "user":  # no room for a call and its result: the user wraps up
            msgs.append(Message(role="user", content="Thanks. Please wrap up with a short summary."))
            continue
        if steps % 17 == 0 and room >= 3:
            text, answer = rng.choice(_FOLLOW_UPS)
            script[:0] = answer
            r = rng.random()
            if r < 0.35:
                text += "\n\n" + _REMINDER_TODO
            elif r < 0.6:
                path = rng.choice(_PATHS)
                text += "\n\n" + _reminder_modified(path, rng.randint(1, max(1, len(_LINES[path]) - 6)))
            msgs.append(Message(role="user", content=text))
            pending += len(text) // 4
            if ephemeral_every:  # SwarmSDK adds the current todo list to each user prompt, for that request only
                agent.ephemeral[len(msgs) - 1] = (_ephemeral(rng, 0, agent.context_window, kind=1),)
            continue
        planned_by_script = bool(script)
        if script:
            say, planned = script.pop(0)
            planned = planned[:max(1, (room - 1) // 2)]
        else:
            k = min(rng.choice((1, 1, 1, 2, 2, 3)), max(1, (room - 1) // 2))
            tools = _READ_ONLY if name in ("backend", "explore") else _TOOLS
            planned = []
            for _ in range(k):  # distinct steps: an agent does not run the same call twice at once
                step = _random_step(rng, rng.choice(tools))
                if step[0] == "Read" or step not in planned:
                    planned.append(step)
            say = None
            if delegate is not None and steps % 23 == 5:
                planned[0] = ("Delegate", None)
        calls, results = [], []
        for step in planned:
            if step[0] == "Delegate":
                task = DELEGATED_TASK
                tc, res, first = ToolCall(call_id(), delegate_tool, {"task": task}), delegate(task), _SAY["Delegate"][0]
            else:
                tc, res, first = _run_step(rng, step, call_id, big_reads)
            calls.append(tc)
            results.append(res)
            if say is None:
                say = first if rng.random() < 0.8 else ""
            elif len(calls) > 1 and say and step[0] != "Delegate" and not planned_by_script:
                say += " " + (step[1][3] if step[0] == "Edit" else _ALSO[step[0]].format(
                    path=tc.arguments.get("file_path", "").removeprefix(REPO + "/"), pat=tc.arguments.get("pattern"),
                    cmd=tc.arguments.get("command")))
        text = say or ""
        out_tokens = len(text) // 4 + 40 * len(calls)
        usage = record(out_tokens)
        msgs.append(Message(role="assistant", content=text, tool_calls=tuple(calls), model_id=agent.model,
                            usage=usage, thinking=rng.choice(_THINK) if rng.random() < 0.3 else None))
        for tc, res in zip(calls, results):
            if len(msgs) >= n - 1:
                break
            msgs.append(Message(role="tool", content=res, tool_call_id=tc.id, tool_name=tc.name))
            pending += len(res) // 4
        if ephemeral_every and steps % ephemeral_every == 0:
            pct = min(95, (cached + pending) * 100 // agent.context_window)
            agent.ephemeral[len(msgs) - 1] = (_ephemeral(rng, pct, agent.context_window),)
    # never end on an assistant message whose calls have no results
    last = msgs[-1]
    if last.role == "assistant" and last.tool_calls:
        msgs[-1] = last.replace(tool_calls=())
    summary = _SUMMARIES.get(name, _SUMMARY)
    if name == "explore":
        summary = "Every read of Redis.current:\n" + _grep(r"Redis\.current").split("\n\n", 1)[-1]
    msgs.append(Message(role="assistant", content=summary, model_id=agent.model, usage=record(180)))
    # calls answered only partly (cut by n) lose the unanswered ones
    answered = {m.tool_call_id for m in msgs if m.role == "tool"}
    for i, m in enumerate(msgs):
        if m.tool_calls and any(c.id not in answered for c in m.tool_calls):
            msgs[i] = m.replace(tool_calls=tuple(c for c in m.tool_calls if c.id in answered))
    # a step whose calls were all cut has nothing left to say: every format would drop it
    for i, m in enumerate(msgs):
        if m.role == "assistant" and not m.tool_calls and not m.text:
            msgs[i] = m.replace(content="That covers everything; let me sum up.")
    return agent


# --- the SwarmSDK demo: lead, backend, backend@lead ------------------------------------------------

LEAD_PROMPT = ("You are the lead engineer of a Rails API team. Plan the work, read the code before changing it, "
               "delegate service implementation to the backend agent, and verify with the test suite.")
BACKEND_PROMPT = "You are a backend engineer. Implement Ruby services with specs. Keep changes small."


def demo_agents(seed: int = 0) -> list[Agent]:
    inst = generate(46, seed, "backend@lead", big_reads=True, ephemeral_every=4, prompt=DELEGATED_TASK)
    inst.system_prompt = BACKEND_PROMPT
    report = inst.messages[-1].text
    lead = generate(184, seed, "lead", big_reads=True, ephemeral_every=3,
                    delegate=lambda task: report, delegate_tool="DelegateTaskToBackend")
    lead.system_prompt = LEAD_PROMPT
    backend = generate(24, seed, "backend", big_reads=False, ephemeral_every=5,
                       prompt="Which Redis client does this app use, and where is it configured?")
    backend.system_prompt = BACKEND_PROMPT
    return [lead, backend, inst]


DEMO_SETTINGS = {"keep_recent": 10, "tiers": "default", "compression": True, "embed_ephemeral": True}


def demo_session(seed: int = 0) -> Session:
    convs = []
    for a in demo_agents(seed):
        convs.append(Conversation(
            name=a.name, messages=tuple(a.messages), system_prompt=a.system_prompt, ephemeral=a.ephemeral,
            model=a.model, context_window=a.context_window, compression_applied=None,
            settings=dict(DEMO_SETTINGS), metadata={"delegates_to": ["backend"]} if a.name == "lead" else {},
        ))
    return Session(format="ctxview", source="", conversations=tuple(convs),
                   metadata={"title": "SwarmSDK demo: rate limiting for the orders API",
                             "swarm_name": "Shop API team", "generator": "benchmarks/make_session.py"})


# --- writers -----------------------------------------------------------------------------------

_T0 = datetime(2026, 3, 2, 9, 15, 0, tzinfo=timezone.utc)


def _clock(step_seconds: float = 2.5) -> Iterator[str]:
    t = _T0
    while True:
        yield t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        t += timedelta(seconds=step_seconds)


def _uuids(seed: Any) -> Callable[[], str]:
    rng = random.Random(f"uuid:{seed}")
    return lambda: str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def _dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def _write_lines(path: Path, lines: Iterator[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        for obj in lines:
            f.write(_dumps(obj) + b"\n")
    os.replace(tmp, path)


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)


def _usage_anthropic(u: Usage | None) -> dict:
    u = u or Usage()
    return {"input_tokens": u.input_tokens, "cache_creation_input_tokens": u.cache_write_tokens,
            "cache_read_input_tokens": u.cache_read_tokens, "output_tokens": u.output_tokens,
            "service_tier": "standard"}


CC_COMPACT_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of "
    "context. The conversation is summarized below:\n\nAnalysis:\nThe user asked for "
    "per-account rate limiting on the orders API. Redis is configured in "
    "config/initializers/redis.rb; RateLimiter lives in app/services/rate_limiter.rb.\n\n"
    "Summary:\n1. Primary Request: 100 requests/minute per account, 429 + Retry-After.\n"
    "2. Files touched: rate_limiter.rb, request_throttle.rb, orders_spec.rb.\n"
    "3. Pending: make limits configurable per plan.\n\nPlease continue the conversation "
    "from where we left it off without asking the user any further questions.")
CODEX_COMPACT_SUMMARY = ("Summary of the work so far: per-account rate limiting is implemented in "
                         "app/services/rate_limiter.rb with a Redis fixed window; specs pass; remaining: per-plan limits.")


def claude_code_lines(agent: Agent, seed: int = 0, *, compact_at: int | None = None, pre_tokens: int = 0,
                      session_id: str | None = None, sidechain: bool = False,
                      agent_id: str | None = None) -> Iterator[dict]:
    """Claude Code JSONL records for `agent`, shaped like Claude Code 2.1 writes them; with `compact_at`,
    a compaction (of `pre_tokens` tokens in context) before the first turn from that index on."""
    new_uuid = _uuids(f"{seed}:{agent.name}")
    clock = _clock()
    sid = session_id or new_uuid()
    base = {"isSidechain": sidechain, "userType": "external", "cwd": "/home/dev/shop-api", "sessionId": sid,
            "version": "2.1.38", "gitBranch": "feature/rate-limits"}
    if agent_id:
        base["agentId"] = agent_id
    parent: str | None = None
    call_line: dict[str, str] = {}
    rng = random.Random(f"cc:{seed}")
    msgs = agent.messages
    i = 0
    if not sidechain:
        yield {"type": "file-history-snapshot", "messageId": new_uuid(),
               "snapshot": {"trackedFileBackups": {}, "timestamp": next(clock)}, "isSnapshotUpdate": False}
    while i < len(msgs):
        m = msgs[i]
        if compact_at is not None and i >= compact_at:  # at the first turn from there on
            compact_at = None
            bid = new_uuid()
            yield {"parentUuid": None, "logicalParentUuid": parent, **base, "type": "system",
                   "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                   "timestamp": next(clock), "uuid": bid, "level": "info",
                   "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens}}
            sid_uuid = new_uuid()
            yield {"parentUuid": bid, **base, "type": "user", "isCompactSummary": True,
                   "isVisibleInTranscriptOnly": True, "uuid": sid_uuid, "timestamp": next(clock),
                   "message": {"role": "user", "content": CC_COMPACT_SUMMARY}}
            parent = sid_uuid
        ts = next(clock)
        if m.role == "user":
            u = new_uuid()
            rec = {"parentUuid": parent, **base, "type": "user", "message": {"role": "user", "content": m.text},
                   "uuid": u, "timestamp": ts}
            if m.injected:
                rec["isMeta"] = True
            yield rec
            parent = u
            if not sidechain and rng.random() < 0.2:  # a hook runs: progress lines sit in the chain
                p = new_uuid()
                yield {"parentUuid": parent, **base, "type": "progress", "uuid": p, "timestamp": ts,
                       "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit",
                                "command": "~/.claude/hooks/notify.sh"},
                       "toolUseID": str(uuidlib.UUID(int=rng.getrandbits(128))), "parentToolUseID": None}
                parent = p
            i += 1
        elif m.role == "assistant":
            mid = f"msg_01{rng.getrandbits(80):020x}"
            req = f"req_011C{rng.getrandbits(72):018x}"
            blocks: list[dict] = []
            if m.thinking:
                blocks.append({"type": "thinking", "thinking": m.thinking, "signature": "Eu8BCkYIBhgCKkB" + "A" * 40})
            if m.text:
                blocks.append({"type": "text", "text": m.text})
            for tc in m.tool_calls:
                blocks.append({"type": "tool_use", "id": tc.id, "name": tc.name, "input": dict(tc.arguments)})
            if not blocks:
                blocks.append({"type": "text", "text": ""})
            for b in blocks:  # one line per content block, all sharing message.id
                u = new_uuid()
                yield {"parentUuid": parent, **base, "message": {
                    "model": m.model_id or agent.model, "id": mid, "type": "message", "role": "assistant",
                    "content": [b], "stop_reason": None, "stop_sequence": None, "usage": _usage_anthropic(m.usage)},
                    "requestId": req, "type": "assistant", "uuid": u, "timestamp": ts}
                if b["type"] == "tool_use":
                    call_line[b["id"]] = u
                parent = u
            i += 1
        else:  # tool results: each result's parent is the line of its own call
            last = parent
            while i < len(msgs) and msgs[i].role == "tool":
                t = msgs[i]
                u = new_uuid()
                yield {"parentUuid": call_line.get(t.tool_call_id or "", last), **base, "type": "user",
                       "message": {"role": "user", "content": [
                           {"tool_use_id": t.tool_call_id, "type": "tool_result", "content": t.text}]},
                       "uuid": u, "timestamp": next(clock),
                       "toolUseResult": {"type": "text"} if t.tool_name == "Read" else t.text[:200]}
                last = u
                i += 1
            parent = last


def codex_lines(agent: Agent, seed: int = 0, *, compact_at: int | None = None) -> Iterator[dict]:
    """A Codex CLI rollout for `agent` (tools mapped to exec_command / apply_patch)."""
    clock = _clock(1.7)
    rng = random.Random(f"codex:{seed}")
    sid = _uuids(f"codex:{seed}")()
    ts = next(clock)
    yield {"timestamp": ts, "type": "session_meta", "payload": {
        "id": sid, "timestamp": ts, "cwd": "/home/dev/shop-api", "originator": "codex_cli_rs", "cli_version": "0.89.0",
        "source": "cli", "model_provider": "openai",
        "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5. You and the user share the same "
                                      "workspace and collaborate to achieve the user's goals.\n\n" + agent.system_prompt}},
    }
    yield {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "<permissions instructions>Filesystem sandboxing: workspace-write. "
                                       "Approval policy: on-request.</permissions instructions>"}]}}
    yield {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/shop-api</cwd>\n  <shell>bash</shell>\n"
                                       "</environment_context>"}]}}
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
             "total_tokens": 0}
    msgs = agent.messages
    for i, m in enumerate(msgs):
        ts = next(clock)
        if compact_at is not None and i == compact_at:
            summary = CODEX_COMPACT_SUMMARY
            first_user = next(x.text for x in msgs if x.role == "user")
            yield {"timestamp": ts, "type": "compacted", "payload": {"message": summary, "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": first_user}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]},
            ]}}
            yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "context_compacted"}}
        if m.role == "user":
            yield {"timestamp": ts, "type": "turn_context", "payload": {
                "cwd": "/home/dev/shop-api", "approval_policy": "on-request", "model": "gpt-5.2-codex",
                "effort": "high", "summary": "auto"}}
            yield {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": m.text}]}}
            yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": m.text,
                                                                     "images": []}}
        elif m.role == "assistant":
            if m.thinking:
                yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_reasoning", "text": m.thinking}}
                yield {"timestamp": ts, "type": "response_item", "payload": {
                    "type": "reasoning", "summary": [{"type": "summary_text", "text": m.thinking}], "content": None,
                    "encrypted_content": "gAAAAABp" + "x" * 64}}
            if m.text:
                yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_message", "message": m.text}}
                yield {"timestamp": ts, "type": "response_item", "payload": {
                    "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": m.text}]}}
            for tc in m.tool_calls:
                if tc.name == "Edit":
                    old = "\n".join("-" + x for x in str(tc.arguments.get("old_string")).split("\n"))
                    new = "\n".join("+" + x for x in str(tc.arguments.get("new_string")).split("\n"))
                    patch = f"*** Begin Patch\n*** Update File: {tc.arguments.get('file_path')}\n@@\n{old}\n{new}\n*** End Patch"
                    yield {"timestamp": ts, "type": "response_item", "payload": {
                        "type": "custom_tool_call", "status": "completed", "call_id": tc.id, "name": "apply_patch",
                        "input": patch}}
                elif tc.name == "TodoWrite":
                    plan = [{"step": t["content"], "status": t["status"]} for t in tc.arguments.get("todos", [])]
                    yield {"timestamp": ts, "type": "response_item", "payload": {
                        "type": "function_call", "name": "update_plan", "arguments": orjson.dumps({"plan": plan}).decode(),
                        "call_id": tc.id}}
                else:
                    cmd = {"Read": lambda a: f"nl -ba {a.get('file_path')} | sed -n '{a.get('offset', 1)},"
                                             f"{a.get('offset', 1) + a.get('limit', 2000) - 1}p'",
                           "Grep": lambda a: f"rg -n '{a.get('pattern')}' {a.get('path', '.')}",
                           "Glob": lambda a: f"rg --files -g '{a.get('pattern')}'",
                           "Bash": lambda a: str(a.get("command")),
                           "Write": lambda a: f"cat > {a.get('file_path')} <<'EOF'\n{a.get('content')}EOF"
                           }.get(tc.name, lambda a: f"echo {tc.name}")(tc.arguments)
                    yield {"timestamp": ts, "type": "response_item", "payload": {
                        "type": "function_call", "name": "exec_command", "arguments": orjson.dumps({"cmd": cmd}).decode(),
                        "call_id": tc.id}}
            u = m.usage or Usage()
            last = {"input_tokens": u.context_tokens, "cached_input_tokens": u.cache_read_tokens,
                    "output_tokens": u.output_tokens, "reasoning_output_tokens": 0,
                    "total_tokens": u.context_tokens + u.output_tokens}
            for k in total:
                total[k] += last[k]
            info = {"total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 258400}
            for _ in range(2):  # Codex writes the count again at the next turn start
                yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": info,
                                                                         "rate_limits": None}}
        else:
            if m.tool_name == "Edit":
                out = orjson.dumps({"output": "Success. Updated the following files:\nM " + m.text.split(" ")[2] + "\n",
                                    "metadata": {"exit_code": 0, "duration_seconds": 0.0}}).decode()
                yield {"timestamp": ts, "type": "response_item", "payload": {
                    "type": "custom_tool_call_output", "call_id": m.tool_call_id, "output": out}}
            elif m.tool_name == "TodoWrite":
                yield {"timestamp": ts, "type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": m.tool_call_id, "output": "Plan updated"}}
            else:
                text = m.text
                if m.tool_name == "Read":  # `nl -ba` numbers lines with a tab, not an arrow
                    text = re.sub(r"^( *\d+)\u2192", "\\1\t", text.split("\n\n<system-reminder>")[0], flags=re.M)
                elif m.tool_name == "Grep":  # rg prints the matches only
                    text = text.split("\n\n", 1)[-1] if text.startswith("Found ") else ""
                elif m.tool_name == "Glob":  # rg --files: relative paths, no header
                    text = "\n".join(x.removeprefix(REPO + "/") for x in text.split("\n")[1:])
                elif m.tool_name == "Write":
                    text = ""
                out = (f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: {rng.uniform(0.01, 3):.4f} seconds\n"
                       f"Process exited with code 0\nOriginal token count: {len(text) // 4}\nOutput:\n{text}")
                yield {"timestamp": ts, "type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": m.tool_call_id, "output": out}}


def openai_chat(agent: Agent) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": agent.system_prompt or "You are a helpful coding assistant."}]
    for m in agent.messages:
        if m.role == "assistant":
            d: dict[str, Any] = {"role": "assistant", "content": m.text or None}
            if m.tool_calls:
                d["tool_calls"] = [{"id": tc.id.replace("toolu_", "call_"), "type": "function",
                                    "function": {"name": tc.name, "arguments": orjson.dumps(dict(tc.arguments)).decode()}}
                                   for tc in m.tool_calls]
            out.append(d)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": (m.tool_call_id or "").replace("toolu_", "call_"),
                        "content": m.text})
        else:
            out.append({"role": m.role, "content": m.text})
    return out


def openai_responses(agent: Agent) -> list[dict]:
    out: list[dict] = []
    for m in agent.messages:
        if m.role == "assistant":
            if m.thinking:
                out.append({"type": "reasoning", "id": "rs_" + (m.tool_calls[0].id[-12:] if m.tool_calls else "0"),
                            "summary": [{"type": "summary_text", "text": m.thinking}]})
            if m.text:
                out.append({"type": "message", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": m.text, "annotations": []}]})
            for tc in m.tool_calls:
                out.append({"type": "function_call", "call_id": tc.id.replace("toolu_", "call_"), "name": tc.name,
                            "arguments": orjson.dumps(dict(tc.arguments)).decode(), "status": "completed"})
        elif m.role == "tool":
            out.append({"type": "function_call_output", "call_id": (m.tool_call_id or "").replace("toolu_", "call_"),
                        "output": m.text})
        else:
            out.append({"type": "message", "role": m.role, "content": [{"type": "input_text", "text": m.text}]})
    return out


def anthropic_request(agent: Agent) -> dict:
    messages: list[dict] = []
    for m in agent.messages:
        if m.role == "assistant":
            blocks: list[dict] = []
            if m.thinking:
                blocks.append({"type": "thinking", "thinking": m.thinking, "signature": "EqQBCgIYAhIM" + "B" * 32})
            if m.text:
                blocks.append({"type": "text", "text": m.text})
            blocks += [{"type": "tool_use", "id": tc.id, "name": tc.name, "input": dict(tc.arguments)} for tc in m.tool_calls]
            messages.append({"role": "assistant", "content": blocks})
        elif m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text}
            if messages and messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], list) and \
                    all(b.get("type") == "tool_result" for b in messages[-1]["content"]):
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": m.text}]})
    return {"model": agent.model, "max_tokens": 8192, "system": agent.system_prompt or "You are a coding assistant.",
            "messages": messages}


def _swarm_message(m: Message) -> dict:
    d: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.tool_calls:
        d["tool_calls"] = [{"id": tc.id, "name": tc.name, "arguments": dict(tc.arguments)} for tc in m.tool_calls]
    if m.tool_call_id:
        d["tool_call_id"] = m.tool_call_id
    if m.usage:
        d["input_tokens"] = m.usage.context_tokens
        d["output_tokens"] = m.usage.output_tokens
    if m.model_id:
        d["model_id"] = m.model_id
    return d


def swarm_snapshot(agents: list[Agent]) -> dict:
    """A SwarmSDK 2.1 snapshot (StateSnapshot#snapshot) of the agents."""
    def entry(a: Agent) -> dict:
        return {"conversation": [_swarm_message(m) for m in a.messages],
                "context_state": {"warning_thresholds_hit": [60] if len(a.messages) > 100 else [],
                                  "compression_applied": None, "last_todowrite_message_index": None,
                                  "active_skill_path": None},
                "system_prompt": a.system_prompt}
    return {
        "version": "2.1.0", "type": "swarm", "snapshot_at": "2026-03-02T10:02:11Z", "swarm_sdk_version": "2.7.1",
        "metadata": {"id": "main", "parent_id": None, "name": "Shop API team", "first_message_sent": True},
        "agents": {a.name: entry(a) for a in agents if "@" not in a.name},
        "delegation_instances": {a.name: entry(a) for a in agents if "@" in a.name},
        "scratchpad": {}, "read_tracking": {}, "plugin_states": {},
    }


def swarm_events(agents: list[Agent]) -> Iterator[dict]:
    """LogStream events for the agents (interleaved by time, as a swarm run emits them)."""
    clock = _clock(0.9)
    common = {"swarm_id": "main", "parent_swarm_id": None}
    yield {"type": "swarm_start", "timestamp": next(clock), **common, "agent": agents[0].name,
           "swarm_name": "Shop API team", "lead_agent": agents[0].name, "prompt": agents[0].messages[0].text}
    for a in agents:
        yield {"type": "agent_start", "timestamp": next(clock), **common, "agent": a.name, "model": a.model,
               "provider": "anthropic", "directory": ".", "system_prompt": a.system_prompt,
               "tools": ["Read", "Grep", "Glob", "Bash", "Edit", "Write", "TodoWrite"],
               "delegates_to": ["backend"] if a.name == "lead" else [],
               "is_delegation_instance": "@" in a.name, "base_agent": a.name.split("@")[0] if "@" in a.name else None}
    cumulative = 0
    warned: set[str] = set()
    for a in agents:
        for i, m in enumerate(a.messages):
            ts = next(clock)
            if m.role == "user":
                yield {"type": "user_prompt", "timestamp": ts, **common, "agent": a.name, "model": a.model,
                       "provider": "anthropic", "message_count": i, "source": "user",
                       "metadata": {"prompt": m.text, "message_count": i, "source": "user", "timestamp": ts}}
            elif m.role == "assistant":
                u = m.usage or Usage()
                cumulative += u.context_tokens
                last = i == len(a.messages) - 1
                yield {"type": "agent_stop" if last else "agent_step", "timestamp": ts, **common, "agent": a.name,
                       "model": a.model, "content": m.text,
                       "tool_calls": None if last else [{"id": tc.id, "name": tc.name, "arguments": dict(tc.arguments)}
                                                        for tc in m.tool_calls],
                       "finish_reason": "stop" if last else "tool_calls",
                       "usage": {"input_tokens": u.context_tokens, "output_tokens": u.output_tokens,
                                 "total_tokens": u.context_tokens + u.output_tokens, "cumulative_input_tokens": cumulative,
                                 "context_limit": a.context_window,
                                 "tokens_used_percentage": f"{100 * u.context_tokens / a.context_window:.2f}%"},
                       "metadata": {}}
                for tc in m.tool_calls:
                    yield {"type": "tool_call", "timestamp": ts, **common, "agent": a.name, "tool_call_id": tc.id,
                           "tool": tc.name, "arguments": dict(tc.arguments), "metadata": {}}
                if u.context_tokens > 0.6 * a.context_window and a.name not in warned:
                    warned.add(a.name)
                    yield {"type": "context_threshold_hit", "timestamp": ts, **common, "agent": a.name, "threshold": 60}
            else:
                kind = "delegation_result" if (m.tool_name or "").startswith("DelegateTask") else "tool_result"
                ev = {"type": kind, "timestamp": ts, **common, "agent": a.name, "tool_call_id": m.tool_call_id,
                      "result": m.text, "metadata": {}}
                if kind == "tool_result":
                    ev["tool"] = m.tool_name
                else:
                    ev["delegate_from"] = "backend"
                yield ev


# --- recorded usage after a compaction ----------------------------------------------------------

def record_usage_as_sent(agent: Agent, seed: int, compact_at: int, carried: tuple[str, ...]) -> int:
    """Re-record, in place, each request's usage in `agent` as its harness sent it, for a file whose
    compaction runs before message `compact_at` (where its writer puts the boundary): the overhead
    plus the messages sent, which from the compaction on are `carried` (what the compaction sent in
    place of the history: summary, replacement history) and what follows. A message weighs about
    4 characters a token, with a little noise per message (a tokenizer's ratio varies with the
    text); a reply weighs its output tokens. The previous request's context is read from the cache
    and the rest written; after the compaction only the overhead is still cached (as in real Claude
    Code files). Returns the tokens in context when the compaction ran (Claude Code's preTokens)."""
    rng = random.Random(f"usage:{seed}:{agent.name}")
    msgs = agent.messages

    def weight(text: str) -> int:
        return round(len(text) / 4 * rng.uniform(0.94, 1.06))

    sent, cached, before = OVERHEAD_TOKENS, 0, 0  # the next request's context, and what of it is cached
    for i, m in enumerate(msgs):
        if i == compact_at:
            before = sent
            sent, cached = OVERHEAD_TOKENS + sum(weight(t) for t in carried), OVERHEAD_TOKENS
        if m.role == "assistant" and m.usage is not None:
            fresh = min(sent - cached, rng.randint(3, 40))
            msgs[i] = m.replace(usage=Usage(input_tokens=fresh, output_tokens=m.usage.output_tokens,
                                            cache_read_tokens=cached, cache_write_tokens=sent - cached - fresh))
            cached = sent
            sent += m.usage.output_tokens
        else:
            sent += weight(m.text)
    return before


# --- entry points ------------------------------------------------------------------------------

def write(path: str | os.PathLike, n: int, fmt: str, seed: int = 0) -> Path:
    """Write a synthetic session of `n` messages (one conversation) in format `fmt`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (choices: {', '.join(FORMATS)})")
    if n < 2:
        raise ValueError("n must be at least 2")
    path = Path(path)
    agent = generate(n, seed, "main", big_reads=False, ephemeral_every=6)
    agent.system_prompt = LEAD_PROMPT
    if fmt == "ctxview":
        from ctxview.formats.native import write_session

        conv = Conversation(name="main", messages=tuple(agent.messages), system_prompt=agent.system_prompt,
                            ephemeral=agent.ephemeral, model=agent.model, context_window=agent.context_window,
                            settings=dict(DEMO_SETTINGS))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_session(Session("ctxview", "", (conv,), {"title": f"synthetic session, {n} messages"}), path,
                      indent=n <= 5000)
    elif fmt == "claude-code":
        _write_lines(path, claude_code_lines(agent, seed))
    elif fmt == "codex":
        _write_lines(path, codex_lines(agent, seed))
    elif fmt == "openai":
        _write_json(path, openai_chat(agent))
    elif fmt == "openai-responses":
        _write_json(path, openai_responses(agent))
    elif fmt == "anthropic":
        _write_json(path, anthropic_request(agent))
    elif fmt == "swarm-snapshot":
        _write_json(path, swarm_snapshot([agent]))
    elif fmt == "swarm-events":
        _write_lines(path, swarm_events([agent]))
    return path


def write_samples(seed: int = 0, root: Path = ROOT) -> list[Path]:
    """Regenerate sample_sessions/ and the bundled demo ctxview/samples/swarm-demo.ctxview.json under `root`."""
    from ctxview.formats.native import write_session

    written = []
    demo = root / "ctxview" / "samples" / "swarm-demo.ctxview.json"
    demo.parent.mkdir(parents=True, exist_ok=True)
    write_session(demo_session(seed), demo)
    written.append(demo)
    agents = demo_agents(seed)
    out = root / "sample_sessions"
    _write_json(out / "swarm-demo.snapshot.json", swarm_snapshot(agents))
    _write_lines(out / "swarm-demo.events.jsonl", swarm_events(agents))
    # Claude Code: a main transcript with one compaction, and one sub-agent file beside it
    cc = generate(120, seed, "claude", big_reads=True)
    sid = "7b1f3c52-9a4e-4d1b-8f57-3e2c9d0a6b18"
    pre = record_usage_as_sent(cc, seed, 84, (CC_COMPACT_SUMMARY,))
    _write_lines(out / "claude-code" / f"{sid}.jsonl",
                 claude_code_lines(cc, seed, compact_at=84, pre_tokens=pre, session_id=sid))
    sub = generate(14, seed, "explore", big_reads=False,
                   prompt="Find every place that reads Redis.current and report file:line for each.")
    _write_lines(out / "claude-code" / sid / "subagents" / "agent-a3f9c1e.jsonl",
                 claude_code_lines(sub, seed + 1, session_id=sid, sidechain=True, agent_id="a3f9c1e"))
    cx = generate(70, seed, "codex", big_reads=True)
    cx.system_prompt = ""
    record_usage_as_sent(cx, seed, 52, (next(m.text for m in cx.messages if m.role == "user"), CODEX_COMPACT_SUMMARY))
    _write_lines(out / "codex" / "rollout-2026-03-02T09-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
                 codex_lines(cx, seed, compact_at=52))
    small = generate(30, seed, "api", big_reads=False)
    small.system_prompt = LEAD_PROMPT
    _write_json(out / "openai-chat.json", openai_chat(small))
    _write_json(out / "openai-responses.json", openai_responses(small))
    _write_json(out / "anthropic-request.json", anthropic_request(small))
    written += sorted(p for p in out.rglob("*") if p.is_file() and not p.is_symlink())
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, help="number of messages")
    parser.add_argument("--format", "-f", default="ctxview", choices=FORMATS)
    parser.add_argument("-o", "--output", help="output file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", action="store_true", help="regenerate sample_sessions/ and the bundled demo")
    args = parser.parse_args(argv)
    if args.samples:
        for p in write_samples(args.seed):
            print(p.relative_to(ROOT))
        return 0
    if args.n is None or not args.output:
        parser.error("give N and -o OUT (or --samples)")
    p = write(args.output, args.n, args.format, args.seed)
    print(f"{p} ({p.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
