"""claude-code's rule per version on a 1M window (the auto-compact window Claude Code picks by itself: the
whole window, 400k from 2.1.92, the whole window again from 2.1.138, 500k from 2.1.196), each preset at,
just below and just above its threshold; the version a transcript recorded picking the preset, the
compaction's own version first. Sessions are hand-made: the thresholds rest on recorded usage alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data.formats.claude_code import read as read_cc
from compbench.data.transcript import Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import ModelLimits
from compbench.strategies import get, resolve
from compbench.strategies.claude_code import ClaudeCode, version_preset
from compbench.summarizers.mock import MockSummarizer
from compbench.validation.fidelity import Row, rows_for
from helpers import assistant, user, view_of

ONE_M, STANDARD = ModelLimits(1_000_000, 128_000), ModelLimits(200_000, 64_000)


def fires(spec: str, total: int, limits: ModelLimits, counter: TokenCounter) -> bool:
    c = resolve(f"claude-code:preset=seed,{spec}").create()
    assert isinstance(c, ClaudeCode)
    v = view_of([user("u1"), assistant("a1")], counter, limits)
    c.after_step(v, Usage(input=total - 10, output=10))
    return bool(c.before_step(v))


@pytest.mark.parametrize(("version", "preset"), [
    ("2.1.20", "2.0"), ("2.1.21", "2.1.21"), ("2.1.22", "2.1.21"),
    ("2.1.83", "2.1.21"), ("2.1.84", "2.1.84"), ("2.1.85", "2.1.84"),
    ("2.1.91", "2.1.84"), ("2.1.92", "2.1.92"), ("2.1.93", "2.1.92"),
    ("2.1.137", "2.1.92"), ("2.1.138", "2.1.138"), ("2.1.139", "2.1.138"),
    ("2.1.190", "2.1.138"), ("2.1.191", "2.1.191"), ("2.1.192", "2.1.191"),
    ("2.1.195", "2.1.191"), ("2.1.196", "current"), ("2.1.197", "current"),
    ("2.1.216", "current"), ("2.1.217", "2.1.217"), ("2.1.218", "2.1.217"),
    ("2.1.222", "2.1.217"), ("2.1.223", "2.1.223"), ("2.1.224", "2.1.223"),
    ("2.1.259", "2.1.223"), ("2.1.260", "2.1.260"), ("2.1.261", "2.1.260"),
    ("2.1.298", "2.1.260"), ("2.1.299", "2.1.299"), ("2.1.300", "2.1.299"),
    ("2.1.331", "2.1.299"), ("2.1.332", "2.1.299"), ("2.1.333", None),
    ("2.0.76", "2.0"), ("1.0.30", "2.0"), ("2.1.139-beta.1", "2.1.138"), (" 2.1.92 ", "2.1.92"),
    ("2.2.0", None), ("3.0.0", None), ("2.1", None), ("dev", None), ("", None),
])
def test_each_version_range_has_its_preset(version: str, preset: str | None) -> None:
    """None: newer than the newest package read (or unreadable): the newest preset, and the results say why."""
    assert version_preset(version) == preset
    assert preset is None or preset in get("claude-code").presets


# threshold on a 1M window: auto-compact window - min(max output, 20,000) - 13,000
@pytest.mark.parametrize(("preset", "threshold"), [
    ("2.1.21", 967_000), ("2.1.92", 367_000), ("2.1.138", 967_000), ("current", 467_000)])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_each_preset_at_its_1m_threshold(chars4: TokenCounter, preset: str, threshold: int, delta: int) -> None:
    assert fires(f"preset={preset}", threshold + delta, ONE_M, chars4) is (delta >= 0)


@pytest.mark.parametrize("preset", ["2.1.21", "2.1.92", "2.1.138", "current"])
@pytest.mark.parametrize(("window", "threshold"), [(300_000, 267_000), (700_000, 667_000)])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_the_users_auto_compact_window_comes_first(chars4: TokenCounter, preset: str, window: int, threshold: int,
                                                    delta: int) -> None:
    """CLAUDE_CODE_AUTO_COMPACT_WINDOW replaces the version's own window, below it or above it."""
    spec = f"preset={preset},auto_compact_window={window}"
    assert fires(spec, threshold + delta, ONE_M, chars4) is (delta >= 0)


@pytest.mark.parametrize("preset", ["2.1.21", "2.1.92", "2.1.138", "current"])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_200k_window_is_the_same_for_every_2_1_preset(chars4: TokenCounter, preset: str, delta: int) -> None:
    assert fires(f"preset={preset}", 167_000 + delta, STANDARD, chars4) is (delta >= 0)


# --- a recorded version picks the preset, in fidelity -------------------------------------------------------


def _rec(kind: str, uuid: str, parent: str | None, version: str, **kw: Any) -> dict[str, Any]:
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "s-1", "version": version, "cwd": "/r",
            "type": kind, "uuid": uuid, "timestamp": "2026-05-12T00:00:00Z", **kw}


def session(tmp_path: Path, inputs: list[int], version: str, compaction_version: str | None = None) -> Path:
    """A prompt, then one Bash call per recorded input (its result 40 characters: 10 estimated tokens), an auto
    compaction at the last call's input + output, the summary, and two calls after it."""
    records: list[dict[str, Any]] = [_rec("user", "p", None, version, message={"role": "user", "content": "go"})]
    parent = "p"
    for i, inp in enumerate(inputs):
        usage = {"input_tokens": 10, "cache_read_input_tokens": inp - 10, "cache_creation_input_tokens": 0,
                 "output_tokens": 90}
        call = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}
        records.append(_rec("assistant", f"a{i}", parent, version, message={
            "id": f"m{i}", "model": "claude-opus-4-7", "role": "assistant", "content": [call], "usage": usage}))
        records.append(_rec("user", f"r{i}", f"a{i}", version, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 40}]}))
        parent = f"r{i}"
    at = compaction_version or version
    records.append(_rec("system", "b", None, at, subtype="compact_boundary", logicalParentUuid=parent,
                        compactMetadata={"trigger": "auto", "preTokens": inputs[-1] + 100}))
    records.append(_rec("user", "s", "b", at, isCompactSummary=True, message={"role": "user", "content": "Summary"}))
    parent = "s"
    for i, inp in enumerate((30_000, 31_000)):
        usage = {"input_tokens": inp, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
                 "output_tokens": 9}
        records.append(_rec("assistant", f"z{i}", parent, at, message={
            "id": f"n{i}", "model": "claude-opus-4-7", "role": "assistant",
            "content": [{"type": "text", "text": "ok"}], "usage": usage}))
        parent = f"z{i}"
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def rows(path: Path) -> dict[str, Row]:
    (t,) = read_cc(path)
    return {r.preset: r for r in rows_for(t, TokenCounter("chars4", 0), MockSummarizer())}


def own(rs: dict[str, Row]) -> list[str]:
    return [p for p, r in rs.items() if "the version this preset models" in r.cause]


def test_a_2_1_119_session_is_matched_by_the_400k_rule(tmp_path: Path) -> None:
    """Compacted at 367,100 (+ the last result's 10 estimated tokens) on a 1M window: the 2.1.92 preset fires
    there, today's 500k waits for a call that never came, the whole window too."""
    rs = rows(session(tmp_path, [100_000, 250_000, 360_000, 366_000, 367_000], "2.1.119"))
    assert own(rs) == ["2.1.92"] and rs["2.1.92"].window == 1_000_000
    assert (rs["2.1.92"].real_step, rs["2.1.92"].d_steps) == (5, 0)
    assert rs["current"].our_step is None and rs["2.1.138"].our_step is None


def test_a_2_1_139_session_is_matched_by_the_whole_window(tmp_path: Path) -> None:
    rs = rows(session(tmp_path, [100_000, 300_000, 370_000, 470_000, 700_000, 960_000, 967_000], "2.1.139"))
    assert own(rs) == ["2.1.138"]
    assert rs["2.1.138"].d_steps == 0
    assert (rs["2.1.92"].d_steps, rs["current"].d_steps) == (-4, -3)  # 367k fires after call 3, 467k after call 4


def test_the_compactions_own_version_picks_the_preset(tmp_path: Path) -> None:
    """A session begun under 2.1.137 and resumed under 2.1.139 compacted by 2.1.139's rule: the compaction
    record's version decides, not the file's first."""
    path = session(tmp_path, [100_000, 960_000, 967_000], "2.1.137", compaction_version="2.1.139")
    (t,) = read_cc(path)
    assert (t.meta["tool_version"], t.compactions[0].meta["tool_version"]) == ("2.1.137", "2.1.139")
    assert own(rows(path)) == ["2.1.138"]
