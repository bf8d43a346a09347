"""Fidelity on hand-made Claude Code logs of today's shapes: a 200k session of a model without a default window that
compacts at the API's limit (2.1.191 on) beside one whose model has a default and compacts at the threshold, an idle
compaction before the prompt that ended a 60-minute gap (2.1.299 on), and a log newer than the newest package read.
The preset of each log's version compacts where the log did; the presets before the rule do not."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from compbench.data.formats.claude_code import read as read_cc
from compbench.measure.tokens import TokenCounter
from compbench.summarizers.mock import MockSummarizer
from compbench.validation.fidelity import Row, rows_for

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def at(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def rec(kind: str, uuid: str, parent: str | None, version: str, minute: float, **kw: Any) -> dict[str, Any]:
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "s-1", "version": version, "cwd": "/r",
            "type": kind, "uuid": uuid, "timestamp": at(minute), **kw}


def write(tmp_path: Path, model: str, version: str, inputs: list[int], pre: int, gap: float = 0,
          one_hour: bool = False) -> Path:
    """A prompt, one Bash call per recorded input (each result 40 characters), then after ``gap`` minutes of quiet an
    automatic compaction at ``pre`` tokens, the summary, the user's next prompt and two calls."""
    records: list[dict[str, Any]] = [rec("user", "p", None, version, 0, message={"role": "user", "content": "go"})]
    parent, minute = "p", 0.0
    for i, inp in enumerate(inputs):
        usage: dict[str, Any] = {"input_tokens": 10, "cache_read_input_tokens": inp - 1_010,
                                 "cache_creation_input_tokens": 1_000, "output_tokens": 90}
        if one_hour:
            usage["cache_creation"] = {"ephemeral_1h_input_tokens": 1_000, "ephemeral_5m_input_tokens": 0}
        call = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}
        minute += 1
        records.append(rec("assistant", f"a{i}", parent, version, minute, message={
            "id": f"m{i}", "model": model, "role": "assistant", "content": [call], "usage": usage}))
        records.append(rec("user", f"r{i}", f"a{i}", version, minute, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 40}]}))
        parent = f"r{i}"
    if gap:  # the turn ends with a reply; the user comes back after the gap
        minute += 1
        records.append(rec("assistant", "fin", parent, version, minute, message={
            "id": "mfin", "model": model, "role": "assistant", "content": [{"type": "text", "text": "done"}],
            "usage": {**usage, "output_tokens": 5}}))
        parent = "fin"
        minute += gap
    records.append(rec("system", "b", None, version, minute, subtype="compact_boundary", logicalParentUuid=parent,
                       compactMetadata={"trigger": "auto", "preTokens": pre}))
    records.append(rec("user", "s", "b", version, minute, isCompactSummary=True,
                       message={"role": "user", "content": "Summary"}))
    records.append(rec("user", "q", "s", version, minute + 0.1, message={"role": "user", "content": "next"}))
    parent = "q"
    for i, inp in enumerate((30_000, 31_000)):
        records.append(rec("assistant", f"z{i}", parent, version, minute + 1 + i, message={
            "id": f"n{i}", "model": model, "role": "assistant", "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": inp, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
                      "output_tokens": 9}}))
        parent = f"z{i}"
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def rows(path: Path) -> dict[str, Row]:
    (t,) = read_cc(path)
    return {r.preset: r for r in rows_for(t, TokenCounter("chars4", 0), MockSummarizer())}


def test_a_model_without_a_default_compacts_at_the_apis_limit(tmp_path: Path) -> None:
    """claude-sonnet-4-5 at 200k on 2.1.230: no compaction at 170,000 or 190,000; the call at 199,950 (+ 90 output +
    the result after it) passes 200,000, and the tool compacted there. The 2.1.138 preset (before 2.1.191) compacts
    two calls early."""
    inputs = [100_000, 170_000, 190_000, 199_950]
    rs = rows(write(tmp_path, "claude-sonnet-4-5-20250929", "2.1.230", inputs, 200_050))
    own = rs["2.1.223"]
    assert "the version this preset models" in own.cause and own.window == 200_000
    assert (own.real_step, own.d_steps) == (4, 0)
    assert rs["2.1.138"].d_steps == -2 and rs["2.1.191"].d_steps == 0


def test_a_model_with_a_default_compacts_at_the_threshold(tmp_path: Path) -> None:
    """claude-opus-4-6 at 200k: its model default makes the window's source model-default, 167,000."""
    rs = rows(write(tmp_path, "claude-opus-4-6", "2.1.230", [100_000, 160_000, 166_900], 167_050))
    assert (rs["2.1.223"].real_step, rs["2.1.223"].d_steps) == (3, 0)


def test_an_idle_compaction_before_the_prompt_after_a_60_minute_gap(tmp_path: Path) -> None:
    """2.1.300, claude-opus-4-7 on its 1M window and the one-hour cache: 250,000 tokens, then an hour's quiet; the
    tool compacted before the prompt that ended it. 2.1.260's preset has no idle compaction and never compacts."""
    path = write(tmp_path, "claude-opus-4-7", "2.1.300", [150_000, 250_000], 250_100, gap=60, one_hour=True)
    rs = rows(path)
    own = rs["2.1.299"]
    assert own.window == 1_000_000 and "the version this preset models" in own.cause
    assert (own.real_step, own.d_steps) == (3, 0)
    assert rs["2.1.260"].our_step is None and "strategy never compacted" in rs["2.1.260"].cause


def test_without_the_one_hour_cache_there_is_no_idle_compaction(tmp_path: Path) -> None:
    rs = rows(write(tmp_path, "claude-opus-4-7", "2.1.300", [150_000, 250_000], 250_100, gap=60, one_hour=False))
    assert rs["2.1.299"].our_step is None


def test_a_log_newer_than_the_packages_read_runs_at_the_newest_preset_and_says_so(tmp_path: Path) -> None:
    inputs = [100_000, 170_000, 190_000, 199_950]
    rs = rows(write(tmp_path, "claude-sonnet-4-5-20250929", "2.1.400", inputs, 200_050))
    newest = rs["2.1.299"]
    assert "the version this preset models" not in newest.cause
    assert "recorded by claude-code 2.1.400; the preset models claude-code 2.1.299-2.1.332" in newest.cause
    assert newest.d_steps == 0
