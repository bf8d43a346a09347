"""Hand-made OpenHands logs of the real shapes (V1 software-agent-sdk @ 611629e, V0 All-Hands-AI/OpenHands @
156d068): the field names and nesting are the writers', the content is invented.

The recorded condensations follow the tools' rules, worked out by hand here (not by compbench's strategies):

* V1 ``LLMSummarizingCondenser(max_size=20, keep_first=2)``: before call k the view holds 2 + 2(k-1) events
  (system prompt, user message, one action and one observation a call); at call 11 it holds 22 > 20, so the
  events trigger: keep 20 // 2 - 2 - 1 = 7 from the tail, the cut moved to the next manipulation index (16, not
  15: 15 would split action 8 from its observation): events 2..15 (actions/observations 1-7) are forgotten,
  the summary goes at offset 2. The view is then 9 events; at call 17 it holds 9 + 12 = 21 > 20: forgotten are
  view[2:15] = the first summary and actions/observations 8-13.
* V0 ``LLMSummarizingCondenser(keep_first=4, max_size=24)`` (an evaluation's recorded condenser config): the
  view is system, user message, its RecallAction and RecallObservation, then one action and one observation
  a call; at call 12 it holds 4 + 22 = 26 > 24: keep the first 4 and the newest 24 // 2 - 4 - 1 = 7; the
  events between (action 1 .. action 8: V0 does not keep a call with its result) are forgotten as an id range.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONV = "5c0ffee0-1234-4abc-8def-0123456789ab"
MODEL = "claude-sonnet-4-5-20250929"
TASK = ("The test tests/test_calc.py::test_divide fails with ZeroDivisionError. Fix calc/ops.py so divide() "
        "raises ValueError('division by zero') instead; keep the public API of calc unchanged.")
COMMANDS = [
    ("ls calc tests", "calc/__init__.py\ncalc/ops.py\ntests/test_calc.py"),
    ("cat calc/ops.py", "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b"),
    ("python -m pytest tests/test_calc.py -q", "F.\nFAILED tests/test_calc.py::test_divide - ZeroDivisionError"),
    ("sed -n 1,40p tests/test_calc.py",
     "def test_divide():\n    with pytest.raises(ValueError):\n        divide(1, 0)"),
    ("grep -rn divide calc", "calc/__init__.py:1:from .ops import add, divide\ncalc/ops.py:5:def divide(a, b):"),
    ("git log --oneline -3", "a1b2c3d calc: add divide\n9f8e7d6 initial"),
    ("python -c 'import calc; print(calc.__all__)'", "AttributeError: module 'calc' has no attribute '__all__'"),
    ("cat calc/__init__.py", "from .ops import add, divide"),
    ("sed -i 's/return a \\/ b/if b == 0:\\n        raise ValueError(\"division by zero\")\\n    return a \\/ b/' "
     "calc/ops.py", ""),
    ("cat calc/ops.py", "def divide(a, b):\n    if b == 0:\n        raise ValueError(\"division by zero\")\n"
                        "    return a / b"),
    ("python -m pytest tests/test_calc.py -q", "..\n2 passed in 0.02s"),
    ("python -m pytest -q", "....\n4 passed in 0.05s"),
    ("git diff --stat", " calc/ops.py | 2 ++\n 1 file changed, 2 insertions(+)"),
    ("ruff check calc", "All checks passed!"),
    ("python -c 'from calc import divide; divide(1, 0)'", "ValueError: division by zero"),
    ("git status --short", " M calc/ops.py"),
    ("git diff", "+    if b == 0:\n+        raise ValueError(\"division by zero\")"),
]
SUMMARY_1 = ("USER_CONTEXT: Fix tests/test_calc.py::test_divide (ZeroDivisionError): calc/ops.py divide() must "
             "raise ValueError('division by zero'); keep calc's public API.\nCOMPLETED: Read calc/ops.py and the "
             "test; test_divide fails with ZeroDivisionError.\nPENDING: Change divide(), rerun the tests.\n"
             "CODE_STATE: calc/ops.py: add(a, b), divide(a, b) returns a / b; calc/__init__.py exports add, divide")
SUMMARY_2 = ("USER_CONTEXT: Fix tests/test_calc.py::test_divide: divide() raises ValueError('division by zero'); "
             "public API unchanged.\nCOMPLETED: divide() now checks b == 0; tests/test_calc.py 2 passed, full "
             "suite 4 passed, ruff clean.\nPENDING: Review the diff and report.\nCHANGES: calc/ops.py +2 lines")


def uid(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


def ts(n: int) -> str:
    return f"2026-05-04T10:{n // 60:02d}:{n % 60:02d}.{n * 7919 % 1000000:06d}"


def text(t: str) -> dict[str, Any]:
    return {"cache_prompt": False, "type": "text", "text": t}


# --- V1 ---------------------------------------------------------------------------------------------------------


def v1_usage(k: int, prompt: int, completion: int, usage_id: str = "agent") -> dict[str, Any]:
    return {"model": f"anthropic/{MODEL}", "prompt_tokens": prompt, "completion_tokens": completion,
            "cache_read_tokens": max(0, prompt - 900), "cache_write_tokens": 900 if usage_id == "agent" else 0,
            "reasoning_tokens": 0, "context_window": 200_000, "per_turn_token": prompt + completion,
            "response_id": f"{'cond' if usage_id == 'condenser' else 'chatcmpl'}-{k:04d}"}


def v1_events(outputs: dict[int, str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                  list[dict[str, Any]]]:
    """The events (in order), the agent's token usages and the condenser's. ``outputs``: call -> its output."""
    outputs = outputs or {}
    evs: list[dict[str, Any]] = []
    n = 0

    def add(ev: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        ev = {"id": uid(n), "timestamp": ts(n), **ev}
        evs.append(ev)
        return ev

    add({"source": "environment", "key": "execution_status", "value": "running",
         "kind": "ConversationStateUpdateEvent"})
    add({"source": "agent", "system_prompt": text("You are OpenHands agent, a helpful AI assistant that can interact "
                                                  "with a computer to solve tasks.\n<ROLE>...</ROLE>"),
         "tools": [{"name": "terminal", "description": "Execute a bash command in the terminal.",
                    "kind": "TerminalTool"},
                   {"name": "file_editor", "description": "Custom editing tool for viewing, creating and editing "
                                                          "files.", "kind": "FileEditorTool"},
                   {"name": "task_tracker", "description": "Track tasks.", "kind": "TaskTrackerTool"}],
         "kind": "SystemPromptEvent"})
    add({"source": "user", "llm_message": {"role": "user", "content": [text(TASK)], "thinking_blocks": []},
         "activated_skills": [], "extended_content": [], "kind": "MessageEvent"})
    agent: list[dict[str, Any]] = []
    condenser: list[dict[str, Any]] = []
    actions: dict[int, tuple[str, str]] = {}
    view = 2  # events in the view: system prompt, user message
    summaries: list[str] = []
    for k in range(1, len(COMMANDS) + 2):
        if view > 20:  # the condenser, before call k
            forgotten = ([f"{summaries[-1]}-summary"] if summaries else [])
            first = 1 if not summaries else 8
            last = 7 if not summaries else 13
            for j in range(first, last + 1):
                forgotten += list(actions[j])
            c = add({"source": "environment", "forgotten_event_ids": forgotten,
                     "summary": SUMMARY_1 if not summaries else SUMMARY_2, "summary_offset": 2,
                     "llm_response_id": f"cond-{len(summaries) + 1:04d}", "kind": "Condensation"})
            condenser.append(v1_usage(len(summaries) + 1, 2600 + 400 * len(summaries), 310, "condenser"))
            summaries.append(c["id"])
            view = 9
        prompt = 9000 + 600 * view
        if k == len(COMMANDS) + 1:
            add({"source": "agent", "llm_message": {"role": "assistant", "content": [text(
                "Fixed: calc/ops.py divide() now raises ValueError('division by zero'); all 4 tests pass.")],
                "thinking_blocks": []}, "llm_response_id": f"chatcmpl-{k:04d}", "activated_skills": [],
                "extended_content": [], "kind": "MessageEvent"})
            agent.append(v1_usage(k, prompt, 60))
            break
        cmd, out = COMMANDS[k - 1]
        call = f"toolu_{k:02d}{'x' * 20}"
        a = add({"source": "agent", "thought": [text(f"Step {k}: run `{cmd}`.")], "thinking_blocks": [],
                 "action": {"command": cmd, "is_input": False, "reset": False, "kind": "TerminalAction"},
                 "tool_name": "terminal", "tool_call_id": call,
                 "tool_call": {"id": call, "name": "terminal", "arguments": json.dumps(
                     {"command": cmd, "security_risk": "LOW"}), "origin": "completion"},
                 "llm_response_id": f"chatcmpl-{k:04d}", "security_risk": "LOW", "summary": f"running {cmd[:30]}",
                 "kind": "ActionEvent"})
        o = add({"source": "environment", "tool_name": "terminal", "tool_call_id": call,
                 "observation": {"content": [text(outputs.get(k, out))], "is_error": False, "command": cmd,
                                 "exit_code": 0, "timeout": False, "metadata": {"exit_code": 0, "pid": -1,
                                 "working_dir": "/workspace/calc"}, "kind": "TerminalObservation"},
                 "action_id": a["id"], "kind": "ObservationEvent"})
        agent.append(v1_usage(k, prompt, 85))
        actions[k] = (a["id"], o["id"])
        view += 2
    add({"source": "environment", "key": "execution_status", "value": "finished",
         "kind": "ConversationStateUpdateEvent"})
    return evs, agent, condenser


def v1_base_state(agent: list[dict[str, Any]], condenser: list[dict[str, Any]],
                  condenser_config: dict[str, Any] | None = None) -> dict[str, Any]:
    llm = {"model": f"anthropic/{MODEL}", "api_key": "**********", "num_retries": 5, "timeout": 300,
           "max_message_chars": 30000, "temperature": 0.0, "max_input_tokens": 200000, "max_output_tokens": 64000,
           "caching_prompt": True, "native_tool_calling": True, "usage_id": "agent"}

    def metrics(usages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model_name": f"anthropic/{MODEL}", "accumulated_cost": 0.42, "accumulated_token_usage": {
            "model": f"anthropic/{MODEL}", "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
            "completion_tokens": sum(u["completion_tokens"] for u in usages)}, "costs": [],
            "response_latencies": [], "token_usages": usages}

    cond = condenser_config if condenser_config is not None else {
        "llm": {**llm, "usage_id": "condenser"}, "max_size": 20, "keep_first": 2, "minimum_progress": 0.1,
        "hard_context_reset_max_retries": 5, "hard_context_reset_context_scaling": 0.8,
        "kind": "LLMSummarizingCondenser"}
    return {"id": CONV, "agent": {"llm": llm, "tools": [{"name": "terminal", "params": {}}], "condenser": cond,
                                  "kind": "Agent"},
            "workspace": {"working_dir": "/workspace/calc", "kind": "LocalWorkspace"},
            "persistence_dir": f"/home/u/.openhands/conversations/{CONV.replace('-', '')}", "max_iterations": 500,
            "stuck_detection": True, "execution_status": "finished", "confirmation_policy": {"kind": "NeverConfirm"},
            "activated_knowledge_skills": [], "blocked_actions": {}, "blocked_messages": {},
            "stats": {"usage_to_metrics": {"agent": metrics(agent), "condenser": metrics(condenser)}},
            "secret_registry": {"secret_sources": {}}, "agent_state": {}}


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def write_v1_folder(root: Path, outputs: dict[int, str] | None = None, base: bool = True) -> Path:
    """``<root>/<conversation hex>/`` with base_state.json and events/event-NNNNN-<id>.json (one line each)."""
    evs, agent, condenser = v1_events(outputs)
    d = root / CONV.replace("-", "")
    (d / "events").mkdir(parents=True, exist_ok=True)
    for i, ev in enumerate(evs):
        (d / "events" / f"event-{i:05d}-{ev['id']}.json").write_text(compact(ev), encoding="utf-8")
    if base:
        (d / "base_state.json").write_text(compact(v1_base_state(agent, condenser)), encoding="utf-8")
    return d


def write_v1_array(root: Path) -> Path:
    """``events.json`` (indent 2) beside ``trajectory.json`` holding the base state."""
    evs, agent, condenser = v1_events()
    root.mkdir(parents=True, exist_ok=True)
    (root / "events.json").write_text(json.dumps(evs, indent=2), encoding="utf-8")
    (root / "trajectory.json").write_text(json.dumps({"id": CONV, "created": "2026-05-04T10:00:00", "eventCount":
                                                      len(evs), "model": f"anthropic/{MODEL}",
                                                      "baseState": v1_base_state(agent, condenser)}, indent=2),
                                          encoding="utf-8")
    return root / "events.json"


def write_v1_jsonl(path: Path) -> Path:
    """``events.jsonl``: the events one a line, a ``stats`` state update before each agent call's events."""
    evs, agent, _ = v1_events()
    by_response = {u["response_id"]: u for u in agent}
    acc = {"prompt_tokens": 0, "completion_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    out: list[dict[str, Any]] = []
    n = 10_000
    for ev in evs:
        u = by_response.get(ev.get("llm_response_id", ""))
        if u is not None:
            for key in acc:
                acc[key] += u[key]
            n += 1
            out.append({"id": uid(n), "timestamp": ev["timestamp"], "source": "environment", "key": "stats",
                        "value": {"usage_to_metrics": {"default": {"model_name": f"anthropic/{MODEL}",
                                  "accumulated_cost": 0.0, "accumulated_token_usage": {
                                      **acc, "per_turn_token": u["prompt_tokens"] + u["completion_tokens"]}}}},
                        "kind": "ConversationStateUpdateEvent"})
        out.append(ev)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(compact(e) + "\n" for e in out), encoding="utf-8")
    return path


# --- V0 ---------------------------------------------------------------------------------------------------------


def v0_response(k: int, content: str, calls: list[tuple[str, str, dict[str, Any]]], prompt: int) -> dict[str, Any]:
    return {"id": f"chatcmpl-{k:04d}", "created": 1746352800 + k, "model": MODEL, "object": "chat.completion",
            "system_fingerprint": None, "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
                "content": content, "role": "assistant", "tool_calls": [
                    {"index": i, "function": {"arguments": json.dumps(args), "name": name}, "id": cid,
                     "type": "function"} for i, (cid, name, args) in enumerate(calls)],
                "function_call": None}}],
            "usage": {"completion_tokens": 90, "prompt_tokens": prompt, "total_tokens": prompt + 90,
                      "completion_tokens_details": None, "prompt_tokens_details": {"audio_tokens": None,
                                                                                    "cached_tokens": prompt - 800},
                      "cache_creation_input_tokens": 800, "cache_read_input_tokens": prompt - 800}}


def v0_events(calls: int = len(COMMANDS), keep_first: int = 4, max_size: int = 24,
              outputs: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """A V0 event stream of ``calls`` terminal calls; the LLMSummarizing condensation where its rule fires."""
    outputs = outputs or {}
    evs: list[dict[str, Any]] = []

    def add(ev: dict[str, Any]) -> dict[str, Any]:
        ev = {"id": len(evs), "timestamp": ts(len(evs)), **ev}
        evs.append(ev)
        return ev

    add({"source": "agent", "message": "", "action": "system", "args": {
        "content": "You are OpenHands agent, a helpful AI assistant that can interact with a computer.",
        "tools": [{"type": "function", "function": {"name": "execute_bash"}}], "openhands_version": "0.62.0",
        "agent_class": "CodeActAgent"}})
    add({"source": "environment", "message": "", "observation": "agent_state_changed", "content": "",
         "extras": {"agent_state": "running", "reason": ""}})
    add({"source": "user", "message": TASK, "action": "message", "args": {
        "content": TASK, "file_urls": None, "image_urls": None, "wait_for_response": False}})
    add({"source": "user", "message": "Retrieving content for: The test", "action": "recall", "args": {
        "recall_type": "workspace_context", "query": TASK[:50], "thought": ""}})
    add({"source": "environment", "message": "Added workspace context", "cause": 3, "observation": "recall",
         "content": "Added workspace context", "extras": {
             "recall_type": "workspace_context", "repo_name": "calc", "repo_directory": "/workspace/calc",
             "repo_instructions": "Run the tests with pytest.", "runtime_hosts": {}, "date": "2026-05-04",
             "microagent_knowledge": []}})
    view = 4  # system, user message, recall action, recall observation
    view_ids = [0, 2, 3, 4]
    for k in range(1, calls + 1):
        if view > max_size:
            tail = max_size // 2 - keep_first - 1
            gone = [x for x in view_ids[keep_first:-tail] if x >= 0]
            add({"source": "agent", "message": "Summarizing", "action": "condensation", "args": {
                "forgotten_event_ids": None, "forgotten_events_start_id": min(gone),
                "forgotten_events_end_id": max(gone), "summary": SUMMARY_1, "summary_offset": keep_first}})
            view_ids = [*view_ids[:keep_first], -1, *view_ids[-tail:]]  # -1: the summary observation
            view = len(view_ids)
        cmd, out = COMMANDS[(k - 1) % len(COMMANDS)]
        cid = f"toolu_{k:03d}{'y' * 18}"
        args = {"command": cmd, "is_input": "false"}
        resp = v0_response(k, f"Step {k}: run `{cmd}`.", [(cid, "execute_bash", args)], 8000 + 500 * view)
        meta = {"function_name": "execute_bash", "tool_call_id": cid, "model_response": resp,
                "total_calls_in_response": 1}
        a = add({"source": "agent", "message": f"Running command: {cmd}", "action": "run", "tool_call_metadata": meta,
                 "args": {"command": cmd, "is_input": False, "thought": f"Step {k}: run `{cmd}`.", "blocking": False,
                          "is_static": False, "cwd": None, "hidden": False, "confirmation_state": "confirmed",
                          "security_risk": -1}, "timeout": 120})
        o = add({"source": "agent", "message": f"Command `{cmd}` executed with exit code 0.", "cause": a["id"],
                 "observation": "run", "tool_call_metadata": meta, "content": outputs.get(k, out), "extras": {
                     "command": cmd, "metadata": {"exit_code": 0, "pid": -1, "username": "openhands",
                                                  "hostname": "sandbox", "working_dir": "/workspace/calc",
                                                  "py_interpreter_path": "/usr/bin/python", "prefix": "",
                                                  "suffix": ""}, "hidden": False}, "success": True})
        view_ids += [a["id"], o["id"]]
        view += 2
    add({"source": "agent", "message": "All done!", "action": "finish", "tool_call_metadata": {
        "function_name": "finish", "tool_call_id": "toolu_finish", "model_response": v0_response(
            calls + 1, "Fixed divide().", [("toolu_finish", "finish", {"message": "done"})], 9000),
        "total_calls_in_response": 1}, "args": {"final_thought": "", "outputs": {}, "thought": "Fixed divide()."}})
    add({"source": "environment", "message": "", "observation": "agent_state_changed", "content": "",
         "extras": {"agent_state": "finished", "reason": ""}})
    return evs


def eval_line(events: list[dict[str, Any]], condenser: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ``output.jsonl`` instance (``EvalOutput``): the history without the response usages, which are in
    ``metrics.token_usages``."""
    usages = []
    history = []
    for ev in events:
        ev = json.loads(json.dumps(ev))
        resp = (ev.get("tool_call_metadata") or {}).get("model_response")
        if resp and ev.get("action"):
            u = resp.pop("usage")
            usages.append({"model": MODEL, "prompt_tokens": u["prompt_tokens"], "completion_tokens": 90,
                           "cache_read_tokens": u["cache_read_input_tokens"], "cache_write_tokens": 800,
                           "response_id": resp["id"]})
        elif resp:
            resp.pop("usage", None)
        history.append(ev)
    return {"instance_id": "calc__calc-17", "instruction": TASK, "instance": {"repo": "calc/calc"},
            "test_result": {"git_patch": "diff --git a/calc/ops.py b/calc/ops.py"},
            "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": f"anthropic/{MODEL}",
                                                                        "max_message_chars": 30000,
                                                                        "max_input_tokens": 200000},
                         "max_iterations": 100, "eval_output_dir": "evaluation/evaluation_outputs/outputs",
                         "start_time": "2026-05-04 10:00:00", "git_commit": "156d068",
                         "condenser_config": condenser or {"type": "llm", "keep_first": 4, "max_size": 24,
                                                           "max_event_length": 10000}},
            "history": history, "metrics": {"accumulated_cost": 0.31, "token_usages": usages, "condenser": []},
            "error": None}


def resolver_line() -> dict[str, Any]:
    """One resolver ``output.jsonl`` instance: its history is ``dataclasses.asdict`` of each event (flattened)."""
    history: list[dict[str, Any]] = []
    for ev in v0_events(calls=3):
        if ev.get("action") == "system" or ev.get("observation") == "agent_state_changed":
            continue
        if "action" in ev:
            history.append({**ev["args"], "action": ev["action"]} if ev["action"] != "message" else
                           {"content": ev["args"]["content"], "file_urls": None, "image_urls": None,
                            "wait_for_response": False, "action": "message", "security_risk": -1})
        else:
            history.append({"content": ev["content"], **ev["extras"], "observation": ev["observation"]})
    usages = [{"model": MODEL, "prompt_tokens": 8000 + 1000 * k, "completion_tokens": 90, "cache_read_tokens": 0,
               "cache_write_tokens": 0, "response_id": f"chatcmpl-{k:04d}"} for k in range(1, 5)]
    return {"issue": {"owner": "calc", "repo": "calc", "number": 17, "title": "divide by zero", "body": TASK},
            "issue_type": "issue", "instruction": TASK, "base_commit": "a1b2c3d", "git_patch": "diff --git a/x b/x",
            "history": history, "metrics": {"accumulated_cost": 0.1, "token_usages": usages}, "success": True,
            "comment_success": None, "result_explanation": "fixed", "error": None}
