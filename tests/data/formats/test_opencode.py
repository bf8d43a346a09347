"""OpenCode export importer: exact counts on the real files, the recorded compaction, steps, errors.

Expected numbers were established from the raw JSON with a python one-off independent of the importer
(counting ``info.role``, ``step-start`` / ``tool`` parts, ``state.status``, ``state.time.compacted``
and summing ``step-finish`` tokens).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data.formats import read as read_any
from compbench.data.formats.catalog import FORMATS, module
from compbench.data.formats.detect import head_of
from compbench.data.formats.native import read as read_native
from compbench.data.formats.opencode import COMPACTION_PROMPT, INTERRUPTED, read, sniff
from compbench.data.transcript import Media, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError

SAILOR = "opencode/dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json"
MEADOW = "opencode/dark-factory__session__kind-meadow__ses_39b9a333bffeVNXMK6bSZru9Uq.json"

# file: (user, assistant = steps, tool messages, tool calls, error results, pruned outputs)
COUNTS = {SAILOR: (5, 35, 30, 47, 1, 20), MEADOW: (12, 65, 54, 87, 0, 0)}
# file: (sum Usage.input, output, cache_read, reasoning) over all steps
TOTALS = {SAILOR: (2_868_476, 18_721, 2_302_208, 9_037), MEADOW: (2_273_118, 16_578, 1_848_704, 6_503)}


def _one(path: Path) -> Transcript:
    (t,) = list(read(path))
    return t


@pytest.fixture(scope="module")
def sailor(transcripts_dir: Path) -> Transcript:
    return _one(transcripts_dir / SAILOR)


@pytest.mark.parametrize("name", [SAILOR, MEADOW])
def test_real_file_counts(transcripts_dir: Path, name: str) -> None:
    t = _one(transcripts_dir / name)
    users, steps, tool_msgs, calls, errors, pruned = COUNTS[name]
    roles = [m.role for m in t.messages]
    assert (roles.count("user"), roles.count("assistant"), roles.count("tool")) == (users, steps, tool_msgs)
    assert t.count_parts(ToolCall) == t.count_parts(ToolResult) == calls
    results = [p for m in t.messages for p in m.tool_results()]
    assert sum(r.is_error for r in results) == errors
    assert not any(r.orphan for r in results)
    assert sum(len(m.meta.get("pruned_parts", [])) for m in t.messages) == pruned
    # directory / text-plain attachments are inlined by OpenCode as synthetic text, never sent as files
    assert t.count_parts(Media) == 0
    assert len({m.id for m in t.messages}) == len(t.messages)
    assert t.meta["tool_version"] == "1.2.5" and t.meta["model"] == "gpt-5.3-codex"
    assert t.meta["cwd"] == "/Users/alex/repos/vfp/dark-factory"
    assert t.warnings == ()
    usages = [m.usage for m in t.messages if m.usage is not None]
    assert len(usages) == steps
    got = (sum(u.input for u in usages), sum(u.output for u in usages), sum(u.cache_read for u in usages),
           sum(u.reasoning for u in usages))
    assert got == TOTALS[name]
    # every tool message directly follows the assistant step holding its calls
    for i, m in enumerate(t.messages):
        if m.role == "tool":
            calls_before = {c.id for c in t.messages[i - 1].tool_calls()}
            assert {r.call_id for r in m.tool_results()} == calls_before


def test_meadow_has_no_compaction(transcripts_dir: Path) -> None:
    t = _one(transcripts_dir / MEADOW)
    assert t.compactions == () and not any(m.meta.get("compaction") for m in t.messages)


def test_recorded_manual_compaction(sailor: Transcript) -> None:
    (c,) = sailor.compactions
    assert (c.index, c.trigger, c.tokens_before, c.tool) == (70, "manual", 118_210, "opencode")
    assert c.summary_id == "msg_c648e17ec0017ewG6GOaVULORx" and c.kept_ids == ()
    assert c.summary.startswith("## Goal\n\nCreate research notes") and len(c.summary) == 4062
    assert c.meta["marker_id"] == "msg_c648e17e6001YM54MG29gGQBfQ"
    marker, summary = sailor.messages[68], sailor.messages[69]
    assert (marker.id, marker.meta["compaction"], marker.text) == (c.meta["marker_id"], "marker", COMPACTION_PROMPT)
    assert (summary.id, summary.meta["compaction"], summary.role) == (c.summary_id, "summary", "assistant")
    assert summary.usage == Usage(input=53_375, output=1_007, reasoning=74)
    assert len(sailor.messages) == c.index  # the session ends with the summary


def test_step_usage_and_error_result(sailor: Transcript) -> None:
    m = next(m for m in sailor.messages if m.id == "msg_c64807a07001uuzbjElkXFeMa4")
    assert m.usage == Usage(input=16_122, output=248, cache_read=15_744, cache_write=0, reasoning=23)
    assert m.meta["finish"] == "tool-calls" and m.meta["model"] == "gpt-5.3-codex"
    (err,) = [r for x in sailor.messages for r in x.tool_results() if r.is_error]
    assert (err.call_id, err.name) == ("call_xfHO3to9iu2DQmziS0RH9qln", "webfetch")
    assert err.output.startswith("Error: Request failed with status code: 403")


def test_pruned_outputs_kept_verbatim(sailor: Transcript) -> None:
    tool_msg = next(m for m in sailor.messages if m.role == "tool" and "call_2ecomTrNqdqxi8CvrYr28wyf" in
                    m.meta.get("pruned_parts", []))
    (r,) = tool_msg.tool_results()
    assert r.name == "task" and len(r.output) == 1225


@pytest.mark.parametrize("name", [SAILOR, MEADOW])
def test_detection_picks_opencode(transcripts_dir: Path, name: str) -> None:
    head, first = head_of(transcripts_dir / name)
    assert sniff(head, first)
    for other in FORMATS:  # formats tried before opencode must not claim the file (absent ones skipped)
        if other == "opencode":
            break
        try:
            assert not module(other).sniff(head, first), other
        except ModuleNotFoundError:
            continue


def test_sniff_rejects_other_formats(transcripts_dir: Path) -> None:
    head, first = head_of(transcripts_dir / "pi/pi-mono__before-compaction.jsonl")
    assert not sniff(head, first)
    assert not sniff('{"messages": [], "info": {"id": "x"}}', {"messages": [], "info": {"id": "x"}})


def test_native_round_trip(sailor: Transcript, tmp_path: Path) -> None:
    p = tmp_path / "sailor.jsonl"
    p.write_text(to_jsonl(sailor), encoding="utf-8")
    (back,) = list(read_native(p))
    assert back == sailor
    assert back.compactions == sailor.compactions and back.messages[1].usage == sailor.messages[1].usage


# --- hand-made exports ------------------------------------------------------------------------------


def _msg(mid: str, role: str, parts: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
    return {"info": {"id": mid, "sessionID": "ses_x", "role": role, **info},
            "parts": [{"id": f"prt_{mid}_{i}", "sessionID": "ses_x", "messageID": mid, **p}
                      for i, p in enumerate(parts)]}


def _finish(inp: int, out: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {"type": "step-finish", "reason": "tool-calls", "cost": 0.01,
            "tokens": {"input": inp, "output": out, "reasoning": 0, "cache": {"read": read, "write": write}}}


def _tool(call: str, status: str, **state: Any) -> dict[str, Any]:
    return {"type": "tool", "callID": call, "tool": "bash",
            "state": {"status": status, "input": {"command": "ls"}, "time": {"start": 1, "end": 2}, **state}}


def _export(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"info": {"id": "ses_x", "title": "t", "version": "1.3.0", "directory": "/w", "time": {"created": 0}},
            "messages": messages}


def _write(tmp_path: Path, doc: Any, name: str = "s.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return p


def test_steps_split_auto_compaction_with_tail_and_continue(tmp_path: Path) -> None:
    doc = _export([
        _msg("msg_u1", "user", [{"type": "text", "text": "go"}, {"type": "subtask", "prompt": "p",
                                                                   "description": "d", "agent": "a"}]),
        _msg("msg_a1", "assistant", [
            {"type": "step-start"}, {"type": "text", "text": "one"}, _tool("c1", "completed", output="out1"),
            _finish(100, 10, read=50, write=5),
            {"type": "step-start"}, _tool("c2", "running"), _tool("c3", "error", error="boom"),
            _finish(20, 4, read=160), {"type": "patch", "hash": "h", "files": []},
            {"type": "hologram", "x": 1},
        ], modelID="m1", providerID="p1"),
        _msg("msg_u2", "user", [{"type": "compaction", "auto": True, "tail_start_id": "msg_u1"}]),
        _msg("msg_s", "assistant", [{"type": "step-start"}, {"type": "text", "text": "SUMMARY"}, _finish(300, 30)],
             summary=True, modelID="m1"),
        _msg("msg_c", "user", [{"type": "text", "text": "Continue if you have next steps, or stop.",
                                "synthetic": True}]),
        _msg("msg_u3", "user", [{"type": "text", "text": "thanks"}]),
    ])
    (t,) = list(read(_write(tmp_path, doc)))
    assert [(m.id, m.role) for m in t.messages] == [
        ("msg_u1", "user"), ("msg_a1", "assistant"), ("prt_msg_a1_2", "tool"), ("prt_msg_a1_4", "assistant"),
        ("prt_msg_a1_5", "tool"), ("msg_u2", "user"), ("msg_s", "assistant"), ("msg_c", "user"), ("msg_u3", "user")]
    assert t.messages[0].text == "go\nThe following tool was executed by the user"
    assert t.messages[1].usage == Usage(input=155, output=10, cache_read=50, cache_write=5)
    assert t.messages[3].usage == Usage(input=180, output=4, cache_read=160)
    running, failed = t.messages[4].tool_results()
    assert (running.output, running.is_error, failed.output, failed.is_error) == (INTERRUPTED, True, "boom", True)
    (c,) = t.compactions
    # index skips the summary and the auto-continue; tokens_before = 20 + 160 + 4 (last step before the marker)
    assert (c.index, c.trigger, c.tokens_before, c.summary, c.summary_id) == (8, "auto", 184, "SUMMARY", "msg_s")
    assert c.kept_ids == ("msg_u1", "msg_a1", "prt_msg_a1_2", "prt_msg_a1_4", "prt_msg_a1_5")
    assert [m.meta.get("compaction") for m in t.messages[5:]] == ["marker", "summary", "continue", None]
    assert t.warnings == ("skipped 1 records of unknown type 'hologram'",)


def _line_of(p: Path, needle: str) -> int:
    text = p.read_text(encoding="utf-8")
    return text[: text.index(needle)].count("\n") + 1


def test_truncated_document(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    text = json.dumps(_export([_msg("msg_u1", "user", [{"type": "text", "text": "hi"}])]), indent=2)
    cut = text[: text.index('"parts"')].rstrip()  # the file ends mid-message, after "role": "user",
    p.write_text(cut, encoding="utf-8")
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    assert e.value.line == cut.count("\n") + 1 == 17 and "truncated" in e.value.expected


def test_invalid_utf8(tmp_path: Path) -> None:
    p = _write(tmp_path, _export([_msg("msg_u1", "user", [{"type": "text", "text": "hi"}])]))
    raw = p.read_bytes().replace(b'"hi"', b'"h\xff"')
    p.write_bytes(raw)
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    assert e.value.line == raw[: raw.index(b"\xff")].count(b"\n") + 1


def test_wrong_type_in_required_field_names_the_message_line(tmp_path: Path) -> None:
    bad = _finish(100, 10)
    bad["tokens"]["input"] = "lots"
    p = _write(tmp_path, _export([_msg("msg_u1", "user", [{"type": "text", "text": "hi"}]),
                                  _msg("msg_a1", "assistant", [{"type": "step-start"}, bad])]))
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    assert e.value.line == _line_of(p, '"msg_a1"') and "'input'" in e.value.expected
    p2 = _write(tmp_path, {"info": {"id": "ses_x"}, "messages": {"not": "a list"}}, "s2.json")
    with pytest.raises(TranscriptError, match="'messages' \\(list\\)"):
        list(read_any(p2, "opencode"))
