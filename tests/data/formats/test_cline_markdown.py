"""Markdown task exports of Roo Code, Kilo Code and Cline (hand-made, of export-markdown.ts's shape:
tests/fixtures/cline-family/exports) and the real Roo Code fork export in ../shared/real-logs (read in place,
skipped when ../shared is absent): turns, tool markers, the condense summary an export shows, and files that are
not exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED, need_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Text, ToolCall, ToolResult, Transcript
from compbench.errors import TranscriptError
from helpers import FIXTURES

EXPORTS = FIXTURES / "cline-family" / "exports"
NOTES = EXPORTS.parent / "notes"
SETTINGS = "web_app/src/components/__tests__/Settings.test.tsx"
REAL = SHARED / "real-logs" / "roo-code" / "tchr-dev__IOPaint-mod__code_assistant_task_jan-19-2026_8-06-26-am.md"


def one(path: Path) -> Transcript:
    (t,) = read(path)
    return t


@pytest.fixture(scope="module")
def real() -> Transcript:
    need_shared(REAL, "the real Roo Code fork export")
    return one(REAL)


def test_real_fork_export_and_its_condense(real: Transcript) -> None:
    """SourceCraft Code Assistant (a Roo Code fork): the first assistant turn is the condense summary; the export
    is [first, summary, the 3 kept]: the summary is placed after what it kept, nothing of its span survives."""
    assert detect(REAL) == "cline-markdown"
    assert (real.source, real.meta["model"], real.meta["turns"]) == ("roo-code", "sourcecraft_model", 5)
    assert [m.id for m in real.messages] == ["api-0", "api-2:0", "api-2", "api-3", "api-4:0", "api-4", "api-1"]
    assert real.messages[3].text.startswith("I need to import fireEvent and waitFor")
    # its XML calls are calls: the apply_diff in the text, its result; the first result's call was condensed away
    call = real.messages[3].parts[1]
    assert isinstance(call, ToolCall) and call.name == "apply_diff" and json.loads(call.args)["path"] == SETTINGS
    first, second = (m.parts[0] for m in real.messages if m.role == "tool")
    assert isinstance(first, ToolResult) and (first.name, first.orphan) == ("apply_diff", True)
    assert isinstance(second, ToolResult) and (second.call_id, second.orphan) == (call.id, False)
    assert second.output.startswith("<file_write_result>") and "<environment_details>" not in second.output
    assert real.meta["tool_protocol"] == "xml"
    (c,) = real.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary_id) == (6, "unknown", None, "api-1")
    assert c.kept_ids == ("api-0", "api-2:0", "api-2", "api-3", "api-4:0", "api-4")
    assert c.summary.startswith("1. Previous Conversation:\n  I've been working on creating comprehensive tests")
    assert "6. Pending Tasks and Next Steps:" in c.summary
    assert c.meta["layout"].startswith("assistant summary before the last 3")
    assert real.messages[6].meta["compaction"] == "summary"


def test_export_with_a_summary_and_tool_markers() -> None:
    t = one(EXPORTS / "roo_task_jan-5-2026_10-00-00-am.md")
    assert detect(EXPORTS / "roo_task_jan-5-2026_10-00-00-am.md") == "cline-markdown"
    assert [m.id for m in t.messages] == ["api-0", "api-2:0", "api-2", "api-3", "api-4:0", "api-4", "api-1", "api-5"]
    a3 = t.messages[3]
    assert a3.parts[0] == Text("The directory belongs to root while cron runs as backup.")
    assert a3.parts[1] == ToolCall("md-3-0", "execute_command",
                                   json.dumps({"command": "stat -c %U /var/backups", "cwd": "/srv"}))
    assert t.messages[4].parts == (ToolResult("md-3-0", "execute_command", "stat: cannot statx '/var/backups': "
                                              "Permission denied", is_error=True),)
    assert t.messages[5].text.startswith("<environment_details>")  # split off the tool result
    (c,) = t.compactions
    assert c.kept_ids == ("api-0", "api-2:0", "api-2", "api-3", "api-4:0", "api-4") and c.index == 6
    assert c.summary.startswith("1. Previous Conversation:") and t.meta["model"] == "claude-sonnet-4-5"


def test_export_without_a_summary() -> None:
    t = one(EXPORTS / "roo_task_jan-6-2026_9-30-00-am.md")
    assert t.compactions == () and t.count_parts(ToolCall) == 2 and t.count_parts(ToolResult) == 2
    assert json.loads(t.messages[3].tool_calls()[0].args)["diff"].startswith("<<<<<<< SEARCH")


def test_fresh_start_export_shows_the_whole_history() -> None:
    t = one(EXPORTS / "roo_task_feb-2-2026_4-15-00-pm.md")
    (c,) = t.compactions
    assert c.kept_ids == () and t.messages[c.index].id == "api-3" and c.meta["layout"].startswith("fresh start")
    assert c.summary.startswith("1. Primary Request and Intent:")  # the heading is Roo Code's, not the summary's


def test_cline_export_with_summarize_task() -> None:
    t = one(EXPORTS / "cline_task_mar-1-2025_8-00-00-am.md")
    assert t.source == "cline"
    (c,) = t.compactions
    assert c.summary == ("1. Primary Request and Intent:\n   Find why make docs is slow: sphinx autodoc imports torch "
                         "(412s).")
    assert (c.kept_ids, c.meta["strategy"]) == (("api-0", "api-1"), "cline-condense")


FORK = EXPORTS / "code_rider_task_mar-3-2026_9-00-00-am.md"


def test_a_kilo_forks_xml_export_has_its_calls_and_results_as_parts() -> None:
    """The shape of a real Kilo Code fork's export that imported with 0 tool calls: XML calls in the assistant's
    text (a multi-file read_file, update_todo_list, a command over two lines, a write whose content holds its
    closing tag, a second call in one message), answered by ``[name …] Result:`` user turns."""
    t = one(FORK)
    assert (t.source, t.meta["fork"], t.meta["tool_protocol"]) == ("kilo-code", "code_rider", "xml")
    assert t.meta["tool_evidence"] == "Kilo Code's own tool (new_rule) in a Roo Code-family export: a Kilo Code fork"
    calls = [c for m in t.messages for c in m.tool_calls()]
    assert [c.name for c in calls] == ["read_file", "update_todo_list", "execute_command", "write_to_file",
                                       "attempt_completion", "new_rule"]
    assert json.loads(calls[0].args) == {"files": [{"path": "tests/login.test.ts"},
                                                   {"path": "src/login.ts", "line_range": "1-40"}]}
    assert json.loads(calls[2].args) == {"command": "npm test -- tests/login.test.ts\n  --reporter=dot"}
    assert json.loads(calls[3].args)["content"].endswith("see </content> in docs\n}")
    results = {p.call_id: p for m in t.messages for p in m.parts if isinstance(p, ToolResult)}
    assert [results[c.id].name for c in calls[:5]] == [c.name for c in calls[:5]] and calls[5].id not in results
    assert results[calls[1].id].output == "Todo list updated successfully."
    assert results[calls[2].id].is_error and results[calls[4].id].is_error  # failed; not run (one tool a message)
    read = results[calls[0].id].output
    assert read.startswith("<files>") and "environment_details" not in read
    assert t.warnings[0] == ("XML tool protocol: 6 calls read from the assistant's text (attempt_completion 1, "
                             "execute_command 1, new_rule 1, read_file 1, update_todo_list 1, write_to_file 1), 5 "
                             "results from the user's")
    from compbench.data.calls import touches

    assert [(x.key, x.verb) for x in touches(calls[0])] == [("file:tests/login.test.ts", "read"),
                                                            ("file:src/login.ts", "read")]
    assert [(x.key, x.verb) for x in touches(calls[3])] == [("file:src/login.ts", "write")]


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("code_rider_task_x.md", "# Current Mode\n<slug>code</slug>\n[new_rule for 'r'] Result:\nok", "kilo-code"),
    ("code_rider_task_x.md", "# Current Mode\n<slug>code</slug>\n.kilocode/rules/a.md", "kilo-code"),
    ("code_rider_task_x.md", "# Current Mode\n<slug>code</slug>\nmade with Kilo Code", "kilo-code"),
    ("code_rider_task_x.md", "# Current Mode\n<slug>code</slug>\n.kilocode/\n.roo/rules/a.md", "roo-code"),
    ("code_assistant_task_x.md", "# Current Mode\n<slug>code</slug>\n[condense] Result:", "kilo-code"),
    ("code_assistant_task_x.md", "# Current Mode\n<slug>code</slug>", "roo-code"),
    ("kilo_code_task_x.md", "# Current Mode\n<slug>code</slug>", "kilo-code"),
    ("roo_task_x.md", "# Current Mode\nACT MODE\n.kilocode/", "cline"),
])
def test_a_fork_is_named_by_the_family_it_forked(name: str, text: str, expected: str) -> None:
    from compbench.data.formats.cline_markdown import tool_of

    assert tool_of(text, Path(name))[0] == expected


def test_windows_line_endings_read_the_same(tmp_path: Path) -> None:
    src = EXPORTS / "roo_task_jan-5-2026_10-00-00-am.md"
    p = tmp_path / src.name
    p.write_bytes(src.read_bytes().replace(b"\n", b"\r\n"))
    a, b = one(src), one(p)
    assert [m.parts for m in a.messages] == [m.parts for m in b.messages] and a.compactions[0].kept_ids == \
        b.compactions[0].kept_ids


def test_files_that_are_not_exports() -> None:
    """A README is not walked; a header without its blank line is no export; an export of empty turns is
    refused in one line."""
    walked = sorted(f.name for f in iter_files([NOTES]))
    assert walked == ["broken_export.md"]
    with pytest.raises(TranscriptError, match="JSON or JSONL text, or a markdown task export"):
        detect(NOTES / "not_an_export.md")
    with pytest.raises(TranscriptError, match=r"broken_export\.md:1: a task export: \*\*User:\*\* / \*\*Assistant:\*\* "
                                              "turns separated by '---'"):
        one(NOTES / "broken_export.md")


def test_a_folder_of_exports_walks_only_exports() -> None:
    names = [f.name for f in iter_files([EXPORTS.parent]) if f.suffix == ".md"]
    assert names == ["cline_task_mar-1-2025_8-00-00-am.md", "code_rider_task_mar-3-2026_9-00-00-am.md",
                     "roo_task_feb-2-2026_4-15-00-pm.md",
                     "roo_task_jan-5-2026_10-00-00-am.md", "roo_task_jan-6-2026_9-30-00-am.md", "broken_export.md"]


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mangled_exports_import_or_fail_in_one_line(tmp_path_factory: pytest.TempPathFactory,
                                                    data: st.DataObject) -> None:
    """Cut, spliced or re-encoded exports: a transcript, or a TranscriptError naming the file (no importer bug)."""
    src = data.draw(st.sampled_from(sorted(EXPORTS.iterdir())))
    raw = src.read_bytes()
    op = data.draw(st.sampled_from(["cut", "splice", "bad-utf8", "drop-separator"]))
    at = data.draw(st.integers(0, len(raw)))
    if op == "cut":
        raw = raw[:at]
    elif op == "splice":
        splice = data.draw(st.sampled_from([b"\n\n---\n\n**Assistant:**\n\n", b"**User:**", b"[Tool]\n",
                                            b"[Tool Use: x]\nA: 1\n", b"## Conversation Summary\n"]))
        raw = raw[:at] + splice + raw[at:]
    elif op == "bad-utf8":
        raw = raw[:at] + b"\xff\xfe" + raw[at:]
    else:
        raw = raw.replace(b"\n\n---\n\n", b"\n\n", 1)
    p = tmp_path_factory.mktemp("md") / src.name
    p.write_bytes(raw)
    try:
        for t in read(p, "cline-markdown"):
            assert t.messages and all(0 <= c.index <= len(t.messages) for c in t.compactions)
    except TranscriptError as e:
        assert not e.internal and str(e).startswith(str(p))


def test_an_export_cut_right_after_its_summary_imports(tmp_path: Path) -> None:
    """The summary as the last turn: no message after it to move it behind (an importer bug the fuzzer found)."""
    src = (EXPORTS / "roo_task_jan-5-2026_10-00-00-am.md").read_text(encoding="utf-8")
    cut = tmp_path / "roo_task_cut.md"
    cut.write_text(src[:src.index("5. Problem Solving:")], encoding="utf-8")
    t = one(cut)
    (c,) = t.compactions
    assert t.messages[-1].meta["compaction"] == "summary" and c.kept_ids == ("api-0",)
