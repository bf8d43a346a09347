"""codex's presets by version: 0.77, ``current`` (0.78-0.146), ``0.147`` (remote compaction v2, to 0.153, the newest
read) at each boundary, a newer version at the newest preset with the reason said, and v2's 64k retained budget."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Text, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.sdk.registry import get
from compbench.sdk.session import Insert, Keep, ModelLimits
from compbench.strategies import resolve
from compbench.strategies.codex import CodexParams, version_preset
from helpers import assistant, system, user, view_of


@pytest.mark.parametrize(("version", "preset"), [
    ("0.77.0", "0.77"), ("0.78.0", "current"), ("0.144.0-alpha.4", "current"), ("0.146.1", "current"),
    ("0.147.0", "0.147"), ("0.153.4", "0.147"), ("0.154.0", None), ("next", None)])
def test_each_version_gets_the_preset_that_models_it(version: str, preset: str | None) -> None:
    assert version_preset(version) == preset


@pytest.mark.parametrize(("version", "preset", "why"), [
    ("0.146.1", "current", "Codex 0.146.1 recorded: the preset that models it"),
    ("0.147.0", "0.147", "Codex 0.147.0 recorded: the preset that models it"),
    ("0.154.0", "0.147", "Codex 0.154.0: no preset models it, the newest preset (0.147)")])
def test_a_log_past_the_newest_read_runs_at_the_newest_preset_and_says_so(version: str, preset: str,
                                                                          why: str) -> None:
    info = get("codex")
    assert info.tool is not None and info.tool.newest == "0.147"
    t = Transcript("t", "codex", (Message("u", "user", (Text("hi"),)),), {"tool_version": version})
    assert info.tool.preset_for(t, tuple(info.presets)) == (preset, why)


def session(tokens_each: int) -> list[Message]:
    """Three user messages of ``tokens_each`` approximate tokens (4 bytes each), then a model call."""
    msgs: list[Message] = [system("dev", "developer instructions")]
    for k in range(3):
        msgs += [user(f"u{k}", "x" * (4 * tokens_each)), assistant(f"a{k}")]
    return msgs


@pytest.mark.parametrize(("tokens_each", "kept_whole"), [(20_000, 3), (21_334, 2), (25_000, 2)])
def test_remote_v2_keeps_user_messages_up_to_64k_tokens(chars4: TokenCounter, tokens_each: int,
                                                         kept_whole: int) -> None:
    """64,000 holds three messages of 20,000 (or 21,333) tokens whole, not three of 21,334: the oldest is then
    truncated to what is left. The 20k budget of ``current`` keeps one of 20,000 whole and nothing else."""
    v = view_of(session(tokens_each), chars4, ModelLimits(272_000, 128_000))
    new = resolve("codex:preset=0.147").create().manual(v).new_view  # type: ignore[attr-defined]
    assert sum(1 for s in new if isinstance(s, Keep) and s.id.startswith("u")) == kept_whole
    truncated = [s for s in new if isinstance(s, Insert) and s.origin == "synthetic"]
    assert len(truncated) == 3 - kept_whole
    old = resolve("codex:preset=current").create().manual(v).new_view  # type: ignore[attr-defined]
    assert sum(1 for s in old if isinstance(s, Keep) and s.id.startswith("u")) == (1 if tokens_each == 20_000
                                                                                       else 0)


def test_the_v2_preset_differs_from_current_only_in_its_budget() -> None:
    new, cur = resolve("codex:preset=0.147").params, resolve("codex:preset=current").params
    assert isinstance(new, CodexParams) and isinstance(cur, CodexParams)
    assert (new.user_message_max_tokens, cur.user_message_max_tokens) == (64_000, 20_000)
    assert {k: v for k, v in vars(new).items() if k != "user_message_max_tokens"} == {
        k: v for k, v in vars(cur).items() if k != "user_message_max_tokens"}
