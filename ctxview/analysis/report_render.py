"""`ctxview report` as text: the report's data (report.build_report) as tables and lines.

One neutral description (titles, tables, lines) rendered either with Rich on a
terminal or as plain aligned text when piped. Every cell from the session goes
through the sanitiser and into a Text object, never into markup. Rich is
imported only to draw on a terminal.
"""

from __future__ import annotations

from typing import Any, Sequence

from ctxview.engine.context_tokens import basis_label, format_figure

__all__ = ["render_report"]


def _fmt_int(value: Any) -> str:
    return "-" if value is None else f"{value:,}"


def _gauge(share: float | None, width: int = 40, *, ascii_only: bool = False) -> str:
    """A bar with SwarmSDK's 60/80/90% marks: ████████│░░░│░│░."""
    from ctxview.engine.windows import WARNING_MARKS

    if share is None:
        return ""
    full, empty, mark = ("#", ".", "|") if ascii_only else ("█", "░", "│")
    filled = min(width, round(share * width))
    cells = [full if i < filled else empty for i in range(width)]
    for m in WARNING_MARKS:
        pos = round(m * width)
        if 0 <= pos < width and pos >= filled:
            cells[pos] = mark
    return "[" + "".join(cells) + "]"


def _report_sections(conv: dict[str, Any], *, ascii_only: bool) -> list[tuple]:
    """A conversation's report as ("title", str) / ("line", str, level) / ("table", title, headers, rows)."""
    return [*_view_lines(conv), _tokens_table(conv), *_context_lines(conv, ascii_only), *_calibration_lines(conv),
            *_usage_sections(conv), *_requests_sections(conv), *_bloat_sections(conv)]


def _requests_sections(conv: dict[str, Any]) -> list[tuple]:
    """The requests table (--requests), and each cache loss with its cause."""
    if conv.get("requests") is None:
        return []
    from ctxview.analysis.request_table import requests_text_rows

    out: list[tuple] = [("table", "Requests (context in the model's tokens; ≈: calibrated)",
                         ["n", "message", "time", "context", "basis", "added", "cache read", "cache write",
                          "cache lost (cause)", "cost", "largest parts"], requests_text_rows(conv["requests"]))]
    for r in conv["requests"]:
        cache = r["cache"]
        if cache and cache["lost"]:
            usd = "" if cache["usd"] is None else f", {_money(cache['usd'])}"
            out.append(("line", f"request {r['number']} (#{r['index']}) lost {cache['lost']:,} cached tokens: "
                                f"{cache['cause']} ({cache['detail']}){usd}", 1))
    return out


def _view_lines(conv: dict[str, Any]) -> list[tuple]:
    """The title, which view this is (as sent, or a what-if) and of which request, and the compactions."""
    model = conv.get("model") or "unknown model"
    out: list[tuple] = [("title", f"{conv['name']} · {model} · counter {conv['counter']}")]
    req = conv["request"]
    which = "the next request" if req["index"] is None else f"request {req['number']} of {req['of']} (#{req['index']})"
    # As sent, or a what-if: never let a simulation read as what the model saw.
    out.append(("line", f"view: {conv['view_label']} · {which}", 0 if conv["view"] == "as-sent" else 1))
    if conv.get("keep_recent_note"):
        out.append(("line", conv["keep_recent_note"], 1))
    for c in conv["compactions"]:
        what = {"compaction": f"{c.get('messages_replaced', 0):,} messages replaced by its summary",
                "microcompaction": f"{c.get('results_cleared', 0):,} tool results cleared",
                "compression": "old tool results compressed by SwarmSDK"}.get(c["kind"], "")
        extra = ", ".join(x for x in (c["trigger"], f"{c['tokens_before']:,} tokens before, recorded"
                                      if c["tokens_before"] is not None else None) if x)
        out.append(("line", f"{c['kind']} at #{c['index']}" + (f" ({extra})" if extra else "") + f": {what}", 0))
    note = (conv.get("deferred_tools") or {}).get("note")
    if note:
        out.append(("line", f"deferred tools: {note}", 0))
    return out


def _tokens_table(conv: dict[str, Any]) -> tuple:
    rows = []
    for role, e in conv["by_role"].items():
        rows.append([role, _fmt_int(e["stored"]), _fmt_int(e["prepared"]),
                     _fmt_int(e["tokens_stored"]), _fmt_int(e["tokens_prepared"])])
    t = conv["tokens"]
    if t.get("system"):
        rows.append(["system prompt", "1", "1", _fmt_int(t["system"]), _fmt_int(t["system"])])
    rows.append(["total", _fmt_int(conv["messages"]["stored"]), _fmt_int(conv["messages"]["prepared"]),
                 _fmt_int(t["stored"]), _fmt_int(t["prepared"])])
    return ("table", "Messages and tokens", ["role", "stored", "prepared", "tokens stored", "tokens prepared"], rows)


def _context_lines(conv: dict[str, Any], ascii_only: bool) -> list[tuple]:
    """The window gauge, what the pipeline did, the budget and the reminders."""
    out: list[tuple] = []
    t = conv["tokens"]
    w = conv["window"]
    c = conv.get("context") or {"tokens": t["prepared"], "basis": "counted"}
    figure = format_figure(c["tokens"], c["basis"])
    if w["size"]:
        share = w["share"] or 0.0
        level = w["marks_reached"]
        out.append(("line", f"context window {w['size']:,}: {figure} = {share:.1%} "
                            f"{_gauge(share, ascii_only=ascii_only)} marks 60/80/90%", level))
    else:
        out.append(("line", f"context {figure}; context window unknown (use --context-window N)", 0))
    losses = conv.get("cache_losses")
    if losses and losses["requests"]:
        causes = ", ".join(f"{k} {v:,}" for k, v in losses["by_cause"].items())
        usd = "no price" if losses["usd"] is None else _money(losses["usd"])
        out.append(("line", f"prompt cache: lost {losses['tokens']:,} tokens of cache at {losses['requests']:,} "
                            f"request{'s' if losses['requests'] != 1 else ''}: {usd} ({causes})", 1))
    tr = conv["tool_results"]
    ch = conv["changes"]
    out.append(("line", f"tool results {tr['total']:,}: {tr['compressed']:,} compressed, {tr['cleared']:,} cleared; "
                        f"{ch.get('excerpted', 0):,} excerpted, {ch.get('removed', 0) + ch.get('summarised', 0):,} "
                        f"summarised or removed, {ch.get('dropped', 0):,} dropped for the budget", 0))
    if conv["budget"]["tokens"]:
        short = conv["budget"]["shortfall"]
        basis = basis_label(conv["budget"].get("basis") or "counted")
        out.append(("line", f"budget {conv['budget']['tokens']:,} tokens ({basis}): "
                            + (f"still {short:,} over (the protected part alone is too big)" if short else "fits"),
                    2 if short else 0))
    r = conv["reminders"]
    out.append(("line", f"system reminders: {r['stored']:,} tokens stored in history, "
                        f"{r['ephemeral']:,} ephemeral for this request", 0))
    return out


def _calibration_lines(conv: dict[str, Any]) -> list[tuple]:
    """The estimate against the recorded usage, and its fit."""
    out: list[tuple] = []
    cal = conv["calibration"]
    if cal["requests"]:
        error = "n/a" if cal["mean_abs_error"] is None else f"{cal['mean_abs_error']:.1%}"
        if cal.get("factor_note"):
            factor = f"n/a: {cal['factor_note']}"
        else:
            factor = "n/a (the estimate is 0)" if cal["factor"] is None else f"×{cal['factor']:.3f}"
        noun = "request" if cal["requests"] == 1 else "requests"
        out.append(("line", f"calibration over {cal['requests']:,} recorded {noun}: estimate "
                            f"{cal['estimated_total']:,} vs recorded {cal['recorded_total']:,} tokens, mean error "
                            f"{error}, correction factor {factor}", 0))
        if cal.get("slope") is not None and not cal.get("fit_note"):
            r2 = f", r² {cal['r2']:.3f}" if cal.get("r2") is not None else ""
            out.append(("line", f"  fit ({cal.get('view', 'as-stored')}{r2}): recorded ≈ {cal['overhead']:,} + "
                                f"{cal['slope']:.3f} × estimate "
                                "(the constant is what each request carried that the file does not store: "
                                "system prompt, tool definitions)", 0))
    return out


def _bloat_sections(conv: dict[str, Any]) -> list[tuple]:
    """The bloat verdict, its tables, the rows (with --messages) and the recommendations."""
    out: list[tuple] = []
    b = conv["bloat"]
    rule = str(b.get("rule") or "")
    verdict = "" if rule.startswith("no verdict") else "BLOATED: " if b["bloated"] else "not bloated: "
    figure = format_figure(b["total_tokens"], b.get("basis", "counted"))
    out.append(("line", f"bloat: {verdict}{rule} (the request as sent: {figure})", 3 if b["bloated"] else 0))
    if b["by_tool"]:
        out.append(("table", "Tokens by tool (counted)", ["tool", "tokens"],
                    [[name, _fmt_int(v)] for name, v in list(b["by_tool"].items())[:10]]))
    if b["largest"]:
        out.append(("table", "Largest messages (counted)", ["index", "role", "tool", "tokens"],
                    [[str(x["index"]), x["role"], x["tool"] or "", _fmt_int(x["tokens"])] for x in b["largest"]]))
    if b["repeated"]:
        out.append(("table", "Repeated tool results (counted)", ["kind", "tool", "copies", "wasted tokens"],
                    [[x["kind"], x["tool"], str(len(x["indices"])), _fmt_int(x["wasted_tokens"])]
                     for x in b["repeated"][:10]]))
    if b["stale"]:
        stale_tokens = sum(x["tokens"] for x in b["stale"])
        out.append(("line", f"stale large tool results: {len(b['stale']):,} ({stale_tokens:,} tokens counted)", 0))
    if conv.get("rows") is not None:
        out.append(("table", "Messages", ["index", "role", "tool", "stored", "prepared", "what changed"],
                    [["+" if r["index"] is None else str(r["index"]), r["role"] or "", r["tool"] or "",
                      _fmt_int(r["tokens_stored"]), _fmt_int(r["tokens_prepared"]),
                      "; ".join(f"{c['action']}: {c['detail']}" for c in r["changes"])] for r in conv["rows"]]))
    out.extend(_advice_sections(b))
    for x in b.get("applied", ()):
        out.append(("line", f"already applied: {x['setting']} ({x['action']}: {x['saves']:,} tokens of the "
                            "request as sent)", 0))
    return out




def _advice_sections(b: dict[str, Any]) -> list[tuple]:
    """The recommendations as replayed (advice.rank_advice): the ones that save, by dollars, then each
    one that raises the bill, as such."""
    out: list[tuple] = []
    if b["recommendations"]:
        rows = []
        for x in b["recommendations"]:
            r = x.get("replay")
            if r is None:
                rows.append([x["action"], x["setting"], _fmt_int(x["saves"]), "-", x.get("not_replayed") or "-"])
            else:
                rows.append([x["action"], x["setting"], _fmt_int(r["tokens_saved_per_request"]),
                             f"{_share(r['as_sent_read_share'])} → {_share(r['read_share'])}", r["verdict"]])
        out.append(("table", "Recommendations", ["action", "setting", "tokens saved per request", "cache reads",
                                                 "cost"], rows))
        out.append(("line", "(measured on the request as sent, in the model's tokens; each replayed over the "
                            "requests through the prompt cache and priced against the as-sent view; most dollars "
                            "saved first)", 0))
    for x in b.get("raises_bill", ()):
        r = x["replay"]
        out.append(("line", f"not recommended: {x['setting']} ({x['action']}) {r['verdict']}: "
                            f"{_fmt_int(r['tokens_saved_per_request'])} tokens less per request, but cache reads "
                            f"{_share(r['as_sent_read_share'])} → {_share(r['read_share'])}", 2))
    return out


# --- usage, cost and the prompt cache ------------------------------------------------

def _document_sections(data: dict[str, Any]) -> list[tuple]:
    """Every conversation's sections, then the session's usage and cost (sub-agents included)."""
    out = [section for conv in data["conversations"] for section in _report_sections(conv, ascii_only=False)]
    if "usage" in data:
        out.append(("title", "session: every conversation, sub-agents included"))
        out.extend(_usage_table(data["usage"], data["cost"], "Recorded usage"))
    if "trace" in data:
        out.extend(_trace_sections(data["trace"]))
    return out


_DETAILS_SHOWN = 3  # differences listed per request (the count says how many more; --json has them all)


def _trace_sections(trace: dict[str, Any]) -> list[tuple]:
    """The transcript's as-sent reconstruction against the trace's request bodies, request by request."""
    reqs = trace["requests"]
    out: list[tuple] = [("title", f"trace: what was really sent ({trace['trace']})"),
                        ("line", f"{trace['requests_matching']:,} of {trace['requests_compared']:,} requests "
                                 "reconstructed exactly as sent (view: as sent)", 0)]
    out.extend(("line", f"not in the transcript (every request): {n}", 0) for n in trace["not_in_transcript"])
    if reqs:
        rows = []
        for r in reqs:
            first = r["differences"][0] if r["differences"] else None
            where = "" if first is None else (f"#{first['stored_index']}" if first["stored_index"] is not None
                                              else f"#{first['sent_index']} as sent")
            rows.append((r["request"], r["conversation"], r["trace_line"], r["matched_by"],
                         "✓ matches" if r["matches"] else f"✗ {len(r['differences'])} difference(s)", where))
        out.append(("table", "Requests against the trace", ("request", "conversation", "trace line", "matched by",
                                                            "as sent", "first difference"), rows))
    for r in reqs:
        for d in r["differences"][:_DETAILS_SHOWN]:
            out.append(("line", f"request {r['request']} ({r['conversation']}), message #{d['sent_index']} as sent, "
                                f"{d['kind']}: {d['detail']}", 1))
        if len(r["differences"]) > _DETAILS_SHOWN:
            out.append(("line", f"request {r['request']}: {len(r['differences']) - _DETAILS_SHOWN} more difference(s) "
                                "(see --json)", 1))
    if trace["unmatched_trace_lines"]:
        lines = ", ".join(map(str, trace["unmatched_trace_lines"][:20]))
        more = "…" if len(trace["unmatched_trace_lines"]) > 20 else ""
        out.append(("line", f"trace requests with no request in the transcript (side calls, sub-agents not in this "
                            f"file): lines {lines}{more}", 0))
    if trace["unmatched_requests"]:
        out.append(("line", f"{len(trace['unmatched_requests']):,} transcript request(s) with no request in the trace",
                    1))
    return out


def _usage_sections(conv: dict[str, Any]) -> list[tuple]:
    out = _usage_table(conv["usage"], conv["cost"], "Recorded usage") if "usage" in conv else []
    out = out + _cache_sections(conv.get("cache"), conv.get("compare"))
    return out + ([("chart", conv["context_series"])] if conv.get("context_series") else [])


def _money(usd: Any) -> str:
    return "no price" if usd is None else f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def _cost_text(cost: dict[str, Any]) -> str:
    if cost["usd"] is None:
        return "no price" + (f" ({', '.join(cost['unpriced_models'])} not in the table; --price sets one)"
                             if cost.get("unpriced_models") else "")
    text = _money(cost["usd"])
    if not cost["priced"]:
        text += (f" for the priced requests ({cost['unpriced_requests']:,} of {', '.join(cost['unpriced_models'])} "
                 "have no price; --price sets one)")
    return text + f" (prices as of {cost['prices_as_of']})" + _recorded_cost(cost)


def _recorded_cost(cost: dict[str, Any]) -> str:
    """The harness's own figure beside ctxview's, where the file wrote one (older Claude Code's costUSD)."""
    if cost.get("recorded_usd") is None:
        return ""
    return f"; the file recorded {_money(cost['recorded_usd'])} (costUSD, {cost['recorded_requests']:,} requests)"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _pct_change(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0%}".replace("-", "−")


def _cache_sections(cache: dict[str, Any] | None, compare: dict[str, Any] | None) -> list[tuple]:
    out: list[tuple] = []
    if cache and cache["simulated"]["requests"]:
        fit = (f"calibrated: overhead {cache['overhead']:,} + ×{cache['scale']:.3f}" if cache["calibrated"]
               else "not calibrated (fewer than 2 recorded requests): ctxview's estimate alone")
        rec = cache["recorded_read_share"]
        ttl = cache["ttl"] + {"file": " as the file's writes", "option": ""}.get(cache.get("ttl_source", ""), "")
        if cache.get("reads_parent_cache"):
            fit = (f"a compaction agent: reads the main conversation's cache ({cache['warm']:,} tokens, as recorded), "
                   "then writes its own request")
        out.append(("line", f"prompt cache (simulated, TTL {ttl}, minimum {cache['minimum_tokens']:,} "
                            f"tokens, {fit}): cache reads {_share(cache['simulated_read_share'])} of input"
                            + (f", recorded {_share(rec)}" if rec is not None else ""), 0))
    if compare:
        base, rec = compare["as_sent"], compare["recorded"]
        rows = []
        if rec is not None:
            rows.append(["as sent (recorded)", _fmt_int(rec["tokens"] // max(rec["requests"], 1)),
                         _share(rec["read_share"]), _money(rec["usd"]), "", "", ""])
        rows.append(["as sent (simulated)", _fmt_int(base["tokens"] // max(base["requests"], 1)),
                     _share(base["read_share"]), _money(base["usd"]), "", "", ""])
        for r in compare["settings"]:
            rows.append([r["label"], _fmt_int(r["tokens"] // max(r["requests"], 1)), _share(r["read_share"]),
                         _money(r["usd"]), _pct_change(r["tokens_change"]), _pct_change(r["cost_change"]),
                         r["verdict"]])
        replayed = f"{base['requests']:,} request{'s' if base['requests'] != 1 else ''}"
        out.append(("table", f"What each setting costs ({replayed} replayed; changes against "
                             "as sent, simulated; cheapest first)",
                    ["setting", "tokens per request", "cache reads", "cost", "tokens change", "cost change",
                     "against as sent"], rows))
        for r in compare["settings"]:
            cost = r["verdict"] + (f" ({_pct_change(r['cost_change'])})" if r["cost_change"] is not None else "")
            out.append(("line", f"{r['label']}: {_pct_change(r['tokens_change'])} tokens per request, cache reads "
                                f"{_share(base['read_share'])} → {_share(r['read_share'])}, {cost}",
                        2 if (r.get("usd_change") or 0) > 0 else 0))
    return out


def _usage_table(usage: dict[str, Any], cost: dict[str, Any], title: str) -> list[tuple]:
    if not usage["requests"]:
        return [("line", f"{title}: no usage recorded", 0)]
    write = _fmt_int(usage["cache_write"])
    if usage.get("cache_write_1h"):  # priced apart: 2x base input against 1.25x for 5-minute writes
        write += f" ({usage['cache_write_1h']:,} 1h)"
    return [("table", title, ["requests", "input", "output", "cache read", "cache write", "cost"],
             [[_fmt_int(usage["requests"]), _fmt_int(usage["input"]), _fmt_int(usage["output"]),
               _fmt_int(usage["cache_read"]), write, _cost_text(cost)]])]


def render_report(data: dict[str, Any], stream: Any, *, warnings: Sequence[str] = (), skipped: int = 0) -> None:
    """Print the report: Rich tables on a terminal, plain text otherwise."""
    from ctxview.sanitize import sanitize

    tty = hasattr(stream, "isatty") and stream.isatty()
    header = f"{data['source']} ({data['format']})"
    # The loaders' warnings say what was skipped and why; the bare count only
    # when they said nothing.
    notes = list(warnings) or ([f"{skipped:,} lines skipped"] if skipped else [])
    if not tty:
        lines = [sanitize(header)]
        lines.extend(f"note: {sanitize(n)}" for n in notes)
        for section in _document_sections(data):
            lines.extend(_plain_section(section, sanitize))
        stream.write("\n".join(lines) + "\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, highlight=False)
    console.print(Text(sanitize(header), style="bold"))
    for n in notes:
        console.print(Text(f"note: {sanitize(n)}", style="yellow"))
    styles = {0: "", 1: "yellow", 2: "dark_orange", 3: "bold red"}
    for section in _document_sections(data):
        kind = section[0]
        if kind == "title":
            console.print()
            console.print(Text(sanitize(section[1]), style="bold cyan"))
        elif kind == "line":
            console.print(Text(sanitize(section[1]), style=styles.get(section[2], "")))
        elif kind == "chart":
            from ctxview.analysis.report_chart import context_chart

            console.print(Text("Context per request", style="bold"))
            console.print(context_chart(section[1], width=max(20, console.width - 20)))
        else:
            _, title, headers, rows = section
            table = Table(title=Text(title), title_justify="left")
            for i, h in enumerate(headers):
                numeric = all(str(r[i]).replace(",", "").replace("-", "").isdigit() for r in rows)
                table.add_column(Text(h), justify="right" if numeric else "left")
            for row in rows:
                table.add_row(*(Text(sanitize(str(c))) for c in row))
            console.print(table)


def _plain_section(section: tuple, sanitize) -> list[str]:
    kind = section[0]
    if kind == "title":
        return ["", f"== {sanitize(section[1])} =="]
    if kind == "line":
        return [sanitize(section[1])]
    if kind == "chart":  # drawn on a terminal only
        return []
    _, title, headers, rows = section
    cells = [[sanitize(str(c)) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    numeric = [all(r[i].replace(",", "").replace("-", "").isdigit() or not r[i] for r in cells) if cells else False
               for i in range(len(headers))]

    def fmt(row: Sequence[str]) -> str:
        parts = [c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(row)]
        return "  ".join(parts).rstrip()

    return ["", f"{title}:", fmt(headers), *(fmt(r) for r in cells)]


