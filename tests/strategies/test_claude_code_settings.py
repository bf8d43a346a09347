"""What Claude Code's users set, as the ``claude-code`` Tool declares it: each setting's name, where it goes, the
line to paste and the limits each version applies (read in the packages: claude_code_versions), each limit also
held by the parameter it names."""

from __future__ import annotations

import pytest

from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import ModelLimits
from compbench.sdk.tools import Setting
from compbench.strategies import get, resolve
from compbench.strategies.claude_code import ClaudeCode, ClaudeCodeParams
from helpers import user, view_of


def settings() -> dict[str, Setting]:
    tool = get("claude-code").tool
    assert tool is not None
    return {s.param: s for s in tool.settings}


def test_every_setting_names_a_parameter_and_where_it_goes() -> None:
    fields = set(ClaudeCodeParams.__dataclass_fields__)
    got = settings()
    assert set(got) <= fields
    assert set(got) == {"autocompact_pct_override", "auto_compact_window", "settings_window", "disable_1m",
                        "idle_compact", "idle_compact_tokens"}
    for name in ("autocompact_pct_override", "auto_compact_window", "disable_1m", "idle_compact_tokens"):
        assert got[name].where.startswith("the shell environment, or \"env\" in ~/.claude/settings.json")
    for name in ("settings_window", "idle_compact"):
        assert got[name].where.startswith("~/.claude/settings.json")


@pytest.mark.parametrize(("param", "value", "line"), [
    ("auto_compact_window", 500_000, "export CLAUDE_CODE_AUTO_COMPACT_WINDOW=500000"),
    ("settings_window", 400_000, "\"autoCompactWindow\": 400000"),
    ("disable_1m", True, "export CLAUDE_CODE_DISABLE_1M_CONTEXT=1"),
    ("idle_compact", False, "\"idleCompaction\": false"),
    ("idle_compact_tokens", 300_000, "export CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS=300000"),
    ("autocompact_pct_override", 60.0, "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=60"),
])
def test_the_line_a_user_pastes(param: str, value: object, line: str) -> None:
    assert settings()[param].paste(value) == line


@pytest.mark.parametrize(("param", "said"), [
    ("auto_compact_window", ["parseInt through 2.1.303", "\"500k\" reads as 500, then raised to 100,000",
                             "k and M suffixes from 2.1.304", "below 100,000 is raised to 100,000",
                             "above 1,000,000 capped", "before 2.1.92 taken as read",
                             "never above the model's window"]),
    ("settings_window", ["from 100,000 to 1,000,000", "dropped, not clamped", "modelSettings", "2.1.288 on",
                         "CLAUDE_CODE_AUTO_COMPACT_WINDOW comes first"]),
    ("disable_1m", ["2.1.50", "from 2.1.223 every native-1M model"]),
    ("idle_compact", ["one-hour prompt cache", "54 minutes"]),
    ("idle_compact_tokens", ["raised to 100,000"]),
    ("autocompact_pct_override", ["from 2.1.191 it acts only where the window's source is not auto"]),
])
def test_each_note_says_the_limits(param: str, said: list[str]) -> None:
    note = settings()[param].note
    assert all(s in note for s in said), [s for s in said if s not in note]


@pytest.mark.parametrize(("spec", "threshold"), [
    ("auto_compact_window=99999", 67_000),  # the environment variable: raised to 100,000
    ("auto_compact_window=100000", 67_000), ("auto_compact_window=100001", 67_001),
    ("auto_compact_window=1500000", 967_000),  # capped at 1,000,000
    ("settings_window=99999", 967_000),  # settings.json: dropped, the model's 1M window again
    ("settings_window=100000", 67_000), ("settings_window=1000000", 967_000),
    ("settings_window=1000001", 967_000),
    ("settings_window=300000,auto_compact_window=200000", 167_000),  # the environment variable first
])
def test_the_parameters_hold_the_notes_limits(chars4: TokenCounter, spec: str, threshold: int) -> None:
    c = resolve(f"claude-code:preset=2.1.299,{spec}").create()
    assert isinstance(c, ClaudeCode)
    assert c.threshold(view_of([user("u1")], chars4, ModelLimits(1_000_000, 64_000))) == threshold
