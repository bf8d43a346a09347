"""The prompt-cache model: expiry after a recorded gap, the minimum cached prefix, write premiums, and the
summary request that reads the session's cache (or does not)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure.cache import GEMINI_HIT_RATE, CacheModel, cache_model_for, message_time
from compbench.measure.models import Prices, prices_with_cache
from compbench.measure.replay_metrics import cost, cost_without_cache, summarizer_cost, totals
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Action, Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.strategies import resolve
from compbench.summarizers.mock import MockSummarizer

BIG = "word " * 2_000  # 2,500 tokens (chars/4)
ANTHROPIC = CacheModel("anthropic", 1.25, 300.0, 1_024)


def timed(gaps: Sequence[float], text: str = BIG) -> Transcript:
    """u, a, u, a, ... with the assistant messages ``gaps`` seconds apart (timestamps as Claude Code logs)."""
    msgs, t = [], 1_700_000_000.0
    for k, gap in enumerate(gaps):
        t += gap
        stamp = {"timestamp": datetime.fromtimestamp(t, UTC).isoformat()}
        msgs += [Message(f"u{k}", "user", (Text(text),), meta=stamp),
                 Message(f"a{k}", "assistant", (Text("ok"),), meta=stamp)]
    return Transcript("t", "claude-code", tuple(msgs))


def steps(t: Transcript, cache: CacheModel, strategy: object = None) -> list[tuple[int, int, int]]:
    trace = replay(t, strategy or resolve("none").create(), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(1_000_000, 1_000), cache=cache), TokenCounter("chars4", 0))
    return [(s.input, s.cache_read, s.cache_write) for s in trace.steps]


def test_providers() -> None:
    assert cache_model_for("claude-sonnet-4-5") == ANTHROPIC
    assert cache_model_for("claude-sonnet-4-5", "1h").write_premium == 2.0
    assert cache_model_for("claude-3-5-haiku").min_prefix == 2_048
    assert cache_model_for("gpt-5").write_premium == 1.0 and cache_model_for("gpt-5").ttl_s == 600.0
    assert cache_model_for("gemini-2.5-pro").ttl_s is None
    assert cache_model_for("claude-sonnet-4-5", "none").ttl_s is None
    assert message_time({"time": 1_700_000_000_000}) == 1_700_000_000.0
    assert message_time({"timestamp": "2025-01-01T00:00:00Z"}) == 1_735_689_600.0
    assert message_time({"timestamp": "not a time"}) is None and message_time({}) is None


def test_the_cache_expires_after_a_recorded_gap_longer_than_its_lifetime() -> None:
    # calls 60 s, then 299 s, then 301 s apart: the last one finds the cache cold
    s = steps(timed([0, 60, 299, 301]), ANTHROPIC)
    assert [r for _, r, _ in s] == [0, 2_500, 5_001, 0]  # each 'ok' reply is 1 token
    assert s[3][2] == s[3][0]  # a cold call writes its whole prompt again
    # the same session with a cache that never expires reads its prefix every time
    assert [r for _, r, _ in steps(timed([0, 60, 299, 301]), CacheModel("x"))] == [0, 2_500, 5_001, 7_502]


def test_a_prefix_shorter_than_the_minimum_is_not_cached() -> None:
    small = "word " * 600  # 750 tokens
    s = steps(timed([0, 1, 1], small), ANTHROPIC)
    # 750 tokens: not cached (no write either, plain input); 1,501: written, but its prefix (750) is too
    # short to read; 2,252: reads the 1,501 written before
    assert s == [(750, 0, 0), (1_501, 0, 1_501), (2_252, 1_501, 751)]


class SummarizeAt:
    """Before step ``at``: summarize the whole view, under the session's system prompt or its own."""

    name = "sum"

    def __init__(self, at: int, system: str) -> None:
        self.at, self.system = at, system

    def before_step(self, s: SessionView) -> Sequence[Action]:
        if s.step != self.at:
            return ()
        prompt = (*s.rendered(), Message("ask", "user", (Text("Summarize."),)))
        return [Compact("t", (Insert("user", with_summary=True, origin="summary"),
                              Keep(s.entries[-1].id)), SummaryRequest(self.system, prompt, s.rendered()))]

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def summarizer_cached(system: str, gaps: Sequence[float]) -> tuple[int, int]:
    trace = replay(timed(gaps), SummarizeAt(2, system), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(1_000_000, 1_000), cache=ANTHROPIC), TokenCounter("chars4", 0))
    (c,) = trace.compactions
    return c.summarizer_cached, c.summarizer_input


def test_a_summary_request_reads_the_session_cache_only_under_the_session_prompt() -> None:
    cached, sent = summarizer_cached("", [0, 10, 10])
    # the previous call sent u0, a0, u1 (5,001 tokens): the request starts with them and reads them
    assert cached == 5_001 and sent > cached
    # its own system prompt (OpenCode's compaction agent): nothing is read
    assert summarizer_cached("You summarize conversations.", [0, 10, 10])[0] == 0
    # the session's cache went cold before the compaction: nothing is read either
    assert summarizer_cached("", [0, 10, 400])[0] == 0


def test_cost_range_and_write_premium() -> None:
    p = prices_with_cache(Prices(input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=99.0), ANTHROPIC)
    assert p.cache_write == 3e-6 * 1.25  # the table's write price is replaced by the provider's premium
    trace = replay(timed([0, 10, 10]), resolve("none").create(), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(1_000_000, 1_000), cache=ANTHROPIC), TokenCounter("chars4", 0))
    t = totals(trace)
    expected = t.cache_read * 0.3e-6 + t.cache_write * 3.75e-6 + (t.input - t.cache_read - t.cache_write) * 3e-6 \
        + t.output * 15e-6
    assert cost(t, 0, 0, p) == expected
    assert cost(t, 1_000, 100, p, 800) == expected + 800 * 0.3e-6 + 200 * 3e-6 + 100 * 15e-6
    assert cost_without_cache(t, 1_000, 100, p) == (t.input + 1_000) * 3e-6 + (t.output + 100) * 15e-6


def test_the_recorded_cache_is_set_beside_the_simulated_one() -> None:
    from dataclasses import replace

    from compbench.run.engine import recorded_cache

    t = timed([0, 10, 400])  # the third call comes 400 s later: cold in the simulation
    msgs = list(t.messages)
    for k, (inp, read) in enumerate([(2_500, 0), (5_001, 2_500), (7_502, 7_000)]):
        i = 2 * k + 1
        msgs[i] = replace(msgs[i], usage=Usage(input=inp, output=1, cache_read=read))
    t = replace(t, messages=tuple(msgs), meta={"model": "claude-sonnet-4-5"})
    trace = replay(t, resolve("none").create(), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(1_000_000, 1_000), cache=ANTHROPIC), TokenCounter("chars4", 0))
    c = recorded_cache(t, trace)
    assert c == {"cache_calls": 3, "recorded_cache_read": 9_500, "recorded_input": 15_003,
                 "simulated_cache_read": 2_500, "simulated_input": 15_003}
    # the same calls recorded by gemini-3-pro-preview are checked against Gemini's cache, whatever the run's price
    # model: no expiry, reads in whole steps of 2,048 times the fitted hit rate (2,500 -> 2,048, 5,001 -> 4,096)
    gemini = recorded_cache(replace(t, meta={"model": "gemini-3-pro-preview"}), trace)
    assert gemini["simulated_cache_read"] == math.floor(2_048 * GEMINI_HIT_RATE) + math.floor(4_096 * GEMINI_HIT_RATE)


def test_reads_come_in_the_providers_steps() -> None:
    openai = cache_model_for("gpt-5")
    assert [openai.readable(n) for n in (1_023, 1_024, 1_151, 1_152, 5_000)] == [0, 1_024, 1_024, 1_152, 4_992]
    assert ANTHROPIC.readable(5_001) == 5_001 and ANTHROPIC.readable(1_023) == 0  # Anthropic: to the token
    # Gemini: whole 2,048-token steps from each model's minimum, at the expected hit rate (no hit rate: exact)
    whole = replace(cache_model_for("gemini-3-pro-preview"), hit_rate=1.0)
    assert [whole.readable(n) for n in (2_047, 2_048, 4_095, 4_096, 6_143)] == [0, 2_048, 2_048, 4_096, 4_096]
    g3 = replace(cache_model_for("gemini-3.1-pro-preview"), hit_rate=1.0)  # the docs' 4,096 for Gemini 3+
    assert [g3.readable(n) for n in (4_095, 4_096, 6_144)] == [0, 4_096, 6_144]
    flash = replace(cache_model_for("gemini-2.5-flash"), hit_rate=1.0)  # the docs' 2,048 for 2.5 models
    assert [flash.readable(n) for n in (2_047, 2_048, 3_000)] == [0, 2_048, 2_048]
    gemini = cache_model_for("gemini-3-pro-preview")
    assert gemini.hit_rate == GEMINI_HIT_RATE and 0.95 < GEMINI_HIT_RATE < 0.953
    assert gemini.readable(4_096) == math.floor(4_096 * GEMINI_HIT_RATE) == 3_901
    # in a replay: a growing session reads its expected share of whole steps, and writes the rest
    s = steps(timed([0, 1, 1, 1, 1]), gemini)
    assert [r for _, r, _ in s] == [0] + [math.floor(k * GEMINI_HIT_RATE) for k in (2_048, 4_096, 6_144, 8_192)]
    assert all(w == i - r for i, r, w in s[1:])


def test_run_takes_the_cache_lifetime(tmp_path: object) -> None:
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from compbench.cli import cli
    from compbench.data.formats.native import write
    from compbench.data.synth import generate

    d = Path(str(tmp_path))
    write(generate(1, seed=2, turns=6, log_lines=5, code_lines=5), d / "s.jsonl")
    res = CliRunner().invoke(cli, ["run", str(d / "s.jsonl"), "--strategy", "none", "--context-window", "8000",
                                   "--cache-ttl", "1h", "--out", str(d / "run"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads((d / "run" / "manifest.json").read_text())["spec"]["cache_ttl"] == "1h"


def test_a_request_marked_for_caching_writes_from_the_minimum_and_pays_the_write_price() -> None:
    assert [ANTHROPIC.written(n) for n in (1_023, 1_024, 1_025)] == [0, 1_024, 1_025]
    assert CacheModel("x").written(1) == 1 and CacheModel("x").written(0) == 0
    p = Prices(input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=3.75e-6)
    trace = replay(timed([0, 10, 10]), SummarizeAt(2, "own"), MockSummarizer(),  # type: ignore[arg-type]
                   ReplayConfig(ModelLimits(1_000_000, 1_000), cache=ANTHROPIC), TokenCounter("chars4", 0))
    (c,) = trace.compactions
    assert c.summarizer_written == 0  # unmarked: plain input
    base = summarizer_cost(trace, p)
    marked = replace(trace, compactions=(replace(c, summarizer_written=c.summarizer_input),))
    assert summarizer_cost(marked, p) - base == pytest.approx(c.summarizer_input * (3.75e-6 - 3e-6))
    assert summarizer_cost(marked, p, cached=False) == summarizer_cost(trace, p, cached=False)
