"""roo-code against RooCodeInc/Roo-Code cb836567180a where it used to differ: the reserved output
(``getModelMaxOutputTokens``, not 20% of the window), the forced condense at 75% after a context-window error
(``handleContextWindowExceededError``), the condense before 3.43 (``preset=3.42``: first message + assistant
summary + the last 3, refused when it would grow the context) and Kilo Code's reserve (``preset=kilo``)."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.roo_code import RooCode, RooCodeParams
from compbench.strategies.roo_code_limits import reserved_output
from compbench.strategies.roo_code_prompts import SUMMARIZE_V1, SUMMARY_PROMPT_V1
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of

SONNET_45 = ("claude-sonnet-4-5-20250929", 64_000, 200_000)  # litellm's output limit and window
GPT_5 = ("gpt-5", 128_000, 400_000)


@pytest.mark.parametrize(("model", "max_output", "window", "kw", "reserved"), [
    (*SONNET_45, {}, 8_192),  # hybrid reasoning on an Anthropic model: 8,192 whatever its limit
    (*SONNET_45, {"reasoning_budget": True}, 16_384),  # a reasoning budget: modelMaxTokens or 16,384
    (*SONNET_45, {"reasoning_budget": True, "model_max_tokens": 20_000}, 20_000),
    ("anthropic/claude-opus-4.1", 32_000, 200_000, {}, 8_192),  # OpenRouter's spelling
    ("claude-3-7-sonnet-20250219:thinking", 128_000, 200_000, {}, 16_384),  # requiredReasoningBudget
    ("claude-3-5-sonnet-20241022", 8_192, 200_000, {}, 8_192),  # not hybrid: min(8192, 40000)
    ("claude-3-opus-20240229", 4_096, 200_000, {}, 4_096),
    ("claude-custom", 0, 200_000, {}, 8_192),  # an Anthropic model without a limit
    (*GPT_5, {}, 128_000),  # GPT-5: its full limit, not 20% of the window
    ("gpt-4.1", 32_768, 1_047_576, {}, 32_768),
    ("kimi-k2", 16_384, 64_000, {}, 12_800),  # any other: capped at ceil(20% of the window)
    ("local-model", 0, 32_000, {}, 8_192),
    (*SONNET_45, {"hybrid_clamp": False}, 40_000),  # Kilo Code dropped the clamp: 20% of the window
])
def test_get_model_max_output_tokens(model: str, max_output: int, window: int, kw: dict[str, object],
                                     reserved: int) -> None:
    assert reserved_output(model, max_output, window, **kw) == reserved  # type: ignore[arg-type]


def long_session() -> list[Message]:
    msgs: list[Message] = [system(), user("u0", "speed up the export")]
    for k in range(1, 5):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "read", {"path": f"p{k}.py"})]), tool(f"t{k}", f"c{k}", "y" * 80)]
    return [*msgs, user("u9", "go on")]


def at(counter: TokenCounter, prev: int, model: str, max_output: int, window: int, spec: str = "roo-code",
       context: int | None = None) -> tuple[RooCode, SessionView]:
    """A view whose next request would hold ``prev`` tokens (Roo Code's prevContextTokens) of ``model``."""
    msgs = long_session()
    v = view_of(msgs, counter, ModelLimits(window, max_output))
    new = sum(e.tokens for e in v.entries[-2:])  # t4 and u9: the messages after the last assistant one
    v.last_usage = Usage(input=prev - new - 10, output=10)
    v.meta = {"model": model}
    if context is not None:
        v.context_tokens = context
    s = resolve(spec).create()
    assert isinstance(s, RooCode)
    return s, v


@pytest.mark.parametrize(("delta", "acts"), [(-1, False), (0, False), (1, True)])
def test_sonnet_45_condenses_over_0_9_window_minus_8192(chars4: TokenCounter, delta: int, acts: bool) -> None:
    """allowed = 200,000 * 0.9 - 8,192 = 171,808: 20% of the window (40,000) would have condensed from 140,001."""
    s, v = at(chars4, 171_808 + delta, *SONNET_45)
    assert bool(s.before_step(v)) is acts


def test_sonnet_45_does_not_condense_32k_early(chars4: TokenCounter) -> None:
    s, v = at(chars4, 140_001, *SONNET_45)
    assert s.before_step(v) == ()


@pytest.mark.parametrize(("delta", "acts"), [(-1, False), (0, False), (1, True)])
def test_gpt5_reserves_its_full_output(chars4: TokenCounter, delta: int, acts: bool) -> None:
    """allowed = 400,000 * 0.9 - 128,000 = 232,000 (20% would have been 80,000: allowed 280,000)."""
    s, v = at(chars4, 232_000 + delta, *GPT_5)
    assert bool(s.before_step(v)) is acts


def test_the_model_parameter_overrides_the_recorded_one(chars4: TokenCounter) -> None:
    s, v = at(chars4, 171_809, "unknown", 64_000, 200_000, spec="roo-code:model=claude-sonnet-4-5")
    assert s.before_step(v)
    s, v = at(chars4, 171_809, "unknown", 64_000, 200_000)  # 20% of the window: allowed 140,000
    assert s.before_step(v)
    s, v = at(chars4, 140_000, "unknown", 64_000, 200_000)
    assert not s.before_step(v)


def test_kilo_preset_reserves_20_percent_for_sonnet_45(chars4: TokenCounter) -> None:
    s, v = at(chars4, 140_001, *SONNET_45, spec="roo-code:preset=kilo")
    assert s.before_step(v)
    s, v = at(chars4, 140_000, *SONNET_45, spec="roo-code:preset=kilo")
    assert not s.before_step(v)


# --- the forced condense after a context-window error --------------------------------------------------------


@pytest.mark.parametrize(("prev", "acts"), [(749, False), (750, True), (751, True)])
def test_a_refused_request_condenses_at_75_percent(chars4: TokenCounter, prev: int, acts: bool) -> None:
    """The request overflows (context 1,001 > window 1,000) though prev is under the allowed 800: Roo Code
    retries after manageContext(autoCondenseContext: true, percent 75), condensing from 75% of the window."""
    s, v = at(chars4, prev, "m", 100, 1_000, context=1_001)
    out = s.before_step(v)
    assert bool(out) is acts
    if acts:
        (c,) = out
        assert isinstance(c, Compact) and c.request is not None and c.meta["context_window_exceeded"] == 1
        assert c.fallback is None  # prev <= allowed: no sliding window behind it


def test_no_forced_condense_when_the_request_fits(chars4: TokenCounter) -> None:
    s, v = at(chars4, 790, "m", 100, 1_000, context=1_000)
    assert s.before_step(v) == ()


def test_the_forced_condense_runs_with_auto_condense_off(chars4: TokenCounter) -> None:
    s, v = at(chars4, 780, "m", 100, 1_000, spec="roo-code:preset=no-condense", context=1_001)
    (c,) = s.before_step(v)
    assert isinstance(c, Compact) and c.request is not None
    s, v = at(chars4, 780, "m", 100, 1_000, spec="roo-code:preset=no-condense", context=1_000)
    assert s.before_step(v) == ()


def test_at_most_three_context_window_retries_a_request(chars4: TokenCounter) -> None:
    s, v = at(chars4, 790, "m", 100, 1_000, context=1_001)
    assert [bool(s.before_step(v))] + [bool(s.forced(v)) for _ in range(3)] == [True, True, True, False]


def test_replay_sliding_window_then_a_forced_condense_when_still_over(chars4: TokenCounter) -> None:
    """no-condense: the sliding window hides half, the request still overflows (a huge recent output), so
    Roo Code condenses anyway."""
    msgs: list[Message] = [system(), user("u0", "fix the build")]
    for k in range(1, 7):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "bash", {"cmd": "make"})]),
                 tool(f"t{k}", f"c{k}", "x" * (5_600 if k == 6 else 400))]
    msgs.append(assistant("a7", "done"))
    t = transcript(*msgs)
    trace = run(t, resolve("roo-code:preset=no-condense").create(), chars4, window=1_500, max_output=100,
                summarizer=MockSummarizer("short"))
    reasons = [e.reason for e in trace.compactions if e.applied]
    assert reasons[:2] == ["roo-code: sliding window truncation", "roo-code: condense (fresh start)"]
    assert trace.compactions[1].meta["context_window_exceeded"] == 1


# --- preset 3.42: the condense before 3.43 --------------------------------------------------------------------


def test_v1_keeps_the_first_message_the_summary_and_the_last_3(chars4: TokenCounter) -> None:
    v = view_of(long_session(), chars4, ModelLimits(1_000, 100))
    v.last_usage = Usage(input=890, output=10)
    s = RooCode(RooCodeParams(condense="keep-last-3"))
    (c,) = s.before_step(v)
    assert isinstance(c, Compact) and c.request is not None
    assert c.request.system == SUMMARY_PROMPT_V1 and c.request.prompt[-1].text == SUMMARIZE_V1
    assert [m.id for m in c.request.source] == ["u0", "a1", "t1", "a2", "t2", "a3"]
    ids = [x.id if isinstance(x, Keep) else x.role for x in c.new_view]
    assert ids == ["sys", "u0", "assistant", "t3", "a4", "t4", "u9"]
    (summary,) = [x for x in c.new_view if isinstance(x, Insert)]
    assert summary.with_summary and summary.origin == "summary"


@pytest.mark.parametrize(("grow", "rejected"), [(-1, False), (0, True), (1, True)])
def test_v1_refuses_a_condense_that_would_not_shrink_the_context(chars4: TokenCounter, grow: int,
                                                                 rejected: bool) -> None:
    """newContextTokens = summary + system + kept 3 >= prevContextTokens: condense_context_grew."""
    v = view_of(long_session(), chars4, ModelLimits(1_000, 100))
    v.last_usage = Usage(input=890, output=10)
    s = RooCode(RooCodeParams(condense="keep-last-3"))
    (c,) = s.before_step(v)
    prev = int(str(c.meta["prev_context_tokens"]))
    kept = int(str(c.meta["kept_tokens"]))
    summary = "w" * 4 * (prev - kept + grow)  # chars4: exactly prev - kept + grow tokens
    assert (s.accept(c, summary) is not None) is rejected


def test_v1_replay_chains_summaries_and_keeps_the_first_message(chars4: TokenCounter) -> None:
    """A later condense summarizes from the last summary on (the first message prepended) and keeps u0."""
    msgs = long_session()
    for k in range(10, 30):
        msgs += [assistant(f"a{k}", calls=[(f"c{k}", "read", {"path": f"q{k}.py"})]), tool(f"t{k}", f"c{k}", "z" * 80)]
    trace = run(transcript(*msgs, assistant("a99", "ok")), RooCode(RooCodeParams(condense="keep-last-3")), chars4,
                window=400, max_output=100, summarizer=MockSummarizer("S"))
    ok = [e for e in trace.compactions if e.ok]
    assert len(ok) >= 2 and all(e.reason == "roo-code: condense (keep the last 3)" for e in ok)
    assert all("u0" in e.kept_ids for e in ok)


def test_manual_condense_has_no_fallback(chars4: TokenCounter) -> None:
    v = view_of(long_session(), chars4, ModelLimits(1_000, 100))
    c = RooCode(RooCodeParams()).manual(v)
    assert c is not None and c.fallback is None and c.meta["manual"] is True
    short = view_of([system(), user("u0", "hi")], chars4, ModelLimits(1_000, 100))
    assert RooCode(RooCodeParams()).manual(short) is None  # condense_not_enough_messages


@pytest.mark.parametrize(("prev", "acts"), [(599, False), (600, True), (601, True)])
def test_a_profile_threshold_replaces_the_75_percent_of_the_forced_condense(chars4: TokenCounter, prev: int,
                                                                           acts: bool) -> None:
    """handleContextWindowExceededError passes 75 as autoCondenseContextPercent but also the profileThresholds:
    a profile at 60% condenses the refused request from 600 of 1,000 tokens (it did from 750)."""
    s, v = at(chars4, prev, "m", 100, 1_000, spec="roo-code:profile_threshold=60", context=1_001)
    assert bool(s.before_step(v)) is acts


@pytest.mark.parametrize(("profile", "acts"), [(-1, False), (4, False), (101, False), (5, True), (60, True)])
def test_a_profile_threshold_out_of_range_falls_back_to_the_global_percent(chars4: TokenCounter, profile: int,
                                                                          acts: bool) -> None:
    """prev 700 of 1,000 under the global 100%: only a valid profile threshold (5-100) at or under 70% condenses."""
    s, v = at(chars4, 700, "m", 100, 1_000, spec=f"roo-code:profile_threshold={profile}")
    assert bool(s.before_step(v)) is acts
