"""The compressor's plans and memo tables: what a run of the fast compressor keeps for the next.

A `Plan` per policy (the tier limit of each age in a table, the marker split, the hints formatted,
and identity tables of what each message and each text was cut into) and a `Memo` holding the
plans, the cuts shared by policies that render alike, the call-id maps and the tool-name
detections. A PipelineCache owns one Memo (compression.MEMO serves callers without one).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ctxview._fast.cut_tokens import CutTokens
from ctxview._fast.tool_names import NameTable
from ctxview.identity_table import IdentityTable
from ctxview.model import Message
from ctxview.tiers import CompressionPolicy, limits_by_age, tier_for_age

__all__ = ["CACHE_LIMIT", "Memo", "Plan", "table_for"]

CACHE_LIMIT = 400_000  # entries per memo table before it is emptied


def table_for(tables: dict[int, IdentityTable], limit: int) -> IdentityTable:
    """The table of results for a tier limit, made when first asked for, with its entries stored."""
    table = tables.get(limit)
    if table is None:
        table = tables[limit] = IdentityTable(CACHE_LIMIT)
    elif table.pending:
        table.settle()
    return table


class Plan:
    """What one policy needs per message, precomputed once, plus its cache.

    The cache maps max_chars to an IdentityTable of {id(message): result} (with the tool name
    given, if any). Messages are immutable, so a hit is always still right.
    """

    __slots__ = ("policy", "limits", "top", "last_limit", "marker_parts", "hints", "by_content", "msgs", "cuts",
                 "names")

    def __init__(self, policy: CompressionPolicy, msgs: dict, names: NameTable) -> None:
        self.policy = policy
        self.names = names  # the memo's tool-name detections, by text
        # A table by age for the common ages; huge tier ages fall back to a search.
        self.limits, self.top = limits_by_age(policy)
        self.last_limit = policy.tiers[-1].max_chars
        self.marker_parts = policy.marker.split("{n}")
        # the hint of each re-runnable tool, formatted once
        self.hints = {tool: policy.hint.replace("{tool}", tool) for tool in policy.rerunnable_tools}
        self.by_content = policy.tool_name_from == "content"
        self.msgs = msgs
        # {max_chars: IdentityTable of {id(text): cut text} (with the tool name given, if any)}: a text
        # several messages share (a file read twice, loaded as one string) is cut into one string too
        self.cuts: dict[int, IdentityTable] = {}

    def limit(self, age: int) -> int | None:
        if 0 <= age < len(self.limits):
            return self.limits[age]
        if age < 0 or age > self.top:
            return self.last_limit
        return tier_for_age(self.policy, age)[1].max_chars

    def render(self, text: str, max_chars: int, tool_name: str | None) -> str:
        """compress_text for a text longer than max_chars; detects the name by content if so set."""
        out = text[:max_chars] + str(len(text) - max_chars).join(self.marker_parts)
        if self.by_content:
            tool_name = self.names.detect(text)
        hint = self.hints.get(tool_name) if tool_name is not None else None
        return out if hint is None else out + hint

    def cut(self, text: str, max_chars: int, tool_name: str | None, shared: bool = True) -> str:
        """render(), remembered by text: a text several messages hold is cut into one string.
        shared=False: the caller knows no other message holds `text`, so it is not looked up or
        remembered by text (its message's result is)."""
        if not shared:
            return self.render(text, max_chars, tool_name)
        cuts = table_for(self.cuts, max_chars)
        hit = cuts.get(text, tool_name)
        if hit is not None:
            return hit
        out = self.render(text, max_chars, tool_name)
        cuts.put(text, out, tool_name)
        return out


class Memo:
    """The tables a run of the compressor keeps for the next: the plan of each policy (with what it
    cut), the cuts shared by policies that render alike (keys hold the limit, so other tiers reuse
    them), and each messages tuple's call-id map. A PipelineCache owns one (its runs return the
    very objects an earlier run returned); MEMO serves callers without one. Bounded; `clear`
    frees them at once."""

    __slots__ = ("plans", "shared", "links", "names", "measures")

    def __init__(self) -> None:
        self.names = NameTable()  # the tool each text names (detection depends on the text alone)
        self.plans: dict[CompressionPolicy, Plan] = {}
        self.shared: dict[tuple, dict] = {}
        self.measures: dict[tuple, CutTokens] = {}  # by the fields a cut's rendering reads
        # {id(messages tuple): (messages, {call id: tool name})}
        self.links: dict[int, tuple[tuple, Mapping[str, str]]] = {}

    def plan_for(self, policy: CompressionPolicy) -> Plan:
        plan = self.plans.get(policy)
        if plan is None:
            if len(self.plans) > 64:
                self.plans.clear()
            render = (policy.marker, policy.hint, policy.rerunnable_tools, policy.tool_name_from)
            msgs = self.shared.get(render)
            if msgs is None:
                if len(self.shared) > 16:
                    self.shared.clear()
                msgs = self.shared[render] = {}
            plan = self.plans[policy] = Plan(policy, msgs, self.names)
        return plan

    def cut_tokens(self, policy: CompressionPolicy) -> CutTokens:
        """A CutTokens for `policy`, the same for every policy that renders a cut alike (with the
        tools its texts name, detected once)."""
        render = (policy.marker, policy.hint, policy.rerunnable_tools, policy.tool_name_from)
        measure = self.measures.get(render)
        if measure is None:
            if len(self.measures) > 16:
                self.measures.clear()
            measure = self.measures[render] = CutTokens(policy)
        return measure

    def names_of(self, messages: Sequence[Message]) -> Mapping[str, str] | None:
        """The call-id map kept for `messages` (a tuple, as a Conversation's: it cannot change)."""
        if type(messages) is not tuple:
            return None
        kept = self.links.get(id(messages))
        return kept[1] if kept is not None and kept[0] is messages else None

    def keep_names(self, messages: Sequence[Message], names: Mapping[str, str] | None) -> None:
        if names is not None and type(messages) is tuple:
            if len(self.links) >= 8:
                self.links.clear()
            self.links[id(messages)] = (messages, names)

    def clear(self) -> None:
        self.plans.clear()
        self.shared.clear()
        self.links.clear()
        self.names.clear()
        self.measures.clear()
