"""GitHub Copilot CLI ``events.jsonl``: a hand-made session of the real shape (field names from the CLI's
published event schema), mapping, the recorded compaction, and malformed input naming its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data.formats import read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Reasoning, Text, ToolCall, ToolResult
from compbench.errors import TranscriptError
from helpers import FIXTURES

SID = "77777777-7777-4777-8777-777777777777"
EVENTS = FIXTURES / "shapes" / "copilot" / SID / "events.jsonl"


def events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EVENTS.read_text(encoding="utf-8").splitlines()]


def write(tmp_path: Path, evs: list[dict[str, Any]], name: str = "events.jsonl") -> Path:
    d = tmp_path / "sess"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text("".join(json.dumps(e) + "\n" for e in evs), encoding="utf-8")
    return p


def test_detected_and_mapped() -> None:
    assert detect(EVENTS) == "copilot"
    (t,) = read(EVENTS)
    assert (t.id, t.source) == (SID, "copilot")
    assert [(m.id, m.role) for m in t.messages] == [
        ("e03", "system"), ("e04", "user"), ("e06", "assistant"), ("e08", "tool"), ("e09", "assistant"),
        ("e11", "user"), ("e12", "assistant"), ("e14", "tool"), ("e15", "assistant")]
    # the model-facing prompt, as the CLI wrapped it
    assert t.messages[1].parts == (Text("<current_datetime>2026-03-01T10:03:00Z</current_datetime>\n\n"
                                        "Why does the build fail?"),)
    assert t.messages[2].parts == (Reasoning("Run the build first."),
                                   ToolCall("call_1", "bash", '{"command": "make", "description": "build"}'))
    assert t.messages[2].usage is None and t.messages[2].meta["output_tokens"] == 40
    assert t.messages[3].parts == (ToolResult("call_1", "bash", "src/main.c:1: fatal error: foo.h: No such file"),)
    assert t.messages[7].parts == (ToolResult("call_2", "create", "Permission denied: src/foo.h", is_error=True),)
    assert (t.meta["tool_version"], t.meta["model"], t.meta["cwd"]) == ("1.0.40", "claude-sonnet-4.5", "/work/demo")
    assert t.meta["subagent_events"] == 1  # the sub-agent's message is its own context
    assert t.meta["unknown_events"] == {"telepathy.sent": 1}
    assert t.warnings == ("skipped 1 events of unknown type 'telepathy.sent'",)


def test_the_recorded_compaction() -> None:
    (t,) = read(EVENTS)
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.tool) == (9, "auto", 150_000, "copilot")
    assert c.summary.startswith("<overview>The build fails because src/foo.h is missing")
    assert c.kept_ids == ("e14", "e15")  # recorded while the background compaction ran
    assert c.meta["post_tokens"] == 9_000 and c.meta["raw_trigger"] == "threshold"
    assert t.meta["failed_compactions"] == [{"line": 19, "error": "Nothing to compact"}]


def test_manual_trigger_and_tokens_from_the_start_event(tmp_path: Path) -> None:
    evs = events()
    start = next(e for e in evs if e["type"] == "session.compaction_start")
    done = next(e for e in evs if e["type"] == "session.compaction_complete")
    start["data"]["trigger"] = "manual"
    for k in ("trigger", "preCompactionTokens"):
        del done["data"][k]
    (t,) = read(write(tmp_path, evs))
    (c,) = t.compactions
    assert (c.trigger, c.tokens_before) == ("manual", 150_000)


def test_chunks_of_one_call_are_one_message(tmp_path: Path) -> None:
    evs = events()
    second = next(e for e in evs if e["data"].get("messageId") == "m2")
    second["data"]["apiCallId"] = "api_1"  # the text is a later chunk of the first call
    (t,) = read(write(tmp_path, evs))
    call = next(m for m in t.messages if m.id == "e06")
    assert [type(p).__name__ for p in call.parts] == ["Reasoning", "ToolCall", "Text"]
    assert call.meta["output_tokens"] == 52 and "e09" not in [m.id for m in t.messages]


def test_without_session_start_the_folder_names_the_session(tmp_path: Path) -> None:
    """A log whose first events were cut (a rotated or partial copy) is still the CLI's: the envelope says so."""
    evs = [e for e in events() if e["type"] not in ("session.start", "session.info", "system.message")]
    p = write(tmp_path, evs)
    assert detect(p) == "copilot"
    (t,) = read(p)
    assert t.id == "sess" and t.messages[0].role == "user"


@pytest.mark.parametrize(("kind", "field", "value", "expected"), [
    ("user.message", "content", 5, "a user.message with a string 'content'"),
    ("assistant.message", "toolRequests", [{"name": "bash"}], "a tool request with string 'toolCallId' and 'name'"),
    ("tool.execution_complete", "toolCallId", None, "a tool.execution_complete with a string 'toolCallId'"),
])
def test_wrong_types_name_their_line(tmp_path: Path, kind: str, field: str, value: Any, expected: str) -> None:
    evs = events()
    i = next(i for i, e in enumerate(evs) if e["type"] == kind)
    evs[i]["data"][field] = value
    if kind == "user.message":
        evs[i]["data"].pop("transformedContent", None)
    with pytest.raises(TranscriptError, match=expected) as e:
        list(read(write(tmp_path, evs)))
    assert e.value.line == i + 1 and not e.value.internal


def test_no_conversation(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="at least one user, assistant or tool event of the main agent"):
        list(read(write(tmp_path, events()[:2])))
