"""``compbench.data.tree`` — A session is a tree: its own conversation and the sub-agents it spawned, each a transcript
with its own context (and its own compactions), linked by ``meta["parent_session"]``.

A run's ``session`` column is the session a transcript belongs to (a sub-agent's is its parent's), its
``agent_type`` what it is in that session: what ``compare --by session`` rolls up and ``--by agent-type`` ranks.
"""

from __future__ import annotations

from compbench.data.transcript import Transcript

MAIN = "main"  # agent_type of a session's own conversation
SUBAGENT = "sub-agent"  # of a sub-agent whose log names no type
FORKS = {"pi": "fork"}  # tools whose parent_session is the session a fork started from, not a sub-agent's spawner


def session_of(t: Transcript) -> str:
    """The session ``t`` belongs to: its parent's for a sub-agent (``meta["parent_session"]``; Claude Code's
    ``<session>/<agent>`` id where an older import has no parent), else its own."""
    parent = t.meta.get("parent_session")
    return str(parent) if isinstance(parent, str) and parent else t.id.split("/")[0]


def agent_type(t: Transcript) -> str:
    """``main`` for a session's own conversation; a sub-agent's type as its log names it (Claude Code's
    ``subagent_type``, OpenCode's agent, Codex's role), ``sub-agent`` where it names none; ``fork`` for a pi session
    forked from another (:data:`FORKS`)."""
    named = t.meta.get("agent_type")
    parent = t.meta.get("parent_session")
    child = bool(t.meta.get("sidechain") or t.meta.get("subagent") or (isinstance(parent, str) and parent))
    if not child:  # a main conversation whatever its log calls its agent (mini-swe-agent names its agent class)
        return MAIN
    if isinstance(named, str) and named:
        return named
    if t.meta.get("sidechain") or t.meta.get("subagent"):
        return SUBAGENT
    return FORKS.get(t.source, SUBAGENT)
