"""OpenHands V0 (All-Hands-AI/OpenHands @ 156d068): event arrays, the trajectory download, JSON lines, session
folders, evaluation and resolver ``output.jsonl``; what ConversationMemory sends, the recorded condensation,
usage; misfit files refused; ``datasets validate`` and ``import`` agree on a folder of every shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openhands_shapes import TASK, compact, eval_line, resolver_line, v0_events, write_v1_array, write_v1_folder

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Text, ToolCall, ToolResult
from compbench.errors import TranscriptError
from helpers import main_cli


def one(path: Path, fmt: str | None = None) -> Any:
    (t,) = read(path, fmt)
    return t


def array(tmp_path: Path, evs: list[dict[str, Any]] | None = None, name: str = "traj.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(evs if evs is not None else v0_events(), indent=2))
    return p


def test_event_array_mapping(tmp_path: Path) -> None:
    p = array(tmp_path)
    assert detect(p) == "openhands-v0"
    t = one(p)
    assert (t.source, t.meta["tool_version"], t.meta["agent_class"], t.steps) == (
        "openhands-v0", "0.62.0", "CodeActAgent", 18)
    sys_, user, a1, o1 = t.messages[:4]
    assert (sys_.role, user.role) == ("system", "user")
    # the workspace context of the first recall joins the user message ConversationMemory sends after it
    assert user.parts == (Text(TASK), Text("Added workspace context\n\nRun the tests with pytest.\n\n2026-05-04"))
    assert a1.parts == (Text("Step 1: run `ls calc tests`."),
                        ToolCall("toolu_001yyyyyyyyyyyyyyyyyy", "execute_bash",
                                 '{"command": "ls calc tests", "is_input": "false"}'))
    assert a1.usage is not None and (a1.usage.input, a1.usage.cache_read, a1.usage.cache_write) == (10_000, 9_200, 800)
    assert o1.parts == (ToolResult("toolu_001yyyyyyyyyyyyyyyyyy", "execute_bash",
                                   "calc/__init__.py\ncalc/ops.py\ntests/test_calc.py\n[Current working directory: "
                                   "/workspace/calc]\n[Python interpreter: /usr/bin/python]\n[Command finished "
                                   "with exit code 0]"),)
    assert t.messages[-1].parts == (Text("Fixed divide().\nFixed divide()."),) or t.messages[-1].text.startswith(
        "Fixed divide().")
    assert t.meta["events"]["observation:agent_state_changed"] == 2  # not in the agent's history


def test_the_recorded_condensation(tmp_path: Path) -> None:
    t = one(array(tmp_path))
    (c,) = t.compactions
    ids = [m.id for m in t.messages]
    # before call 12: the first 4 events (system, user, its recall pair) and the newest 7 are kept; V0 cut
    # between call 8 and its result, whose orphaned result the model is not sent
    assert c.index == ids.index("oh-28") == 24 and c.trigger == "auto"  # oh-27 is the condensation action
    assert c.kept_ids == ("oh-0", "oh-2", "oh-21", "oh-22", "oh-23", "oh-24", "oh-25", "oh-26")
    assert (c.meta["forgotten_events"], c.meta["summary_event_offset"], c.meta["summary_offset"]) == (15, 4, 2)
    assert c.tokens_before == 8000 + 500 * 24 + 90


def test_download_jsonl_and_requests(tmp_path: Path) -> None:
    evs = v0_events()
    dl = tmp_path / "dl.json"
    dl.write_text(json.dumps({"trajectory": evs}))
    assert detect(dl) == "openhands-v0" and one(dl).messages == one(array(tmp_path)).messages
    k = next(i for i, ev in enumerate(evs) if ev.get("action") == "condensation")
    evs.insert(k, {"id": 900, "timestamp": evs[k]["timestamp"], "source": "agent", "message": "",
                   "action": "condensation_request", "args": {}})
    evs[k + 1]["args"].update(forgotten_event_ids=[5, 6], forgotten_events_start_id=None,
                              forgotten_events_end_id=None)
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(compact(e) + "\n" for e in evs))
    assert detect(lines) == "openhands-v0"
    (c,) = one(lines).compactions
    assert c.trigger == "unknown" and c.meta["requested"] == 1 and c.meta["forgotten_events"] == 2
    assert "oh-5" not in c.kept_ids and "oh-7" in c.kept_ids


def test_prompt_based_actions_and_user_observations(tmp_path: Path) -> None:
    evs = [e for e in v0_events(calls=2) if "tool_call_metadata" not in e or e.get("action") == "finish"]
    # without function calling: an action is answered by the observation whose cause it is
    k = next(i for i, e in enumerate(evs) if e.get("action") == "finish")
    evs[k:k] = [
        {"id": 50, "timestamp": "t", "source": "agent", "message": "", "action": "run",
         "args": {"command": "pytest -q", "thought": "Run the tests.", "blocking": False}},
        {"id": 51, "timestamp": "t", "source": "agent", "message": "", "cause": 50, "observation": "run",
         "content": "1 passed", "extras": {"command": "pytest -q", "metadata": {"exit_code": 0}}},
        {"id": 52, "timestamp": "t", "source": "user", "message": "", "observation": "error",
         "content": "The action has not been executed.", "extras": {"error_id": ""}}]
    t = one(array(tmp_path, evs))
    a, o, err = (next(m for m in t.messages if m.id == f"oh-{n}") for n in (50, 51, 52))
    assert a.parts == (Text("Run the tests."), ToolCall("oh-call-50", "execute_bash", '{"command": "pytest -q"}'))
    assert o.parts == (ToolResult("oh-call-50", "execute_bash", "1 passed\n[Command finished with exit code 0]"),)
    assert err.role == "user" and err.meta["uncalled_observation"]
    assert err.text == "The action has not been executed.\n[Error occurred in processing last action]"


def test_session_folder(tmp_path: Path) -> None:
    s = tmp_path / "sessions" / "4f2a9c"
    (s / "events").mkdir(parents=True)
    (s / "event_cache").mkdir()
    evs = v0_events()
    for e in evs:
        (s / "events" / f"{e['id']}.json").write_text(compact(e))
    (s / "event_cache" / "0-25.json").write_text(json.dumps(evs[:25]))  # pages repeating the same events
    (s / "metadata.json").write_text(json.dumps({"conversation_id": "4f2a9c", "title": "divide"}))
    notes: list[str] = []
    assert list(iter_files([tmp_path / "sessions"], notes.append)) == [s / "events" / "0.json"]
    others = 2  # the cache page, metadata.json (its other event files are read with the first)
    assert f"an OpenHands V0 session: read its events/ folder, not the {others} other files" in notes[0]
    t = one(s / "events" / "0.json")
    assert t.id == "4f2a9c" and t.messages == one(array(tmp_path)).messages
    with pytest.raises(TranscriptError) as e:
        one(s / "events" / "7.json")
    assert str(e.value) == f"{s / 'events' / '7.json'}: a whole session: this is one of its events; import {s}"


@pytest.mark.parametrize("bad", [{"action": "run", "observation": "x", "response": "r", "thought": "t"},  # SWE-agent
                                 {"id": 3, "timestamp": "t", "source": "agent", "action": "run"},  # no args
                                 {"id": "3", "timestamp": "t", "source": "agent", "action": "run", "args": {}}])
def test_a_file_is_v0_only_if_every_record_is_an_event(tmp_path: Path, bad: dict[str, Any]) -> None:
    evs = v0_events(calls=2)
    p = array(tmp_path, [*evs[:3], bad, *evs[3:]])
    with pytest.raises(TranscriptError, match="none matched"):
        detect(p)
    with pytest.raises(TranscriptError) as e:
        one(p, "openhands-v0")
    assert "(item 3" in str(e.value) and "\n" not in str(e.value)


def test_evaluation_output(tmp_path: Path) -> None:
    p = tmp_path / "output.jsonl"
    p.write_text(json.dumps(eval_line(v0_events())) + "\n" + json.dumps(resolver_line()) + "\n")
    assert detect(p) == "openhands-eval"
    ev, res = read(p)
    assert (ev.id, ev.source, ev.meta["model"], ev.meta["max_input_tokens"]) == (
        "calc__calc-17", "openhands-eval", "anthropic/claude-sonnet-4-5-20250929", 200_000)
    assert ev.meta["condenser"] == {"type": "llm", "keep_first": 4, "max_size": 24, "max_event_length": 10000}
    calls = [m for m in ev.messages if m.role == "assistant"]
    assert calls[0].usage is not None and calls[0].usage.input == 10_000  # metrics.token_usages, by response id
    assert len(ev.compactions) == 1 and ev.compactions[0].kept_ids[-1] == "oh-26"
    # the resolver's flattened history: no ids or sources; usages joined in order (4 calls, 4 usages)
    assert res.id == "calc/calc#17" and [m.role for m in res.messages[:3]] == ["user", "assistant", "tool"]
    assert [m.usage.input for m in res.messages if m.role == "assistant" and m.usage] == [9000, 10000, 11000, 12000]
    assert res.messages[1].tool_calls()[0].name == "execute_bash"
    assert res.messages[2].parts[0].call_id == res.messages[1].tool_calls()[0].id  # type: ignore[union-attr]
    assert "flattened history" in res.warnings[0]


def test_evaluation_pairs_and_a_misfit_line(tmp_path: Path) -> None:
    old = {"instance_id": "sphinx-8721", "instruction": TASK, "metadata": {"model_name": "gpt-4-1106-preview"},
           "history": [[{"action": "run", "args": {"command": "ls", "thought": "Look first."}, "message": "Running"},
                        {"observation": "run", "content": "a.py", "extras": {"command": "ls", "exit_code": 0},
                         "message": "ok"}]], "metrics": {}}
    p = tmp_path / "output.jsonl"
    p.write_text(json.dumps(old) + "\n")
    (t,) = read(p)
    assert [m.role for m in t.messages] == ["user", "assistant", "tool"] and t.messages[0].meta["instruction"]
    p.write_text(json.dumps(old) + "\n" + json.dumps({"instance_id": "x", "history": [{"role": "user"}],
                                                      "instruction": "i"}) + "\n")
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    assert str(e.value).startswith(f"{p}:2: an OpenHands evaluation/resolver instance")


def test_validate_and_import_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "logs"
    write_v1_folder(src / "conversations")
    write_v1_array(src / "exported")  # the same conversation id: refused as a copy
    s = src / "sessions" / "4f2a9c" / "events"
    s.mkdir(parents=True)
    for e in v0_events():
        (s / f"{e['id']}.json").write_text(compact(e))
    (s.parent / "metadata.json").write_text("{}")
    (src / "output.jsonl").write_text(json.dumps(eval_line(v0_events())) + "\n" + json.dumps(resolver_line()) + "\n")
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", src)
    lines = out.splitlines()
    assert code == 2 and lines[-1] == ("3 valid, 1 invalid; 4 transcripts (openhands 1, openhands-eval 2, "
                                       "openhands-v0 1)")
    assert any(x.startswith("FAIL  logs/exported/events.json: a transcript id not imported before") for x in lines)
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "import", src, "--out", tmp_path / "ds",
                            "--on-error", "skip")
    assert code == 0 and out.startswith("imported 4 transcripts (openhands 1, openhands-eval 2, openhands-v0 1); "
                                        "1 error skipped")
