"""Child sessions of OpenCode and Codex carry their parent and type as their logs record them
(compbench.data.formats.child_sessions); a session a user started carries neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from subagent_shapes import opencode_pair

from compbench.data.formats import read
from compbench.data.formats.child_sessions import codex_child
from compbench.data.tree import agent_type, session_of


def test_an_opencode_child_session_names_its_parent_and_the_agent_it_ran_as(tmp_path: Path) -> None:
    parent_file, child_file = opencode_pair(tmp_path)
    (parent,), (child,) = list(read(parent_file)), list(read(child_file))
    assert (child.meta["parent_session"], child.meta["agent_type"], child.meta["subagent"]) == (
        "ses_parent", "explore", True)
    assert (session_of(child), agent_type(child)) == ("ses_parent", "explore")
    assert "subagent" not in parent.meta and "agent_type" not in parent.meta  # its messages ran as build: no matter
    assert (session_of(parent), agent_type(parent)) == ("ses_parent", "main")


def test_an_opencode_child_whose_messages_name_no_agent_is_a_sub_agent_of_no_type(tmp_path: Path) -> None:
    _, child_file = opencode_pair(tmp_path)
    doc = json.loads(child_file.read_text())
    for m in doc["messages"]:
        m["info"].pop("agent")
    child_file.write_text(json.dumps(doc))
    (child,) = read(child_file)
    assert "agent_type" not in child.meta and agent_type(child) == "sub-agent"
    doc["messages"][1]["info"]["mode"] = "general"  # OpenCode before 0.4 named it mode
    child_file.write_text(json.dumps(doc))
    (child,) = read(child_file)
    assert child.meta["agent_type"] == "general"


@pytest.mark.parametrize(("source", "expected"), [
    ("cli", {}),
    ({"subagent": {"thread_spawn": {"parent_thread_id": "t-root", "depth": 1, "agent_nickname": "Ada",
                                    "agent_role": "explorer"}}},
     {"subagent": True, "parent_session": "t-root", "agent_type": "explorer", "agent_nickname": "Ada",
      "spawn_depth": 1}),
    ({"subagent": {"thread_spawn": {"parent_thread_id": "t-root", "depth": 2, "agent_type": "worker"}}},
     {"subagent": True, "parent_session": "t-root", "agent_type": "worker", "spawn_depth": 2}),
    ({"subagent": "review"}, {"subagent": True, "agent_type": "review"}),
    ({"subagent": {"other": "guardian"}}, {"subagent": True, "agent_type": "guardian"}),
    ({"subagent": {"thread_spawn": "not an object"}}, {"subagent": True}),
    ({"custom": "x"}, {}),
])
def test_codex_session_sources(source: Any, expected: dict[str, Any]) -> None:
    assert codex_child({"id": "t-1", "source": source}) == expected


def _r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload}


def test_a_codex_spawned_agents_rollout_is_a_sub_agent_of_its_parents_session(tmp_path: Path) -> None:
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "t-root", "depth": 1, "agent_role": "explorer"}}}
    records = [
        _r("session_meta", {"id": "t-child", "session_id": "t-root", "cwd": "/w", "cli_version": "0.144.2",
                            "source": spawn}),
        _r("session_meta", {"id": "t-child", "cwd": "/w", "cli_version": "0.144.2", "source": "cli"}),  # resumed
        _r("response_item", {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": "look for TODOs"}]}),
        _r("response_item", {"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": "none"}]}),
    ]
    p = tmp_path / "rollout-child.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    (t,) = read(p)
    assert (t.id, t.meta["parent_session"], t.meta["agent_type"], t.meta["spawn_depth"]) == (
        "t-child", "t-root", "explorer", 1)
    assert (session_of(t), agent_type(t)) == ("t-root", "explorer")


def test_a_gemini_sub_agents_recording_names_the_session_whose_folder_it_lies_in(tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "p" / "chats"
    sub = chats / "bbbb2222-0000-4000-8000-000000000002" / "eeee5555.jsonl"
    sub.parent.mkdir(parents=True)
    lines = [{"sessionId": "eeee5555-sub", "projectHash": "p", "kind": "subagent"},
             {"id": "u1", "type": "user", "content": "look for TODOs", "timestamp": "2026-02-10T09:00:00Z"},
             {"id": "g1", "type": "gemini", "content": "none", "timestamp": "2026-02-10T09:00:01Z",
              "model": "gemini-2.5-pro"}]
    sub.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (t,) = read(sub)
    assert (t.meta["parent_session"], t.meta["subagent"], session_of(t), agent_type(t)) == (
        "bbbb2222-0000-4000-8000-000000000002", True, "bbbb2222-0000-4000-8000-000000000002", "sub-agent")
    main = chats / "session-2026-02-10T09-00-aaaa.jsonl"
    main.write_text("".join(json.dumps(x) + "\n" for x in [{**lines[0], "sessionId": "aaaa", "kind": "main"},
                                                             *lines[1:]]))
    (m,) = read(main)
    assert "parent_session" not in m.meta and agent_type(m) == "main"
