"""OpenHands V1 conversations (software-agent-sdk @ 611629e): the folder, events.json + trajectory.json and
events.jsonl shapes, hand-made (tests/openhands_shapes.py); usage joined by response id; the recorded
condensations; the conversation tree; misfit files refused with one clear line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openhands_shapes import CONV, compact, uid, v1_events, write_v1_array, write_v1_folder, write_v1_jsonl

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Reasoning, Text, ToolCall, ToolResult
from compbench.errors import TranscriptError
from helpers import FIXTURES


def one(path: Path) -> Any:
    (t,) = read(path)
    return t


def test_folder_is_read_through_its_base_state(tmp_path: Path) -> None:
    conv = write_v1_folder(tmp_path / "conversations")
    notes: list[str] = []
    assert list(iter_files([tmp_path / "conversations"], notes.append)) == [conv / "base_state.json"]
    assert notes == []  # its 41 event files are read with it: nothing passed over, nothing to say
    (conv / "notes.txt").write_text("x")
    notes.clear()
    list(iter_files([tmp_path / "conversations"], notes.append))
    assert notes == [f"{conv}: an OpenHands conversation: read through base_state.json and its events/, not the 1 "
                     "other file beside them (other state)"]
    assert detect(conv / "base_state.json") == "openhands"
    t = one(conv / "base_state.json")
    assert (t.id, t.source, t.steps) == (CONV, "openhands", 18)
    assert [m.role for m in t.messages[:4]] == ["system", "user", "assistant", "tool"]
    a, r = t.messages[2], t.messages[3]
    assert a.parts == (Text("Step 1: run `ls calc tests`."),
                       ToolCall("toolu_01xxxxxxxxxxxxxxxxxxxx", "terminal",
                                '{"command": "ls calc tests", "security_risk": "LOW"}'))
    assert r.parts == (ToolResult("toolu_01xxxxxxxxxxxxxxxxxxxx", "terminal",
                                  "calc/__init__.py\ncalc/ops.py\ntests/test_calc.py"),)
    # token usage is in the base state, joined by response id: call 1 saw 2 events, so 9000 + 600 * 2
    assert a.usage is not None and (a.usage.input, a.usage.output, a.usage.cache_read) == (10_200, 85, 9_300)
    assert t.messages[-1].role == "assistant" and t.messages[-1].usage is not None
    assert (t.meta["model"], t.meta["max_input_tokens"], t.meta["condenser"]["max_size"]) == (
        "anthropic/claude-sonnet-4-5-20250929", 200_000, 20)
    assert t.meta["tools"] == ["terminal", "file_editor", "task_tracker"]
    assert t.meta["events"]["ConversationStateUpdateEvent"] == 2 and t.warnings == ()


def test_the_recorded_condensations(tmp_path: Path) -> None:
    t = one(write_v1_folder(tmp_path) / "base_state.json")
    first, second = t.compactions
    # before call 11: system, user, then calls 8-10 kept (7 from the tail, moved to the next whole pair)
    assert first.index == 22 and first.trigger == "auto" and first.tool == "openhands"
    assert first.kept_ids == tuple(m.id for m in t.messages[:2]) + tuple(m.id for m in t.messages[16:22])
    assert first.summary.startswith("USER_CONTEXT: Fix tests/test_calc.py::test_divide")
    assert (first.meta["forgotten_events"], first.meta["summary_offset"], first.meta["summary_event_offset"]) == (
        14, 2, 2)
    assert first.meta["condenser_usage"] == {"input": 2600, "output": 310}
    # the last call before it: prompt 9000 + 600 * 20 events, completion 85
    assert first.tokens_before == 21_000 + 85
    # the second forgets the first summary and calls 8-13
    assert second.meta["forgotten_summaries"] == 1 and second.meta["forgotten_events"] == 13
    assert second.kept_ids == tuple(m.id for m in t.messages[:2]) + tuple(m.id for m in t.messages[28:34])


def test_a_folder_without_base_state_is_read_through_its_first_event(tmp_path: Path) -> None:
    conv = write_v1_folder(tmp_path, base=False)
    first = sorted((conv / "events").iterdir())[0]
    assert list(iter_files([tmp_path])) == [first]
    t = one(first)
    assert t.id == conv.name and t.steps == 18 and len(t.compactions) == 2
    assert all(m.usage is None for m in t.messages)  # no base state: no usage
    with pytest.raises(TranscriptError, match=f"one of its events; import {conv}$"):
        one(sorted((conv / "events").iterdir())[3])


def test_one_event_of_a_conversation_named_alone_is_refused(tmp_path: Path) -> None:
    conv = write_v1_folder(tmp_path)
    with pytest.raises(TranscriptError) as e:
        one(sorted((conv / "events").iterdir())[0])
    assert str(e.value).endswith(f"one of its events; import {conv} (or its base_state.json)")
    assert "\n" not in str(e.value)


def test_events_json_with_trajectory_json_beside_it(tmp_path: Path) -> None:
    events = write_v1_array(tmp_path / "run")
    notes: list[str] = []
    assert list(iter_files([tmp_path], notes.append)) == [events]
    assert notes == []  # its trajectory.json is read with it (the usage): not "the 1 other file beside it"
    assert detect(events) == "openhands"
    t, folder = one(events), one(write_v1_folder(tmp_path / "f") / "base_state.json")
    assert t.id == CONV and t.messages == folder.messages and t.compactions == folder.compactions
    with pytest.raises(TranscriptError, match=f"this is its base state; import {events}"):
        one(tmp_path / "run" / "trajectory.json")


def test_events_jsonl_usage_from_the_stats_updates(tmp_path: Path) -> None:
    path = write_v1_jsonl(tmp_path / "c1" / "events.jsonl")
    assert detect(path) == "openhands"
    t = one(path)
    folder = one(write_v1_folder(tmp_path / "f") / "base_state.json")
    assert t.meta["usage_from"] == "stats state updates" and t.id == "c1"
    assert [m.usage.input if m.usage else None for m in t.messages] == [
        m.usage.input if m.usage else None for m in folder.messages]
    # the 4th call's update lost: that call has none, and the next update grows by two calls (not its
    # per_turn_token), so the 5th gets none either; the 6th is one call again
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    stats = [i for i, ev in enumerate(lines) if ev.get("key") == "stats"]
    del lines[stats[3]]
    path.write_text("".join(compact(x) + "\n" for x in lines))
    t = one(path)
    assistants = [m for m in t.messages if m.role == "assistant"]
    assert [m.usage is not None for m in assistants[2:6]] == [True, False, False, True]


def test_thinking_batches_errors_and_rejections(tmp_path: Path) -> None:
    evs, _agent, _condenser = v1_events()
    a = next(ev for ev in evs if ev["kind"] == "ActionEvent")
    a["thinking_blocks"] = [{"type": "thinking", "thinking": "The test wants ValueError.", "signature": "sig"},
                            {"type": "redacted_thinking", "data": "EuYBCkQYAiJA"}]
    second = {**a, "id": uid(900), "thought": [], "thinking_blocks": [], "tool_call_id": "toolu_b",
              "tool_call": {**a["tool_call"], "id": "toolu_b"}}
    i = evs.index(a)
    evs[i + 1:i + 1] = [second]  # a second call of the same response, before the first's observation
    evs.insert(i + 3, {"id": uid(901), "timestamp": a["timestamp"], "source": "agent", "tool_name": "terminal",
                       "tool_call_id": "toolu_b", "error": "Command timed out", "kind": "AgentErrorEvent"})
    path = tmp_path / "events.json"
    path.write_text(json.dumps(evs))
    t = one(path)
    m = next(m for m in t.messages if m.id == a["id"])
    assert m.parts[:2] == (Reasoning("The test wants ValueError."), Reasoning("EuYBCkQYAiJA", encrypted=True))
    assert [p.id for p in m.tool_calls()] == [a["tool_call_id"], "toolu_b"]
    err = next(m for m in t.messages if m.id == uid(901))
    assert err.parts == (ToolResult("toolu_b", "terminal", "Command timed out", is_error=True),)


def test_a_requested_condensation_and_the_conversation_tree(tmp_path: Path) -> None:
    evs, _, _ = v1_events()
    cond = next(i for i, ev in enumerate(evs) if ev["kind"] == "Condensation")
    evs.insert(cond, {"id": uid(950), "timestamp": evs[cond]["timestamp"], "source": "environment",
                      "kind": "CondensationRequest"})
    # a branch: the user went back after the first message and tried something else
    for k, ev in enumerate(evs):
        ev["parent_id"] = evs[k - 1]["id"] if k else None
    branch = [{"id": uid(960 + k), "timestamp": evs[3]["timestamp"], "source": "user", "parent_id": evs[2]["id"],
               "llm_message": {"role": "user", "content": [{"type": "text", "text": "no, stop"}]},
               "kind": "MessageEvent"} for k in range(1)]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(evs[:4] + branch + evs[4:]))
    t = one(path)
    assert all(m.id != uid(960) for m in t.messages)
    assert t.meta["off_branch_events"] == 1 and "other branches" in t.warnings[0]
    assert t.compactions[0].trigger == "unknown" and t.compactions[0].meta["requested"] == 1
    assert t.compactions[1].trigger == "auto"


def test_missing_event_files_are_warned(tmp_path: Path) -> None:
    conv = write_v1_folder(tmp_path)
    sorted((conv / "events").iterdir())[7].unlink()
    t = one(conv / "base_state.json")
    assert any("not contiguous" in w for w in t.warnings)


@pytest.mark.parametrize("bad", [{"type": "user", "message": {"role": "user", "content": "hi"}},  # Claude Code
                                 {"id": "x", "timestamp": "t", "source": "agent", "kind": "FromTheFuture"},
                                 {"id": 7, "timestamp": "t", "source": "agent", "kind": "MessageEvent"}])
def test_a_file_is_v1_only_if_every_record_is_an_event(tmp_path: Path, bad: dict[str, Any]) -> None:
    evs, _, _ = v1_events()
    array = tmp_path / "mixed.json"
    array.write_text(json.dumps([*evs[:5], bad, *evs[5:]], indent=2))
    with pytest.raises(TranscriptError, match="none matched"):
        detect(array)
    with pytest.raises(TranscriptError) as e:
        one_fmt(array)
    assert "item 5" in str(e.value) and "\n" not in str(e.value)
    if bad.get("kind") == "FromTheFuture":  # a kind this version of the SDK did not write is named
        assert "of a known kind (not 'FromTheFuture'" in str(e.value)
    lines = tmp_path / "mixed.jsonl"
    lines.write_text("".join(compact(x) + "\n" for x in [*evs[:5], bad, *evs[5:]]))
    assert detect(lines) == "openhands"  # claimed by its first line ...
    with pytest.raises(TranscriptError) as e:
        one(lines)
    assert str(e.value).startswith(f"{lines}:6:")  # ... refused at the line that does not fit


def one_fmt(path: Path) -> Any:
    (t,) = read(path, "openhands")
    return t


def test_the_bundled_fixture_files_are_the_hand_made_shapes(tmp_path: Path) -> None:
    """tests/fixtures/shapes/openhands (fuzz seeds) are written by tests/openhands_shapes.py: regenerate them there."""
    import openhands_shapes as shapes

    d = FIXTURES / "shapes" / "openhands"
    shapes.write_v1_array(tmp_path / "v1-export")
    shapes.write_v1_jsonl(tmp_path / "v1-events.jsonl")
    (tmp_path / "v0-trajectory.json").write_text(json.dumps(shapes.v0_events(), indent=2))
    (tmp_path / "output.jsonl").write_text(json.dumps(shapes.eval_line(shapes.v0_events())) + "\n"
                                           + json.dumps(shapes.resolver_line()) + "\n")
    for name in ("v1-export/events.json", "v1-export/trajectory.json", "v1-events.jsonl", "v0-trajectory.json",
                 "output.jsonl"):
        assert (d / name).read_text() == (tmp_path / name).read_text(), name
    assert [detect(d / n) for n in ("v1-export/events.json", "v1-events.jsonl", "v0-trajectory.json",
                                    "output.jsonl")] == ["openhands", "openhands", "openhands-v0", "openhands-eval"]
