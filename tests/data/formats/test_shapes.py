"""Shapes real logs come in that did not import: detection by structure, Claude Code's other layouts.

The fixtures in ``tests/fixtures/shapes`` are hand-made, small, of each failing shape (never a copy of a log);
shapes that need size (a field larger than the sniffing window) are built here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TRANSCRIPTS, need_shared
from shapes import BIG, mini_doc

from compbench.data.formats import read
from compbench.data.formats.detect import detect
from compbench.errors import TranscriptError
from helpers import FIXTURES

SHAPES = FIXTURES / "shapes"


def _write(path: Path, doc: Any, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(doc, indent=indent), encoding="utf-8")
    return path




def test_a_json_document_is_detected_by_its_keys_past_a_field_larger_than_the_window(tmp_path: Path) -> None:
    p = _write(tmp_path / "big.traj.json", mini_doc(BIG))
    assert detect(p) == "mini-swe-agent"
    (t,) = read(p)
    assert (t.id, [m.role for m in t.messages]) == ("demo__demo-1", ["system", "user", "assistant", "tool"])
    # minified on one line longer than the window: the same document, the same answer
    assert detect(_write(tmp_path / "one-line.json", mini_doc(BIG), indent=None)) == "mini-swe-agent"


def test_key_order_does_not_decide_the_format(tmp_path: Path) -> None:
    """``messages`` first made the generic OpenAI head pattern claim a mini-swe-agent trajectory whose own
    keys were past the window."""
    doc = mini_doc(BIG)
    reordered = {"messages": doc["messages"], "instance_id": doc["instance_id"], "info": doc["info"],
                 "trajectory_format": doc["trajectory_format"]}
    assert detect(_write(tmp_path / "a.json", reordered)) == "mini-swe-agent"
    assert detect(_write(tmp_path / "b.json", {"messages": doc["messages"]})) == "openai"


@pytest.mark.parametrize("rel", ["mini-swe-agent/django__django-15104.traj.json", "swe-agent/ctf-katy.traj",
                                 "opencode/dark-factory__session__kind-meadow__ses_39b9a333bffeVNXMK6bSZru9Uq.json"])
@pytest.mark.parametrize("change", ["big-first-field", "reversed-keys"])
def test_every_json_document_format_reads_whatever_the_order_and_size(tmp_path: Path, rel: str, change: str) -> None:
    """The whole class: each real document format, padded with a first field larger than the window, or
    with its keys reversed, is detected and imports to the same transcript (read in place, never copied)."""
    src = TRANSCRIPTS / rel
    need_shared(src, "real transcript")
    doc = json.loads(src.read_text(encoding="utf-8"))
    changed = {"_padding": BIG, **doc} if change == "big-first-field" else dict(reversed(list(doc.items())))
    p = _write(tmp_path / src.name, changed)
    (want,) = read(src)
    assert detect(p) == want.source
    (got,) = read(p)
    assert (got.id, got.messages, got.compactions) == (want.id, want.messages, want.compactions)


def test_no_format_matched_says_how_to_force_one(tmp_path: Path) -> None:
    p = _write(tmp_path / "notes.json", {"title": "meeting notes", "items": [1, 2]})
    with pytest.raises(TranscriptError, match=r"none matched \(if you know the format, pass --format NAME\)"):
        detect(p)


def test_claude_code_records_as_one_pretty_printed_array() -> None:
    """claude-code-hooks-mastery's stop hook (``--chat``) copies the session as ``json.dump(records,
    indent=2)`` into ``logs/chat.json``: the same records, one JSON array, a bookkeeping record first."""
    p = SHAPES / "claude-hook-chat.json"
    assert detect(p) == "claude-code"
    (t,) = read(p)
    assert t.id == "11111111-1111-4111-8111-111111111111"
    assert [(m.id, m.role) for m in t.messages] == [("h-u1", "user"), ("h-a1", "assistant"), ("h-u2", "tool"),
                                                     ("h-a2", "assistant")]
    assert t.messages[3].usage is not None and t.messages[3].usage.output == 12
    # the JSONL of the same records imports to the same transcript
    lines = SHAPES.parent / "hook-as-jsonl.jsonl"
    try:
        lines.write_text("".join(json.dumps(r) + "\n" for r in json.loads(p.read_text())), encoding="utf-8")
        (same,) = read(lines)
    finally:
        lines.unlink()
    assert (same.id, same.messages) == (t.id, t.messages)


def test_an_array_record_error_names_its_line(tmp_path: Path) -> None:
    records = json.loads((SHAPES / "claude-hook-chat.json").read_text())
    records[2]["message"] = 7
    p = _write(tmp_path / "chat.json", records)
    with pytest.raises(TranscriptError, match="an assistant record with a 'message' object") as e:
        list(read(p))
    assert e.value.line == p.read_text().splitlines().index("  {", 20) + 1  # where the third record starts
    cut = _write(tmp_path / "cut.json", json.loads((SHAPES / "claude-hook-chat.json").read_text()))
    cut.write_text(cut.read_text()[:-40], encoding="utf-8")  # a copy interrupted mid-write
    with pytest.raises(TranscriptError, match="a complete JSON array"):
        list(read(cut))


def test_bookkeeping_records_first_are_looked_past(tmp_path: Path) -> None:
    """Newer Claude Code files open with ``queue-operation`` / ``file-history-snapshot`` records, which carry
    no ``parentUuid``: the detector looks past them, even when they fill the whole sniffing window."""
    p = SHAPES / "claude-queue-first.jsonl"
    assert detect(p) == "claude-code"
    (t,) = read(p)
    assert [m.role for m in t.messages] == ["user", "assistant"]
    lines = p.read_text().splitlines()
    queued = json.loads(lines[0])
    queued["content"] = BIG  # a long queued prompt: the first conversation record is past the window
    big = tmp_path / "s.jsonl"
    big.write_text("\n".join([json.dumps(queued), *lines[1:]]) + "\n", encoding="utf-8")
    assert detect(big) == "claude-code"
    # named, the format reads it (detected, the file would be refused: 99% of it is a prompt never sent)
    assert read(big, "claude-code").__next__().messages == t.messages


def test_claude_code_2_1_records_are_counted_reported_and_never_fatal() -> None:
    (t,) = read(SHAPES / "claude-2.1-records.jsonl")
    assert [(m.id, m.role) for m in t.messages] == [
        ("n-u1", "user"), ("n-a1", "assistant"), ("n-u2", "tool"), ("n-a2", "assistant"), ("n-u3", "user"),
        ("n-u4", "user"), ("n-a3", "assistant")]
    # bookkeeping (custom-title, agent-name, pr-link, progress, file-history-snapshot) passes silently;
    # what may reach the model or is unknown is counted and said
    assert t.meta["unknown_records"] == {"record-from-the-future": 1}
    assert t.meta["unmodelled_records"] == {"attachment": 1}
    assert t.warnings == ("skipped 1 records of unknown type 'record-from-the-future'",
                          "skipped 1 'attachment' records (they can add to the model's context; not modelled)")
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary_id) == (4, "auto", 167_000, "n-u3")
    assert c.kept_ids == ("n-u2", "n-a2")  # the preserved segment, head to tail
    assert c.meta["compact_metadata"] == {
        "durationMs": 41_000, "postTokens": 9_000, "preCompactDiscoveredTools": ["Read"],
        "preservedSegment": {"headUuid": "n-u2", "anchorUuid": "n-s1", "tailUuid": "n-a2"}}
    assert t.meta["microcompactions"] == [{"line": 14, "trigger": "auto", "pre_tokens": 120_000,
                                           "tokens_saved": 20_000, "cleared_tool_results": 1}]
    assert t.meta["system_records"] == {"compact_boundary": 1, "microcompact_boundary": 1}


def test_a_resumed_file_is_its_own_session_and_names_the_one_it_continues() -> None:
    parent, child = sorted((SHAPES / "claude-resumed").iterdir())
    (p,) = read(parent)
    (c,) = read(child)
    assert (p.id, c.id) == ("44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555")
    assert c.meta["continues"] == [p.id] and c.meta["inherited_messages"] == 4
    assert c.messages[:4] == p.messages and "continues" not in p.meta
