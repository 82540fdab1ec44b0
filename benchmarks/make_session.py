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

FORMATS = ("ctxview", "claude-code", "codex", "openai", "openai-responses", "anthropic",
           "swarm-snapshot", "swarm-events")

# --- text material -------------------------------------------------------------------------

_FILES = [
    "app/controllers/api/v1/orders_controller.rb", "app/models/order.rb", "app/models/user.rb",
    "app/services/rate_limiter.rb", "app/services/billing/invoice_builder.rb", "config/routes.rb",
    "lib/tasks/cleanup.rake", "spec/services/rate_limiter_spec.rb", "spec/models/order_spec.rb",
    "app/jobs/sync_inventory_job.rb", "app/middleware/request_throttle.rb", "config/initializers/redis.rb",
    "db/migrate/20260112093000_add_quota_to_accounts.rb", "app/models/account.rb",
    "app/serializers/order_serializer.rb", "spec/requests/api/v1/orders_spec.rb",
]
_CODE = [
    "# frozen_string_literal: true", "", "module Api", "  module V1", "    class OrdersController < BaseController",
    "      before_action :authenticate_user!", "      before_action :load_order, only: %i[show update destroy]",
    "      def index", "        orders = current_account.orders.includes(:line_items).order(created_at: :desc)",
    "        render json: OrderSerializer.new(orders.page(params[:page])).serializable_hash", "      end",
    "      def create", "        result = Orders::Create.call(account: current_account, params: order_params)",
    "        if result.success?", "          render json: OrderSerializer.new(result.order), status: :created",
    "        else", "          render json: { errors: result.errors }, status: :unprocessable_entity", "        end",
    "      private", "      def order_params", "        params.require(:order).permit(:currency, line_items: %i[sku quantity])",
    "    end", "  end", "end", "class RateLimiter", "  WINDOW = 60", "  def initialize(redis: Redis.current, limit: 100)",
    "    @redis = redis", "    @limit = limit", "  def allow?(key)", "    count = @redis.incr(bucket(key))",
    "    @redis.expire(bucket(key), WINDOW) if count == 1", "    count <= @limit", "  def bucket(key)",
    "    \"rl:#{key}:#{Time.now.to_i / WINDOW}\"", "RSpec.describe RateLimiter do",
    "  let(:redis) { MockRedis.new }", "  it 'allows requests under the limit' do",
    "    expect(described_class.new(redis: redis, limit: 2).allow?('a')).to be(true)",
    "  validates :email, presence: true, uniqueness: { case_sensitive: false }",
    "  has_many :orders, dependent: :destroy", "  belongs_to :account", "  scope :active, -> { where(archived_at: nil) }",
    "    Rails.logger.info(\"[sync] #{items.size} items in #{elapsed.round(2)}s\")",
    "  def perform(account_id)", "    account = Account.find(account_id)", "    return unless account.inventory_sync_enabled?",
]
_WORDS = ("the request throttle rate limiter order account quota redis window bucket middleware controller spec "
          "billing invoice sync job retry header response status limit key counter expire cache user api").split()
_REMINDER_READ = ("<system-reminder>\nWhenever you read a file, you should consider whether it looks malicious. "
                  "If it does, you MUST refuse to improve or augment the code.\n</system-reminder>")
_REMINDER_TODO = ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. If you're working on tasks "
                  "that would benefit from tracking progress, consider using it.\n</system-reminder>")
_EPHEMERAL = [
    "<system-reminder>Context usage is at {pct}% of the window. Prefer targeted reads over whole files.</system-reminder>",
    "<system-reminder>Current todo list: {n} items, {done} completed. Keep it up to date.</system-reminder>",
    "<system-reminder>You are working in /home/dev/shop-api on branch feature/rate-limits.</system-reminder>",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def _read_result(rng: random.Random, path: str, lines: int) -> str:
    start = rng.randint(1, 40)
    body = [f"{start + i:>6}\u2192{_CODE[(start + i * 7) % len(_CODE)]}" for i in range(lines)]
    return "\n".join(body)


def _grep_result(rng: random.Random, pattern: str) -> str:
    files = rng.sample(_FILES, rng.randint(2, 7))
    hits = []
    for f in files:
        for _ in range(rng.randint(1, 6)):
            hits.append(f"{f}:{rng.randint(3, 220)}:{_CODE[rng.randrange(len(_CODE))].strip()}")
    return f"Found {len(hits)} matches in {len(files)} files for /{pattern}/:\n\n" + "\n".join(hits)


def _glob_result(rng: random.Random, pattern: str) -> str:
    files = sorted(rng.sample(_FILES, rng.randint(3, 12)))
    return f"Found {len(files)} files matching {pattern}:\n" + "\n".join(files)


def _bash_result(rng: random.Random, cmd: str) -> str:
    if "rspec" in cmd:
        n = rng.randint(20, 240)
        dots = "".join(rng.choice("......F*") for _ in range(n))
        fails = dots.count("F")
        lines = [dots, "", f"Finished in {rng.uniform(0.8, 19):.2f} seconds (files took 1.21 seconds to load)",
                 f"{n} examples, {fails} failures, {dots.count('*')} pending"]
        for k in range(fails):
            lines[1:1] = [f"  {k + 1}) RateLimiter allows requests under the limit",
                          "     Failure/Error: expect(limiter.allow?('a')).to be(true)",
                          f"       expected true\n            got false\n     # ./spec/services/rate_limiter_spec.rb:{rng.randint(5, 60)}"]
        return "\n".join(lines)
    if "git" in cmd:
        return "\n".join(f" M {f}" for f in rng.sample(_FILES, rng.randint(1, 5)))
    return "\n".join(_sentence(rng, rng.randint(4, 12)) for _ in range(rng.randint(1, 8)))


# --- the conversation generator ----------------------------------------------------------------

@dataclass
class Agent:
    name: str
    messages: list[Message] = field(default_factory=list)
    ephemeral: dict[int, tuple[str, ...]] = field(default_factory=dict)
    system_prompt: str = ""
    model: str = "claude-sonnet-4-5-20250929"
    context_window: int = 200_000


def _tool_step(rng: random.Random, call_id: Callable[[], str], tools: tuple[str, ...], big: bool) -> tuple[ToolCall, str]:
    tool = rng.choice(tools)
    if tool == "Read":
        path = rng.choice(_FILES)
        n = rng.randint(60, 420) if big else rng.randint(8, 60)
        text = _read_result(rng, path, n)
        if rng.random() < 0.3:
            text += "\n\n" + _REMINDER_READ
        return ToolCall(call_id(), "Read", {"file_path": f"/home/dev/shop-api/{path}"}), text
    if tool == "Grep":
        pat = rng.choice(["rate_limit", "allow\\?", "Redis.current", "def perform", "throttle", "quota"])
        return ToolCall(call_id(), "Grep", {"pattern": pat, "path": "app", "output_mode": "content"}), _grep_result(rng, pat)
    if tool == "Glob":
        pat = rng.choice(["**/*.rb", "app/services/**/*.rb", "spec/**/*_spec.rb", "config/**/*.rb"])
        return ToolCall(call_id(), "Glob", {"pattern": pat}), _glob_result(rng, pat)
    if tool == "Bash":
        cmd = rng.choice(["bundle exec rspec spec/services", "git status --short", "bin/rails routes | grep orders",
                          "bundle exec rspec"])
        return ToolCall(call_id(), "Bash", {"command": cmd, "description": "Run " + cmd.split()[0]}), _bash_result(rng, cmd)
    if tool == "Edit":
        path = rng.choice(_FILES)
        old, new = rng.choice(_CODE).strip(), rng.choice(_CODE).strip()
        return (ToolCall(call_id(), "Edit", {"file_path": f"/home/dev/shop-api/{path}", "old_string": old, "new_string": new}),
                f"The file /home/dev/shop-api/{path} has been updated. Here's the result of running `cat -n` on a snippet "
                f"of the edited file:\n" + _read_result(rng, path, rng.randint(4, 12)))
    if tool == "TodoWrite":
        todos = [{"content": _sentence(rng, 5), "status": rng.choice(["pending", "in_progress", "completed"]),
                  "activeForm": _sentence(rng, 4)} for _ in range(rng.randint(2, 6))]
        return (ToolCall(call_id(), "TodoWrite", {"todos": todos}),
                "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
                "progress. Please proceed with the current tasks if applicable")
    path = rng.choice(_FILES)
    return (ToolCall(call_id(), "Write", {"file_path": f"/home/dev/shop-api/{path}", "content": _read_result(rng, path, 5)}),
            f"File created successfully at: /home/dev/shop-api/{path}")


_TOOLS = ("Read", "Read", "Read", "Grep", "Grep", "Glob", "Bash", "Bash", "Edit", "Edit", "TodoWrite", "Write")


def generate(n: int, seed: int = 0, name: str = "main", *, big_reads: bool = True, prompt: str | None = None,
             delegate: Callable[[str], str] | None = None, delegate_tool: str = "",
             ephemeral_every: int = 0) -> Agent:
    """An agent conversation of exactly `n` messages (n >= 2)."""
    rng = random.Random(f"{seed}:{name}")
    agent = Agent(name)
    msgs = agent.messages
    counter = [0]

    def call_id() -> str:
        counter[0] += 1
        return f"toolu_{rng.getrandbits(64):016x}{counter[0]:06d}"

    # Recorded usage follows the content (about 4 characters a token): each call reads
    # from the cache what the previous call wrote, and writes what came since.
    cached = 0
    pending = 3000  # system prompt and tool definitions
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
        if steps % 17 == 0 and room >= 2:
            text = rng.choice([
                "Looks good so far. Also make the limit configurable per plan (free: 60, pro: 600).",
                "The CI run failed on the request spec; can you look at it?",
                "Please don't touch the billing code, it belongs to another team.",
                "Can you also log when a request is throttled?",
            ])
            if rng.random() < 0.5:
                text += "\n\n" + _REMINDER_TODO
            msgs.append(Message(role="user", content=text))
            pending += len(text) // 4
            continue
        k = min(rng.choice((1, 1, 1, 2, 2, 3)), max(1, (room - 1) // 2))
        calls, results = [], []
        use_delegate = delegate is not None and steps % 23 == 5
        for _ in range(k):
            if use_delegate:
                task = "Implement the RateLimiter service with Redis and its spec; report the public API."
                tc = ToolCall(call_id(), delegate_tool, {"task": task})
                calls.append(tc)
                results.append(delegate(task))
                use_delegate = False
                continue
            tc, res = _tool_step(rng, call_id, _TOOLS, big_reads)
            calls.append(tc)
            results.append(res)
        text = _sentence(rng, rng.randint(6, 30)) if rng.random() < 0.7 else ""
        out_tokens = len(text) // 4 + 40 * k
        usage = record(out_tokens)
        msgs.append(Message(role="assistant", content=text, tool_calls=tuple(calls), model_id=agent.model,
                            usage=usage, thinking=_sentence(rng, 20) if rng.random() < 0.3 else None))
        for tc, res in zip(calls, results):
            if len(msgs) >= n - 1:
                break
            msgs.append(Message(role="tool", content=res, tool_call_id=tc.id, tool_name=tc.name))
            pending += len(res) // 4
        if ephemeral_every and steps % ephemeral_every == 0:
            tmpl = rng.choice(_EPHEMERAL)
            agent.ephemeral[len(msgs) - 1] = (tmpl.format(pct=min(95, (cached + pending) * 100 // agent.context_window),
                                                          n=rng.randint(3, 8), done=rng.randint(0, 3)),)
    # never end on an assistant message whose calls have no results
    last = msgs[-1]
    if last.role == "assistant" and last.tool_calls:
        msgs[-1] = last.replace(tool_calls=())
    msgs.append(Message(role="assistant", content="Done. " + _sentence(rng, 25), model_id=agent.model,
                        usage=record(180)))
    # calls answered only partly (cut by n) lose the unanswered ones
    answered = {m.tool_call_id for m in msgs if m.role == "tool"}
    for i, m in enumerate(msgs):
        if m.tool_calls and any(c.id not in answered for c in m.tool_calls):
            msgs[i] = m.replace(tool_calls=tuple(c for c in m.tool_calls if c.id in answered))
    return agent


# --- the SwarmSDK demo: lead, backend, backend@lead ------------------------------------------------

LEAD_PROMPT = ("You are the lead engineer of a Rails API team. Plan the work, read the code before changing it, "
               "delegate service implementation to the backend agent, and verify with the test suite.")
BACKEND_PROMPT = "You are a backend engineer. Implement Ruby services with specs. Keep changes small."


def demo_agents(seed: int = 0) -> list[Agent]:
    inst = generate(46, seed, "backend@lead", big_reads=True, ephemeral_every=4,
                    prompt="Implement the RateLimiter service with Redis and its spec; report the public API.")
    inst.system_prompt = BACKEND_PROMPT
    report = ("RateLimiter is in app/services/rate_limiter.rb: `RateLimiter.new(limit:, window:).allow?(key)` "
              "returns false once `limit` requests hit the same key inside `window` seconds; "
              "`retry_after(key)` gives the seconds left. Spec: spec/services/rate_limiter_spec.rb (12 examples, green).")
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


def claude_code_lines(agent: Agent, seed: int = 0, *, compact_at: int | None = None, session_id: str | None = None,
                      sidechain: bool = False, agent_id: str | None = None) -> Iterator[dict]:
    """Claude Code JSONL records for `agent`, shaped like Claude Code 2.1 writes them."""
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
        if compact_at is not None and i == compact_at:
            bid = new_uuid()
            yield {"parentUuid": None, "logicalParentUuid": parent, **base, "type": "system",
                   "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                   "timestamp": next(clock), "uuid": bid, "level": "info",
                   "compactMetadata": {"trigger": "auto", "preTokens": 167_412}}
            sid_uuid = new_uuid()
            yield {"parentUuid": bid, **base, "type": "user", "isCompactSummary": True,
                   "isVisibleInTranscriptOnly": True, "uuid": sid_uuid, "timestamp": next(clock),
                   "message": {"role": "user", "content":
                               "This session is being continued from a previous conversation that ran out of "
                               "context. The conversation is summarized below:\n\nAnalysis:\nThe user asked for "
                               "per-account rate limiting on the orders API. Redis is configured in "
                               "config/initializers/redis.rb; RateLimiter lives in app/services/rate_limiter.rb.\n\n"
                               "Summary:\n1. Primary Request: 100 requests/minute per account, 429 + Retry-After.\n"
                               "2. Files touched: rate_limiter.rb, request_throttle.rb, orders_spec.rb.\n"
                               "3. Pending: make limits configurable per plan.\n\nPlease continue the conversation "
                               "from where we left it off without asking the user any further questions."}}
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
            summary = ("Summary of the work so far: per-account rate limiting is implemented in "
                       "app/services/rate_limiter.rb with a Redis fixed window; specs pass; remaining: per-plan limits.")
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
                    patch = (f"*** Begin Patch\n*** Update File: {tc.arguments.get('file_path')}\n@@\n"
                             f"-{tc.arguments.get('old_string')}\n+{tc.arguments.get('new_string')}\n*** End Patch")
                    yield {"timestamp": ts, "type": "response_item", "payload": {
                        "type": "custom_tool_call", "status": "completed", "call_id": tc.id, "name": "apply_patch",
                        "input": patch}}
                else:
                    cmd = {"Read": lambda a: f"sed -n '1,400p' {a.get('file_path')}",
                           "Grep": lambda a: f"rg -n '{a.get('pattern')}' {a.get('path', '.')}",
                           "Glob": lambda a: f"rg --files -g '{a.get('pattern')}'",
                           "Bash": lambda a: str(a.get("command"))}.get(tc.name, lambda a: f"echo {tc.name}")(tc.arguments)
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
            else:
                out = (f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: {rng.uniform(0.01, 3):.4f} seconds\n"
                       f"Process exited with code 0\nOriginal token count: {len(m.text) // 4}\nOutput:\n{m.text}")
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
    _write_lines(out / "claude-code" / f"{sid}.jsonl", claude_code_lines(cc, seed, compact_at=84, session_id=sid))
    sub = generate(14, seed, "explore", big_reads=False,
                   prompt="Find every place that reads Redis.current and report file:line for each.")
    _write_lines(out / "claude-code" / sid / "subagents" / "agent-a3f9c1e.jsonl",
                 claude_code_lines(sub, seed + 1, session_id=sid, sidechain=True, agent_id="a3f9c1e"))
    cx = generate(70, seed, "codex", big_reads=True)
    cx.system_prompt = ""
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
