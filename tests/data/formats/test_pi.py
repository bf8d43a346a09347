"""pi session importer: the real v1 file (exact counts, both compactions), the hand-made v3 tree, errors.

The real file's numbers come from a python one-off over its raw lines, independent of the importer:
message entries by ``message.role``, ``toolCall`` blocks, the message ordinal of each compaction line
and of its ``firstKeptEntryIndex`` entry (an index into the entries, header included), usage sums.
``tests/fixtures/pi-current.jsonl`` is hand-made from pi-mono's session-manager.ts entry shapes (v3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compbench.data.formats.catalog import FORMATS, module
from compbench.data.formats.detect import head_of
from compbench.data.formats.native import read as read_native
from compbench.data.formats.pi import BRANCH_SUMMARY_PREFIX, read, sniff
from compbench.data.transcript import Media, Reasoning, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError
from helpers import FIXTURES

REAL = "pi/pi-mono__before-compaction.jsonl"
CURRENT = FIXTURES / "pi-current.jsonl"


def _one(path: Path) -> Transcript:
    (t,) = list(read(path))
    return t


@pytest.fixture(scope="module")
def real(transcripts_dir: Path) -> Transcript:
    return _one(transcripts_dir / REAL)


@pytest.fixture(scope="module")
def current() -> Transcript:
    return _one(CURRENT)


def test_real_file_counts(real: Transcript) -> None:
    roles = [m.role for m in real.messages]
    # 55 user messages + 3 bashExecution (user "!" commands, sent as user text)
    assert (roles.count("user"), roles.count("assistant"), roles.count("tool")) == (58, 484, 448)
    assert sum(1 for m in real.messages if m.meta.get("pi_role") == "bashExecution") == 3
    assert real.count_parts(ToolCall) == 454 and real.count_parts(ToolResult) == 448
    results = [r for m in real.messages for r in m.tool_results()]
    assert sum(r.is_error for r in results) == 12 and not any(r.orphan for r in results)
    assert real.count_parts(Reasoning) == 49
    assert [m.id for m in real.messages[:3]] == ["m0", "m1", "m2"]
    assert real.id == "ffae836b-9420-4060-ac13-7745215f90ff" and real.warnings == ()
    assert (real.meta["model"], real.meta["session_version"], real.meta["model_changes"]) == ("claude-opus-4-5", 1, 5)
    assert real.meta["cwd"] == "/Users/badlogic/workspaces/pi-mono"


def test_real_usage(real: Transcript) -> None:
    m = real.messages[6]  # line 8: the first call with both cache read and cache write
    assert m.usage == Usage(input=1 + 33_637 + 7_594, output=2_526, cache_read=33_637, cache_write=7_594)
    assert m.meta["cost"] == pytest.approx(0.127436)
    usages = [x.usage for x in real.messages if x.usage is not None]
    assert len(usages) == 484
    assert (sum(u.input for u in usages), sum(u.output for u in usages), sum(u.cache_read for u in usages),
            sum(u.cache_write for u in usages)) == (56_382_684, 187_895, 54_693_675, 1_685_320)


def test_real_compactions(real: Transcript) -> None:
    first, second = real.compactions
    assert (first.index, first.tokens_before, first.trigger, first.summary_id) == (354, 175_004, "unknown", "")
    assert (second.index, second.tokens_before) == (622, 185_014)
    assert first.kept_ids == tuple(f"m{i}" for i in range(288, 354))  # 66 messages, from entry 293 (a user turn)
    assert second.kept_ids == tuple(f"m{i}" for i in range(545, 622))  # 77 messages, from entry 551
    assert real.messages[288].role == real.messages[545].role == "user"
    for c in (first, second):
        assert c.summary.startswith("# Context Checkpoint: Coding Agent Refactoring") and c.tool == "pi"
    assert first.meta["first_kept_entry_index"] == 293 and second.meta["timestamp"] == "2025-12-08T23:54:21.502Z"


def test_current_format_active_branch(current: Transcript) -> None:
    assert [m.id for m in current.messages] == [
        "10000003", "10000004", "10000005", "10000006", "10000007", "10000008", "1000000a", "1000000b", "1000000c",
        "1000000e", "20000002", "20000003", "20000005", "20000006", "20000007", "20000008"]
    roles = [m.role for m in current.messages]
    assert (roles.count("user"), roles.count("assistant"), roles.count("tool")) == (6, 6, 4)
    assert "20000001" not in {m.id for m in current.messages}  # the abandoned branch
    assert current.meta["branches"] == 2 and current.meta["other_leaves"] == ["20000001"]
    assert current.meta["off_branch_entries"] == 1 and current.meta["session_version"] == 3
    assert current.meta["title"] == "math fixes" and current.meta["labels"] == {"10000003": "start"}
    assert current.warnings == ("skipped 1 records of unknown type 'from_the_future'",)


def test_current_format_parts_and_usage(current: Transcript) -> None:
    by_id = {m.id: m for m in current.messages}
    assert by_id["10000003"].parts[1] == Media("image", "image/png", b"\x89PNG\r\n\x1a\n")
    assert by_id["10000004"].usage == Usage(input=2_120, output=40, cache_read=0, cache_write=2_000)
    assert isinstance(by_id["10000004"].parts[0], Reasoning)
    (err,) = by_id["1000000c"].tool_results()
    assert (err.call_id, err.name, err.is_error) == ("toolu_03", "bash", True)
    assert by_id["20000002"].text.startswith(BRANCH_SUMMARY_PREFIX + "A first attempt")
    assert by_id["20000003"].text == "Tests live in test/, one file per module."
    assert by_id["20000007"].text == "Ran `npm test`\n```\n2 passing\n```"


def test_current_format_compaction(current: Transcript) -> None:
    (c,) = current.compactions
    assert (c.index, c.tokens_before, c.trigger, c.summary_id) == (9, 2_950, "unknown", "")
    assert c.kept_ids == ("1000000a", "1000000b", "1000000c")
    assert c.meta["details"] == {"readFiles": ["src/math.ts"], "modifiedFiles": ["src/math.ts"]}
    assert current.messages[c.index].id == "1000000e"


@pytest.mark.parametrize("path", [REAL, str(CURRENT)])
def test_detection_picks_pi(transcripts_dir: Path, path: str) -> None:
    head, first = head_of(transcripts_dir / path)
    assert sniff(head, first)
    for other in FORMATS:  # formats tried before pi must not claim the file (absent ones skipped)
        if other == "pi":
            break
        try:
            assert not module(other).sniff(head, first), other
        except ModuleNotFoundError:
            continue


def test_native_round_trip(real: Transcript, tmp_path: Path) -> None:
    p = tmp_path / "pi.jsonl"
    p.write_text(to_jsonl(real), encoding="utf-8")
    (back,) = list(read_native(p))
    assert back == real and back.compactions == real.compactions


# --- malformed input --------------------------------------------------------------------------------


def _lines() -> list[str]:
    return CURRENT.read_text(encoding="utf-8").splitlines()


def _error(tmp_path: Path, lines: list[str] | bytes) -> TranscriptError:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode())
    with pytest.raises(TranscriptError) as e:
        list(read(p))
    return e.value


def test_truncated_line(tmp_path: Path) -> None:
    lines = _lines()
    lines[5] = lines[5][:40]
    e = _error(tmp_path, lines)
    assert e.line == 6 and "truncated" in e.expected


def test_invalid_utf8(tmp_path: Path) -> None:
    raw = "\n".join(_lines()).encode().replace(b"Now run", b"Now \xffrun")
    assert _error(tmp_path, raw).line == 11


def test_wrong_type_in_required_field(tmp_path: Path) -> None:
    lines = _lines()
    rec = json.loads(lines[4])
    rec["message"]["usage"]["input"] = "120"
    lines[4] = json.dumps(rec)
    e = _error(tmp_path, lines)
    assert e.line == 5 and "usage.input" in e.expected
    lines = _lines()
    rec = json.loads(lines[13])
    rec["firstKeptEntryId"] = 7
    lines[13] = json.dumps(rec)
    assert _error(tmp_path, lines).line == 14


def test_missing_header_and_parent_cycle(tmp_path: Path) -> None:
    assert _error(tmp_path, _lines()[1:]).line == 1
    lines = _lines()
    rec = json.loads(lines[1])
    rec["parentId"] = "2000000a"  # the root now points at the leaf: a cycle
    lines[1] = json.dumps(rec)
    assert "cycle" in _error(tmp_path, lines).expected
