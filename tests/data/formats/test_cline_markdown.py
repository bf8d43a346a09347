"""Markdown task exports of Roo Code, Kilo Code and Cline (hand-made, of export-markdown.ts's shape:
tests/fixtures/cline-family/exports) and the real Roo Code fork export in ../shared/real-logs (read in place,
skipped when ../shared is absent): turns, tool markers, the condense summary an export shows, and files that are
not exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Text, ToolCall, ToolResult, Transcript
from compbench.errors import TranscriptError
from helpers import FIXTURES

EXPORTS = FIXTURES / "cline-family" / "exports"
NOTES = EXPORTS.parent / "notes"
REAL = SHARED / "real-logs" / "roo-code" / "tchr-dev__IOPaint-mod__code_assistant_task_jan-19-2026_8-06-26-am.md"


def one(path: Path) -> Transcript:
    (t,) = read(path)
    return t


@pytest.fixture(scope="module")
def real() -> Transcript:
    if not REAL.is_file():
        pytest.skip(f"the real Roo Code fork export is not at {REAL}")
    return one(REAL)


def test_real_fork_export_and_its_condense(real: Transcript) -> None:
    """SourceCraft Code Assistant (a Roo Code fork): the first assistant turn is the condense summary; the export
    is [first, summary, the 3 kept]: the summary is placed after what it kept, nothing of its span survives."""
    assert detect(REAL) == "cline-markdown"
    assert (real.source, real.meta["model"], real.meta["turns"]) == ("roo-code", "sourcecraft_model", 5)
    assert [m.id for m in real.messages] == ["api-0", "api-2", "api-3", "api-4", "api-1"]
    assert real.messages[2].text.startswith("I need to import fireEvent and waitFor")
    (c,) = real.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary_id) == (4, "unknown", None, "api-1")
    assert c.kept_ids == ("api-0", "api-2", "api-3", "api-4")
    assert c.summary.startswith("1. Previous Conversation:\n  I've been working on creating comprehensive tests")
    assert "6. Pending Tasks and Next Steps:" in c.summary
    assert c.meta["layout"].startswith("assistant summary before the last 3")
    assert real.messages[4].meta["compaction"] == "summary"


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
    assert names == ["cline_task_mar-1-2025_8-00-00-am.md", "roo_task_feb-2-2026_4-15-00-pm.md",
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
