"""``compbench.data.formats.claude_code_subagents`` — A Claude Code session is a tree: each sub-agent's file linked to
the session that spawned it, each compaction's own summarizer call attached to that compaction.

Layout (Claude Code 2.1; 2.0 wrote ``agent-<id>.jsonl`` beside the sessions)::

    <project>/<session>.jsonl                            the main conversation
    <project>/<session>/subagents/agent-<id>.jsonl       a sub-agent: its own context, its own compactions
    <project>/<session>/subagents/agent-<id>.meta.json   its sidecar ({"agentType": "Explore", ...})
    <project>/<session>/subagents/agent-acompact-<hex>.jsonl
                                                         one compaction's summarizer call (2.1.39-2.1.81)

A sub-agent's records carry ``isSidechain``, its ``agentId`` and the parent's ``sessionId``: it is imported as its own
transcript (``<session>/<agent>``) with ``meta["parent_session"]``, so a run, a ``compare --by session`` and the
per-tool verdict count it with its session. Its type is the sidecar's ``agentType``, else the ``subagent_type`` of
the Task (``Agent`` from 2.1.6x) call that spawned it: the parent's file names the call (the Task result's
``toolUseResult.agentId``, a progress record's ``data.agentId`` beside ``parentToolUseID``), or the call's prompt
is the sub-agent's first prompt. The parent's file is scanned once per process (:func:`spawns`), only its lines
that name a Task call or an agent.

An ``agent-acompact-*`` file is not a session (:mod:`.claude_code_compact_calls`): a folder walk passes over it and
says how many (:func:`side_file`), and its session's compaction carries it (``meta["summarizer_call"]``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from compbench.data.formats.claude_code_compact_calls import SUMMARIZER_PREFIX, with_calls
from compbench.data.transcript import Transcript

SUMMARIZER = "summarizer"  # side_file's kinds
SIDECAR = "sidecar"
SIDECAR_SUFFIX = ".meta.json"
TASK_TOOLS = frozenset({"Task", "Agent"})  # the tool that spawns a sub-agent (renamed Agent in 2.1.6x)
_AGENT_ID = re.compile(rb'"agentId"\s*:\s*"([^"\\]{1,200})"')
PROMPT_CHARS = 2000  # of a Task call's prompt compared with a sub-agent's first prompt (whitespace collapsed)


def is_summarizer_call(path: Path) -> bool:
    """A compaction's own summarizer call, by the name Claude Code gives its file."""
    return path.name.startswith(SUMMARIZER_PREFIX) and path.name.endswith(".jsonl")


def side_file(f: Path) -> str | None:
    """What a file among a session's sub-agents is when it is not a transcript: a compaction's summarizer call
    (:data:`SUMMARIZER`) or a sub-agent's sidecar (:data:`SIDECAR`, beside its ``agent-<id>.jsonl``); None for a
    transcript or anything else."""
    if is_summarizer_call(f):
        return SUMMARIZER
    name = f.name
    if name.startswith("agent-") and name.endswith(SIDECAR_SUFFIX):
        if f.with_name(name[: -len(SIDECAR_SUFFIX)] + ".jsonl").is_file():
            return SIDECAR
    return None


def side_notes(counts: dict[str, tuple[int, int]], root: Path) -> list[str]:
    """The walk's line for what :func:`side_file` passed over under ``root``: ``counts`` by kind, (files,
    folders)."""
    out = []
    if SUMMARIZER in counts:
        n, folders = counts[SUMMARIZER]
        out.append(f"{root}: {n} compaction summarizer call{'s' * (n != 1)} (Claude Code's agent-acompact-*.jsonl, "
                   f"in {folders} session{'s' * (folders != 1)}): each is read with the compaction it made, not "
                   "imported as a session")
    if SIDECAR in counts:
        n, _ = counts[SIDECAR]
        out.append(f"{root}: {n} sub-agent sidecar{'s' * (n != 1)} (agent-*.meta.json): read with their "
                   "sub-agents' files (the agent type)")
    return out


@dataclass(frozen=True, slots=True)
class Spawn:
    """The Task call that spawned a sub-agent: its id, ``subagent_type`` and ``description``."""

    call_id: str
    agent_type: str
    description: str


def linked(t: Transcript, path: Path) -> Transcript:
    """``t`` as part of its session: a sub-agent with its parent and type; a transcript with compactions with
    their summarizer calls where the session folder holds them (:mod:`.claude_code_compact_calls`)."""
    if t.meta.get("sidechain"):
        t = _as_subagent(t, path)
    if t.compactions:
        t = with_calls(t, path)
    return t


def _as_subagent(t: Transcript, path: Path) -> Transcript:
    parent = t.meta.get("session_id")
    agent = str(t.meta.get("agent_id") or "")
    meta: dict[str, Any] = dict(t.meta)
    if isinstance(parent, str) and parent:
        meta["parent_session"] = parent
    sidecar = _sidecar(path)
    spawn = _spawn(path, parent, agent, _first_prompt(t)) if isinstance(parent, str) and parent else None
    kind = sidecar.get("agentType") if isinstance(sidecar.get("agentType"), str) else None
    if kind:
        meta["agent_type"], meta["agent_type_source"] = kind, "sidecar"
    elif spawn is not None and spawn.agent_type:
        meta["agent_type"], meta["agent_type_source"] = spawn.agent_type, "task call"
    description = sidecar.get("description") if isinstance(sidecar.get("description"), str) else None
    if description or (spawn is not None and spawn.description):
        meta["agent_description"] = description or (spawn.description if spawn else "")
    if spawn is not None:
        meta["spawned_by"] = spawn.call_id
    return replace(t, meta=meta)


def _first_prompt(t: Transcript) -> str:
    first = next((m for m in t.messages if m.role == "user" and m.text.strip()), None)
    return first.text if first is not None else ""


def _sidecar(path: Path) -> dict[str, Any]:
    """The sub-agent's ``agent-<id>.meta.json`` ({} when absent or unreadable: the type is then the Task call's)."""
    side = path.with_name(path.name.removesuffix(".jsonl") + SIDECAR_SUFFIX)
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def parent_file(path: Path, session: str) -> Path | None:
    """The main conversation's file of a sub-agent at ``path``: ``<project>/<session>.jsonl`` above its
    ``<session>/subagents/`` folder (2.1), or beside it (2.0's flat layout)."""
    candidates = [path.parent / f"{session}.jsonl"]
    if path.parent.name == "subagents":
        candidates.insert(0, path.parent.parent.parent / f"{session}.jsonl")
    return next((c for c in candidates if c.is_file() and c != path), None)


def _spawn(path: Path, session: str, agent: str, prompt: str) -> Spawn | None:
    parent = parent_file(path, session)
    if parent is None:
        return None
    st = parent.stat()
    by_agent, by_prompt = spawns(str(parent), st.st_mtime_ns, st.st_size)
    return by_agent.get(agent) or by_prompt.get(_norm(prompt)[:PROMPT_CHARS])


def _norm(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=16)
def spawns(path: str, mtime_ns: int, size: int) -> tuple[dict[str, Spawn], dict[str, Spawn]]:
    """The sub-agents a main conversation's file spawned: by ``agentId`` (the Task result's ``toolUseResult``, a
    progress record's ``data``), and by the Task call's prompt (for a sub-agent the file does not name). Lines
    are parsed only where they name a Task call or an agent not yet linked; a broken line is passed over (the
    importer of that file says so). ``mtime_ns`` and ``size`` key the cache: a file that changed is read again."""
    calls: dict[str, Spawn] = {}
    by_prompt: dict[str, Spawn] = {}
    agent_call: dict[str, str] = {}
    with open(path, "rb") as f:
        for raw in f:
            task = b'"tool_use"' in raw and (b'"Task"' in raw or b'"Agent"' in raw)
            named = _AGENT_ID.search(raw)
            if not task and (named is None or named.group(1).decode("utf-8", "replace") in agent_call):
                continue
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(r, dict):
                continue
            if task:
                for call_id, spawn, prompt in _task_calls(r):
                    calls[call_id] = spawn
                    by_prompt.setdefault(_norm(prompt)[:PROMPT_CHARS], spawn)
            for agent, call_id in _agent_links(r):
                agent_call.setdefault(agent, call_id)
    return {a: calls[c] for a, c in agent_call.items() if c in calls}, by_prompt


def _task_calls(r: dict[str, Any]) -> list[tuple[str, Spawn, str]]:
    msg = r.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    out = []
    for b in content if isinstance(content, list) else ():
        if (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") in TASK_TOOLS
                and isinstance(b.get("id"), str) and isinstance(b.get("input"), dict)):
            args = b["input"]
            kind = args.get("subagent_type") if isinstance(args.get("subagent_type"), str) else ""
            what = args.get("description") if isinstance(args.get("description"), str) else ""
            prompt = args.get("prompt") if isinstance(args.get("prompt"), str) else ""
            out.append((b["id"], Spawn(b["id"], kind, what), prompt))
    return out


def _agent_links(r: dict[str, Any]) -> list[tuple[str, str]]:
    """(agentId, Task call id) pairs a record states: a Task result's ``toolUseResult.agentId`` with its
    ``tool_use_id``, a progress record's ``data.agentId`` with its ``parentToolUseID``."""
    data = r.get("data")
    if r.get("type") == "progress" and isinstance(data, dict):
        agent, call = data.get("agentId"), r.get("parentToolUseID")
        return [(agent, call)] if isinstance(agent, str) and isinstance(call, str) else []
    result = r.get("toolUseResult")
    msg = r.get("message")
    if r.get("type") != "user" or not isinstance(result, dict) or not isinstance(msg, dict):
        return []
    agent = result.get("agentId")
    content = msg.get("content")
    ids = [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(content, list) else []
    return [(agent, ids[0])] if isinstance(agent, str) and len(ids) == 1 and isinstance(ids[0], str) else []
