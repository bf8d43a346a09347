"""What Claude Code's sub-agents spend, read from the logs (compbench.validation.subagents): a sub-agent streamed into
the main file as agent_progress records (compbench.data.formats.claude_code_progress) is counted from them and the
Task result's final usage, its own file wins over them, and a Task result (not the progress) is what the main
context grows by. Hand-made files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from subagent_shapes import SID, _Log, _result, _task, _text, _usage, explore_log

from compbench.data.formats.claude_code_progress import streamed
from compbench.data.transcript import Usage
from compbench.validation.subagents import collect, report, tokens


def _progress(log: _Log, uuid: str, agent: str, call: str, inner: dict[str, Any]) -> None:
    log.add("progress", uuid, data={"type": "agent_progress", "agentId": agent, "prompt": "p", "message": inner,
                                    "normalizedMessages": []}, toolUseID=f"agent_{uuid}", parentToolUseID=call)


def _sub_call(mid: str, read: int, write: int, out: int) -> dict[str, Any]:
    return {"type": "assistant", "message": {"id": mid, "model": "claude-haiku-4-5", "role": "assistant",
                                             "content": [_text("…")], "usage": _usage(read, write, out)}}


def main_with_streamed_agent(growth: int = 1_500) -> _Log:
    m = _Log()
    m.user("u01", "Find where retries are configured.")
    m.assistant("a02", "msg_m1", [_task("t1", "Explore", "find retries", "Find where retries are configured.")],
                _usage(10_000, 0, 50))
    _progress(m, "p03", "a1", "t1", {"type": "user", "message": {"role": "user", "content": "Find them."}})
    _progress(m, "p04", "a1", "t1", _sub_call("msg_s1", 0, 5_000, 20))
    _progress(m, "p05", "a1", "t1", _sub_call("msg_s2", 5_000, 300, 30))
    _progress(m, "p06", "a1", "t1", _sub_call("msg_s2", 5_000, 300, 40))  # the same response, its final usage
    m.user("u07", _result("t1", "Retries are in net.py.\nagentId: a1 (for resuming)\n<usage>total_tokens: 5700"),
           toolUseResult={"status": "completed", "agentId": "a1", "totalTokens": 5_700,
                          "usage": _usage(5_300, 350, 47)})
    m.assistant("a08", "msg_m2", [_text("They are in net.py.")], _usage(10_053 + growth - 3, 0, 12))
    m.user("u09", "Run one in the background.")
    m.assistant("a10", "msg_m3", [_task("t2", "general-purpose", "bg", "Watch the logs.")], _usage(11_000, 200, 30))
    m.user("u11", _result("t2", "Async agent launched successfully.\nagentId: a9"),
           toolUseResult={"isAsync": True, "status": "async_launched", "agentId": "a9"})
    m.assistant("a12", "msg_m4", [_text("Launched.")], _usage(11_300, 100, 10))
    return m


def test_a_streamed_sub_agents_calls_are_its_progress_and_its_final_report(tmp_path: Path) -> None:
    agents = streamed(main_with_streamed_agent().write(tmp_path / f"{SID}.jsonl"))
    assert set(agents) == {"a1"}  # a9 was launched in the background: its report (and usage) come later
    a1 = agents["a1"]
    assert (a1.call_id, a1.total_tokens) == ("t1", 5_700)
    assert [u for _, u in a1.usages()] == [Usage(5_003, 20, 0, 5_000), Usage(5_303, 40, 5_000, 300),
                                           Usage(5_653, 47, 5_300, 350)]


def test_a_final_report_streamed_too_is_counted_once() -> None:
    from compbench.data.formats.claude_code_progress import Streamed

    s = Streamed("a1", calls={"m": ("x", Usage(10, 1))}, final=Usage(10, 1))
    assert len(s.usages()) == 1
    s.final = Usage(10, 2)
    assert len(s.usages()) == 2


def test_the_share_counts_streamed_sub_agents_and_prefers_their_own_files(tmp_path: Path) -> None:
    main_with_streamed_agent().write(tmp_path / f"{SID}.jsonl")
    (session,), growths = collect([tmp_path])
    assert tokens(session.main) == (10_003 + 50) + (11_553 + 12) + (11_203 + 30) + (11_403 + 10)
    assert tokens(session.subagents["a1"]) == 5_023 + 5_343 + 5_700 and set(session.subagents) == {"a1"}
    lines = report([session], growths)
    assert lines[0] == ("Claude Code sessions: 1 (1 with sub-agents); sub-agents: 1 (0 from their own files, 1 from "
                        "the main file's agent_progress records)")
    assert lines[1].startswith("tokens (prompt with the cache, and output, as recorded): main 44,264, sub-agents "
                               "16,066: 26.6% in sub-agents; cost $")
    explore_log().write(tmp_path / SID / "subagents" / "agent-a1.jsonl")  # its own file: it wins
    (session,), _ = collect([tmp_path])
    assert set(session.from_files) == {"a1"} and tokens(session.subagents["a1"]) == 12_033 + 12_223
    assert report([session], [])[0].endswith("sub-agents: 1 (1 from their own files, 0 from the main file's "
                                             "agent_progress records)")


@pytest.mark.parametrize("growth", [0, 1_500, 9_000])
def test_the_main_context_grows_by_the_task_result_as_the_log_records_it(tmp_path: Path, growth: int) -> None:
    """Only the synchronous Task result counts (the launch of a background one is left out); the growth is the
    next call's recorded prompt less the spawning call's prompt and output."""
    main_with_streamed_agent(growth).write(tmp_path / f"{SID}.jsonl")
    _, growths = collect([tmp_path])
    (g,) = growths
    assert (g.session, g.growth, g.subagent_context) == (SID, growth, 5_700) and g.result > 0
    line = report([], growths)[-1]
    assert line.startswith(f"what a sub-agent's work adds to the main context, over 1 Task results: the next call's "
                           f"recorded prompt grew by a median {growth:,} tokens")
    assert line.endswith("the sub-agents' own final contexts were a median 5,700 tokens (what the main context would "
                         "have grown by had their progress records been sent)")
