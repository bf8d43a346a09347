"""``opencode`` by version (:mod:`compbench.strategies.opencode_versions`): the verbatim tail's turn count and budget
(1.4 vs 1.18.17), ``compaction.reserved`` used as given, a model with ``limit.context`` 0, and Kilo Code's
``threshold_percent``, each at, just below and just above its boundary, on hand-made sessions.

Counts use the ``chars4`` counter; OpenCode's tail estimate is :func:`compbench.strategies.opencode.estimate`.
"""

from __future__ import annotations

import math

import pytest

from compbench.data.transcript import Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.opencode import OpenCode, estimate
from compbench.strategies.opencode_versions import TOOL
from helpers import assistant, run, transcript, user, view_of


def made(spec: str) -> OpenCode:
    oc = resolve(f"opencode:{spec}").create()
    assert isinstance(oc, OpenCode)
    return oc


def four_turns() -> list:  # type: ignore[type-arg]
    """Four user turns of about 500 estimated tokens each (2,000 characters a message)."""
    return [m for k in range(1, 5) for m in (user(f"u{k}", str(k) * 2_000), assistant(f"a{k}", str(k) * 40))]


def kept(oc: OpenCode, msgs: list, limits: ModelLimits, chars4: TokenCounter) -> tuple[str, ...]:  # type: ignore[type-arg]
    v = view_of(msgs, chars4, limits)
    oc.pending = True
    (c,) = oc.before_step(v)
    assert isinstance(c, Compact)
    return tuple(s.id for s in c.new_view if isinstance(s, Keep))


# --- which version gets which preset -------------------------------------------------------------------------


def test_each_preset_holds_its_versions_tail_rule() -> None:
    p13, p14, cur = (resolve(f"opencode:preset={n}").params for n in ("1.3", "1.4", "current"))
    assert (p13.tail, p13.prune, p13.prompt, p13.input_buffer, p13.at_limit) == (False, True, "seed", 20_000, True)
    assert (p14.tail, p14.tail_turns, p14.tail_max, p14.prompt, p14.prune) == (True, 2, 8_000, "anchored", False)
    assert (cur.tail, cur.tail_turns, cur.tail_max) == (True, None, 15_000)
    assert (cur.reserved, cur.tail_tokens, cur.threshold_percent) == (None, None, None)


# --- the tail: how many turns, within what budget -------------------------------------------------------------


@pytest.mark.parametrize(("spec", "want"), [
    ("preset=1.4", ("u3", "a3", "u4", "a4")),  # DEFAULT_TAIL_TURNS 2
    ("preset=current", ("u2", "a2", "u3", "a3", "u4", "a4")),  # every turn within the budget: 3 of 4 fit
    ("preset=current,tail_turns=1", ("u4", "a4")),  # just below 2
    ("preset=current,tail_turns=2", ("u3", "a3", "u4", "a4")),
    ("preset=current,tail_turns=3", ("u2", "a2", "u3", "a3", "u4", "a4")),  # just above: the budget still binds
    ("preset=1.4,tail_turns=0", ()),  # 0 keeps none
])
def test_tail_turns_cap_the_turns_kept(chars4: TokenCounter, spec: str, want: tuple[str, ...]) -> None:
    msgs = four_turns()
    turn = estimate(view_of(msgs[:2], chars4).entries)
    budget = 3 * turn + 10  # three turns fit, four do not
    assert kept(made(f"{spec},tail_tokens={budget}"), msgs, ModelLimits(200_000, 8_000), chars4) == want


def test_tail_tokens_is_the_budget_as_given(chars4: TokenCounter) -> None:
    msgs = four_turns()
    v = view_of(msgs, chars4)
    two = estimate(v.entries[4:6]) + estimate(v.entries[6:])  # the newest two turns, each estimated as OpenCode does
    limits = ModelLimits(200_000, 8_000)
    assert kept(made(f"preset=current,tail_tokens={two}"), msgs, limits, chars4)[0] == "u3"  # at: both fit
    assert kept(made(f"preset=current,tail_tokens={two + 1}"), msgs, limits, chars4)[0] == "u3"  # just above
    # just below: the older turn does not fit, nor does a suffix of it that would start at its answer alone
    below = kept(made(f"preset=current,tail_tokens={two - 1}"), msgs, limits, chars4)
    assert below[0] in ("a3", "u4") and "u3" not in below


@pytest.mark.parametrize(("window", "v14", "current"), [
    (36_000, 8_000, 8_000),  # usable 32,000: a quarter is 8,000, the 1.4 ceiling exactly
    (35_996, 7_999, 7_999),  # just below
    (36_004, 8_000, 8_001),  # just above: 1.4 holds at 8,000
    (68_000, 8_000, 15_000),  # usable 64,000: today's ceiling
])
def test_default_tail_budget_ceiling_by_version(chars4: TokenCounter, window: int, v14: int, current: int) -> None:
    v = view_of([user("u1")], chars4, ModelLimits(window, 4_000))
    assert made("preset=1.4").tail_budget(v) == v14
    assert made("preset=current").tail_budget(v) == current


def test_replayed_log_keeps_its_versions_tail(chars4: TokenCounter) -> None:
    """An OpenCode log of five turns overflowing at its fourth answer (usable 2,000), compacted when the fifth
    prompt has arrived: 1.3 keeps no tail, 1.4 the newest two turns (u4, u5), 1.18.17 on every turn the 1,650-token
    budget holds (u2 to u5)."""
    t = transcript(*four_turns(), user("u5", "5" * 40), assistant("a5", "done"))
    traces = {n: run(t, made(f"preset={n},tail_tokens=1650"), chars4, window=2_500, max_output=500)
              for n in ("1.3", "1.4", "current")}
    first = {n: tr.compactions[0] for n, tr in traces.items()}
    assert {c.step for c in first.values()} == {4}  # the same trigger: only the tail differs
    assert first["1.3"].kept_ids == ()
    assert first["1.4"].kept_ids == ("u4", "a4", "u5")
    assert first["current"].kept_ids == ("u2", "a2", "u3", "a3", "u4", "a4", "u5")


# --- compaction.reserved, and a model whose context limit is 0 -------------------------------------------------


@pytest.mark.parametrize(("spec", "limits", "usable"), [
    ("preset=current", ModelLimits(200_000, 8_000, 100_000), 92_000),  # unset: min(20,000, 8,000)
    ("preset=current,reserved=30000", ModelLimits(200_000, 8_000, 100_000), 70_000),  # as given, not capped at 8,000
    ("preset=current,reserved=0", ModelLimits(200_000, 8_000, 100_000), 100_000),
    ("preset=current,reserved=30000", ModelLimits(200_000, 8_000), 192_000),  # no input limit: not read
])
def test_reserved_is_used_as_given(chars4: TokenCounter, spec: str, limits: ModelLimits, usable: int) -> None:
    oc = made(spec)
    v = view_of([user("u1")], chars4, limits)
    assert oc.usable(v) == usable
    assert not oc.is_overflow(v, Usage(input=usable - 1))
    assert oc.is_overflow(v, Usage(input=usable))
    assert oc.is_overflow(v, Usage(input=usable + 1))


@pytest.mark.parametrize("limits", [ModelLimits(0, 8_000), ModelLimits(0, 8_000, 100_000)])
def test_a_model_with_no_context_limit_never_compacts(chars4: TokenCounter, limits: ModelLimits) -> None:
    for spec in ("preset=seed", "preset=current", "preset=kilo"):
        oc = made(spec)
        v = view_of([user("u1", "x" * 4_000)], chars4, limits)
        assert oc.usable(v) == 0 and not oc.is_overflow(v, Usage(input=10**9))
        assert oc.wake(v).usage is None and not oc.preflight(v)
    t = transcript(*four_turns())
    assert run(t, made("preset=current"), chars4, window=0, max_output=500).compactions == ()


# --- Kilo Code's compaction.threshold_percent ----------------------------------------------------------------


@pytest.mark.parametrize(("pct", "limits", "limit"), [
    (80.0, ModelLimits(200_000, 64_000), 160_000),  # below usable 168,000
    (84.0, ModelLimits(200_000, 64_000), 168_000),  # equal
    (90.0, ModelLimits(200_000, 64_000), 168_000),  # above usable: usable holds
    (70.0, ModelLimits(200_000, 64_000, 100_000), 70_000),  # of the input limit
])
def test_threshold_percent_lowers_the_limit(chars4: TokenCounter, pct: float, limits: ModelLimits,
                                            limit: int) -> None:
    oc = made(f"preset=current,threshold_percent={pct}")
    v = view_of([user("u1")], chars4, limits)
    assert oc.limit(v) == limit
    assert not oc.is_overflow(v, Usage(input=limit - 1))
    assert oc.is_overflow(v, Usage(input=limit))
    assert oc.wake(v).usage == limit


def test_kilo_preflight_compacts_before_a_turns_first_request(chars4: TokenCounter) -> None:
    """Kilo's estimate of the outgoing request (chars/4 of its JSON × 1.3) at the limit compacts before the call,
    with no overflow reported; just below it does not, and unset (OpenCode) never does."""
    msgs = [user("u1", "x" * 8_000), assistant("a1", "y" * 400), user("u2", "z" * 400)]
    est = math.ceil(estimate(view_of(msgs, chars4).entries) * 1.3)
    window = 100_000
    at = est * 100 / window  # the percentage whose limit is the estimate exactly
    for pct, compacts in ((at, True), (at * 0.999, True), (at * 1.001, False)):
        oc = made(f"preset=current,threshold_percent={pct}")
        v = view_of(msgs, chars4, ModelLimits(window, 4_000))
        actions = oc.before_step(v)
        assert (len(actions) == 1 and isinstance(actions[0], Compact)) is compacts, pct
    assert made("preset=current").before_step(view_of(msgs, chars4, ModelLimits(window, 4_000))) == []
    tool_loop = [*msgs[:2], assistant("a2", "z" * 400)]  # no new prompt: a continuation is never preflighted
    assert made(f"preset=current,threshold_percent={at}").before_step(
        view_of(tool_loop, chars4, ModelLimits(window, 4_000))) == []


# --- what users write ---------------------------------------------------------------------------------------


def test_settings_name_the_key_each_version_reads() -> None:
    reserved, turns, tokens = (TOOL.setting(n) for n in ("reserved", "tail_turns", "tail_tokens"))
    assert reserved is not None and turns is not None and tokens is not None
    assert reserved.paste(30_000) == '{"compaction": {"reserved": 30000}}'
    assert turns.paste(3) == '{"compaction": {"tail_turns": 3}}'
    assert tokens.paste_for(12_000, "1.18.17") == ('{"compaction": {"preserve_recent_tokens": 12000}}',
                                                   "opencode.json, compaction.preserve_recent_tokens")
    assert tokens.paste_for(12_000, "1.4.6")[0] == '{"compaction": {"tail_tokens": 12000}}'  # before #23491
    assert tokens.paste_for(12_000, "1.14.0")[0] == '{"compaction": {"preserve_recent_tokens": 12000}}'
    assert turns.honoured is not None
    assert "no verbatim tail" in turns.honoured("1.3.17") and turns.honoured("1.4.0") == ""
