"""A value of the wrong kind where a format has a string or a list (a list or an object as a ``type``, an id, a
role; ``true`` as a list): read as a field we do not know, or refused with a clear error, never an importer
failure. Each shape was found by fuzzing (``make fuzz``); the fixtures are hand-made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compbench.data.formats import read
from compbench.errors import TranscriptError
from helpers import ROOT

ODD = [["a", ["list"]], {"an": "object"}]


def _read(path: Path, fmt: str) -> list[Any]:
    """The transcripts, or [] where the file is refused: never an internal error."""
    try:
        return list(read(path, fmt))
    except TranscriptError as e:
        assert not e.internal, f"importer bug surfaced as an internal error: {e}"
        return []


@pytest.mark.parametrize("odd", [*ODD, True, 3])
def test_openhands_v0_microagent_knowledge_not_a_list(tmp_path: Path, odd: Any) -> None:
    doc = json.loads((ROOT / "tests/fixtures/shapes/openhands/v0-trajectory.json").read_text())
    assert doc[4]["extras"]["microagent_knowledge"] == []
    doc[4]["extras"]["microagent_knowledge"] = odd
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(doc))
    (t,) = _read(p, "openhands-v0")
    assert len(t.messages) > 5


@pytest.mark.parametrize("odd", ODD)
def test_openai_chat_block_type_not_a_string(tmp_path: Path, odd: Any) -> None:
    doc = [{"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": odd, "text": "x"}]},
           {"role": "assistant", "content": "hi"}]
    p = tmp_path / "messages.json"
    p.write_text(json.dumps(doc))
    assert [m.role for t in _read(p, "openai") for m in t.messages][-1:] in ([], ["assistant"])


@pytest.mark.parametrize("odd", ODD)
def test_roo_truncation_ids_not_strings(tmp_path: Path, odd: Any) -> None:
    """A sliding-window marker whose truncationId (and the parent tags) are lists: matched by equality."""
    doc = [{"role": "user", "content": [{"type": "text", "text": "task"}], "ts": 1, "truncationParent": odd},
           {"role": "assistant", "content": [{"type": "text", "text": "a"}], "ts": 2, "truncationParent": odd},
           {"role": "user", "content": [{"type": "text", "text": "[truncated]"}], "ts": 3, "isTruncationMarker": True,
            "truncationId": odd},
           {"role": "assistant", "content": [{"type": "text", "text": "b"}], "ts": 4}]
    task = tmp_path / "tasks" / "0d0d0d0d-0000-4000-8000-00000000000a"
    task.mkdir(parents=True)
    (task / "api_conversation_history.json").write_text(json.dumps(doc))
    (t,) = _read(task / "api_conversation_history.json", "cline")
    assert {"task", "a", "b", "[truncated]"} <= {m.text for m in t.messages} and len(t.compactions) == 1


@pytest.mark.parametrize("odd", ODD)
def test_gemini_cli_record_type_not_a_string(tmp_path: Path, odd: Any) -> None:
    src = ROOT / "tests/fixtures/gemini-cli/session-2026-02-10T09-00-bbbb2222.json"
    doc = json.loads(src.read_text())
    doc["messages"].append({"id": "odd-1", "timestamp": "2026-02-10T09:30:00Z", "type": odd, "content": "?"})
    p = tmp_path / src.name
    p.write_text(json.dumps(doc))
    plain = _read(src, "gemini-cli")
    assert [len(t.messages) for t in _read(p, "gemini-cli")] in ([], [len(t.messages) for t in plain])
