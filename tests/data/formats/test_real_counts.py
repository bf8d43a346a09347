"""Claude Code and Codex importers on the real files: counts established independently from the raw JSONL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from compbench.data.formats import read
from compbench.data.formats.detect import detect
from compbench.data.formats.native import read as read_native
from compbench.data.transcript import ToolCall, ToolResult, to_jsonl
from compbench.errors import TranscriptError

CC = {  # file: (user, assistant, tool, calls, results, compactions (index, trigger, preTokens))
    "M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl": (11, 62, 58, 58, 58, [(124, "manual", 31_469)]),
    "M-Claude__c7d2069e-c561-4759-8adf-b0745be78c29.jsonl": (27, 208, 211, 212, 211, [(424, "auto", 155_548)]),
    "M-Claude__ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl": (15, 206, 191, 191, 191, []),
}


@pytest.mark.parametrize("name", sorted(CC))
def test_claude_code_counts(transcripts_dir: Path, name: str) -> None:
    path = transcripts_dir / "claude-code" / name
    assert detect(path) == "claude-code"
    (t,) = read(path)
    roles = Counter(m.role for m in t.messages)
    user, asst, tool, calls, results, comps = CC[name]
    assert (roles["user"], roles["assistant"], roles["tool"]) == (user, asst, tool)
    assert (t.count_parts(ToolCall), t.count_parts(ToolResult)) == (calls, results)
    assert [(c.index, c.trigger, c.tokens_before) for c in t.compactions] == comps
    for c in t.compactions:
        assert t.messages[c.index].meta["compaction"] == "summary"
        assert c.summary.startswith("This session is being continued from a previous conversation")


def test_claude_code_merges_split_records_and_converts_usage(transcripts_dir: Path) -> None:
    (t,) = read(transcripts_dir / "claude-code" / "M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl")
    first = next(m for m in t.messages if m.role == "assistant")
    assert first.usage is not None
    # input_tokens 2 + cache_creation 18,035 + cache_read 0 (Anthropic excludes the cache from input)
    assert (first.usage.input, first.usage.cache_write, first.usage.cache_read) == (18_037, 18_035, 0)
    assert t.meta["tool_version"] == "2.0.60" and t.meta["model"] == "claude-opus-4-5-20251101"
    assert t.meta["api_errors"] == 0
    (t3,) = read(transcripts_dir / "claude-code" / "M-Claude__ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl")
    assert t3.meta["api_errors"] == 2


def test_codex_rollouts(transcripts_dir: Path) -> None:
    a, b = sorted((transcripts_dir / "codex").glob("*.jsonl"))
    assert detect(a) == detect(b) == "codex"
    (ta,) = read(a)
    assert Counter(m.role for m in ta.messages) == {"assistant": 280, "tool": 195, "user": 86}
    assert ta.count_parts(ToolCall) == ta.count_parts(ToolResult) == 195 and not ta.compactions
    (tb,) = read(b)
    assert Counter(m.role for m in tb.messages) == {"assistant": 173, "tool": 159, "user": 16}
    (c,) = tb.compactions
    assert (c.index, c.trigger, c.tokens_before, len(c.kept_ids)) == (343, "auto", 210_652, 16)
    assert c.meta["encrypted"] is True
    assert all(m.usage is not None for m in tb.messages if m.role == "assistant")


def test_round_trip_and_bad_lines(transcripts_dir: Path, tmp_path: Path) -> None:
    (t,) = read(transcripts_dir / "claude-code" / "M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl")
    p = tmp_path / "t.jsonl"
    p.write_text(to_jsonl(t))
    assert list(read_native(p)) == [t]
    src = (transcripts_dir / "claude-code" / "M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl").read_bytes()
    lines = src.splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:5]) + lines[5][:40] + b"\n")
    with pytest.raises(TranscriptError, match=r"bad.jsonl:6: a complete JSON object"):
        list(read(bad, "claude-code"))
