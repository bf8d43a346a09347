"""Wake conditions are exact: a run whose strategies sleep until their wake conditions writes the tables of a
run that asks every strategy every question, byte for byte — with each strategy's defaults, its presets,
thresholds low enough to act many times, and thresholds placed exactly at, just below and just above a
quantity the replay reaches (the trigger boundary)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from compbench.data.importing import iter_transcripts
from compbench.data.synth import generate, session
from compbench.data.transcript import Transcript
from compbench.measure.tokens import TokenCounter
from compbench.replay import members
from compbench.replay.trajectories import recorded_entries, replay
from compbench.replay.viewstate import ReplayConfig
from compbench.run.engine import TABLES
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk import capabilities
from compbench.sdk.session import ModelLimits
from compbench.strategies import get, resolve, runnable
from compbench.strategies.langchain_clear_tool_uses import recorded_tokens
from compbench.strategies.openhands_events import EventState
from compbench.strategies.round_chained import message_estimate
from compbench.summarizers.extractive import ExtractiveSummarizer
from helpers import ROOT

WINDOW = ModelLimits(12_000, 2_048)

# thresholds low enough that these act many times on 60-turn synthetic sessions in a 12k window
ACTIVE = [
    "anthropic-compaction:trigger=50000", "anthropic-context-editing:trigger_value=3000",
    "anthropic-context-editing:trigger_value=4000,keep=1,clear_at_least=500",
    "anthropic-context-editing:preset=thinking",
    "claude-code:threshold_ratio=0.4", "codex:auto_compact_token_limit=5000", "go-replace:threshold=6000",
    "go-replace:preset=current", "langchain:preset=docs", "langchain:trigger=messages:30",
    "langchain-clear-tool-uses:trigger=3000", "observation-masking:keep_last_turns=0",
    "observation-masking:keep_last_turns=1", "openai-compaction:compact_threshold=5000",
    "opencode:protect=2000,minimum=500", "opencode:preset=current", "opencode:at_limit=true,count_cache_write=true",
    "openhands-amortized-forgetting:max_size=20", "openhands-browser-output:browser_tools=bash",
    "openhands-browser-output:browser_tools=bash,attention_window=3",
    "openhands-llm-summarizing:max_size=30", "openhands-llm-summarizing:preset=v1,max_tokens=4000",
    "openhands-observation-masking:attention_window=12", "openhands-recent-events:max_events=25",
    "openhands-recent-events:max_events=25,keep_first=4", "pi:reserve_tokens=4000,keep_recent_tokens=2000",
    "round-chained:preset=window", "truncate:reserve_output=6000",
    "gemini-cli-masking:protection=2000,min_prunable=1000",
    "gemini-cli-masking:protection=500,min_prunable=3000,protect_latest_turn=false",
    "gemini-cli-compression:threshold=0.3", "gemini-cli-compression:threshold=0.3,verify=false",
    "cline-sdk:trigger_ratio=0.3", "cline-sdk:trigger_ratio=0.3,preserve_recent_tokens=1000", "goose:threshold=0.3",
    "aider:max_chat_history_tokens=3000", "openhands-conversation-window",
]


def every_configuration() -> list[str]:
    """Each runnable strategy's defaults, each of its presets, and the active thresholds above."""
    out = []
    for name in runnable():
        out.append(name)
        out += [f"{name}:preset={p}" for p in get(name).presets]
    return out + ACTIVE


def tables(out: Path) -> dict[str, bytes]:
    return {k: (out / f"{k}.parquet").read_bytes() for k in TABLES}


def with_and_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, specs: list[str], data: list[Transcript],
                     limits: ModelLimits | None = WINDOW) -> None:
    spec = RunSpec(strategies=tuple(specs), limits=limits, tokenizer="o200k_base", summarizer="calibrated",
                   system_tokens=0 if limits is not None else None)
    write_run(tmp_path / "wake", spec, "test", iter(data), force=True)
    monkeypatch.setattr(members, "WAKE", False)
    write_run(tmp_path / "asked", spec, "test", iter(data), force=True)
    monkeypatch.setattr(members, "WAKE", True)
    assert tables(tmp_path / "wake") == tables(tmp_path / "asked")


def test_the_strategies_that_wake_say_so() -> None:
    """The capability shows (``strategies show``), and the default run's strategies mostly have one."""
    have = [n for n in runnable() if "wake" in get(n).capabilities()]
    assert {"none", "opencode", "codex", "claude-code", "truncate", "observation-masking"} <= set(have)
    assert "wake" in capabilities(resolve("none").create())


@pytest.mark.parametrize("source", ["synth", "samples"])
def test_waking_changes_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    if source == "synth":
        data = list(generate(4, seed=11, turns=60))
    else:
        data = sorted(iter_transcripts(ROOT / "datasets" / "samples"), key=lambda t: len(t.messages))[:6]
    with_and_without(tmp_path, monkeypatch, every_configuration(), data)


def test_waking_changes_no_table_at_the_transcripts_own_windows(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's first run: each transcript at its own window and calibrated overhead."""
    data = sorted(iter_transcripts(ROOT / "datasets" / "samples"), key=lambda t: len(t.messages))[:8]
    with_and_without(tmp_path, monkeypatch, list(runnable()), data, limits=None)


BIG = ModelLimits(200_000, 2_048)  # the boundary tests' window: every quantity below it, thresholds set directly


def big_session() -> Transcript:
    """An 80-turn session that passes 50,000 tokens (anthropic-compaction's smallest trigger)."""
    return session(5, 0, turns=80, log_lines=150, code_lines=150)


def quantities(t: Transcript) -> dict[str, list[int]]:
    """What the ``none`` replay reaches before each call: the context, the step's usage (input + output),
    the OpenHands events, round-chained's and LangChain's own estimates of the view."""
    counter = TokenCounter("o200k_base").scoped(t)
    trace = replay(t, resolve("none").create(), ExtractiveSummarizer(), ReplayConfig(BIG), counter)
    entries = recorded_entries(t, counter.index(t))
    before = [entries[:s.message_index] for s in trace.steps]
    return {"context": [s.input for s in trace.steps], "usage": [s.input + s.output for s in trace.steps],
            "events": [len(EventState(True).events(v)) for v in before],
            "round": [sum(message_estimate(e.message) for e in v) for v in before],
            "langchain": [sum(recorded_tokens(e.message) for e in v if e.role != "system") for v in before]}


def test_waking_at_the_trigger_boundary_changes_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds exactly at a context, a usage or an event count the replay reaches, and one token (one
    event) either side: a wake one question late would show here."""
    t = big_session()
    q = quantities(t)
    contexts, usages = q["context"], q["usage"]
    assert max(contexts) > 50_000
    specs = []
    for k in (len(usages) // 3, len(usages) // 2, 4 * len(usages) // 5):
        c, u, n = contexts[k], usages[k], q["events"][k]
        for d in (-1, 0, 1):
            specs += [
                f"claude-code:preset=seed,autocompact_buffer={BIG.context_window - (u + d)}",  # threshold u + d
                f"codex:preset=seed,auto_compact_token_limit={u + d}",
                f"go-replace:preset=seed,threshold={u + d}",
                f"openai-compaction:compact_threshold={c + d}",
                f"anthropic-context-editing:trigger_value={c + d}",
                f"anthropic-compaction:trigger={max(50_000, c + d)}",
                f"openhands-amortized-forgetting:max_size={n + d}",
                f"openhands-recent-events:max_events={n + d}",
                f"openhands-observation-masking:attention_window={n + d}",
                f"openhands-llm-summarizing:preset=seed,max_size={n + d}",
                f"openhands-llm-summarizing:preset=v1,max_size={n + d}",
                f"observation-masking:keep_last_turns={k + d}",
                # threshold = model_context_limit with no reserves at 100%
                f"round-chained:model_context_limit={q['round'][k] + d},system_reserve=0,output_reserve=0,"
                "safety_buffer=0,threshold_percent=1.0",
                f"langchain-clear-tool-uses:trigger={q['langchain'][k] + d - 1}",  # clears over the trigger
            ]
    with_and_without(tmp_path / "thresholds", monkeypatch, sorted(set(specs)), [t], BIG)
    acted = pd.read_parquet(tmp_path / "thresholds" / "wake" / "results.parquet")["first_action_step"]
    assert len(acted) == len(set(specs)) and (acted >= 0).all()  # every threshold was reached
    k = len(usages) // 2
    for d in (-1, 0, 1):  # thresholds that follow the window
        usable = ModelLimits(usages[k] + d + 2_048, 2_048)  # opencode: usable = window - max output
        with_and_without(tmp_path / f"usable{d}", monkeypatch, ["opencode", "opencode:preset=current"], [t], usable)
        budget = ModelLimits(contexts[k] + d + 2_048, 2_048)  # truncate: budget = input limit - reserve
        with_and_without(tmp_path / f"budget{d}", monkeypatch, ["truncate"], [t], budget)
        limit = ModelLimits(contexts[k] + d, 2_048)  # a condensation request: the prompt over the input limit
        with_and_without(tmp_path / f"limit{d}", monkeypatch,
                         ["openhands-conversation-window", "openhands-llm-summarizing:max_size=100000"], [t], limit)


def test_the_openhands_v0_condensers_wake_for_observations_to_cut(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """V0 cuts an observation past max_message_chars the first time it is in the view and still masks it later:
    the samples hold seven such outputs (at the demo's 32k window a sleeping masking condenser once masked 4
    observations fewer)."""
    data = list(iter_transcripts(ROOT / "datasets" / "samples"))
    with_and_without(tmp_path, monkeypatch, ["openhands-observation-masking", "openhands", "openhands-browser-output",
                                             "openhands-recent-events"], data, limits=ModelLimits(32_000, 4_096))
