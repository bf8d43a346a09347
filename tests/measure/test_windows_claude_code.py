"""Claude Code's window for the models its catalogue runs at a native 1M (compbench.measure.models._claude_code): 1M
without a suffix from 2.1.117 (its changelog: Opus 4.7 computed against 200k before), 200k for the others unless the
log shows more; the same catalogue as the strategy's (claude_code_window.NATIVE_1M)."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, Text, Transcript, Usage
from compbench.measure.models import CLAUDE_NATIVE_1M, effective_limits
from compbench.strategies.claude_code_window import NATIVE_1M, native_1m


def session(model: str, version: str | None, peak: int = 50_000) -> Transcript:
    call = Message("a1", "assistant", (Text("ok"),), Usage(input=peak, output=10), {"model": model})
    meta = {"model": model, **({"tool_version": version} if version else {})}
    return Transcript("t", "claude-code", (Message("u1", "user", (Text("hi"),)), call), meta)


@pytest.mark.parametrize(("model", "version", "window"), [
    ("claude-opus-4-7", "2.1.117", 1_000_000), ("claude-opus-4-7", "2.1.116", 200_000),
    ("claude-opus-4-7", "2.1.118", 1_000_000), ("claude-opus-4-7", None, 1_000_000),
    ("claude-opus-4-8", "2.1.230", 1_000_000), ("claude-opus-5", "2.1.217", 1_000_000),
    ("claude-sonnet-5", "2.1.300", 1_000_000), ("us.anthropic.claude-opus-4-8-v1:0", "2.1.230", 1_000_000),
    ("claude-fable-5-1", "2.1.300", 1_000_000), ("claude-haiku-5-5", "2.1.330", 1_000_000),
    ("claude-opus-4-6", "2.1.230", 200_000),  # 1M only with [1m]
    ("claude-sonnet-4-5-20250929", "2.1.230", 200_000), ("claude-haiku-4-5-20251001", "2.1.230", 200_000),
    ("claude-opus-4-5-20251101", "2.1.230", 200_000),
])
def test_a_native_1m_model_runs_at_1m(model: str, version: str | None, window: int) -> None:
    e = effective_limits(session(model, version))
    assert e.limits.context_window == window
    assert ("native 1M" in e.source) is (window == 1_000_000)


@pytest.mark.parametrize("prefix", NATIVE_1M)
def test_the_window_and_the_strategy_read_one_catalogue(prefix: str) -> None:
    for name in (prefix, f"{prefix}-1", f"anthropic/{prefix}"):
        assert bool(CLAUDE_NATIVE_1M.search(name)) and native_1m(name)
    assert not CLAUDE_NATIVE_1M.search("claude-opus-4-6") and not native_1m("claude-opus-4-6")
