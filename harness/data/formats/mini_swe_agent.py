"""``compbench.data.formats.mini_swe_agent`` — mini-swe-agent trajectories (``.traj.json``, trajectory_format
``mini-swe-agent-1``; read against 1.15).

The file is ``{info: {model_stats, config, mini_version, exit_status, submission}, messages,
trajectory_format, instance_id}``; ``messages`` are chat messages exactly as sent to the model, the
assistant ones with the provider's raw response in ``extra.response``. Mapping:

* mini-swe-agent has no native tool calls: the model writes one ```` ```bash ```` block and the agent
  runs it (``DefaultAgent.parse_action``: exactly one match of :data:`ACTION_RE`, command stripped).
  That command is exposed as a ToolCall ``bash`` with args ``{"command": ...}``; the assistant keeps the
  text before and after the block as Text parts (the block is not counted twice). ``meta["fence"]``
  holds the block's exact text when it is not simply ```` ```bash\\n<command>\\n``` ````.
* The user message that follows such a response is the command's observation (``<returncode>`` /
  ``<output>``, the timeout template, or the final submission output): it becomes a ``tool`` message
  whose ToolResult output is the raw text, with ``meta["observation"]`` (the role was ``user``). A
  non-zero return code or a timeout marks it ``is_error``.
* A response with zero or several blocks was rejected by the agent (format error): it stays plain
  text (``meta["actions_found"]``) and the agent's complaint stays a user message.
* Per-call usage comes from ``extra.response.usage`` (OpenAI convention: ``prompt_tokens`` includes
  ``cached_tokens``). Readable reasoning (``reasoning_details`` ``reasoning.text`` /
  ``reasoning.summary``, else ``reasoning``) becomes Reasoning parts; ``reasoning.encrypted`` blobs
  become ``Reasoning(encrypted=True)``. Neither counts as context.
* Later formats' ``exit`` messages are run bookkeeping, not model input: kept in ``meta["exit"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import load_json
from compbench.data.formats.openai_chat import Chat, content_parts, line_of, openai_usage
from compbench.data.transcript import Part, Reasoning, Text, ToolCall, Transcript, Usage
from compbench.errors import TranscriptError

NAME = "mini-swe-agent"

ACTION_RE = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # minisweagent/agents/default.py parse_action (1.x)
ACTION_TOOL = "bash"
RETURNCODE_RE = re.compile(r"<returncode>(-?\d+)</returncode>")  # action_observation_template
TIMEOUT_PREFIX = "The last command <command>"  # timeout_template


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """``trajectory_format: mini-swe-agent-*`` or ``info.mini_version``: keys only this tool writes."""
    if first is not None:
        fmt = first.get("trajectory_format")
        info = first.get("info")
        return (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) or (
            isinstance(info, dict) and "mini_version" in info and isinstance(first.get("messages"), list))
    return head.lstrip().startswith("{") and (
        '"mini_version"' in head or '"trajectory_format": "mini-swe-agent' in head)


def read(path: Path) -> Iterator[Transcript]:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise TranscriptError(path, 1, "a mini-swe-agent trajectory object with a 'messages' list")
    chat = Chat(path, lambda i: line_of(path, ("messages", i)))
    exits: list[Any] = []
    pending: str | None = None  # the bash call awaiting its observation
    for i, raw in enumerate(doc["messages"]):
        if not isinstance(raw, dict) or not isinstance(raw.get("role"), str):
            raise chat.fail(i, f"a message object with a string 'role' (message {i})")
        role = raw["role"]
        if role == "assistant" and not raw.get("tool_calls"):
            pending = _assistant(chat, i, raw)
            continue
        if role == "user" and pending is not None:
            _observation(chat, i, raw, pending)
        elif role == "exit":
            exits.append(raw.get("extra", raw.get("content")))
        else:
            chat.add(i, raw, parts=tuple(_reasoning(chat, i, raw)), usage=_usage(chat, i, raw))
        pending = None
    name = path.name.removesuffix(".json").removesuffix(".traj")
    tid = doc["instance_id"] if isinstance(doc.get("instance_id"), str) and doc["instance_id"] else name
    meta = _meta(path, doc)
    if exits:
        meta["exit"] = exits[-1]
    yield Transcript(tid, NAME, tuple(chat.messages), meta, (), tuple(chat.finish()))


def _response(raw: dict[str, Any]) -> dict[str, Any]:
    extra = raw.get("extra")
    resp = extra.get("response") if isinstance(extra, dict) else None
    return resp if isinstance(resp, dict) else {}


def _usage(chat: Chat, i: int, raw: dict[str, Any]) -> Usage | None:
    u = _response(raw).get("usage")
    if u is None:
        return None
    if not isinstance(u, dict):
        raise chat.fail(i, f"'extra.response.usage' as an object (message {i})")
    return openai_usage(chat, i, u)


def _reasoning(chat: Chat, i: int, raw: dict[str, Any]) -> list[Part]:
    """The response's reasoning: readable text as Reasoning, encrypted blobs flagged (never context)."""
    choices = _response(raw).get("choices")
    msg = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if not isinstance(msg, dict):
        return []
    out: list[Part] = []
    details = msg.get("reasoning_details")
    for d in details if isinstance(details, list) else []:
        kind = d.get("type") if isinstance(d, dict) else None
        key = {"reasoning.text": "text", "reasoning.summary": "summary", "reasoning.encrypted": "data"}.get(str(kind))
        if key is None or not isinstance(d, dict):
            chat.skipped[f"reasoning detail {kind}"] += 1
        elif isinstance(d.get(key), str):
            out.append(Reasoning(d[key], encrypted=key == "data"))
    if not out and isinstance(msg.get("reasoning"), str) and msg["reasoning"]:
        out.append(Reasoning(msg["reasoning"]))
    return out


def _assistant(chat: Chat, i: int, raw: dict[str, Any]) -> str | None:
    """Append a model response; return its bash call's id when the agent would have run it."""
    content = raw.get("content")
    if not isinstance(content, str):
        raise chat.fail(i, f"a string 'content' in assistant message {i}")
    resp = _response(raw)
    meta: dict[str, Any] = {}
    for src, dst in (("id", "response_id"), ("model", "model"), ("provider", "provider")):
        if isinstance(resp.get(src), str):
            meta[dst] = resp[src]
    u = resp.get("usage")
    if isinstance(u, dict) and isinstance(u.get("cost"), (int, float)) and not isinstance(u["cost"], bool):
        meta["cost"] = u["cost"]
    choices = resp.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and isinstance(
            choices[0].get("finish_reason"), str):
        meta["finish"] = choices[0]["finish_reason"]
    parts = _reasoning(chat, i, raw)
    found = list(ACTION_RE.finditer(content))
    call_id: str | None = None
    if len(found) == 1:
        match = found[0]
        command = match.group(1).strip()
        call_id = f"m{len(chat.messages)}:bash"
        before, after = content[: match.start()], content[match.end():]
        parts += [Text(before)] if before else []
        parts.append(ToolCall(call_id, ACTION_TOOL, json.dumps({"command": command}, ensure_ascii=False)))
        parts += [Text(after)] if after else []
        if match.group(0) != f"```bash\n{command}\n```":
            meta["fence"] = match.group(0)
        chat.calls[call_id] = ACTION_TOOL
    else:
        parts += [Text(content)] if content else []
        meta["actions_found"] = len(found)
    chat.append(raw, "assistant", tuple(parts), _usage(chat, i, raw), meta)
    return call_id


def _observation(chat: Chat, i: int, raw: dict[str, Any], call_id: str) -> None:
    parts = content_parts(chat, i, raw.get("content"))
    output = "\n".join(p.text for p in parts if isinstance(p, Text))
    meta: dict[str, Any] = {"observation": True}
    rc = RETURNCODE_RE.match(output.lstrip())
    if output.startswith(TIMEOUT_PREFIX):
        meta["outcome"] = "timeout"
        is_error = True
    elif rc is not None:
        meta["returncode"] = int(rc.group(1))
        is_error = meta["returncode"] != 0
    else:  # the final output the agent submitted (the command's output after its first line)
        meta["outcome"] = "submitted"
        is_error = False
    chat.append(raw, "tool", (chat.result(i, call_id, ACTION_TOOL, output, is_error),), None, meta)


def _meta(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"path": str(path)}
    for key in ("trajectory_format", "instance_id"):
        if isinstance(doc.get(key), str):
            meta[key] = doc[key]
    info = doc.get("info")
    if not isinstance(info, dict):
        return meta
    for key in ("model_stats", "exit_status", "submission"):
        if key in info:
            meta[key] = info[key]
    if isinstance(info.get("mini_version"), str):
        meta["tool_version"] = info["mini_version"]
    cfg = info.get("config")
    if isinstance(cfg, dict):
        model = cfg.get("model")
        if isinstance(model, dict) and isinstance(model.get("model_name"), str):
            meta["model"] = model["model_name"]
        env = cfg.get("environment")
        if isinstance(env, dict) and isinstance(env.get("cwd"), str):
            meta["cwd"] = env["cwd"]
        for key in ("agent_type", "model_type", "environment_type"):
            if isinstance(cfg.get(key), str):
                meta[key] = cfg[key]
    return meta
