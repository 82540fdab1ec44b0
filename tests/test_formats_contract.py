"""The loader contract (formats.contract.SessionFormat) and the registry that lists the formats."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import ctxview.formats as formats
from ctxview.formats import DESCRIPTIONS, FORMATS, registry
from ctxview.formats.contract import ModuleFormat, SessionFormat


def _format_modules():
    for info in pkgutil.iter_modules(formats.__path__):
        module = importlib.import_module(f"ctxview.formats.{info.name}")
        if hasattr(module, "SESSION_FORMAT"):
            yield module


def test_every_format_module_is_registered_once():
    modules = list(_format_modules())
    assert sorted(m.SESSION_FORMAT.name for m in modules) == sorted(FORMATS)
    assert len(set(FORMATS)) == len(FORMATS)
    for m in modules:
        fmt = m.SESSION_FORMAT
        assert isinstance(fmt, SessionFormat)
        assert fmt in registry.REGISTERED
        assert fmt.name == m.FORMAT and fmt.expected == m.EXPECTED
        assert DESCRIPTIONS[fmt.name] == fmt.description and fmt.description


def test_sniffing_order_is_most_specific_first():
    names = [f.name for f in registry._SNIFFING]
    assert names == ["ctxview", "swarm-snapshot", "swarm-events", "context-lens", "claude-tap", "claude-trace", "har",
                     "claude-code", "inspect-ai", "gemini", "codex", "anthropic", "openai"]
    ranks = [f.specificity for f in registry._SNIFFING]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == len(ranks)


def test_a_format_must_define_load():
    class NoLoad(SessionFormat):
        name, description, expected, specificity = "x", "x", "x", 0

    with pytest.raises(TypeError, match="load"):
        NoLoad()


def test_the_defaults_claim_nothing_and_read_no_pieces():
    class Minimal(SessionFormat):
        name, description, expected, specificity = "minimal", "minimal", "minimal", 0

        def load(self, inp, layout, lenient=False, doc=None):
            raise AssertionError("not called")

    m = Minimal()
    assert m.sniff_record({"type": "user"}) is False
    assert m.sniff_document({"format": "ctxview"}) is False
    assert m.load_in_pieces(None) is None
    assert repr(m) == "<SessionFormat minimal>"


def test_a_module_format_calls_its_functions():
    seen = []

    def load(inp, layout, lenient=False, doc=None):
        seen.append((inp, layout, lenient, doc))
        return "session"

    fmt = ModuleFormat("acme", "Acme log", "Acme log", 5, load, sniff_record=lambda r: r == 1)
    assert fmt.sniff_record(1) is True and fmt.sniff_record(2) is False
    assert fmt.sniff_document({"a": 1}) is False  # not given: the default
    assert fmt.load("in", "json", True, {"d": 1}) == "session" and seen == [("in", "json", True, {"d": 1})]
    assert fmt.load_in_pieces("in") is None
    assert ModuleFormat("b", "b", "b", 0, load, load_in_pieces=lambda inp: "whole").load_in_pieces("in") == "whole"


def test_only_the_native_format_reads_in_pieces(tmp_path):
    from ctxview.formats import DEMO_PATH, native
    from ctxview.formats.parsing.jsonio import open_input

    big = tmp_path / "big.json"
    big.write_bytes(DEMO_PATH.read_bytes() + b" " * native.PIECES_ABOVE)  # past the size that reads in pieces
    inp = open_input(big)
    read = {f.name: f.load_in_pieces(inp) is not None for f in registry.REGISTERED}
    assert read == {name: name == "ctxview" for name in FORMATS}
