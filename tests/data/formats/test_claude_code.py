"""Claude Code importer: exact counts on every real file, hand-made record shapes, malformed input.

Expected values were established from the raw JSONL with one-off ``python3 -c`` scripts independent of
the importer (distinct ``message.id`` runs of assistant records, tool_use / tool_result blocks, the last
record's usage of each response converted to input-including-cache, ``compact_boundary`` metadata).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import need_shared

from compbench.data.formats import read
from compbench.data.formats.claude_code import read as read_cc
from compbench.data.formats.detect import detect
from compbench.data.formats.native import read as read_native
from compbench.data.transcript import Media, Reasoning, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError

F97 = "M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"
FC7 = "M-Claude__c7d2069e-c561-4759-8adf-b0745be78c29.jsonl"
FFF = "M-Claude__ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl"

# file: user, assistant, tool messages; tool calls, results; reasoning parts; images
COUNTS = {
    F97: (11, 62, 58, 58, 58, 0, 0),
    FC7: (27, 208, 211, 212, 211, 207, 5),  # one Bash call interrupted (exit 137) has no result
    FFF: (15, 206, 191, 191, 191, 206, 0),
}
# file: (index, trigger, preTokens, summary_id, boundary line)
COMPACTIONS = {
    F97: [(124, "manual", 31_469, "c3c27b86-d364-4848-aff7-1105effc0d58", 138)],
    FC7: [(424, "auto", 155_548, "d7c8b812-ead6-4bc2-9b11-779a6500fff4", 749)],
    FFF: [],
}
# file: first response's usage (last of its split records), then sums over all responses with usage
USAGE = {
    F97: (Usage(18_037, 119, 0, 18_035), 62, (1_571_156, 3_094, 1_536_099, 35_049)),
    FC7: (Usage(17_908, 3, 17_311, 588), 207, (17_533_878, 45_235, 16_091_614, 1_440_272)),
    FFF: (Usage(25_531, 161, 14_026, 11_496), 206, (12_800_513, 49_858, 12_445_181, 353_044)),
}
META = {  # file: model, tool_version, started_at, api_errors
    F97: ("claude-opus-4-5-20251101", "2.0.60", "2025-12-06T08:23:15.235Z", 0),
    FC7: ("claude-sonnet-4-5-20250929", "2.0.76", "2026-01-01T05:03:29.585Z", 0),
    FFF: ("claude-sonnet-4-5-20250929", "2.1.6", "2026-01-13T16:56:03.812Z", 2),
}

_cache: dict[str, Transcript] = {}


def _real(transcripts_dir: Path, name: str) -> Transcript:
    path = transcripts_dir / "claude-code" / name
    need_shared(path, "real transcript")
    if name not in _cache:
        (_cache[name],) = read(path)
    return _cache[name]


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_detected_as_claude_code(transcripts_dir: Path, name: str) -> None:
    path = transcripts_dir / "claude-code" / name
    need_shared(path, "real transcript")
    assert detect(path) == "claude-code"


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_counts(transcripts_dir: Path, name: str) -> None:
    t = _real(transcripts_dir, name)
    roles = Counter(m.role for m in t.messages)
    user, asst, tool, calls, results, reasoning, images = COUNTS[name]
    assert (roles["user"], roles["assistant"], roles["tool"], roles["system"]) == (user, asst, tool, 0)
    assert (t.count_parts(ToolCall), t.count_parts(ToolResult)) == (calls, results)
    assert (t.count_parts(Reasoning), t.count_parts(Media)) == (reasoning, images)
    assert t.id == name.split("__")[1].removesuffix(".jsonl") == t.meta["session_id"]
    assert len({m.id for m in t.messages}) == len(t.messages)
    assert t.meta["sidechain_records"] == 0 and t.warnings == ()


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_recorded_compactions(transcripts_dir: Path, name: str) -> None:
    t = _real(transcripts_dir, name)
    got = [(c.index, c.trigger, c.tokens_before, c.summary_id, c.meta["boundary_line"]) for c in t.compactions]
    assert got == COMPACTIONS[name]
    for c in t.compactions:
        summary = t.messages[c.index]
        assert (summary.id, summary.role, summary.meta["compaction"]) == (c.summary_id, "user", "summary")
        assert c.summary == summary.text
        assert c.summary.startswith("This session is being continued from a previous conversation")
        assert c.kept_ids == ()  # Claude Code summarizes the whole history
    assert sum(1 for m in t.messages if m.meta.get("compaction")) == len(COMPACTIONS[name])


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_usage_and_meta(transcripts_dir: Path, name: str) -> None:
    t = _real(transcripts_dir, name)
    first_usage, n, sums = USAGE[name]
    assistants = [m for m in t.messages if m.role == "assistant"]
    assert assistants[0].usage == first_usage
    usages = [m.usage for m in assistants if m.usage is not None]
    assert len(usages) == n
    assert tuple(sum(getattr(u, k) for u in usages) for k in ("input", "output", "cache_read", "cache_write")) == sums
    model, version, started, api_errors = META[name]
    assert (t.meta["model"], t.meta["tool_version"], t.meta["started_at"], t.meta["api_errors"]) == (
        model, version, started, api_errors)


def test_split_records_merge_into_one_call(transcripts_dir: Path) -> None:
    t = _real(transcripts_dir, FC7)
    # msg_01Ey2XhtfMfKuxCZzF6Yfroa, the first response after the compaction: thinking, text, tool_use records
    m = t.messages[425]
    assert m.meta["response_id"] == "msg_01Ey2XhtfMfKuxCZzF6Yfroa"
    assert [p.type for p in m.parts] == ["reasoning", "text", "tool_call"]
    assert t.messages[426].tool_results()[0].output == "zsh: command not found: cargo"


def test_flags_meta_command_synthetic_and_images(transcripts_dir: Path) -> None:
    t = _real(transcripts_dir, F97)
    assert t.meta["title"] == "Claude API Integration Setup" and t.meta["cwd"] == "C:\\Users\\Mischa"
    assert sum(1 for m in t.messages if m.meta.get("is_meta")) == 2
    assert [m.meta["command"] for m in t.messages if "command" in m.meta] == ["/compact", "/context"]
    assert sum(1 for m in t.messages if m.meta.get("local_command")) == 4  # 2 commands, 2 stdout records
    assert t.meta["system_records"] == {"compact_boundary": 1, "local_command": 2}
    # the /compact command, its caveat and output follow the summary in the post-compaction context
    assert [m.meta.get("is_meta", False) for m in t.messages[125:128]] == [True, False, False]
    c7 = _real(transcripts_dir, FC7)
    (synthetic,) = [m for m in c7.messages if m.meta.get("synthetic")]
    assert (synthetic.usage, synthetic.meta["api_error"]) == (None, "rate_limit")
    assert synthetic.text.startswith("You've hit your limit")
    images = [(i, p) for i, m in enumerate(c7.messages) for p in m.parts if isinstance(p, Media)]
    assert {p.mime for _, p in images} == {"image/jpeg"} and all(p.data[:2] == b"\xff\xd8" for _, p in images)
    for i, _ in images:  # the image sits beside its tool result, not as base64 text inside it
        (res,) = c7.messages[i].tool_results()
        assert res.output == "" and c7.messages[i].role == "tool"


def test_round_trip_through_native_jsonl(transcripts_dir: Path, tmp_path: Path) -> None:
    t = _real(transcripts_dir, FC7)
    p = tmp_path / "native.jsonl"
    p.write_text(to_jsonl(t), encoding="utf-8")
    assert list(read_native(p)) == [t]
    assert list(read(p)) == [t]


# --- hand-made records ------------------------------------------------------------------------------


def _rec(kind: str, uuid: str, parent: str | None, **kw: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "sessionId": "s-1", "version": "2.1.0",
                         "cwd": "/repo", "type": kind, "uuid": uuid, "timestamp": f"2026-01-01T00:00:{uuid[-2:]}Z"}
    r.update(kw)
    return r


def _asst(uuid: str, parent: str, mid: str, block: dict[str, Any], out: int) -> dict[str, Any]:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20,
             "output_tokens": out}
    return _rec("assistant", uuid, parent, message={"id": mid, "model": "claude-x", "role": "assistant",
                                                    "content": [block], "usage": usage})


def _write(tmp_path: Path, records: list[Any], name: str = "s.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def _session() -> list[Any]:
    tu = {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls"}}
    tu2 = {"type": "tool_use", "id": "tu2", "name": "Read", "input": {"path": "a"}}
    return [
        {"type": "summary", "summary": "Title", "leafUuid": "u09"},
        _rec("user", "u01", None, message={"role": "user", "content": "list files"}),
        _asst("u02", "u01", "msg_A", {"type": "thinking", "thinking": "hmm", "signature": "x"}, 1),
        _asst("u03", "u02", "msg_A", tu, 2),
        _rec("user", "u04", "u03", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "a b", "is_error": False}]}),
        _asst("u05", "u04", "msg_A", tu2, 9),  # a later block of the same response, after a result
        _rec("user", "u06", "u05", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu2", "content": [{"type": "text", "text": "x"}],
             "is_error": True}]}),
        _rec("user", "u07", "u06", isSidechain=True, message={"role": "user", "content": "sub-agent"}),
        {"type": "brand-new-type", "x": 1},
        {"type": "brand-new-type", "x": 2},
        _rec("user", "u08", "u06", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "ghost", "content": "?"}]}),
        _rec("system", "u09", None, subtype="compact_boundary", logicalParentUuid="u08",
             compactMetadata={"trigger": "auto", "preTokens": 1234}),
        _rec("user", "u10", "u09", isCompactSummary=True, message={"role": "user", "content": "Summary text"}),
    ]


def test_hand_made_session(tmp_path: Path) -> None:
    p = _write(tmp_path, _session())
    assert detect(p) == "claude-code"
    (t,) = read_cc(p)
    assert [(m.id, m.role) for m in t.messages] == [
        ("u01", "user"), ("u02", "assistant"), ("u04", "tool"), ("u06", "tool"), ("u08", "tool"), ("u10", "user")]
    asst = t.messages[1]
    assert [type(p).__name__ for p in asst.parts] == ["Reasoning", "ToolCall", "ToolCall"]
    assert asst.usage == Usage(input=123, output=9, cache_read=100, cache_write=20)  # last record's usage
    assert t.messages[3].tool_results()[0] == ToolResult("tu2", "Read", "x", True, False)
    orphan = t.messages[4].tool_results()[0]
    assert orphan.orphan and orphan.name == ""
    assert t.warnings == ("line 11: tool result ghost has no matching tool call (kept, flagged orphan)",
                          "skipped 2 records of unknown type 'brand-new-type'")
    assert t.meta["sidechain_records"] == 1 and t.meta["title"] == "Title" and t.meta["tool_version"] == "2.1.0"
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary, c.summary_id) == (5, "auto", 1234, "Summary text", "u10")
    assert c.meta["logical_parent_uuid"] == "u08"


def test_branching_that_is_not_a_rewind_is_imported_in_file_order_and_reported(tmp_path: Path) -> None:
    # u11 hangs off a prompt beside an assistant answer: not a re-prompt, so nothing may be dropped
    recs = [*_session()[:3], _rec("user", "u11", "u01", message={"role": "user", "content": "again"})]
    (t,) = read_cc(_write(tmp_path, recs))
    assert [m.id for m in t.messages] == ["u01", "u02", "u11"]
    assert t.warnings == ("the parentUuid tree branches at 1 records; imported in file order",)


def _prompt(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    return _rec("user", uuid, parent, message={"role": "user", "content": text})


def _say(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return _asst(uuid, parent, f"msg_{uuid}", {"type": "text", "text": text}, 5)


def test_a_rewound_branch_is_dropped_the_conversation_is_the_last_messages_chain(tmp_path: Path) -> None:
    tu = {"type": "tool_use", "id": "tu9", "name": "Bash", "input": {"command": "rm -rf build"}}
    recs = [
        _prompt("u01", None, "fix the build"), _say("u02", "u01", "on it"),
        _prompt("u03", "u02", "delete the build dir"), _asst("u04", "u03", "msg_u04", tu, 3),
        _rec("user", "u05", "u04", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu9", "content": "removed"}]}),
        _say("u06", "u05", "deleted"),
        # the user rewinds to before u03 and asks something else: u07 is u03's sibling
        _prompt("u07", "u02", "no: only clean the cache"), _say("u08", "u07", "cleaning the cache"),
    ]
    (t,) = read_cc(_write(tmp_path, recs))
    assert [m.id for m in t.messages] == ["u01", "u02", "u07", "u08"]
    assert t.meta["abandoned_records"] == 4
    assert t.warnings == ("dropped 4 records of 1 rewound branches: the conversation is the parentUuid chain "
                          "of the last message",)


def test_a_rewind_to_the_first_prompt_and_across_a_compaction(tmp_path: Path) -> None:
    recs = [
        _prompt("u01", None, "first try"), _say("u02", "u01", "a"),
        _prompt("u03", None, "second try"), _say("u04", "u03", "b"),  # rewound to the very start
        _rec("system", "u05", None, subtype="compact_boundary", logicalParentUuid="u04",
             compactMetadata={"trigger": "manual", "preTokens": 99}),
        _rec("user", "u06", "u05", isCompactSummary=True, message={"role": "user", "content": "S"}),
        _prompt("u07", "u06", "go on"), _say("u08", "u07", "c"),
    ]
    (t,) = read_cc(_write(tmp_path, recs))
    assert [m.id for m in t.messages] == ["u03", "u04", "u06", "u07", "u08"]
    (c,) = t.compactions
    assert c.index == 2 and c.summary_id == "u06"  # re-indexed after the drop


def test_truncated_line(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _session()]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines[:3]) + "\n" + lines[3][:50] + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match="a complete JSON object") as e:
        list(read(p))
    assert e.value.line == 4


def test_invalid_utf8(tmp_path: Path) -> None:
    lines = [json.dumps(r).encode() for r in _session()]
    assert b'"a b"' in lines[4]
    lines[4] = lines[4].replace(b'"a b"', b'"a \xff b"')
    p = tmp_path / "u.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(TranscriptError, match="UTF-8") as e:
        list(read(p, "claude-code"))
    assert e.value.line == 5


@pytest.mark.parametrize(("index", "field", "value", "expected"), [
    (2, "message", 7, "an assistant record with a 'message' object"),
    (1, "message", {"role": "user", "content": 42}, "message.content as a string or a list"),
    (4, "message", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": 5}]},
     "a tool_result block with a string 'tool_use_id'"),
    (3, "message", {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": None}]},
     "a tool_use block with string 'id' and 'name'"),
])
def test_wrong_types_name_their_line(tmp_path: Path, index: int, field: str, value: Any, expected: str) -> None:
    recs = _session()
    recs[index][field] = value
    with pytest.raises(TranscriptError, match=expected) as e:
        list(read_cc(_write(tmp_path, recs)))
    assert e.value.line == index + 1


def test_no_conversation_records(tmp_path: Path) -> None:
    p = _write(tmp_path, [{"type": "summary", "summary": "t", "leafUuid": "x", "sessionId": "s", "parentUuid": None}])
    with pytest.raises(TranscriptError, match="at least one user or assistant record"):
        list(read_cc(p))


def test_a_sub_agents_own_file_is_its_transcript(tmp_path: Path, transcripts_dir: Path) -> None:
    """Claude Code writes each sub-agent to its own file (``<session>/subagents/agent-<id>.jsonl``), every
    record ``isSidechain``: that is the sub-agent's conversation, imported as ``<sessionId>/<agentId>``
    with the messages the same records give as a main conversation; a main file's sidechain records stay
    out of the main transcript."""
    src = transcripts_dir / "claude-code" / FFF
    records = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in records:
        if r.get("type") in ("user", "assistant", "system"):
            r["isSidechain"], r["agentId"] = True, "a1b2c3"
    sub_dir = tmp_path / "sess" / "subagents"
    sub_dir.mkdir(parents=True)
    (sub,) = read(_write(sub_dir, records, "agent-a1b2c3.jsonl"))
    (main,) = read(src)
    assert sub.id == f"{main.id}/a1b2c3" and sub.meta["sidechain"] is True and sub.meta["agent_id"] == "a1b2c3"
    assert sub.messages == main.messages and sub.compactions == main.compactions
    assert "sidechain_records" not in sub.meta
    (hand,) = read(_write(tmp_path, _session()))
    assert hand.meta["sidechain_records"] == 1 and "sidechain" not in hand.meta


def _usage_with(one_hour: int, five_minutes: int) -> dict[str, Any]:
    return {"input_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": one_hour + five_minutes,
            "output_tokens": 1, "cache_creation": {"ephemeral_1h_input_tokens": one_hour,
                                                   "ephemeral_5m_input_tokens": five_minutes}}


def test_a_response_that_wrote_to_the_one_hour_cache_says_so(tmp_path: Path) -> None:
    """Claude Code 2.1 asks for Anthropic's 1-hour cache: the recorded usage splits what each lifetime wrote."""
    recs = [_prompt("u01", None, "hi")]
    for k, (hour, five) in enumerate([(20, 0), (0, 20), (0, 0)]):
        a = _say(f"u{2 * k + 2:02d}", f"u{2 * k + 1:02d}", "ok")
        a["message"]["usage"] = _usage_with(hour, five)
        recs += [a, _prompt(f"u{2 * k + 3:02d}", a["uuid"], "go on")]
    (t,) = read_cc(_write(tmp_path, recs))
    assert [m.meta.get("cache_ttl") for m in t.messages if m.role == "assistant"] == ["1h", None, None]
    assert "starts_mid_chain" not in t.meta and not t.warnings


def test_a_file_that_starts_mid_conversation_says_its_history_is_missing(tmp_path: Path) -> None:
    """A checkpoint's slice of a session: its first record's parent is in no record of the file (a progress
    record's uuid is, and a parent that is one is no gap)."""
    progress = {"type": "progress", "uuid": "p00", "parentUuid": None, "data": {"type": "hook_progress"}}
    whole = [progress, _prompt("u01", "p00", "hi"), _say("u02", "u01", "ok")]
    (t,) = read_cc(_write(tmp_path, whole))
    assert "starts_mid_chain" not in t.meta
    (t,) = read_cc(_write(tmp_path, [_prompt("u01", "gone", "hi"), _say("u02", "u01", "ok")], "slice.jsonl"))
    assert t.meta["starts_mid_chain"] is True
    assert t.warnings[0].startswith("the file starts mid-conversation: its first record's parent is not in it")
