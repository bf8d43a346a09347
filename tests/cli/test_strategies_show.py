"""``strategies show`` says the real tool a strategy reproduces, as its declaration does: its logs, the preset each
runs at, and the settings its users write with the line to paste."""

from __future__ import annotations

from click.testing import CliRunner

from compbench.cli import cli


def test_show_names_the_tool_its_presets_by_version_and_its_settings() -> None:
    out = CliRunner().invoke(cli, ["strategies", "show", "codex"]).output
    assert "reproduces: Codex (its logs: codex)" in out and "preset 0.77: up to 0.77" in out
    assert ("model_auto_compact_token_limit (~/.codex/config.toml (a top-level key, or under a [profiles.NAME] you "
            "use);") in out
    assert "a run tries 150000, 200000 on Codex's logs; e.g.\n        model_auto_compact_token_limit = 150000" in out
    plain = CliRunner().invoke(cli, ["strategies", "show", "truncate"]).output
    assert "reproduces:" not in plain  # a baseline reproduces no tool
