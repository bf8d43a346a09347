"""effective_limits: the window a tool really used — its default for the recorded model, the evidence in
the transcript, a family fallback that says so — never a table entry the tool does not use."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript, Usage
from compbench.measure.models import effective_limits
from compbench.sdk.session import ModelLimits


def session(source: str, model: str = "", peak: int = 1_000, msg_model: str = "", **meta: Any) -> Transcript:
    call = Message("a1", "assistant", (Text("ok"),), Usage(input=peak, output=10),
                   {"model": msg_model} if msg_model else {})
    return Transcript("t", source, (Message("u1", "user", (Text("hi"),)), call),
                      {"model": model, **meta} if model else dict(meta))


@pytest.mark.parametrize(("model", "peak", "window", "source"), [
    ("claude-opus-4-6", 150_000, 200_000,
     "recorded model claude-opus-4-6, Claude Code default 200k, not litellm's 1M"),
    ("claude-opus-4-5-20251101", 200_000, 200_000, "recorded model claude-opus-4-5-20251101, Claude Code default 200k"),
    ("claude-opus-4-5-20251101", 200_001, 1_000_000,
     "recorded model claude-opus-4-5-20251101; input 200k > 200k: 1M window inferred"),
    ("claude-opus-4-6", 312_000, 1_000_000, "recorded model claude-opus-4-6; input 312k > 200k: 1M window inferred"),
    ("glm-4.6", 1_000, 200_000, "recorded model glm-4.6, Claude Code default 200k, not litellm's 205k"),
    ("", 1_000, 200_000, "no model recorded, Claude Code default 200k"),
])
def test_claude_code_runs_200k_unless_the_1m_window_is_on(model: str, peak: int, window: int, source: str) -> None:
    e = effective_limits(session("claude-code", model, peak))
    assert (e.limits.context_window, e.source) == (window, source)


def test_claude_code_1m_suffix() -> None:
    e = effective_limits(session("claude-code", "claude-opus-4-6", msg_model="claude-opus-4-6[1m]"))
    assert e.limits == ModelLimits(1_000_000, 128_000)
    assert e.source == "claude-opus-4-6[1m]: [1m] suffix, the 1M window"


@pytest.mark.parametrize(("meta", "window", "source"), [
    ({"model": "gpt-5.5", "model_context_window": 258_400}, 272_000,
     "recorded model_context_window 258,400 = 95% of 272,000"),
    ({"model": "gpt-5.5", "model_context_window": 121_600}, 128_000,  # a configured 128k window
     "recorded model_context_window 121,600 = 95% of 128,000"),
    ({"model": "gpt-5.5"}, 272_000, "recorded model gpt-5.5, Codex's catalog 272k"),  # not litellm's 1.05M
])
def test_codex_reads_its_recorded_effective_window(meta: dict[str, Any], window: int, source: str) -> None:
    e = effective_limits(session("codex", **meta))
    assert (e.limits.context_window, e.limits.input_limit, e.source) == (window, window, source)


@pytest.mark.parametrize(("model", "peak", "window", "source"), [
    ("claude-opus-4-5", 1_000, 200_000,
     "recorded model claude-opus-4-5, litellm's table (goose's own registry not read)"),
    ("claude-mystery-9", 1_000, 200_000, "unknown model 'claude-mystery-9', claude family default: Anthropic's "
                                         "standard 200k"),
    ("acme-coder", 1_000, 128_000, "unknown model 'acme-coder' and family: 128,000 assumed"),
    ("acme-coder", 128_001, 128_000, "unknown model 'acme-coder' and family: 128,000 assumed; recorded input 128k "
                                     "exceeds it"),
])
def test_other_tools_table_then_family(model: str, peak: int, window: int, source: str) -> None:
    """A tool whose own table is not read (Goose without its recorded context_limit): litellm stands in, and
    neither it nor a family fallback is the tool's figure (``known`` False)."""
    e = effective_limits(session("goose", model, peak))
    assert (e.limits.context_window, e.source, e.known) == (window, source, False)


@pytest.mark.parametrize(("source", "meta", "known", "says"), [
    ("aider", {}, True, "litellm's table (the table aider reads)"),  # aider reads litellm's table itself
    ("openhands", {}, True, "litellm's table (the table OpenHands reads)"),
    ("goose", {"context_window": 64_000}, True, "recorded context window 64,000 (goose)"),
    ("openhands", {"model": "acme-coder", "max_input_tokens": 30_000}, True, "recorded max_input_tokens 30,000"),
    ("cline", {}, False, "litellm's table (cline's own registry not read)"),
])
def test_litellm_is_the_tools_table_only_where_the_tool_reads_it(source: str, meta: dict[str, Any], known: bool,
                                                                  says: str) -> None:
    e = effective_limits(session(source, **{"model": "gpt-4o", **meta}))
    assert e.known is known and says in e.source


def test_a_tool_whose_rule_gives_every_model_a_window_knows_it() -> None:
    """Claude Code's 200k default and Gemini CLI's tokenLimit default are the tools' own rules, not guesses."""
    assert effective_limits(session("claude-code", "acme-coder")).known
    assert effective_limits(session("gemini-cli", "gemini-9-ultra")).known
    codex = effective_limits(session("codex", "acme-coder"))  # no catalog figure, no recorded window
    assert not codex.known and "128,000 assumed" in codex.source


def codex_rollout(model: str, totals: tuple[int, ...], windows: tuple[int, ...] = (258_400,),
                  version: str = "0.144.2") -> Transcript:
    """A Codex 0.144-shaped session: its token counts record model_context_window (``windows``, in order)."""
    msgs = [Message("u1", "user", (Text("go"),))]
    for k, total in enumerate(totals):
        msgs += [Message(f"a{k}", "assistant", (Text("step"),), Usage(input=total - 100, output=100)),
                 Message(f"u{k + 2}", "user", (Text("next"),))]
    meta: dict[str, Any] = {"model": model, "model_context_window": windows[0], "model_context_windows": list(windows),
                            "tool_version": version}
    return Transcript("r", "codex", tuple(msgs), meta)


@pytest.mark.parametrize("model", ["gpt-5.6-sol", "gpt-5.6-luna", "gpt-5.5", "gpt-5.1-codex-max", "gpt-5-2025-08-07",
                                   "someones-model"])
def test_codex_records_95_percent_of_its_window_for_every_model(model: str) -> None:
    """258,400 is 95% of 272,000 whatever the model: Codex's default effective_context_window_percent."""
    e = effective_limits(codex_rollout(model, (1_000,)))
    assert (e.limits.context_window, e.source) == (272_000, "recorded model_context_window 258,400 = 95% of 272,000")


def test_codex_takes_the_window_in_force_where_it_compacted() -> None:
    """A 0.144.0-alpha session recorded 353,400 (372,000), then 258,400 once resumed, and compacted under the
    second: the server's catalogue changed under it. Without a compaction, the last recorded window."""
    t = codex_rollout("gpt-5.6-sol", (1_000,), windows=(353_400, 258_400))
    assert effective_limits(t).source == "recorded model_context_window 258,400 last recorded = 95% of 272,000"
    rc = RecordedCompaction(2, "codex", "auto", meta={"model_context_window": 258_400})
    e = effective_limits(replace(t, compactions=(rc,)))
    assert (e.limits.context_window, e.source) == (
        272_000, "recorded model_context_window 258,400 in force at its compactions = 95% of 272,000")
    manual = RecordedCompaction(2, "codex", "manual", meta={"model_context_window": 353_400})
    assert effective_limits(replace(t, compactions=(manual,))).limits.context_window == 272_000  # not its rule


@pytest.mark.parametrize(("model", "version", "window"), [
    ("gpt-5.6-sol", "0.143.0", 272_000), ("gpt-5.6-sol", "0.144.0", 372_000), ("gpt-5.6-terra", "0.144.2", 372_000),
    ("gpt-5.6-sol", "0.145.0", 272_000), ("gpt-5.5", "0.144.2", 272_000), ("gpt-5.6-sol", "", 272_000)])
def test_codex_without_a_recorded_window_takes_its_versions_bundled_catalogue(model: str, version: str,
                                                                                window: int) -> None:
    e = effective_limits(session("codex", model, tool_version=version))
    assert (e.limits.context_window, e.source) == (window, f"recorded model {model}, Codex's catalog {window // 1000}k")


@pytest.mark.parametrize(("total", "compacts"), [(244_799, False), (244_800, True), (244_801, True)])
def test_codex_compacts_at_90_percent_of_the_catalogue_window(chars4: Any, total: int, compacts: bool) -> None:
    """0.9 x 272,000 = 244,800 for every model, gpt-5.6-sol included (the former rule took 258,400 as its window
    and compacted at 232,560: 12,240 tokens early)."""
    from compbench.replay.trajectories import replay
    from compbench.replay.viewstate import ReplayConfig
    from compbench.strategies import resolve
    from compbench.summarizers.mock import MockSummarizer

    for model in ("gpt-5.6-sol", "gpt-5.5"):
        t = codex_rollout(model, (200_000, total, 100_000))
        trace = replay(t, resolve("codex:preset=current").create(), MockSummarizer(),
                       ReplayConfig(effective_limits(t).limits, 0, recorded_usage=True), chars4)
        assert any(c.ok for c in trace.compactions) is compacts, model


@pytest.mark.parametrize(("model", "window", "max_output"), [
    ("gpt-5", 400_000, 128_000), ("gpt-5.1", 400_000, 128_000), ("gpt-5.2", 400_000, 128_000),
    ("gpt-5.4", 1_050_000, 128_000)])
def test_roo_code_takes_the_window_from_its_own_table(model: str, window: int, max_output: int) -> None:
    """litellm lists the GPT-5 family at 272,000: Roo Code's table says 400,000, and Roo then condenses at
    0.9 x 400,000 - 128,000 = 232,000, not 116,800."""
    e = effective_limits(session("roo-code", model))
    assert (e.limits.context_window, e.limits.max_output, e.known) == (window, max_output, True)
    assert "Roo Code's own model table (RooCodeInc/Roo-Code at cb83656718" in e.source
    if model == "gpt-5":  # another tool without a table of its own keeps litellm's figure, marked unknown
        other = effective_limits(session("goose", model))
        assert other.limits.context_window == 272_000 and not other.known


def opencode_session(date_ms: int | None, totals: tuple[int, ...], provider: str = "github-copilot") -> Transcript:
    """An OpenCode 1.4.3-shaped session on GitHub Copilot's claude-sonnet-4.6 (models.dev's limits by date)."""
    meta: dict[str, Any] = {"provider": provider, "model": "claude-sonnet-4.6"}
    if date_ms is not None:
        meta["time"] = date_ms
    msgs = [Message("u1", "user", (Text("go"),), None, dict(meta))]
    for k, total in enumerate(totals):
        msgs += [Message(f"a{k}", "assistant", (Text("step"),), Usage(input=total - 100, output=100), dict(meta)),
                 Message(f"u{k + 2}", "user", (Text("next"),), None, dict(meta))]
    return Transcript("o", "opencode", tuple(msgs), {"model": "claude-sonnet-4.6", "tool_version": "1.4.3"})


APRIL_10_2026 = 1_775_800_000_000  # OpenCode 1.4.3's release week


@pytest.mark.parametrize(("date_ms", "limits"), [
    (APRIL_10_2026, ModelLimits(200_000, 32_000, 128_000)),  # models.dev from 2026-03-19: input 128,000
    (1_771_400_000_000, ModelLimits(128_000, 32_000)),  # 2026-02-18: context 128,000, no input limit
    (1_781_000_000_000, ModelLimits(200_000, 32_000, 168_000)),  # 2026-06-09: input 168,000
])
def test_opencode_on_github_copilot_runs_copilots_limits_of_the_day(date_ms: int, limits: ModelLimits) -> None:
    e = effective_limits(opencode_session(date_ms, (1_000,)))
    assert e.limits == limits and "github-copilot" in e.source


@pytest.mark.parametrize(("total", "compacts"), [(107_999, False), (108_000, True), (112_579, True)])
def test_opencode_1_4_3_compacts_at_copilots_input_limit_less_its_buffer(chars4: Any, total: int,
                                                                         compacts: bool) -> None:
    """input 128,000 - min(20,000, 32,000) = 108,000: the real automatic compaction at 112,579 tokens on
    claude-sonnet-4.6 is past it; at Anthropic's limits (200,000 - 32,000 = 168,000) neither preset fires there."""
    from compbench.replay.trajectories import replay
    from compbench.replay.viewstate import ReplayConfig
    from compbench.strategies import resolve
    from compbench.summarizers.mock import MockSummarizer

    for provider, expected in (("github-copilot", compacts), ("anthropic", False)):
        t = opencode_session(APRIL_10_2026, (90_000, total, 50_000), provider)
        trace = replay(t, resolve("opencode:preset=current").create(), MockSummarizer(),
                       ReplayConfig(effective_limits(t).limits, 0, recorded_usage=True), chars4)
        assert any(c.ok for c in trace.compactions) is expected, provider


def crush_session(provider: str, model: str, started: str | None) -> Transcript:
    meta: dict[str, Any] = {"provider": provider, "model": model}
    if started is not None:
        meta["started_at"] = started
    return Transcript("c", "crush", (Message("u1", "user", (Text("go"),)),), meta)


@pytest.mark.parametrize(("provider", "model", "started", "window"), [
    ("copilot", "claude-haiku-4.5", "2026-04-02T06:35:40Z", 200_000),  # catwalk from 2026-01-30, not litellm's 128k
    ("copilot", "claude-haiku-4.5", "2026-01-29T23:59:59Z", 144_000),  # the day before catwalk raised it
    ("copilot", "claude-haiku-4.5", "2026-01-30T00:00:00Z", 200_000),  # the day it did
    ("copilot", "claude-sonnet-4.6", "2026-06-06T10:00:00Z", 264_000),
    ("copilot", "claude-opus-4.5", None, 200_000),  # no date: the latest, said so
])
def test_crush_on_copilot_runs_catwalks_window_of_the_day(provider: str, model: str, started: str | None,
                                                          window: int) -> None:
    e = effective_limits(crush_session(provider, model, started))
    assert e.limits.context_window == window and "catwalk" in e.source
    assert ("no date recorded" in e.source) == (started is None)


def test_crush_on_another_provider_reads_catwalks_list_of_that_provider() -> None:
    """catwalk's deepseek list gives deepseek-chat 128,000 (litellm: 131,072); a model catwalk's openai list does
    not hold is one the user's crush.json adds: its window is not in the log."""
    e = effective_limits(crush_session("deepseek", "deepseek-chat", "2026-04-02T06:35:40Z"))
    assert (e.limits.context_window, e.known) == (128_000, True)
    assert e.source.startswith("recorded model deepseek-chat on deepseek, catwalk (charmbracelet/catwalk history to")
    assert e.source.endswith("from 2025-08-25: 128k, not litellm's 131k")
    other = effective_limits(crush_session("openai", "claude-haiku-4.5", None))
    assert not other.known and other.source.startswith("model claude-haiku-4.5 is not in catwalk's openai list")
