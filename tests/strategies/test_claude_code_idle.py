"""claude-code's idle compaction (2.1.299 on, read in the 2.1.299 and 2.1.332 packages): a conversation of 200,000
tokens or more on the one-hour prompt cache, left 54 minutes (0.9 of the hour) after its last request, is compacted
before the prompt that ends the gap; at, below and above each boundary, from the recorded timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.sdk.session import Compact, Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.claude_code import ClaudeCode
from compbench.summarizers.mock import MockSummarizer
from helpers import view_of

T0 = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
LIMITS = ModelLimits(1_000_000, 64_000)
MODEL = "claude-opus-4-7"


def at(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def gap_session(minutes: float, total: int, ttl: str = "1h") -> list[Message]:
    """A prompt, a response that used ``total`` tokens and wrote the cache for ``ttl``, a prompt ``minutes`` later."""
    usage = Usage(input=total - 10, output=10, cache_read=total - 2_000, cache_write=1_990)
    meta = {"model": MODEL, "timestamp": at(0), **({"cache_ttl": "1h"} if ttl == "1h" else {})}
    return [Message("u1", "user", (Text("go"),), meta={"timestamp": at(-1)}),
            Message("a1", "assistant", (Text("done"),), usage, meta),
            Message("u2", "user", (Text("and now"),), meta={"timestamp": at(minutes)})]


def decide(spec: str, minutes: float, total: int, counter: TokenCounter, ttl: str = "1h") -> Compact | None:
    c = resolve(f"claude-code:{spec}").create()
    assert isinstance(c, ClaudeCode)
    msgs = gap_session(minutes, total, ttl)
    before = view_of(msgs[:2], counter, LIMITS)
    assert msgs[1].usage is not None
    c.after_step(before, msgs[1].usage)
    acts = c.before_step(view_of(msgs, counter, LIMITS))
    assert all(isinstance(a, Compact) for a in acts)
    return acts[0] if acts else None  # type: ignore[return-value]


@pytest.mark.parametrize(("minutes", "compacts"), [(53, False), (53.99, False), (54, True), (55, True), (600, True)])
def test_54_minutes_on_the_one_hour_cache(chars4: TokenCounter, minutes: float, compacts: bool) -> None:
    """The timer fires at lastActivityAt + 0.9 x (expiresAt - lastActivityAt): 54 minutes after the last request."""
    got = decide("preset=2.1.299", minutes, 300_000, chars4)
    assert (got is not None) is compacts and (got is None or got.reason == "idle")


@pytest.mark.parametrize(("total", "compacts"), [(199_999, False), (200_000, True), (200_001, True)])
def test_200k_tokens_at_least(chars4: TokenCounter, total: int, compacts: bool) -> None:
    """``if (contextTokens < minTokens) return "small"``: the last call's input with the cache plus its output."""
    assert (decide("preset=2.1.299", 60, total, chars4) is not None) is compacts


@pytest.mark.parametrize(("setting", "total", "compacts"), [
    ("idle_compact_tokens=300000", 299_999, False), ("idle_compact_tokens=300000", 300_000, True),
    ("idle_compact_tokens=50000", 99_999, False),  # Math.max(100,000, the variable)
    ("idle_compact_tokens=50000", 100_000, True),
    ("idle_compact=false", 900_000, False),  # "idleCompaction": false
])
def test_its_settings(chars4: TokenCounter, setting: str, total: int, compacts: bool) -> None:
    assert (decide(f"preset=2.1.299,{setting}", 60, total, chars4) is not None) is compacts


@pytest.mark.parametrize(("spec", "ttl", "compacts"), [
    ("preset=2.1.299", "5m", False),  # the five-minute cache: never armed
    ("preset=2.1.260", "1h", False),  # before 2.1.299
    ("preset=2.1.299", "1h", True),
])
def test_only_where_it_runs(chars4: TokenCounter, spec: str, ttl: str, compacts: bool) -> None:
    assert (decide(spec, 90, 300_000, chars4, ttl) is not None) is compacts


def test_the_prompt_that_ended_the_gap_joins_the_compacted_conversation(chars4: TokenCounter) -> None:
    """The summary, the last round kept (2.1.217 on), then the prompt: it was typed after the compaction."""
    got = decide("preset=2.1.299", 60, 300_000, chars4)
    assert got is not None
    slots = got.new_view
    assert isinstance(slots[0], Insert) and slots[0].with_summary
    assert [s.id for s in slots if isinstance(s, Keep)] == ["a1", "u2"] and isinstance(slots[-1], Keep)
    assert got.request is not None and [m.id for m in got.request.source] == ["u1"]


def test_a_replay_compacts_at_the_prompt_after_the_gap(chars4: TokenCounter) -> None:
    """Through the loop: the call after the idle prompt sees the compacted context; nothing before it compacted."""
    msgs = gap_session(70, 300_000)
    more = [Message("a2", "assistant", (Text("again"),), Usage(input=20_000, output=10),
                    {"model": MODEL, "timestamp": at(71)})]
    t = Transcript("t", "claude-code", (*msgs, *more))
    trace = replay(t, resolve("claude-code:preset=2.1.299").create(), MockSummarizer(),
                   ReplayConfig(LIMITS, recorded_usage=True), chars4)
    (ev,) = [e for e in trace.compactions if e.ok]
    assert (ev.reason, ev.step) == ("idle", 1)
