"""What a tool call reads or writes (compbench.data.calls), for the Cline family's tools: their edit tools write,
Roo Code's read_file names its files in a ``files`` list."""

from __future__ import annotations

import json

import pytest

from compbench.data.calls import call_paths, touches
from compbench.data.transcript import ToolCall


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
