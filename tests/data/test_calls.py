"""What a tool call reads or writes (compbench.data.calls): the Cline family's tools (their edit tools write,
Roo Code's read_file names its files in a ``files`` list); and a call's arguments decoded once, whoever asks
(facts, the working set, summarizers, strategies), in a memo that stays bounded."""

from __future__ import annotations

import json

import pytest

from compbench.data import calls
from compbench.data.calls import call_paths, touches
from compbench.data.transcript import ToolCall
from compbench.memo import Memo


def call(name: str, **args: object) -> ToolCall:
    return ToolCall("c", name, json.dumps(args))


@pytest.mark.parametrize(("tool", "verb"), [("write_to_file", "write"), ("replace_in_file", "edit"),
                                            ("apply_diff", "edit"), ("insert_content", "edit"),
                                            ("search_and_replace", "edit"), ("read_file", "read")])
def test_the_cline_familys_tools_read_or_change_their_file(tool: str, verb: str) -> None:
    assert [(t.key, t.verb) for t in touches(call(tool, path="src/app.py"))] == [("file:src/app.py", verb)]


def test_a_files_list_names_each_file_and_a_top_level_path_wins() -> None:
    files = call("read_file", files=[{"path": "a/b.py"}, {"path": "c.py", "line_range": "1-2"}, {"x": 1}, "d.py"])
    assert call_paths(files) == (["a/b.py", "c.py"], False)
    assert call_paths(call("read_file", path="top.py", files=[{"path": "a.py"}])) == (["top.py"], False)
    assert call_paths(call("read_file", files="a.py")) == ([], False)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calls, "_DECODED", Memo(calls.DECODED_CHARS))
    monkeypatch.setattr(calls, "_TEXTS", Memo(calls.DECODED_CHARS))


@pytest.mark.usefixtures("fresh")
def test_arguments_are_decoded_once_per_text() -> None:
    a = ToolCall("c1", "Read", '{"file_path": "src/app.py", "limit": 10}')
    b = ToolCall("c2", "Read", '{"file_path": "src/app.py", "limit": 10}')  # another call, the same arguments
    assert calls.call_args(a) == {"file_path": "src/app.py", "limit": 10}
    assert calls.call_args(b) is calls.call_args(a)
    assert calls.call_text(b) == calls.call_text(a) == "src/app.py"
    assert calls.call_paths(b) == (["src/app.py"], False)


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize("raw", ["", "[1, 2]", "not json", '"a string"', "{" * 3000 + "}" * 3000])
def test_arguments_that_are_no_object_read_as_none(raw: str) -> None:
    call = ToolCall("c", "bash", raw)
    assert calls.call_args(call) == {}
    assert calls.call_text(call) == raw  # the raw text, as before


@pytest.mark.usefixtures("fresh")
def test_the_memo_starts_over_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calls._DECODED, "chars", 40)
    one, two = ToolCall("c1", "x", '{"a": "' + "1" * 20 + '"}'), ToolCall("c2", "x", '{"b": "' + "2" * 20 + '"}')
    calls.call_args(one)
    assert len(calls._DECODED) == 1
    calls.call_args(two)  # 29 + 29 characters > 40: what was kept goes
    assert list(calls._DECODED) == [two.args]
    assert calls.call_args(one) == {"a": "1" * 20}
