"""Savings rest on the recording: each transcript's window and hidden overhead, strategies that cannot
act flagged, a compaction that replaces nothing charged nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.decide.flags import strategy_flags
from compbench.measure.models import Prices
from compbench.measure.replay_metrics import result_row
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.run.engine import replay_conditions
from compbench.run.spec import RunSpec
from compbench.sdk.events import NOOP
from compbench.sdk.session import Action, Compact, Insert, Keep, ModelLimits, SessionView, SummaryRequest
from compbench.strategies import resolve
from compbench.summarizers.mock import MockSummarizer

PRICES = Prices(3e-6, 15e-6, 0.3e-6, 3.75e-6)


def claude_session() -> Transcript:
    msgs = [Message("u0", "user", (Text("word " * 400),))]
    msgs.append(Message("a0", "assistant", (Text("ok"),), usage=Usage(input=30_500, output=1)))
    msgs.append(Message("u1", "user", (Text("word " * 400),)))
    msgs.append(Message("a1", "assistant", (Text("ok"),), usage=Usage(input=31_001, output=1)))
    return Transcript("cc", "claude-code", tuple(msgs), {"model": "claude-opus-4-6"})


def test_window_and_overhead_come_from_the_recording() -> None:
    counter = TokenCounter("chars4", 0)
    config, cond, session = replay_conditions(RunSpec(strategies=("none",), system_tokens=None), claude_session(),
                                              counter)
    # Claude Code runs Opus 4.6 at 200k (litellm's table says 1M): the tool's default, with its source
    assert config.limits.context_window == 200_000 and "Claude Code default 200k" in cond["window_source"]
    # recorded 30,500 and 31,001 against counted 500 and 1,001: 30,000 tokens of hidden prompt, no growth
    assert config.system_tokens == cond["system_tokens"] == 30_000 and cond["overhead_rate"] == 1.0
    assert session is counter and cond["overhead_error"] == 0.0 and cond["overhead_flag"] == ""
    assert cond["system_tokens_source"] == "fixed from the first of 2 recorded calls, growth x1.000 per counted token"
    # priced at the recorded model, its cache lifetime the default (the recording wrote to no 1-hour cache)
    assert (cond["price_model"], cond["price_model_source"]) == ("claude-opus-4-6", "recorded model claude-opus-4-6")
    assert (cond["cache_ttl"], config.cache.ttl_s) == ("5m", 300.0)
    spec = RunSpec(strategies=("none",), limits=ModelLimits(50_000, 1_000), system_tokens=7, price_model="gpt-5")
    fixed, cond, _ = replay_conditions(spec, claude_session(), counter)
    assert fixed.limits.context_window == 50_000 and fixed.system_tokens == 7 and cond["overhead_rate"] == 1.0
    assert "every transcript" in cond["window_source"] and "every transcript" in cond["system_tokens_source"]
    assert cond["price_model"] == "gpt-5" and fixed.cache.provider == "openai"


class Noop:
    """Asks for a compaction that keeps everything: nothing would be replaced."""

    name = "noop"

    def before_step(self, s: SessionView) -> Sequence[Action]:
        kept = tuple(Keep(e.id) for e in s.entries)
        return [Compact("t", (Insert("user", with_summary=True, origin="summary"), *kept),
                        SummaryRequest("", s.rendered(), s.rendered()))] if s.step == 1 else []

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()


def test_a_compaction_that_replaces_nothing_is_not_ok_and_charged_nothing() -> None:
    t = claude_session()
    summarizer = MockSummarizer()
    trace = replay(t, Noop(), summarizer, ReplayConfig(ModelLimits(200_000, 1_000)), TokenCounter("chars4", 0))
    (ev,) = trace.compactions
    assert not ev.ok and ev.error == NOOP and ev.summarizer_input == 0 and not summarizer.requests
    assert ev.tokens_after == ev.tokens_before
    ref = replay(t, resolve("none").create(), summarizer, ReplayConfig(ModelLimits(200_000, 1_000)),
                 TokenCounter("chars4", 0))
    row = result_row(trace, ref, PRICES)
    assert row["compactions"] == 0 and row["noop_compactions"] == 1 and row["failed_compactions"] == 0
    assert row["cost_usd"] == row["reference_cost_usd"]


def test_a_strategy_that_cannot_act_is_flagged() -> None:
    # go-replace's seed threshold (200k) is above a 32k window: it overflows before it can act
    t = replace(claude_session(), messages=tuple(
        m for k in range(40) for m in (Message(f"u{k}", "user", (Text("word " * 2_000),)),
                                       Message(f"a{k}", "assistant", (Text("ok"),)))))
    counter = TokenCounter("chars4", 0)
    config = ReplayConfig(ModelLimits(32_000, 1_000))
    ref = replay(t, resolve("none").create(), MockSummarizer(), config, counter)
    rows = []
    for spec in ("go-replace:preset=seed", "claude-code", "none"):
        trace = replay(t, resolve(spec).create(), MockSummarizer(), config, counter)
        first = min([c.step for c in trace.compactions if c.ok], default=-1)
        rows.append({"transcript_id": t.id, "strategy": spec, "name": spec, "first_action_step": first,
                     **result_row(trace, ref, PRICES)})
    flags = strategy_flags(pd.DataFrame(rows))
    assert any("never acted" in f for f in flags["go-replace:preset=seed"])
    assert any("over the window before it first acted" in f for f in flags["go-replace:preset=seed"])
    assert not any("never acted" in f for f in flags.get("claude-code", []))  # it acted
    assert any("a real API would have refused" in f for f in flags["none"])


def mid_conversation_session() -> Transcript:
    """A Claude Code file that starts mid-conversation: its first call carries 150,000 tokens of history it
    does not hold (40,754 is the agent's usual fixed part), then the session grows past the threshold."""
    msgs: list[Message] = []
    total = 150_000
    for k in range(8):
        msgs += [Message(f"u{k}", "user", (Text("word " * 4_000),)),
                 Message(f"a{k}", "assistant", (Text("ok"),), usage=Usage(input=total, output=1))]
        total += 5_001
    return Transcript("mid", "claude-code", tuple(msgs), {"model": "claude-opus-4-6", "starts_mid_chain": True})


def test_the_history_a_file_lacks_is_removed_by_a_compaction_not_kept_as_overhead() -> None:
    """It was a fixed overhead every call kept: after a compaction the context stayed over 150,000 and the
    tool's own strategy overflowed. Replayed as a leading message, the compaction removes it."""
    from compbench.run.engine import Replayer, conditioned

    counter = TokenCounter("chars4", 0)
    spec = RunSpec(strategies=("claude-code:preset=2.1.21",), system_tokens=None, summarizer="mock",
                   tokenizer="chars4", token_correction="none", message_overhead=0)
    t, config, cond, _ = conditioned(spec, mid_conversation_session(), counter)
    assert t.messages[0].id == "inherited-history" and t.messages[0].meta["inherited_history"] > 100_000
    assert config.system_tokens == cond["system_tokens"] == 40_754  # the agent's usual part stays fixed
    assert "replayed as a leading message a compaction can remove" in cond["overhead_flag"]
    steps = Replayer(spec).run(mid_conversation_session())["steps"].records()
    compacted = [s for s in steps if s["strategy"] == "claude-code:preset=2.1.21" and s["epoch"] > 0]
    assert compacted and all(s["input"] < 100_000 for s in compacted)
