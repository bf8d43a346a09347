"""Hugging Face datasets (compbench.data.hf), each shape a public trajectory dataset's card lays out, built small on
disk with ``Dataset.save_to_disk`` (no network): one transcript a row, read with a file's strictness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data import hf
from compbench.data.importing import Imported, Note, Skipped, collect
from compbench.data.transcript import ToolCall, ToolResult
from compbench.errors import TranscriptError, UsageError
from helpers import FIXTURES, main_cli

datasets = pytest.importorskip("datasets")
CLAUDE = FIXTURES / "shapes" / "claude-queue-first.jsonl"


def save(path: Path, rows: dict[str, list[Any]], splits: tuple[str, ...] = ()) -> Path:
    ds = datasets.Dataset.from_dict(rows)
    (datasets.DatasetDict({s: ds for s in splits}) if splits else ds).save_to_disk(str(path))
    return path


def claude_array() -> str:
    """A Claude Code session as CC-Bench-trajectories stores it: the log's records as one JSON array."""
    return json.dumps([json.loads(line) for line in CLAUDE.read_text().splitlines() if line.strip()])


def chat(n: int) -> list[dict[str, Any]]:
    """nebius/SWE-rebench-openhands-trajectories' messages: every key of the struct on every message."""
    empty = {"content": None, "name": None, "tool_call_id": None, "tool_calls": None}
    return [{**empty, "role": "system", "content": "You are OpenHands agent."},
            {**empty, "role": "user", "content": f"fix issue {n}"},
            {**empty, "role": "assistant", "content": "look", "tool_calls": [
                {"id": f"c{n}", "type": "function",
                 "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}]},
            {**empty, "role": "tool", "content": "a.py", "name": "execute_bash", "tool_call_id": f"c{n}"},
            {**empty, "role": "assistant", "content": "done"}]


def imported(*args: str | Path, **kw: Any) -> list[Any]:
    return [e.transcript for e in collect([str(a) for a in args], **kw) if isinstance(e, Imported)]


def test_a_whole_log_in_a_text_column_is_read_by_its_format(tmp_path: Path) -> None:
    """zai-org/CC-Bench-trajectories: ``trajectory`` holds a Claude Code session; the other columns describe it."""
    d = save(tmp_path / "cc-bench", {"id": [1, 2], "task_id": [35, 35], "trajectory": [claude_array()] * 2,
                                     "model_name": ["GLM-4.5", "Claude-Sonnet-4"],
                                     "task_category": ["ui_optimization"] * 2, "total_input_tokens": [77_900, 92_000]})
    a, b = imported(d)
    assert (a.id, b.id, a.source) == ("cc-bench/train/0", "cc-bench/train/1", "claude-code")
    assert a.meta["hf"] == {"dataset": str(d), "config": None, "split": "train", "row": 0, "column": "trajectory"}
    assert a.meta["hf_columns"] == {"id": 1, "task_id": 35, "model_name": "GLM-4.5", "task_category": "ui_optimization",
                                    "total_input_tokens": 77_900}
    assert a.meta["path"] == str(d) and [m.text for m in a.messages] == [m.text for m in b.messages]
    assert len(a.messages) == 2


def test_a_list_of_chat_messages_keeps_its_tool_calls_and_names_its_repository(tmp_path: Path) -> None:
    d = save(tmp_path / "swe-rebench-oh", {"trajectory_id": ["t0", "t1"], "instance_id": ["a__b-1", "a__b-2"],
                                           "repo": ["a/b", "a/b"], "trajectory": [chat(0), chat(1)],
                                           "model_patch": ["diff --git " + "x" * 500, ""], "resolved": [1, 0]},
             splits=("train",))
    t0, t1 = imported(f"hf:{d}")
    assert t0.source == "openai" and [m.role for m in t0.messages] == ["system", "user", "assistant", "tool",
                                                                       "assistant"]
    assert t0.messages[2].parts[-1] == ToolCall("c0", "execute_bash", '{"command": "ls"}')
    result = t0.messages[3].parts[0]
    assert isinstance(result, ToolResult) and (result.call_id, result.output, result.orphan) == ("c0", "a.py", False)
    assert t0.meta["repository"] == "a/b" and "model_patch" not in t0.meta["hf_columns"]  # a long value stays out
    assert t1.id == "swe-rebench-oh/train/1"


def test_a_swe_agent_history_of_role_and_text(tmp_path: Path) -> None:
    """nebius/SWE-agent-trajectories: ``{role: system | user | ai, text}``, the ``ai`` turns the model's."""
    turn = {"cutoff_date": None, "mask": False, "system_prompt": None}
    traj = [{**turn, "role": "system", "text": "You are an autonomous programmer.", "system_prompt": "sp"},
            {**turn, "role": "user", "text": "We're currently solving the following issue."},
            {**turn, "role": "ai", "text": "DISCUSSION\nLet's look.\n```\nls\n```", "mask": True},
            {**turn, "role": "user", "text": "a.py\n(Open file: n/a)"}]
    d = save(tmp_path / "swe-agent", {"instance_id": ["x__y-1"], "model_name": ["qwen"], "target": [True],
                                      "trajectory": [traj]})
    (t,) = imported(d)
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "user"]
    assert t.messages[2].text.startswith("DISCUSSION") and t.meta["model"] == "qwen"


def test_splits_of_a_saved_dataset_dict(tmp_path: Path) -> None:
    d = save(tmp_path / "dd", {"messages": [chat(0)]}, splits=("train", "test"))
    assert [t.id for t in imported(d)] == ["dd/train/0", "dd/test/0"]
    assert [t.id for t in imported(f"hf:{d}:test")] == ["dd/test/0"]
    with pytest.raises(UsageError, match=r"no split 'dev' \(splits: train, test\)"):
        imported(f"hf:{d}:dev")


def test_a_column_that_does_not_fit_is_refused_with_the_closest_reading(tmp_path: Path) -> None:
    gemini = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]
    d = save(tmp_path / "gem", {"messages": [gemini]})
    with pytest.raises(TranscriptError) as e:
        imported(d)
    assert str(e.value).startswith(f"{d} (train row 0, column 'messages'): not a supported transcript: closest is "
                                   "openai")
    assert "`parts` where it expects `content`" in str(e.value)
    skipped = [ev for ev in collect([str(d)], on_error="skip") if isinstance(ev, Skipped)]
    assert len(skipped) == 1 and skipped[0].what == "file"


def test_a_table_with_no_transcript_column_names_its_columns(tmp_path: Path) -> None:
    """SALT-NLP/SWE-chat's ``sessions`` table: metadata of sessions, no transcript in a row."""
    d = save(tmp_path / "sessions", {"session_id": ["s1"], "agent": ["claude-code"], "total_tokens": [12]})
    with pytest.raises(UsageError) as e:
        imported(d)
    assert str(e.value) == (f"{d}: no column holds a transcript (a list of messages with a role, or the text of a log "
                            "a supported format reads); columns: session_id (text of 2 characters), agent (text of 11 "
                            "characters), total_tokens (int); name one with #COLUMN to see why it does not fit")
    with pytest.raises(UsageError, match="no column 'nope'"):
        imported(f"hf:{d}#nope")


def test_a_hub_dataset_is_read_from_the_cache_only_unless_downloading_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        imported("hf:compbench-test/not-a-dataset:train")
    assert str(e.value).startswith("hf:compbench-test/not-a-dataset:train: not in the datasets cache (offline; "
                                   "--download fetches it from the Hub)")
    assert hf.parse("hf:zai-org/CC-Bench-trajectories/default:train[:10]#trajectory") == hf.Ref(
        "hf:zai-org/CC-Bench-trajectories/default:train[:10]#trajectory", "zai-org/CC-Bench-trajectories", "default",
        "train[:10]", "trajectory")
    with pytest.raises(UsageError, match="expected hf:OWNER/NAME"):
        hf.parse("hf:just-a-name")


def test_import_and_the_walk(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    d = save(tmp_path / "data" / "cc", {"id": [1], "trajectory": [claude_array()], "model_name": ["GLM-4.5"]})
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", f"hf:{d}", "--out", tmp_path / "ds")
    assert code == 0, err
    assert out.startswith("imported 1 transcript (claude-code 1); 0 errors skipped;")
    notes = [e.text for e in collect([tmp_path / "data"]) if isinstance(e, Note)]
    assert notes == [f"{d}: a Hugging Face dataset saved to disk: its rows are read when it is named (compbench "
                     "datasets import PATH), not its 3 other files in a walk"]
