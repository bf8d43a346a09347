"""OpenAI chat-format importer on the hand-made fixtures in tests/fixtures/openai/, errors, sniffing.

``conversations.jsonl``: three conversations (a two-call tool exchange with usage; developer role,
image parts and reasoning_content; an orphan tool result and an unknown role). ``document.json``: one
pretty-printed ``{"messages": [...]}`` with the legacy function_call / function pair.
``messages-list.json``: a bare list of messages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compbench.data.formats import openai_chat as oa
from compbench.data.formats.detect import detect, head_of
from compbench.data.formats.native import read as read_native
from compbench.data.transcript import Media, Reasoning, Text, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError
from helpers import FIXTURES

DATA = FIXTURES / "openai"
JSONL = DATA / "conversations.jsonl"


def _all(path: Path) -> list[Transcript]:
    return list(oa.read(path))


def test_jsonl_one_transcript_per_line() -> None:
    tools, image, orphan = _all(JSONL)
    assert [t.id for t in (tools, image, orphan)] == ["conv-tools", "conversations-2", "conv-orphan"]
    assert [m.role for m in tools.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m.id for m in tools.messages] == [f"m{i}" for i in range(6)]
    assert tools.messages[2].parts == (ToolCall("call_read", "read_file", '{"path": "src/parse.py"}'),
                                       ToolCall("call_test", "bash", '{"command": "pytest -q tests/test_parse.py"}'))
    source = "def parse(s):\n    return s.split(',')[0]\n"
    assert tools.messages[3].parts == (ToolResult("call_read", "read_file", source),)
    assert tools.messages[4].parts == (ToolResult("call_test", "bash",
                                                  "FAILED tests/test_parse.py::test_empty - IndexError"),)
    assert tools.messages[2].usage == Usage(input=1200, output=64, cache_read=1024)
    assert tools.messages[5].usage == Usage(input=1350, output=20, cache_read=1280)
    assert tools.meta == {"path": str(JSONL), "model": "gpt-4o-2024-08-06",
                          "metadata": {"task": "fix the failing test"}}
    assert tools.warnings == () and tools.steps == 2


def test_images_developer_and_reasoning() -> None:
    t = _all(JSONL)[1]
    assert [(m.role, dict(m.meta)) for m in t.messages] == [("system", {"role": "developer"}), ("user", {}),
                                                            ("assistant", {})]
    text, inline, remote = t.messages[1].parts
    assert text == Text("What does this screenshot show?")
    assert inline == Media("image", "image/png", bytes.fromhex("89504e470d0a1a0a0000000d49484452"))
    assert remote == Media("image", "", b"", "https://example.com/shot.png")
    assert t.messages[2].parts == (Reasoning("The image is tiny."), Text("A PNG header."))


def test_orphan_result_and_unknown_role_are_kept_and_reported() -> None:
    t = _all(JSONL)[2]
    assert [m.role for m in t.messages] == ["user", "tool", "assistant"]
    assert t.messages[1].parts == (ToolResult("call_gone", "", "exit code 0", orphan=True),)
    assert t.warnings == ("line 3, message 1: tool result 'call_gone' has no matching tool call",
                          "skipped 1 records of unknown type 'role critic'")


def test_single_documents() -> None:
    (doc,) = _all(DATA / "document.json")
    assert doc.id == "document" and [m.role for m in doc.messages] == ["system", "user", "assistant", "tool",
                                                                      "assistant"]
    call = ToolCall("m2:function_call", "get_weather", '{"city": "Paris"}')
    assert doc.messages[2].parts == (call,)
    assert doc.messages[3].parts == (ToolResult(call.id, "get_weather", '{"temp_c": 18}'),)
    assert doc.messages[3].meta == {"role": "function"} and doc.messages[4].text == "18 °C in Paris."
    (lst,) = _all(DATA / "messages-list.json")
    assert (lst.id, [m.text for m in lst.messages], lst.warnings) == ("messages-list", ["hello", "hi"], ())


@pytest.mark.parametrize("name", ["conversations.jsonl", "document.json", "messages-list.json"])
def test_detection(name: str) -> None:
    assert detect(DATA / name) == "openai"


def test_sniff_claims_no_real_file_of_another_format(transcripts_dir: Path) -> None:
    for path in sorted(p for p in transcripts_dir.rglob("*") if p.is_file() and p.suffix != ".md"):
        head, first = head_of(path)
        assert not oa.sniff(head, first), path
    native = head_of_text(to_jsonl(_all(JSONL)[0]))
    assert not oa.sniff(*native)


def head_of_text(text: str) -> tuple[str, dict[str, object] | None]:
    first = json.loads(text.split("\n", 1)[0])
    return text, first


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_malformed_jsonl_names_the_line(tmp_path: Path) -> None:
    lines = JSONL.read_bytes().splitlines(keepends=True)
    cut = _write(tmp_path, "cut.jsonl", lines[0] + lines[1][:40] + b"\n" + lines[2])
    with pytest.raises(TranscriptError, match="truncated") as e:
        _all(cut)
    assert e.value.line == 2
    utf = _write(tmp_path, "utf.jsonl", lines[0] + lines[1] + lines[2].replace(b"Done.", b"Do\xffe."))
    with pytest.raises(TranscriptError, match="UTF-8") as e:
        _all(utf)
    assert e.value.line == 3
    conv = json.loads(lines[0])
    conv["messages"][2]["tool_calls"] = {"id": "not a list"}
    wrong = _write(tmp_path, "type.jsonl", lines[1] + json.dumps(conv).encode() + b"\n")
    with pytest.raises(TranscriptError, match="a list 'tool_calls' in message 2") as e:
        _all(wrong)
    assert e.value.line == 2
    no_msgs = _write(tmp_path, "nomsg.jsonl", lines[0] + b'{"id": "x", "messages": "hi"}\n')
    with pytest.raises(TranscriptError, match="'messages' list") as e:
        _all(no_msgs)
    assert e.value.line == 2


def test_malformed_document_names_the_line(tmp_path: Path) -> None:
    doc = json.loads((DATA / "document.json").read_text(encoding="utf-8"))
    doc["messages"][3]["role"] = ["function"]
    text = json.dumps(doc, indent=2)
    with pytest.raises(TranscriptError, match="string 'role' in message 3") as e:
        _all(_write(tmp_path, "doc.json", text.encode()))
    assert e.value.line == text[: text.index('"role": [')].count("\n")  # the line where message 3 opens
    with pytest.raises(TranscriptError, match="truncated") as e:
        _all(_write(tmp_path, "cut.json", text[:200].encode()))
    assert e.value.line == text[:200].count("\n") + 1


def test_native_round_trip(tmp_path: Path) -> None:
    for t in [*_all(JSONL), *_all(DATA / "document.json")]:
        out = tmp_path / "t.jsonl"
        out.write_text(to_jsonl(t), encoding="utf-8")
        assert list(read_native(out)) == [t]
