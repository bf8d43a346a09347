"""``compbench.data.formats.swe_agent`` — SWE-agent trajectories (``.traj``): ``{environment, trajectory, history, info,
replay_config?}``.

``history`` is what the model saw, so it becomes the messages; ``trajectory`` (one entry a step:
action, observation, response, thought, state) only fills what history lacks. Mapping:

* Demonstrations (``is_demo`` or ``message_type: demonstration``) are prompt text: kept as user (or
  system) messages with ``meta["demo"]``, the original role in ``meta["demo_role"]``; their tool calls
  are not calls of this run, so only their text is kept.
* Function-calling runs (SWE-agent >= 1.0): assistant ``tool_calls`` become ToolCall parts; ``tool``
  messages answer them by ``tool_call_ids``.
* Thought-action runs (0.x): the assistant text is ``thought + "```\\n" + action + "```"``, the action a
  shell command (SWE-agent's own commands are shell functions). The action is exposed as a ToolCall
  ``bash`` with args ``{"command": action}`` and the text part holds the thought only (no double count;
  ``meta["layout"] = "thought-fence-action"`` says how to rebuild the original). The next user message
  is that call's observation: a ``tool`` message with the raw text as output, ``meta["observation"]``.
* A run whose history stops before its last trajectory steps (1.0 does not write the final
  ``submit`` response back) gets those responses appended as assistant messages with
  ``meta["from_trajectory"]``, so the number of model calls matches ``info.model_stats.api_calls``.

SWE-agent records no per-call usage: only run totals in ``info.model_stats`` (tokens_sent,
tokens_received, api_calls, instance_cost), kept in ``Transcript.meta["model_stats"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import load_json
from compbench.data.formats.openai_chat import Chat, content_parts, line_of
from compbench.data.transcript import Media, Part, Role, Text, ToolCall, Transcript
from compbench.errors import TranscriptError

NAME = "swe-agent"

ACTION_TOOL = "bash"  # thought-action runs: SWE-agent executes every action in its bash session
USAGE_NOTE = "per-call usage not recorded; info.model_stats holds run totals"

_HEAD = re.compile(r'^\s*\{\s*"(?:environment|trajectory|history|info|replay_config)"\s*:')


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A trajectory object: ``trajectory`` steps (with observations) beside ``history``/``environment``."""
    if first is not None:
        return isinstance(first.get("trajectory"), list) and isinstance(first.get("history"), list)
    return bool(_HEAD.match(head)) and '"trajectory"' in head and ('"history"' in head or '"observation"' in head)


def read(path: Path) -> Iterator[Transcript]:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        raise TranscriptError(path, 1, "a SWE-agent trajectory object with a 'history' list")
    traj = doc.get("trajectory", [])
    if not isinstance(traj, list):
        raise TranscriptError(path, line_of(path, ("trajectory",)), "'trajectory' as a list of steps")
    chat = Chat(path, lambda i: line_of(path, ("history", i)))
    pending: str | None = None  # the thought-action call awaiting its observation
    for i, raw in enumerate(doc["history"]):
        pending = _message(chat, i, raw, pending)
    _trailing_steps(chat, path, traj)
    name = path.name[: -len(".traj")] if path.name.endswith(".traj") else path.stem
    yield Transcript(name, NAME, tuple(chat.messages), _meta(path, doc, traj), (), tuple(chat.finish()))


def _message(chat: Chat, i: int, raw: Any, pending: str | None) -> str | None:
    """Append history message ``i``; return the id of a thought-action call still awaiting output."""
    if not isinstance(raw, dict):
        raise chat.fail(i, f"a message object (history entry {i})")
    role = raw.get("role")
    if not isinstance(role, str):
        raise chat.fail(i, f"a string 'role' in history entry {i}")
    meta: dict[str, Any] = {k: raw[k] for k in ("agent", "message_type") if isinstance(raw.get(k), str)}
    if isinstance(raw.get("tags"), list) and all(isinstance(t, str) for t in raw["tags"]):
        meta["tags"] = list(raw["tags"])  # LastNObservations' keep_output / remove_output
    if raw.get("is_demo") is True or raw.get("message_type") == "demonstration":
        new_role: Role = "system" if role == "system" else "user"
        meta["demo"] = True
        if new_role != role:
            meta["demo_role"] = role
        chat.append(raw, new_role, tuple(content_parts(chat, i, raw.get("content"))), None, meta)
        return None
    action = raw.get("action")
    if role == "assistant" and not raw.get("tool_calls") and isinstance(action, str) and action.strip():
        return _thought_action(chat, i, raw, meta)
    if role == "user" and pending is not None:
        parts = content_parts(chat, i, raw.get("content"))
        output = "\n".join(p.text for p in parts if isinstance(p, Text))
        media = tuple(p for p in parts if isinstance(p, Media))
        chat.append(raw, "tool", (chat.result(i, pending, ACTION_TOOL, output), *media), None,
                    {**meta, "observation": True})
        return None
    if role == "tool":
        _tool(chat, i, raw, meta)
        return None
    chat.add(i, raw, meta=meta)
    return None


def _thought_action(chat: Chat, i: int, raw: dict[str, Any], meta: dict[str, Any]) -> str:
    action: str = raw["action"]
    thought = raw.get("thought")
    content = raw.get("content")
    call_id = f"action-{i}"
    parts: list[Part]
    if isinstance(thought, str) and content == f"{thought}```\n{action}```":
        parts = [Text(thought)] if thought else []
        meta["layout"] = "thought-fence-action"
    else:  # a layout we cannot split exactly: keep the text whole
        parts = content_parts(chat, i, content)
        meta["action_in_text"] = True
    parts.append(ToolCall(call_id, ACTION_TOOL, json.dumps({"command": action}, ensure_ascii=False)))
    chat.calls[call_id] = ACTION_TOOL
    chat.append(raw, "assistant", tuple(parts), None, meta)
    return call_id


def _tool(chat: Chat, i: int, raw: dict[str, Any], meta: dict[str, Any]) -> None:
    """A function-calling observation: one output answering ``tool_call_ids`` (SWE-agent sends one)."""
    ids = raw.get("tool_call_ids", [])
    if isinstance(raw.get("tool_call_id"), str):
        ids = [raw["tool_call_id"]]
    if not isinstance(ids, list) or not all(isinstance(c, str) for c in ids):
        raise chat.fail(i, f"'tool_call_ids' as a list of strings in history entry {i}")
    parts = content_parts(chat, i, raw.get("content"))
    output = "\n".join(p.text for p in parts if isinstance(p, Text))
    media = tuple(p for p in parts if isinstance(p, Media))
    results = [chat.result(i, cid, "", output if k == 0 else "") for k, cid in enumerate(ids or [""])]
    chat.append(raw, "tool", (*results, *media), None, meta)


def _trailing_steps(chat: Chat, path: Path, traj: list[Any]) -> None:
    """Responses of model calls that happened after the last history write (see the module doc)."""
    calls = sum(1 for m in chat.messages if m.role == "assistant")
    extra = traj[calls:]
    for k, step in enumerate(extra, calls):
        if not isinstance(step, dict) or not isinstance(step.get("response"), str):
            raise TranscriptError(path, line_of(path, ("trajectory", k)), f"a step with a string 'response' "
                                                                           f"(trajectory step {k})")
        meta: dict[str, Any] = {"from_trajectory": True, "step": k}
        if isinstance(step.get("action"), str):
            meta["action"] = step["action"]
        chat.append({}, "assistant", (Text(step["response"]),) if step["response"] else (), None, meta)
    if extra:
        chat.warnings.append(f"history ends before the last {len(extra)} trajectory steps; "
                             "their responses were appended from 'trajectory'")


def _meta(path: Path, doc: dict[str, Any], traj: list[Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": str(path), "usage": USAGE_NOTE}
    if isinstance(doc.get("environment"), str):
        meta["environment"] = doc["environment"]
    info = doc.get("info")
    if isinstance(info, dict):
        for key in ("model_stats", "exit_status", "submission"):
            if key in info:
                meta[key] = info[key]
        if isinstance(info.get("swe_agent_version"), str):
            meta["tool_version"] = info["swe_agent_version"]
    cfg = doc.get("replay_config")
    if isinstance(cfg, str):
        try:
            cfg = json.loads(cfg)
        except json.JSONDecodeError:
            cfg = None
    if isinstance(cfg, dict):
        model = cfg.get("agent", {}).get("model") if isinstance(cfg.get("agent"), dict) else None
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            meta["model"] = model["name"]
        problem = cfg.get("problem_statement")
        if isinstance(problem, dict) and isinstance(problem.get("id"), str):
            meta["instance_id"] = problem["id"]
    state = traj[0].get("state") if traj and isinstance(traj[0], dict) else None
    if isinstance(state, str):
        try:
            state = json.loads(state)
        except json.JSONDecodeError:
            state = None
    if isinstance(state, dict) and isinstance(state.get("working_dir"), str):
        meta["cwd"] = state["working_dir"]
    return meta
