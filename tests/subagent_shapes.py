"""Hand-made session trees (never copied from ../shared): a Claude Code 2.1 project folder holding a session with two
sub-agents (one of them compacting), a sidecar, the main session's compaction and its ``agent-acompact`` summarizer
call; an OpenCode session with a child session. Shared by the importer, walk, run and compare tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5e551010-0000-4000-8000-000000000001"
SUMMARY_BODY = ("1. Primary Request and Intent: the user asked to find and fix the retry bug in net.py.\n"
                "2. Key Technical Concepts: retries, back-off.\n3. Files and Code Sections: net.py (MAX_RETRIES).")
SUMMARY = ("This session is being continued from a previous conversation that ran out of context. The conversation "
           "is summarized below:\nSummary:\n" + SUMMARY_BODY)
REPLY = "<analysis>\nThe user wants the retry bug fixed; two sub-agents ran.\n</analysis>\n\n<summary>\n" \
        + SUMMARY_BODY + "\n</summary>"
SUMMARY_PROMPT = "Your task is to create a detailed summary of the conversation so far."
# the main session's compaction (its records are a second apart): the boundary, then the summary the log wrote; the
# summarizer's reply came 2 s before that summary
BOUNDARY_AT = "2026-02-01T10:00:06.000Z"
SUMMARY_AT = "2026-02-01T10:00:07.000Z"
REPLY_AT = "2026-02-01T10:00:05.000Z"


def _usage(read: int, write: int, out: int) -> dict[str, int]:
    return {"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
            "output_tokens": out}


class _Log:
    """Records of one file, each with the next second's timestamp (unless given)."""

    def __init__(self, agent: str | None = None) -> None:
        self.records: list[dict[str, Any]] = []
        self.agent = agent
        self.last: str | None = None

    def add(self, kind: str, uuid: str, **kw: Any) -> dict[str, Any]:
        r: dict[str, Any] = {"parentUuid": self.last, "isSidechain": self.agent is not None, "userType": "external",
                             "cwd": "/w", "sessionId": SID, "version": "2.1.50", "gitBranch": "main", "type": kind,
                             "uuid": uuid, "timestamp": f"2026-02-01T10:{len(self.records) // 60:02d}:"
                                                        f"{len(self.records) % 60:02d}.000Z"}
        if self.agent is not None:
            r["agentId"] = self.agent
        r.update(kw)
        self.records.append(r)
        if kind != "progress":
            self.last = uuid
        return r

    def user(self, uuid: str, content: Any, **kw: Any) -> dict[str, Any]:
        return self.add("user", uuid, message={"role": "user", "content": content}, **kw)

    def assistant(self, uuid: str, mid: str, blocks: list[dict[str, Any]], usage: dict[str, int],
                  model: str = "claude-sonnet-4-5", **kw: Any) -> dict[str, Any]:
        return self.add("assistant", uuid, message={"id": mid, "model": model, "type": "message", "role": "assistant",
                                                    "content": blocks, "usage": usage}, **kw)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _task(call: str, kind: str, what: str, prompt: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": "Task",
            "input": {"description": what, "prompt": prompt, "subagent_type": kind}}


def _result(call: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call, "content": [_text(text)]}]


def main_log(progress_link: bool = True, summary: str = SUMMARY) -> _Log:
    """The main conversation: a prompt, two Task calls in one response (an Explore and a general-purpose
    sub-agent), their results, a reply, an automatic compaction, one more exchange."""
    m = _Log()
    m.user("m-u01", "Find and fix the retry bug.")
    m.assistant("m-a02", "msg_m1", [_task("t1", "Explore", "find retries", "Find where retries are configured."),
                                    _task("t2", "general-purpose", "fix the bug", "Fix the retry bug in net.py.")],
                _usage(18_000, 1_000, 80))
    if progress_link:  # a2 is named only by its progress records (its result carries no toolUseResult)
        m.add("progress", "m-p03", data={"type": "agent_progress", "agentId": "a2", "prompt": "Fix the retry bug.",
                                         "message": {"type": "user", "message": {"role": "user", "content": "x"}}},
              toolUseID="agent_msg_x", parentToolUseID="t2")
    else:  # a record in its place (the records' times stay where the constants say)
        m.add("file-history-snapshot", "m-f03", snapshot={})
    m.user("m-u04", _result("t1", "Retries are set in net.py (MAX_RETRIES=3).\nagentId: a1 (for resuming)"),
           toolUseResult={"status": "completed", "agentId": "a1", "totalTokens": 12_250, "totalToolUseCount": 1})
    m.user("m-u05", _result("t2", "Fixed: back-off doubled.\nagentId: a2 (for resuming)"))
    m.assistant("m-a06", "msg_m2", [_text("Both sub-agents are done.")], _usage(19_000, 500, 40))
    boundary = m.add("system", "m-c07", subtype="compact_boundary", content="Conversation compacted",
                     logicalParentUuid="m-a06", compactMetadata={"trigger": "auto", "preTokens": 150_000})
    boundary["parentUuid"] = None
    m.user("m-u08", summary, isCompactSummary=True)
    assert (boundary["timestamp"], m.records[-1]["timestamp"]) == (BOUNDARY_AT, SUMMARY_AT)
    m.user("m-u09", "Now add a test.")
    m.assistant("m-a10", "msg_m3", [_text("Added a test.")], _usage(3_000, 2_000, 30))
    return m


def explore_log() -> _Log:
    a = _Log("a1")
    a.user("a1-u01", "Find where retries are configured.")
    a.assistant("a1-a02", "msg_a1_1", [{"type": "tool_use", "id": "r1", "name": "Read",
                                         "input": {"file_path": "/w/net.py"}}], _usage(0, 12_000, 30),
                model="claude-haiku-4-5")
    a.user("a1-u03", _result("r1", "MAX_RETRIES = 3"))
    a.assistant("a1-a04", "msg_a1_2", [_text("Retries are set in net.py (MAX_RETRIES=3).")], _usage(12_000, 200, 20),
                model="claude-haiku-4-5")
    return a


def fixer_log() -> _Log:
    """The general-purpose sub-agent: it compacts once (its own compaction, in its own file)."""
    a = _Log("a2")
    a.user("a2-u01", "Fix the retry bug in net.py.")
    a.assistant("a2-a02", "msg_a2_1", [{"type": "tool_use", "id": "r2", "name": "Read",
                                         "input": {"file_path": "/w/net.py"}}], _usage(0, 15_000, 30))
    a.user("a2-u03", _result("r2", "def retry():\n    delay = 1\n" * 40))
    a.assistant("a2-a04", "msg_a2_2", [{"type": "tool_use", "id": "e2", "name": "Edit",
                                         "input": {"file_path": "/w/net.py", "old_string": "1", "new_string": "2"}}],
                _usage(15_000, 2_000, 40))
    a.user("a2-u05", _result("e2", "ok"))
    b = a.add("system", "a2-c06", subtype="compact_boundary", content="Conversation compacted",
              logicalParentUuid="a2-u05", compactMetadata={"trigger": "auto", "preTokens": 160_000})
    b["parentUuid"] = None
    a.user("a2-u07", "This session is being continued from a previous conversation that ran out of context. "
           "Summary:\nThe sub-agent is fixing the retry back-off in net.py.", isCompactSummary=True)
    a.assistant("a2-a08", "msg_a2_3", [_text("Fixed: back-off doubled.")], _usage(0, 4_000, 25))
    return a


def summarizer_call(agent: str = "acompact-ab12cd", reply: str = REPLY, at: str = REPLY_AT) -> _Log:
    """The main compaction's own summarizer call: the conversation's tail, the summary prompt, the reply."""
    c = _Log(agent)
    c.assistant("c-a01", "msg_m2", [_text("Both sub-agents are done.")], _usage(19_000, 500, 40))
    c.user("c-u02", SUMMARY_PROMPT)
    c.assistant("c-a03", "msg_c1", [_text(reply)], _usage(145_000, 3_000, 1_200), timestamp=at)
    return c


def claude_project(root: Path, sidecar: bool = True, call: bool = True) -> Path:
    """``root/proj``: the main session's file, its ``subagents`` folder with both sub-agents (the Explore one with
    its sidecar) and the compaction's summarizer call. Returns the project folder."""
    proj = root / "proj"
    main_log().write(proj / f"{SID}.jsonl")
    sub = proj / SID / "subagents"
    explore_log().write(sub / "agent-a1.jsonl")
    if sidecar:
        (sub / "agent-a1.meta.json").write_text(json.dumps({"agentType": "Explore"}), encoding="utf-8")
    fixer_log().write(sub / "agent-a2.jsonl")
    if call:
        summarizer_call().write(sub / "agent-acompact-ab12cd.jsonl")
    return proj


# --- OpenCode: a session and the child session its task tool ran ---------------------------------------


def _oc_msg(sid: str, mid: str, role: str, parts: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
    return {"info": {"id": mid, "sessionID": sid, "role": role, **info},
            "parts": [{"id": f"prt_{mid}_{i}", "sessionID": sid, "messageID": mid, **p} for i, p in enumerate(parts)]}


def _oc_step(inp: int, out: int, read: int = 0) -> dict[str, Any]:
    return {"type": "step-finish", "reason": "stop", "cost": 0.0,
            "tokens": {"input": inp, "output": out, "reasoning": 0, "cache": {"read": read, "write": 0}}}


def opencode_pair(root: Path) -> tuple[Path, Path]:
    """``ses_parent`` (build agent) and ``ses_child`` (its ``parentID``; explore agent) as two exports."""
    parent = {"info": {"id": "ses_parent", "title": "fix it", "version": "1.3.0", "directory": "/w",
                       "time": {"created": 1_700_000_000_000}},
              "messages": [
                  _oc_msg("ses_parent", "msg_p1", "user", [{"type": "text", "text": "Fix the retry bug."}],
                          agent="build"),
                  _oc_msg("ses_parent", "msg_p2", "assistant", [{"type": "step-start"},
                                                               {"type": "text", "text": "Done."}, _oc_step(9_000, 50)],
                          modelID="claude-sonnet-4-5", providerID="anthropic", agent="build")]}
    child = {"info": {"id": "ses_child", "parentID": "ses_parent", "title": "find retries (@explore subagent)",
                      "version": "1.3.0", "directory": "/w", "time": {"created": 1_700_000_001_000}},
             "messages": [
                 _oc_msg("ses_child", "msg_c1", "user", [{"type": "text", "text": "Find the retries."}],
                         agent="explore"),
                 _oc_msg("ses_child", "msg_c2", "assistant", [{"type": "step-start"},
                                                             {"type": "text", "text": "In net.py."},
                                                             _oc_step(6_000, 20)],
                         modelID="claude-haiku-4-5", providerID="anthropic", agent="explore")]}
    out = []
    for name, doc in (("parent.json", parent), ("child.json", child)):
        p = root / "opencode" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        out.append(p)
    return out[0], out[1]
