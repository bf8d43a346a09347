"""Each session is priced at the model that recorded it (its provider's cache with it), ``--price-model``
prices them all at one, and a session without a recorded model says which default it got; the cache
lifetime is the one the recording asked for."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure.cache import cache_model_for, ttl_for
from compbench.measure.models import prices_for, prices_with_cache
from compbench.measure.pricing import DEFAULT_PRICE_MODEL, price_entry, price_model_for
from compbench.measure.replay_metrics import cost, totals
from compbench.measure.tokens import TokenCounter
from compbench.replay.trajectories import replay
from compbench.replay.viewstate import ReplayConfig
from compbench.run.engine import Replayer, recorded_cache
from compbench.run.spec import RunSpec
from compbench.sdk.session import ModelLimits
from compbench.strategies import resolve
from compbench.summarizers.mock import MockSummarizer


def session(model: str | None, source: str = "codex", gaps: tuple[float, ...] = (0, 10, 10), ttl: str | None = None,
            ) -> Transcript:
    msgs, t = [], 1_700_000_000.0
    for k, gap in enumerate(gaps):
        t += gap
        stamp = datetime.fromtimestamp(t, UTC).isoformat()
        meta = {"timestamp": stamp, **({"cache_ttl": ttl} if ttl else {})}
        msgs += [Message(f"u{k}", "user", (Text("word " * 2_000),), meta={"timestamp": stamp}),
                 Message(f"a{k}", "assistant", (Text("ok"),), Usage(3_000 * (k + 1), 1), meta)]
    return Transcript("s", source, tuple(msgs), {"model": model} if model else {})


SPEC = RunSpec(strategies=("none",), limits=ModelLimits(200_000, 8_000), summarizer="mock", tokenizer="chars4",
               token_correction="none")


def row(t: Transcript, spec: RunSpec = SPEC) -> dict[str, object]:
    (r,) = Replayer(spec).run(t)["results"].records()
    return r


def test_a_gpt_session_is_priced_at_its_model_under_its_providers_cache() -> None:
    t = session("gpt-5.2-codex")
    r = row(t)
    assert (r["price_model"], r["price_model_source"]) == ("gpt-5.2-codex", "recorded model gpt-5.2-codex")
    trace_prices = prices_with_cache(prices_for("gpt-5.2-codex"), cache_model_for("gpt-5.2-codex"))
    steps = Replayer(SPEC).run(t)["steps"].records()
    # OpenAI's cache: no write premium, reads in 128-token steps
    assert all(s["cache_read"] % 128 == 0 for s in steps)
    assert trace_prices.cache_write == trace_prices.input
    sonnet = row(t, replace(SPEC, price_model=DEFAULT_PRICE_MODEL))
    assert sonnet["price_model"] == DEFAULT_PRICE_MODEL and "every transcript" in str(sonnet["price_model_source"])
    assert r["cost_usd"] != sonnet["cost_usd"]


def test_the_cost_is_the_recorded_models() -> None:
    t = session("claude-opus-4-6", source="claude-code")
    cache = cache_model_for("claude-opus-4-6")
    trace = replay(t, resolve("none").create(), MockSummarizer(), ReplayConfig(ModelLimits(200_000, 8_000),
                                                                                cache=cache), TokenCounter("chars4"))
    expected = cost(totals(trace), 0, 0, prices_with_cache(prices_for("claude-opus-4-6"), cache))
    assert row(t)["cost_usd"] == pytest.approx(expected)


def test_a_provider_prefixed_model_finds_its_priced_entry() -> None:
    # litellm lists google/gemini-3-pro-preview only under a reseller without prices; Vertex prices it
    assert price_entry("google/gemini-3-pro-preview") == "vertex_ai/gemini-3-pro-preview"
    assert price_entry("claude-opus-4-6") == "claude-opus-4-6"
    assert price_entry("no-such-model-anywhere") is None
    model, source = price_model_for(session("google/gemini-3-pro-preview", "mini-swe-agent"), None)
    assert model == "vertex_ai/gemini-3-pro-preview" and "litellm's vertex_ai/gemini-3-pro-preview" in source
    assert price_model_for(session("claude-sonnet-4-6[1m]", "claude-code"), None)[0] == "claude-sonnet-4-6"


def test_a_session_without_a_priced_model_says_which_default_it_got() -> None:
    assert price_model_for(session(None), None) == (DEFAULT_PRICE_MODEL,
                                                    f"no recorded model: the default {DEFAULT_PRICE_MODEL}")
    model, source = price_model_for(session("in-house-llm-7b"), None)
    assert model == DEFAULT_PRICE_MODEL and source.startswith("UNPRICED: recorded model in-house-llm-7b not priced")
    assert price_model_for(session(None), "gpt-5")[0] == "gpt-5"


def test_the_cache_lifetime_is_the_recorded_one() -> None:
    """Claude Code 2.1 asks for Anthropic's 1-hour cache: a call 20 minutes after the previous one reads its
    prefix there, and finds a 5-minute cache cold; writes cost 2x input."""
    gaps = (0, 10, 1_200)
    hour = session("claude-opus-4-6", "claude-code", gaps, ttl="1h")
    assert ttl_for(hour.messages, "auto") == ("1h", "1h: recorded")
    assert ttl_for(session("claude-opus-4-6", "claude-code", gaps).messages, "auto") == (
        "5m", "5m: the default (none recorded)")
    assert ttl_for(hour.messages, "5m")[0] == "5m"
    steps = Replayer(SPEC).run(hour)["steps"].records()
    assert steps[2]["cache_read"] > 0
    five = Replayer(replace(SPEC, cache_ttl="5m")).run(hour)["steps"].records()
    assert five[2]["cache_read"] == 0
    r = row(hour)
    assert r["cache_ttl"] == "1h"
    # the check of the cache model replays the recording under the lifetime it asked for
    trace = replay(hour, resolve("none").create(), MockSummarizer(), ReplayConfig(ModelLimits(200_000, 8_000)),
                   TokenCounter("chars4"))
    assert recorded_cache(hour, trace)["simulated_cache_read"] == trace.steps[0].input + trace.steps[1].input


def test_run_prices_each_transcript_at_its_model_by_default(tmp_path: Path) -> None:
    import json

    import pandas as pd
    from click.testing import CliRunner

    from compbench.cli import cli
    from compbench.data.formats.native import write

    write([session("gpt-5.2-codex"), replace(session(None, "swe-agent"), id="b")], tmp_path / "a.jsonl")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "a.jsonl"), "--strategy", "none", "--out",
                                   str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["spec"]["price_model"] is None
    r = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index("transcript_id")
    assert r.loc["s", "price_model"] == "gpt-5.2-codex" and r.loc["b", "price_model"] == DEFAULT_PRICE_MODEL
    assert "priced at: claude-sonnet-4-5 (1), gpt-5.2-codex (1); 1 at the default" in res.output


@pytest.mark.parametrize(("model", "meta", "why"), [
    ("qwen3:4b", {}, "a local model's name"), ("gpt-oss:20b", {}, "a local model's name"),
    ("mlx-community/Qwen3-30B-A3B-4bit", {}, "a local model's name"),
    ("gemma-3n-e4b", {"provider": "lmstudio"}, "provider lmstudio"),
    ("gemma-3n-e4b", {}, "an open-weights model litellm does not price (a heuristic)"),
])
def test_a_local_model_costs_nothing_and_says_so(model: str, meta: dict[str, str], why: str) -> None:
    t = replace(session(model, "opencode"), meta={"model": model, **meta})
    price_model, source = price_model_for(t, None)
    assert (price_model, source) == ("local", f"recorded model {model}: a local model ({why}), $0")
    assert (prices_for("local").input, prices_for("local").output) == (0.0, 0.0)
    assert row(t)["cost_usd"] == 0.0


@pytest.mark.parametrize(("model", "entry"), [
    ("claude-opus-4-1", "anthropic.claude-opus-4-1-20250805-v1:0"),
    ("claude-opus-4.1", "anthropic.claude-opus-4-1-20250805-v1:0"),
    ("claude-sonnet-4.6", "claude-sonnet-4-6"), ("claude-haiku-4.5", "claude-haiku-4-5"),
    ("gemini-2.5-pro", "gemini-2.5-pro")])
def test_a_model_listed_under_another_name_is_priced_at_its_own_price(model: str, entry: str) -> None:
    """claude-opus-4-1 was priced at Sonnet 4.5 (about 5x too cheap): the table lists it under Bedrock's name."""
    assert price_entry(model) == entry
    if "opus" in model:
        assert prices_for(entry).input == pytest.approx(5 * prices_for(DEFAULT_PRICE_MODEL).input)


def test_a_gemini_export_without_a_model_is_priced_at_gemini_clis_default() -> None:
    model, source = price_model_for(session(None, "gemini-cli"), None)
    assert model == "gemini-2.5-pro" and "Gemini CLI's default gemini-2.5-pro" in source


def test_an_unpriced_model_is_flagged_never_silently_the_default(tmp_path: Path) -> None:
    import pandas as pd

    from compbench.decide.flags import unpriced_models

    t = session("in-house-llm-7b")
    results = pd.DataFrame([{**row(t), "transcript_id": "s"}])
    assert unpriced_models(results) == ["in-house-llm-7b"]
    assert unpriced_models(pd.DataFrame([{**row(session("gpt-5.2-codex")), "transcript_id": "g"}])) == []


def aider_session(weak: str | None) -> Transcript:
    msgs: list[Message] = []
    for k in range(8):
        msgs += [Message(f"u{k}", "user", (Text("word " * 400),)),
                 Message(f"a{k}", "assistant", (Text("done " * 50),), Usage(1_000 * (k + 1), 10), {"edited": True})]
    meta = {"model": "claude-sonnet-4-5", **({"weak_model": weak} if weak else {})}
    return Transcript("aider-s", "aider", tuple(msgs), meta)


def test_summary_requests_are_priced_at_the_model_that_makes_them() -> None:
    """aider's summaries are the weak model's: priced at Haiku, not at the main model; --summarizer-model
    names one for all of them."""
    from compbench.measure.pricing import summarizer_models

    spec = replace(SPEC, strategies=("aider:max_chat_history_tokens=1024",), limits=ModelLimits(200_000, 8_000))
    t = aider_session("anthropic/claude-3-5-haiku-20241022")
    roles = summarizer_models(t, "claude-sonnet-4-5")
    assert roles["weak"][0] != "claude-sonnet-4-5" and "recorded" in roles["weak"][1]
    weak = Replayer(spec).run(t)["results"].records()[0]
    main = Replayer(replace(spec, summarizer_model="claude-sonnet-4-5")).run(t)["results"].records()[0]
    assert weak["summarizer_input_tokens"] == main["summarizer_input_tokens"] > 0
    assert weak["cost_usd"] < main["cost_usd"]
    assert ("summary requests: weak: aider's weak model anthropic/claude-3-5-haiku-20241022"
            in str(weak["price_model_source"]))
    assert summarizer_models(t, "x", "gpt-5")["weak"] == ("gpt-5", "gpt-5: --summarizer-model")
