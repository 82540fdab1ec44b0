"""The inspector's decisions (ctxview.tui.state), without an app or a pilot.

(That the module imports neither textual nor rich is in tests/test_import_hygiene.py.)"""

from __future__ import annotations

import pytest
from sessions import make_session

from ctxview.engine.compression import PRESETS
from ctxview.model import Conversation, Message
from ctxview.settings import ClearSettings, Settings
from ctxview.tui.search_state import Search, find_match, next_row
from ctxview.tui.state import (InspectorState, ViewKey, editable_tiers, opening_settings, request_label, tier_lines,
                               tiers_label)


def opened(settings: Settings | None = None, conversations: int = 2) -> InspectorState:
    state = InspectorState(Settings())
    state.opened(0, conversations, settings or Settings())
    return state


# -- opening settings --------------------------------------------------------------


def saved(settings: dict) -> Conversation:
    return Conversation("main", (Message("user", "hi"),), settings=settings)


def test_opening_settings_saved_ones_are_defaults_and_given_ones_win():
    conv = saved({"keep_recent": 3, "tiers": "light"})
    assert opening_settings(conv, Settings(), None) == Settings(keep_recent=3, tiers="light")
    # without overrides, a field that differs from the default counts as given
    assert opening_settings(conv, Settings(keep_recent=7), None) == Settings(keep_recent=7, tiers="light")
    # an option named on the command line wins even when it equals the default
    assert opening_settings(conv, Settings(), {"keep_recent": 10}) == Settings(keep_recent=10, tiers="light")


def test_opening_settings_name_the_conversation_for_a_bad_saved_value():
    with pytest.raises(ValueError, match="main: the file's settings: keep_recent"):
        opening_settings(saved({"keep_recent": -1}), Settings(), None)


# -- settings changes --------------------------------------------------------------


def test_nothing_changes_before_the_session_is_loaded():
    state = InspectorState(Settings(keep_recent=4))
    assert not state.keep_recent(1) and state.settings.keep_recent == 4
    assert not state.busy and state.next_run() is None


def test_keep_recent_steps_and_stops_at_zero():
    state = opened(Settings(keep_recent=1))
    assert state.keep_recent(1) and state.settings.keep_recent == 2
    assert state.keep_recent(-1) and state.keep_recent(-1) and state.settings.keep_recent == 0
    assert not state.keep_recent(-1) and state.settings.keep_recent == 0


def test_t_cycles_every_preset_including_off():
    names = list(PRESETS)
    state = opened(Settings(tiers="off"))
    seen = []
    for _ in range(len(names)):
        assert state.next_tiers()
        seen.append(state.settings.tiers)
    after_off = names.index("off") + 1
    assert seen == names[after_off:] + names[:after_off]  # each once, in order, back to off
    state.change(tiers="10:full,*:100")
    assert state.next_tiers() and state.settings.tiers == "default"  # a custom spec goes to the first preset


def test_c_on_tiers_off_turns_on_the_tiers_chosen_last():
    state = opened(Settings())  # as sent: tiers=off
    assert state.settings.view == "as-sent"
    assert state.toggle_compression()
    assert state.settings.tiers == "default" and state.settings.compression  # nothing chosen yet: default
    assert state.settings.view == "what-if"
    state.change(tiers="aggressive")
    state.change(tiers="off")
    assert state.toggle_compression() and state.settings.tiers == "aggressive"
    # elsewhere, c switches compression off and on, keeping the tiers
    assert state.toggle_compression() and state.settings == Settings(tiers="aggressive", compression=False)
    assert state.settings.view == "as-sent"
    assert state.toggle_compression() and state.settings.compression


def test_c_after_opening_with_compression_off_keeps_the_opening_tiers():
    state = opened(Settings(tiers="light", compression=False))
    assert state.toggle_compression() and state.settings.tiers == "light" and state.settings.compression
    state = opened(Settings(tiers="off", compression=False))
    assert state.toggle_compression() and state.settings.tiers == "default" and state.settings.compression


def test_edit_tiers_takes_preset_names_in_any_case_and_specs_as_typed():
    state = opened()
    assert state.edit_tiers(" Light ") and state.settings.tiers == "light"
    assert state.edit_tiers("2:full,*:100") and state.settings.tiers == "2:full,*:100"
    with pytest.raises(ValueError, match="tiers"):
        state.edit_tiers("nonsense")
    assert state.settings.tiers == "2:full,*:100"  # a refused value changes nothing


def test_edit_tiers_names_a_written_out_preset_by_its_name():
    state = opened()
    assert state.edit_tiers(editable_tiers("light")) and state.settings.tiers == "light"
    assert state.edit_tiers("10:full, 20:1000, 40:500, 60:200, *:100") and state.settings.tiers == "default"
    assert tiers_label(state.settings) == "default"
    assert state.edit_tiers("10:full,20:1000,40:500,60:200,*:99") and state.settings.tiers.startswith("10:full")
    assert tiers_label(state.settings) == "custom 10:full,20:1000,40:500,60:200,*:99"


def test_tier_lines_number_tiers_from_1_as_the_spec_errors_do():
    assert tier_lines("2:full,*:100") == ["tier 1: ages 0-2 → full", "tier 2: ages 3+ → 100 chars"]
    with pytest.raises(ValueError, match="tier 2 "):
        tier_lines("5:full,3:100")


def test_clearing_budget_and_old_messages():
    state = opened()
    assert state.change(clear=True) and state.settings.clear == ClearSettings()
    assert not state.change(clear=True)
    assert state.change(clear=False) and state.settings.clear is None
    assert state.change(budget=8000) and state.settings.budget == 8000
    assert state.change(budget=None) and state.settings.budget is None
    assert state.change(old_messages="remove") and state.settings.old_messages == "remove"
    with pytest.raises(ValueError, match="old_messages"):
        state.change(old_messages="shred")
    with pytest.raises(ValueError, match="budget"):
        state.change(budget=0)


# -- requests and conversations ------------------------------------------------------


def test_request_navigation_and_label():
    state = opened()
    requests = (3, 7, 11)
    assert not state.step_request(1, requests)            # already at the next request
    assert state.step_request(-1, requests) and state.settings.request == 11
    assert state.step_request(-1, requests) and state.settings.request == 7
    assert request_label(state.settings.request, requests) == "2/3 (#7)"
    assert state.step_request(-1, requests) and not state.step_request(-1, requests)  # nothing before #3
    assert state.settings.request == 3
    for expected in (7, 11, None):
        assert state.step_request(1, requests) and state.settings.request == expected
    assert request_label(None, requests) == "next"
    assert request_label(5, requests) == "#5"
    assert not state.step_request(-1, ())


def test_switching_conversation_goes_to_its_next_request():
    state = opened(Settings(request=7), conversations=3)
    state.search.hit = 4
    assert not state.select_conversation(0) and not state.select_conversation(3)
    assert state.select_conversation(2)
    assert state.conversation == 2 and state.settings.request is None and state.search.hit is None
    assert state.wanted == ViewKey(2, Settings())


# -- which run, and whether its result is wanted ------------------------------------------


def test_one_run_at_a_time_and_the_newest_settings_win():
    state = InspectorState(Settings())
    first = state.opened(0, 1, Settings(keep_recent=4))
    assert state.running == first and state.busy
    state.keep_recent(1)
    state.keep_recent(1)                                   # two presses while the first view computes
    assert state.next_run() is None                        # one run in flight
    assert not state.finished(first)                       # its view is no longer wanted
    run = state.next_run()
    assert run == ViewKey(0, Settings(keep_recent=6))      # the 5 in between is never computed
    assert state.next_run() is None
    assert state.finished(run) and state.shown == run and not state.busy
    assert state.next_run() is None                        # on screen: nothing to do


def test_going_back_to_the_view_on_screen_needs_no_run():
    state = opened(Settings(keep_recent=4), conversations=1)
    shown = state.running
    state.finished(shown)
    state.keep_recent(1)
    run = state.next_run()
    state.keep_recent(-1)                                  # back before the run ends
    assert not state.busy
    assert not state.finished(run) and state.next_run() is None and state.shown == shown


def test_a_failed_run_is_not_retried_until_the_settings_change():
    state = opened(conversations=1)
    state.finished(state.running)
    state.change(request=0)
    run = state.next_run()
    assert state.finished(run, ok=False)                   # wanted: the app says why
    assert not state.busy and state.next_run() is None and state.shown != run
    state.change(request=None)                             # the view on screen again
    assert not state.busy and state.next_run() is None


# -- search --------------------------------------------------------------------------------


def test_search_term_direction_and_hit():
    search = Search()
    assert not search.submit("")
    assert search.submit("Read")
    search.step(-1)
    assert search.running and search.direction == -1
    assert not search.done("other term", 3)                # an answer for an older term
    assert search.done("Read", 3) and search.hit == 3 and not search.running
    assert not search.done("Read", 5, same_view=False) and search.hit == 3  # the view changed meanwhile
    assert search.done("Read", None) and search.hit is None


def test_find_match_walks_both_ways_wraps_and_skips_hidden_rows():
    conv = make_session(1).conversations[0]
    stored = conv.messages
    prepared = (None,) * len(stored)
    heights = [1] * len(stored)
    hits = [i for i, m in enumerate(stored) if "file5.py" in str(m.tool_calls) or "file 5:" in m.text]
    assert len(hits) == 2
    first, second = hits
    assert find_match(stored, prepared, heights, "FILE5.PY", 0) == first     # tool-call arguments, any case
    assert find_match(stored, prepared, heights, "file 5:", 0) == second     # text
    assert find_match(stored, prepared, heights, "file5.py", first) == first  # wraps back to itself
    assert find_match(stored, prepared, heights, "file5.py", first, include_start=True) == first
    assert find_match(stored, prepared, heights, "Please", 3, direction=-1) == 0
    heights[first] = 0                                                      # folded away
    assert find_match(stored, prepared, heights, "file5.py", 0) is None
    assert find_match(stored, prepared, heights, "no such text", 0) is None
    assert find_match(stored, prepared, [1] * len(stored), "file", 0, cancelled=lambda: True) is None


def test_next_row_wraps_and_needs_a_visible_row():
    heights = [1, 0, 1, 1]
    assert next_row(heights, 0, lambda i: True) == 2
    assert next_row(heights, 3, lambda i: i < 2) == 0
    assert next_row(heights, 0, lambda i: i == 1) is None
    assert next_row([], 0, lambda i: True) is None


def test_tiers_label():
    assert tiers_label(Settings()) == "off"
    assert tiers_label(Settings(tiers="default")) == "default"
    assert tiers_label(Settings(tiers="default", compression=False)) == "default (off)"
    assert tiers_label(Settings(tiers="2:full,*:100")) == "custom 2:full,*:100"
