"""compbench check-setting: the next logs against the advised configuration and the tool's default — took effect,
not in effect, cannot tell; other tools' logs passed over; a bad spec refused in one line."""

from __future__ import annotations

import pytest

from compbench.errors import UsageError
from compbench.validation.setting_check import check_setting
from helpers import growing_session

# Claude Code 2.1.49 at 200k: the default compacts past 167,000 (the 34th call), at 60% past 108,000 (the 22nd)
SPEC = "claude-code:autocompact_pct_override=60"


def test_logs_that_compact_where_the_setting_does_show_it_took_effect() -> None:
    c = check_setting([growing_session(22, id=f"s{k}") for k in range(3)], SPEC, "chars4")
    assert (c.checked, c.advised_within, c.default_within) == (3, 3, 0)
    assert c.outcome == "took effect" and c.recorded_tokens == 110_000
    assert "the setting took effect" in c.text()


def test_logs_that_compact_at_the_default_show_it_is_not_in_effect() -> None:
    c = check_setting([growing_session(34, id=f"s{k}") for k in range(3)], SPEC, "chars4")
    assert c.outcome == "not in effect" and "NOT in effect" in c.text()


def test_manual_compactions_and_logs_without_one_cannot_tell() -> None:
    from dataclasses import replace

    short = replace(growing_session(5, calls=10, id="short"), compactions=())
    c = check_setting([growing_session(22, trigger="manual"), short], SPEC, "chars4")
    assert (c.manual, c.checked) == (1, 0) and c.outcome == "cannot tell"


def test_compactions_neither_configuration_makes_are_said_so() -> None:
    c = check_setting([growing_session(5, calls=10)], SPEC, "chars4")  # the tool compacted at 25,000
    assert c.outcome == "not reproduced" and "neither the setting nor the default" in c.text()


def test_other_tools_logs_are_passed_over_and_a_bare_name_is_refused() -> None:
    from dataclasses import replace

    codex = replace(growing_session(22), source="codex")
    with pytest.raises(UsageError, match="no Claude Code log"):
        check_setting([codex], SPEC, "chars4")
    with pytest.raises(UsageError, match="expected a tool's strategy with the setting advised"):
        check_setting([growing_session(22)], "claude-code", "chars4")
