"""A Claude Code session is a tree (compbench.data.formats.claude_code_subagents, .claude_code_compact_calls): each
sub-agent's file is its own transcript linked to its session with its type, its compactions its own; a compaction's
own summarizer call (agent-acompact-*.jsonl) rides on that compaction and is never a session. Hand-made folders
(tests/subagent_shapes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from subagent_shapes import (
    REPLY,
    SID,
    SUMMARY_PROMPT,
    claude_project,
    explore_log,
    fixer_log,
    main_log,
    summarizer_call,
)

from compbench.data.formats import iter_files, read
from compbench.data.formats.claude_code_compact_calls import WITHIN_SECONDS
from compbench.data.formats.claude_code_subagents import SIDECAR, SUMMARIZER, side_file
from compbench.data.reading import Imported, collect
from compbench.data.transcript import Transcript
from compbench.data.tree import agent_type, session_of
from compbench.errors import TranscriptError


def _by_id(root: Path) -> dict[str, Transcript]:
    return {ev.transcript.id: ev.transcript for ev in collect([root]) if isinstance(ev, Imported)}


def test_a_session_with_two_sub_agents_is_three_transcripts_of_one_session(tmp_path: Path) -> None:
    claude_project(tmp_path)
    ts = _by_id(tmp_path)
    assert sorted(ts) == [SID, f"{SID}/a1", f"{SID}/a2"]  # the summarizer call is no transcript
    main, explore, fixer = ts[SID], ts[f"{SID}/a1"], ts[f"{SID}/a2"]
    assert "parent_session" not in main.meta and agent_type(main) == "main"
    assert {session_of(t) for t in ts.values()} == {SID}
    # the Explore sub-agent's type from its sidecar; the other's from the Task call a progress record ties it to
    assert (explore.meta["parent_session"], explore.meta["agent_type"], explore.meta["agent_type_source"],
            explore.meta["spawned_by"]) == (SID, "Explore", "sidecar", "t1")
    assert (fixer.meta["agent_type"], fixer.meta["agent_type_source"], fixer.meta["spawned_by"],
            fixer.meta["agent_description"]) == ("general-purpose", "task call", "t2", "fix the bug")
    # each context's compactions are its own: one in the main conversation, one in the fixer, none in Explore
    assert [len(t.compactions) for t in (main, explore, fixer)] == [1, 0, 1]
    (own,) = fixer.compactions
    assert (own.trigger, own.tokens_before) == ("auto", 160_000) and "summarizer_call" not in own.meta
    assert fixer.messages[own.index].text.endswith("fixing the retry back-off in net.py.")


def test_the_compactions_summarizer_call_rides_on_it(tmp_path: Path) -> None:
    """Its reply's usage is the compaction's real summarizer input (the cache read and written included) and output;
    its reply the summary with the analysis Claude Code drops."""
    claude_project(tmp_path)
    (c,) = _by_id(tmp_path)[SID].compactions
    call = c.meta["summarizer_call"]
    assert (call["file"], call["agent_id"], call["model"], call["matched_by"]) == (
        "agent-acompact-ab12cd.jsonl", "acompact-ab12cd", "claude-sonnet-4-5", "text")
    assert (call["input_tokens"], call["cache_read"], call["cache_write"], call["output_tokens"]) == (
        3 + 145_000 + 3_000, 145_000, 3_000, 1_200)
    assert (call["prompt"], call["reply"], call["request_messages"]) == (SUMMARY_PROMPT, REPLY, 2)


def test_without_a_sidecar_the_type_is_the_task_calls(tmp_path: Path) -> None:
    claude_project(tmp_path, sidecar=False)
    explore = _by_id(tmp_path)[f"{SID}/a1"]  # tied to its call by the Task result's toolUseResult.agentId
    assert (explore.meta["agent_type"], explore.meta["agent_type_source"]) == ("Explore", "task call")


def test_a_sub_agent_its_session_never_names_is_found_by_its_prompt(tmp_path: Path) -> None:
    proj = claude_project(tmp_path)
    main_log(progress_link=False).write(proj / f"{SID}.jsonl")  # a2: no progress record, no toolUseResult
    assert _by_id(tmp_path)[f"{SID}/a2"].meta["agent_type"] == "general-purpose"


def test_a_sub_agent_without_its_session_file_keeps_its_parent_and_no_type(tmp_path: Path) -> None:
    (t,) = read(fixer_log().write(tmp_path / SID / "subagents" / "agent-a2.jsonl"))
    assert (t.id, t.meta["parent_session"], session_of(t), agent_type(t)) == (f"{SID}/a2", SID, SID, "sub-agent")
    assert "agent_type" not in t.meta and "spawned_by" not in t.meta


def test_claude_code_2_0s_flat_layout_finds_the_session_beside_it(tmp_path: Path) -> None:
    main_log().write(tmp_path / f"{SID}.jsonl")
    (t,) = read(explore_log().write(tmp_path / "agent-a1.jsonl"))
    assert (t.meta["agent_type"], t.meta["spawned_by"]) == ("Explore", "t1")


def test_a_walk_passes_over_the_summarizer_call_and_the_sidecar_and_says_so(tmp_path: Path) -> None:
    proj = claude_project(tmp_path)
    notes: list[str] = []
    files = [f.relative_to(proj).as_posix() for f in iter_files([tmp_path], notes.append)]
    assert files == [f"{SID}/subagents/agent-a1.jsonl", f"{SID}/subagents/agent-a2.jsonl", f"{SID}.jsonl"]
    assert notes == [
        f"{tmp_path}: 1 compaction summarizer call (Claude Code's agent-acompact-*.jsonl, in 1 session): each is read "
        "with the compaction it made, not imported as a session",
        f"{tmp_path}: 1 sub-agent sidecar (agent-*.meta.json): read with their sub-agents' files (the agent type)"]


def test_side_files_by_name_and_sibling(tmp_path: Path) -> None:
    sub = tmp_path / "subagents"
    sub.mkdir()
    for name in ("agent-acompact-1.jsonl", "agent-a1.jsonl", "agent-a1.meta.json", "agent-b2.meta.json"):
        (sub / name).write_text("{}")
    assert [side_file(sub / n) for n in ("agent-acompact-1.jsonl", "agent-a1.jsonl", "agent-a1.meta.json",
                                         "agent-b2.meta.json")] == [SUMMARIZER, None, SIDECAR, None]


def test_a_summarizer_call_named_alone_is_a_one_line_error(tmp_path: Path) -> None:
    p = summarizer_call().write(tmp_path / SID / "subagents" / "agent-acompact-ab12cd.jsonl")
    with pytest.raises(TranscriptError, match="not a compaction's own summarizer call"):
        list(read(p))


@pytest.mark.parametrize(("gap", "matched"), [(WITHIN_SECONDS - 1, True), (WITHIN_SECONDS, True),
                                              (WITHIN_SECONDS + 1, False)])
def test_a_reply_the_log_reworded_is_matched_by_time_within_its_bound(tmp_path: Path, gap: float,
                                                                      matched: bool) -> None:
    """The summary the log wrote is at 10:00:07; a reply whose text is not in it is that compaction's only within
    WITHIN_SECONDS of it."""
    from datetime import datetime, timedelta

    claude_project(tmp_path, call=False)
    at = (datetime.fromisoformat("2026-02-01T10:00:07+00:00") - timedelta(seconds=gap)).isoformat()
    summarizer_call(reply="<summary>Something else entirely.</summary>", at=at.replace("+00:00", "Z")).write(
        tmp_path / "proj" / SID / "subagents" / "agent-acompact-ff.jsonl")
    main = _by_id(tmp_path)[SID]
    call = main.compactions[0].meta.get("summarizer_call")
    assert (call is not None and call["matched_by"] == "time") is matched
    assert ("summarizer_calls_unmatched" in main.meta) is not matched
    assert any("matched none of this session's compactions" in w for w in main.warnings) is not matched


def test_a_matching_reply_is_matched_by_text_whatever_its_time(tmp_path: Path) -> None:
    claude_project(tmp_path, call=False)
    summarizer_call(at="2026-02-03T00:00:00.000Z").write(tmp_path / "proj" / SID / "subagents" /
                                                         "agent-acompact-ab12cd.jsonl")
    assert _by_id(tmp_path)[SID].compactions[0].meta["summarizer_call"]["matched_by"] == "text"


def test_a_sub_agents_compaction_takes_only_a_call_whose_text_is_its_own(tmp_path: Path) -> None:
    """A sub-agent's folder holds the session's calls too: a sub-agent never takes one by time."""
    proj = claude_project(tmp_path)
    fixer = _by_id(tmp_path)[f"{SID}/a2"]
    assert "summarizer_call" not in fixer.compactions[0].meta and "summarizer_calls_unmatched" not in fixer.meta
    own = "<analysis>x</analysis><summary>The sub-agent is fixing the retry back-off in net.py.</summary>"
    summarizer_call(agent="acompact-99", reply=own).write(proj / SID / "subagents" / "agent-acompact-99.jsonl")
    ts = _by_id(tmp_path)
    assert ts[f"{SID}/a2"].compactions[0].meta["summarizer_call"]["file"] == "agent-acompact-99.jsonl"
    assert ts[SID].compactions[0].meta["summarizer_call"]["file"] == "agent-acompact-ab12cd.jsonl"


def test_a_summarizer_call_without_a_reply_is_left_out(tmp_path: Path) -> None:
    proj = claude_project(tmp_path, call=False)
    c = summarizer_call()
    c.records = c.records[:2]  # the tail and the prompt: the call did not finish
    c.write(proj / SID / "subagents" / "agent-acompact-ab12cd.jsonl")
    main = _by_id(tmp_path)[SID]
    assert "summarizer_call" not in main.compactions[0].meta and "summarizer_calls_unmatched" not in main.meta


def test_the_sidecar_that_is_not_json_falls_back_to_the_task_call(tmp_path: Path) -> None:
    proj = claude_project(tmp_path)
    (proj / SID / "subagents" / "agent-a1.meta.json").write_text("not json")
    assert _by_id(tmp_path)[f"{SID}/a1"].meta["agent_type_source"] == "task call"
    (proj / SID / "subagents" / "agent-a1.meta.json").write_text(json.dumps(["a list"]))
    assert _by_id(tmp_path)[f"{SID}/a1"].meta["agent_type_source"] == "task call"


def test_a_claude_home_imports_the_tree_and_counts_the_summarizer_call(tmp_path: Path) -> None:
    home = tmp_path / ".claude"
    claude_project(home / "projects")
    (home / "settings.json").write_text("{}")
    notes: list[str] = []
    files = [f.relative_to(home).as_posix() for f in iter_files([tmp_path], notes.append)]
    assert files == [f"projects/proj/{SID}/subagents/agent-a1.jsonl", f"projects/proj/{SID}/subagents/agent-a2.jsonl",
                     f"projects/proj/{SID}.jsonl"]
    assert any("1 compaction summarizer call" in n for n in notes)
    assert any("not the 1 other file beside them" in n for n in notes)  # settings.json; the side files said apart


def test_compare_offers_every_by_the_breakdown_knows() -> None:
    from compbench.cli.compare import compare
    from compbench.decide.breakdown import BY

    (by,) = [p for p in compare.params if p.name == "group_by"]
    assert tuple(by.type.choices) == BY  # type: ignore[attr-defined]
