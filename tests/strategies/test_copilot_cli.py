"""copilot-cli, a documented heuristic (Copilot CLI is closed source): background compaction from 80% of the window
landing before the next call, blocking at 95%, and the version boundaries 0.0.374 / 0.0.380 of the changelog."""

from __future__ import annotations

import pytest

from compbench.measure.tokens import TokenCounter
from compbench.sdk.registry import get
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.copilot_cli import SUMMARY_PREFIX, SYSTEM, CopilotCli, version_preset
from helpers import assistant, run, system, tool, transcript, user, view_of

WINDOW = ModelLimits(1_000, 100)


def copilot(preset: str = "") -> CopilotCli:
    s = resolve("copilot-cli" + (f":preset={preset}" if preset else "")).create()
    assert isinstance(s, CopilotCli)
    return s


def at(tokens: int, counter: TokenCounter) -> SessionView:
    v = view_of([system(), user("u1"), assistant("a1", calls=[("c1", "bash", {})]), tool("t1", "c1", "out"),
                 user("u2")], counter, WINDOW)
    v.context_tokens = tokens
    return v


@pytest.mark.parametrize(("tokens", "starts"), [(799, False), (800, True), (801, True)])
def test_the_background_compaction_starts_at_80_percent(chars4: TokenCounter, tokens: int, starts: bool) -> None:
    c = copilot()
    assert c.before_step(at(tokens, chars4)) == ()  # it runs while the call goes on: nothing changes yet
    assert (c.snapshot == "u2") is starts
    assert c.wake(at(tokens, chars4)).step == (0 if starts else None)


@pytest.mark.parametrize(("tokens", "blocks"), [(949, False), (950, True), (951, True)])
def test_at_95_percent_it_waits_for_the_compaction(chars4: TokenCounter, tokens: int, blocks: bool) -> None:
    for c in (copilot(), copilot("0.0.374")):
        acts = c.before_step(at(tokens, chars4))
        assert bool(acts) is blocks
        if blocks:
            (a,) = acts
            assert isinstance(a, Compact) and a.request is not None
            assert a.new_view == (Keep("sys"), Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"))
            assert [m.id for m in a.request.source] == ["u1", "a1", "t1", "u2"]
            assert a.request.system == SYSTEM  # its own system prompt: nothing read from the session's cache


def test_the_0_0_374_preset_has_no_background_compaction(chars4: TokenCounter) -> None:
    c = copilot("0.0.374")
    assert c.before_step(at(900, chars4)) == () and c.snapshot is None
    assert c.wake(at(900, chars4)).tokens == 950


def test_the_background_compaction_lands_before_the_next_call_keeping_what_came_since(chars4: TokenCounter) -> None:
    # chars4: each 400-character message is 100 tokens; window 1,000: 80% is 800
    msgs = [m for k in range(6) for m in (user(f"u{k}", "p" * 400), assistant(f"a{k}", "o" * 400))]
    tr = run(transcript(*msgs), copilot(), chars4, window=1_000, max_output=100)
    # before a4's call the view holds u0..u4 (900 >= 800): the snapshot (u0..u4) is summarized while a4's call runs
    # and lands before a5's, keeping a4 and u5, added meanwhile
    (ev,) = tr.compactions
    assert ev.ok and ev.step == 5 and ev.phase == "before"
    assert ev.replaced_ids == ("u0", "a0", "u1", "a1", "u2", "a2", "u3", "a3", "u4") and ev.kept_ids == ("a4", "u5")
    assert ev.summarizer_cached == 0
    # the blocking preset lets the same session reach a5 uncompacted: 1,100 tokens is over 950, so it compacts
    # everything there at once
    (blocking,) = run(transcript(*msgs), copilot("0.0.374"), chars4, window=1_000, max_output=100).compactions
    assert blocking.step == 5 and blocking.kept_ids == () and blocking.replaced_ids[-1] == "u5"


def test_version_boundaries_of_the_changelog() -> None:
    assert [version_preset(v) for v in ("0.0.373", "0.0.374", "0.0.379", "0.0.380", "1.0.43", "")] == [
        None, "0.0.374", "0.0.374", None, None, None]


def test_declared_as_a_documented_heuristic() -> None:
    info = get("copilot-cli")
    assert info.summary.startswith("documented heuristic (closed source)")
    assert "documented heuristic (closed source)" in info.upstream and "changelog" in info.upstream
