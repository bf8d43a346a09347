"""``compbench.data.formats.claude_code_progress`` — A sub-agent's model calls as Claude Code streams them into the main
session's file: ``progress`` records of type ``agent_progress`` (2.1), one per message of the sub-agent as it runs,
each with its ``usage``; the call that writes its final report is not streamed: its usage is the Task result's
``toolUseResult.usage`` (``totalTokens`` is that call's prompt and output).

These records are the UI's: the main model never sees them (the Task result is what reaches the main context).
They are read here only to count what sub-agents spent where their own files (``<session>/subagents/``) are not
beside the main file (a session copied alone): :mod:`compbench.validation.subagents`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.formats.claude_code import anthropic_usage
from compbench.data.transcript import Usage


@dataclass
class Streamed:
    """One sub-agent as the main file streams it: its calls (``message.id`` -> (model, usage), the last usage a
    response reported), the Task call that spawned it, its final report's call and ``totalTokens``."""

    agent_id: str
    call_id: str = ""
    calls: dict[str, tuple[str, Usage]] = field(default_factory=dict)
    final: Usage | None = None
    total_tokens: int | None = None

    def usages(self) -> list[tuple[str, Usage]]:
        """Every call: the streamed ones, then the final report's (unless it was streamed too)."""
        out = list(self.calls.values())
        model = out[-1][0] if out else ""
        if self.final is not None and (not out or out[-1][1] != self.final):
            out.append((model, self.final))
        return out


def streamed(path: Path) -> dict[str, Streamed]:
    """The sub-agents the main file at ``path`` streams, by ``agentId`` (only lines naming ``agent_progress`` or a
    Task result are parsed; a broken line is passed over: the importer of that file says so)."""
    out: dict[str, Streamed] = {}
    with path.open("rb") as f:
        for raw in f:
            progress = b'"agent_progress"' in raw
            if not progress and b'"toolUseResult"' not in raw:
                continue
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            if isinstance(r, dict):
                (_progress if progress and r.get("type") == "progress" else _result)(r, out)
    return out


def _progress(r: dict[str, Any], out: dict[str, Streamed]) -> None:
    data = r.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress" or not isinstance(data.get("agentId"), str):
        return
    s = out.setdefault(data["agentId"], Streamed(data["agentId"]))
    if isinstance(r.get("parentToolUseID"), str):
        s.call_id = s.call_id or r["parentToolUseID"]
    outer = data.get("message")
    msg = outer.get("message") if isinstance(outer, dict) else None
    if not isinstance(outer, dict) or outer.get("type") != "assistant" or not isinstance(msg, dict):
        return
    usage = anthropic_usage(msg.get("usage"))
    mid = msg.get("id")
    if usage is not None and isinstance(mid, str):
        s.calls[mid] = (str(msg.get("model") or ""), usage)


def _result(r: dict[str, Any], out: dict[str, Streamed]) -> None:
    result = r.get("toolUseResult")
    if r.get("type") != "user" or not isinstance(result, dict) or not isinstance(result.get("agentId"), str):
        return
    if result.get("status") != "completed":  # an async launch: its report comes later, as a notification
        return
    s = out.setdefault(result["agentId"], Streamed(result["agentId"]))
    s.final = anthropic_usage(result.get("usage")) or s.final
    total = result.get("totalTokens")
    if isinstance(total, int) and not isinstance(total, bool):
        s.total_tokens = total
