"""A strategy's declared tool (compbench.sdk.tools): which logs are its tool's, the preset each log runs at (at,
just below and just above each version boundary), the settings a user writes, and the one table every command
reads (own_strategy)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from compbench.data.transcript import RecordedCompaction, Transcript
from compbench.errors import UsageError
from compbench.sdk import registry as base
from compbench.sdk.registry import own_strategy, param, resolve, strategy
from compbench.sdk.tools import Setting, Tool, sweep_specs, version_tuple
from compbench.strategies import get, names


def log(source: str, version: str = "", **meta: object) -> Transcript:
    return Transcript("t", source, (), meta={**({"tool_version": version} if version else {}), **meta})


@pytest.mark.parametrize(("version", "preset"), [
    ("2.0.76", "2.0"), ("2.1.20", "2.0"), ("2.1.21", "2.1.21"), ("2.1.91", "2.1.84"), ("2.1.92", "2.1.92"),
    ("2.1.137", "2.1.92"), ("2.1.138", "2.1.138"), ("2.1.195", "2.1.191"), ("2.1.196", "current"),
    ("2.1.216", "current"), ("2.1.217", "2.1.217"), ("2.1.300", "2.1.299")])
def test_a_claude_code_log_runs_at_its_versions_preset(version: str, preset: str) -> None:
    c, why = resolve("claude-code").for_log(log("claude-code", version))
    assert (c.preset, c.label) == (preset, "claude-code")
    assert why == f"Claude Code {version} recorded: the preset that models it"


@pytest.mark.parametrize(("source", "version", "spec", "preset"), [
    ("codex", "0.77.0", "codex", "0.77"), ("codex", "0.78.0", "codex", "current"),
    ("codex", "0.146.1", "codex", "current"),
    ("gemini-cli", "0.18-0.19", "gemini-cli", "0.18"), ("gemini-cli", "0.17.0", "gemini-cli", "0.17"),
    ("gemini-cli", "0.33+", "gemini-cli", ""), ("crush", "", "go-replace", "current"),
    ("kilo-code", "", "roo-code", "kilo"), ("roo-code", "3.50.0", "roo-code", ""),
    # OpenCode's seed is its parameters' defaults, no table entry: 1.2.x runs at them, 1.3 on at current
    ("opencode", "1.2.5", "opencode", ""), ("opencode", "1.2.99", "opencode", ""),
    ("opencode", "1.3.0", "opencode", "1.3"), ("opencode", "1.4.3", "opencode", "1.4"),
    ("opencode", "1.18.17", "opencode", "current"),
])
def test_each_tools_log_runs_at_its_own_preset(source: str, version: str, spec: str, preset: str) -> None:
    c, _ = resolve(spec).for_log(log(source, version))
    assert c.preset == preset


def test_a_roo_code_log_whose_summaries_are_assistant_messages_ran_3_42() -> None:
    rc = RecordedCompaction(3, "roo-code", meta={"layout": "assistant summary (before 3.43)"})
    t = Transcript("t", "roo-code", (), compactions=(rc,))
    c, why = resolve("roo-code").for_log(t)
    assert c.preset == "3.42" and "before 3.43" in why


def test_an_openhands_log_runs_at_the_condenser_it_records() -> None:
    v1 = log("openhands", format_version="v1", condenser={"kind": "LLMSummarizingCondenser", "max_size": 80,
                                                          "keep_first": 4})
    c, why = resolve("openhands-llm-summarizing").for_log(v1)
    assert c.preset == "v1-agent" and "records" in why
    assert resolve("openhands-llm-summarizing").for_log(log("openhands-v0"))[0].preset == ""  # V0 CLI: defaults


@pytest.mark.parametrize(("t", "why"), [
    (log("codex", "0.142.4"), "a codex log, not Claude Code's: the newest preset (2.1.299)"),
    (log("claude-code"), "no Claude Code version recorded: the newest preset (2.1.299)"),
    (log("claude-code", "next"), "Claude Code version 'next' cannot be read: the newest preset (2.1.299)"),
])
def test_other_logs_and_unknown_versions_run_at_the_newest_preset(t: Transcript, why: str) -> None:
    c, said = resolve("claude-code").for_log(t)
    assert (c.preset, said) == ("2.1.299", why)


def test_a_named_preset_or_the_seed_is_kept_for_every_log() -> None:
    seed = resolve("claude-code:preset=seed")
    assert not seed.auto and seed.label == "claude-code:preset=seed"
    assert seed.for_log(log("claude-code", "2.1.49")) == (seed, "")
    fixed = resolve("claude-code:preset=2.0")
    assert fixed.for_log(log("claude-code", "2.1.300"))[0].preset == "2.0"


def test_a_setting_without_a_preset_rides_on_each_logs_preset() -> None:
    c = resolve("claude-code:autocompact_pct_override=70")
    assert c.auto and c.label == "claude-code:autocompact_pct_override=70"
    at, _ = c.for_log(log("claude-code", "2.0.76"))
    assert at.preset == "2.0" and at.params.autocompact_pct_override == 70.0 and at.label == c.label
    assert at.params.output_reserve == get("claude-code").presets["2.0"]["output_reserve"]


def test_own_strategy_is_read_from_the_declarations() -> None:
    assert {s: own_strategy(s) for s in ("claude-code", "codex", "opencode", "pi", "gemini-cli", "openhands",
                                         "openhands-v0", "openhands-eval", "cline", "roo-code", "kilo-code",
                                         "crush", "aider", "goose", "swe-agent", "mini-swe-agent", "copilot",
                                         "openai")} == {
        "claude-code": "claude-code", "codex": "codex", "opencode": "opencode", "pi": "pi",
        "gemini-cli": "gemini-cli", "openhands": "openhands-llm-summarizing",
        "openhands-v0": "openhands-llm-summarizing", "openhands-eval": "openhands-llm-summarizing",
        "cline": "cline", "roo-code": "roo-code", "kilo-code": "roo-code", "crush": "go-replace", "aider": "aider",
        "goose": "goose", "swe-agent": "swe-agent", "mini-swe-agent": "none", "copilot": "copilot-cli", "openai": None}
    declared = [n for n in names() if get(n).tool is not None]
    assert all(get(n).tool.own for n in declared)  # type: ignore[union-attr]


def test_settings_paste_as_their_users_write_them() -> None:
    cc = get("claude-code").tool
    assert cc is not None
    pct = cc.setting("autocompact_pct_override")
    assert pct is not None and pct.paste(70.0) == "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70"
    codex = get("codex").tool
    assert codex is not None and codex.settings[0].paste(150_000) == "model_auto_compact_token_limit = 150000"
    opencode = get("opencode").tool
    assert opencode is not None and opencode.settings[0].paste(True) == '{"compaction": {"prune": true}}'
    specs = [s for s, _, _ in sweep_specs("claude-code", cc)]
    assert specs == ["claude-code:autocompact_pct_override=60", "claude-code:autocompact_pct_override=80"]
    assert all(resolve(s).auto for s in specs)


def test_a_setting_of_no_parameter_is_refused_when_declared() -> None:
    @dataclass(frozen=True)
    class P:
        k: int = param(1, "k.")

    with pytest.raises(UsageError, match="unknown parameter of setting K_ENV: 'nope'"):
        strategy("test-tool", params=P, source="t", summary="t",
                 tool=Tool("T", ("t",), settings=(Setting("nope", "K_ENV", "env", "1", "export K_ENV={value}"),)))(
            lambda p: None)  # type: ignore[arg-type,return-value]
    base._registry.pop("test-tool", None)


@pytest.mark.parametrize(("text", "parsed"), [("2.1.49", (2, 1, 49)), ("0.142", (0, 142, 0)),
                                              ("v0.33+ (writer)", (0, 33, 0)), ("dev", None)])
def test_version_tuple(text: str, parsed: tuple[int, ...] | None) -> None:
    assert version_tuple(text) == parsed


def _one_m(version: str, before: int | None, trigger: str = "auto") -> Transcript:
    rc = RecordedCompaction(3, "claude-code", trigger=trigger, tokens_before=before)  # type: ignore[arg-type]
    return Transcript("t", "claude-code", (), meta={"tool_version": version}, compactions=(rc,))


def test_a_1m_sessions_own_compaction_says_its_auto_compact_window() -> None:
    """2.1.138-2.1.139 sessions on 1M windows compacted at 568-571k, a 600k window the version table does not
    know: where a log shows its tool's automatic compaction past 200k, that is the session's window."""
    c, why = resolve("claude-code").for_log(_one_m("2.1.139", 568_000))
    assert c.preset == "2.1.138" and c.params.auto_compact_window == 601_000 and c.label == "claude-code"
    assert c.params.window_from_log
    assert "auto-compact window 601,000 inferred from the log's first automatic compaction at 568,000" in why
    # the user's own setting wins over what the log shows
    mine, _ = resolve("claude-code:auto_compact_window=400000").for_log(_one_m("2.1.139", 568_000))
    assert mine.params.auto_compact_window == 400_000 and not mine.params.window_from_log  # clamped as theirs


@pytest.mark.parametrize(("before", "trigger"), [(200_000, "auto"), (150_000, "auto"), (None, "auto"),
                                                 (568_000, "manual")])
def test_the_version_table_serves_a_log_that_shows_no_such_compaction(before: int | None, trigger: str) -> None:
    c, why = resolve("claude-code").for_log(_one_m("2.1.139", before, trigger))
    assert c.params.auto_compact_window == 0 and "inferred" not in why
