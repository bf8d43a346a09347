"""openai-compaction: all user messages verbatim + one opaque item whose size is a measured ratio."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from conftest import SHARED, need_shared, shared_glob

from compbench.data.transcript import Message
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.openai_compaction import COMPRESSION_RATIO, OpenAICompaction, OpenAICompactionParams
from compbench.summarizers.mock import MockSummarizer
from helpers import assistant, run, system, tool, transcript, user, view_of


def chat() -> list[Message]:
    return [system("sys", "s" * 40), user("u1", "u" * 40), assistant("a1", "a" * 40, [("c1", "bash", {})]),
            tool("t1", "c1", "o" * 400), assistant("a2", "b" * 40), user("u2", "v" * 40),
            assistant("a3", "", [("c2", "bash", {})]), tool("t2", "c2", "p" * 400)]


def oc(threshold: int = 0, ratio: float = COMPRESSION_RATIO) -> OpenAICompaction:
    return OpenAICompaction(OpenAICompactionParams(threshold, ratio))


@pytest.mark.parametrize(("over", "acts"), [(-1, False), (0, False), (1, True)])
def test_trigger_is_strictly_over_the_threshold(chars4: TokenCounter, over: int, acts: bool) -> None:
    v = view_of(chat(), chars4)
    assert bool(oc(v.context_tokens - over).before_step(v)) is acts


def test_default_threshold_is_90_percent_of_the_input_limit(chars4: TokenCounter) -> None:
    v = view_of(chat(), chars4, ModelLimits(1_000, 100))
    assert oc().threshold(v) == 900
    v = view_of(chat(), chars4, ModelLimits(1_000, 100, max_input=500))
    assert oc().threshold(v) == 450


def test_keeps_instructions_and_every_user_message_then_the_item(chars4: TokenCounter) -> None:
    v = view_of(chat(), chars4)
    c = oc().compact(v, "x")
    assert c.new_view == (Keep("sys"), Keep("u1"), Keep("u2"),
                          Insert("assistant", with_summary=True, origin="summary",
                                 meta={"compaction_item": "encrypted"}))
    assert c.request is not None
    assert [m.id for m in c.request.source] == ["a1", "t1", "a2", "a3", "t2"]  # the pending output too
    replaced = sum(e.tokens for e in v.entries if e.id in {"a1", "t1", "a2", "a3", "t2"})
    assert c.request.max_output_tokens == math.ceil(0.015 * replaced)
    assert c.request.system == "s" * 40 and c.request.meta["opaque"]


def test_an_earlier_item_is_compacted_into_the_next(chars4: TokenCounter) -> None:
    t = transcript(*chat(), assistant("a4", "c" * 40), user("u3", "w" * 40), assistant("a5", "d" * 4000),
                   user("u4", "x"), assistant("a6", "e"))
    summ = MockSummarizer("ITEM")
    tr = run(t, oc(threshold=150), chars4, summarizer=summ)
    assert len(tr.compactions) >= 2
    second = summ.requests[1]
    assert second.previous_summary == "ITEM" and any(m.text == "ITEM" for m in second.source)
    assert tr.epochs[2][:4] == ("sys", "u1", "u2", "u3")


def test_ratio_preset_value_and_validation() -> None:
    assert resolve("openai-compaction").params == OpenAICompactionParams(0, 0.015)
    with pytest.raises(Exception, match="compression_ratio"):
        resolve("openai-compaction:compression_ratio=0").create()


def _codex_item_ratios(folder: Path) -> list[float]:
    """The compaction item's share of what it replaced, as Codex's own post-compaction estimate shows it."""
    ratios = []
    for f in shared_glob(folder, "*.jsonl"):
        recs = [json.loads(line) for line in f.open()]
        meta = recs[0]["payload"]
        base = meta["base_instructions"]
        base_text = base["text"] if isinstance(base, dict) else base
        base_tokens = math.ceil(len(base_text.encode()) / 4)
        counts = [(i, r["payload"]["info"]) for i, r in enumerate(recs) if r.get("type") == "event_msg"
                  and r["payload"].get("type") == "token_count" and r["payload"].get("info")]
        for i, r in enumerate(recs):
            if r.get("type") != "compacted":
                continue
            items = r["payload"]["replacement_history"]
            kept = sum(math.ceil(len(json.dumps(it, separators=(",", ":"), ensure_ascii=False).encode()) / 4)
                       for it in items)
            before = max((j, info) for j, info in counts if j < i)[1]["last_token_usage"]["total_tokens"]
            after = min((j, info) for j, info in counts if j > i)[1]["last_token_usage"]["total_tokens"]
            ratios.append((after - kept - base_tokens) / (before - kept))
    return ratios


def test_default_ratio_is_the_median_of_the_real_codex_remote_compactions() -> None:
    folder = need_shared(SHARED / "real-compactions" / "codex", "real Codex rollouts")
    ratios = _codex_item_ratios(folder)
    assert len(ratios) == 5
    assert round(statistics.median(ratios), 3) == COMPRESSION_RATIO


def test_a_failed_compaction_leaves_the_view_and_the_next_call_tries_again(chars4: TokenCounter) -> None:
    t = transcript(*chat(), assistant("a4", "c" * 40), user("u3", "w" * 40), assistant("a5", "d"))
    tr = run(t, oc(threshold=150), chars4, summarizer=MockSummarizer(error="APIError: 500"))
    assert len(tr.compactions) >= 2 and not any(e.ok for e in tr.compactions)
    assert tr.final_view == tuple(m.id for m in t.messages)
