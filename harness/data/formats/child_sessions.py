"""``compbench.data.formats.child_sessions`` — Child sessions of tools other than Claude Code
(:mod:`.claude_code_subagents`), as their logs record a parent: the meta every importer gives a sub-agent.

A sub-agent's transcript carries ``meta["parent_session"]`` (the session that spawned it; a run's ``session``
column, so a sub-agent is counted, resampled and rolled up with its session) and ``meta["agent_type"]`` where the
log names it. Where each tool records them:

* **OpenCode** (``session.parentID``; every message's ``agent``, ``mode`` before 0.4): a ``task`` tool call runs a
  sub-agent in a child session; its type is the agent its messages ran as (``general``, ``explore``…).
* **Gemini CLI** (a recording's ``kind: "subagent"``): a sub-agent's recording lies in ``chats/<parent session id>/``
  beside the parent's own recordings; the log names no type.
* **Codex** (``session_meta.payload.source``, codex-rs/protocol ``SessionSource::SubAgent``): a spawned agent's
  rollout says ``{"subagent": {"thread_spawn": {"parent_thread_id", "depth", "agent_nickname", "agent_role"}}}``
  (``agent_type`` an alias of ``agent_role``); ``review``, ``compact`` and ``memory_consolidation`` sub-agents name no
  parent (their type only), ``{"other": label}`` a label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compbench.data.transcript import Message


def opencode_child(meta: dict[str, Any], messages: Sequence[Message]) -> dict[str, Any]:
    """``meta`` of an OpenCode session; a child session (``parent_session``) gets the agent it ran as."""
    if not meta.get("parent_session"):
        return meta
    kind = next((str(v) for m in messages for v in (m.meta.get("agent"), m.meta.get("mode"))
                 if isinstance(v, str) and v), "")
    return {**meta, "subagent": True, **({"agent_type": kind} if kind else {})}


def gemini_child(meta: dict[str, Any], path: Path) -> dict[str, Any]:
    """``meta`` of a Gemini CLI recording; a sub-agent's (``kind: "subagent"``) gets its parent: the session whose
    id names the ``chats/`` sub-folder it lies in."""
    if meta.get("kind") != "subagent":
        return meta
    out = {**meta, "subagent": True}
    if path.parent.parent.name == "chats" and path.parent.name:
        out["parent_session"] = path.parent.name
    return out


def codex_child(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What a rollout's ``session_meta`` says of the thread's parent: ``parent_session``, ``subagent``,
    ``agent_type``, ``agent_nickname``, ``spawn_depth`` ({} for a thread a user started)."""
    source = payload.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(sub, str) and sub:  # review, compact, memory_consolidation
        return {"subagent": True, "agent_type": sub}
    if not isinstance(sub, dict):
        return {}
    spawn = sub.get("thread_spawn")
    if isinstance(spawn, dict):
        out: dict[str, Any] = {"subagent": True}
        for key, dst in (("parent_thread_id", "parent_session"), ("agent_role", "agent_type"),
                         ("agent_type", "agent_type"), ("agent_nickname", "agent_nickname")):
            if isinstance(spawn.get(key), str) and spawn[key]:
                out.setdefault(dst, spawn[key])
        if isinstance(spawn.get("depth"), int) and not isinstance(spawn["depth"], bool):
            out["spawn_depth"] = spawn["depth"]
        return out
    other = sub.get("other")
    return {"subagent": True, "agent_type": other} if isinstance(other, str) and other else {"subagent": True}
