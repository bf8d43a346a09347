"""Cline, Roo Code and Kilo Code task folders (hand-made, of the writers' shapes: tests/fixtures/cline-family): the
API history read as a whole, usage joined from the ui messages, the compactions each tool recorded, the tool
told apart, home folders read in one command, and broken or misfit files refused in one line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Reasoning, Text, ToolCall, ToolResult, Transcript
from compbench.errors import TranscriptError
from helpers import FIXTURES, main_cli

DATA = FIXTURES / "cline-family"
CLINE = DATA / "saoudrizwan.claude-dev" / "tasks"
ROO = DATA / "rooveterinaryinc.roo-cline" / "tasks"
KILO = DATA / "kilocode.kilo-code" / "tasks"
HISTORY = "api_conversation_history.json"


def one(path: Path, fmt: str | None = None) -> Transcript:
    (t,) = read(path, fmt)
    return t


def test_an_api_history_is_this_format_not_openai_chat() -> None:
    p = CLINE / "1700000000001" / HISTORY
    assert detect(p) == "cline"
    t = one(p)
    assert (t.id, t.source) == ("1700000000001", "cline")
    assert t.count_parts(ToolCall) == 8 and t.count_parts(ToolResult) == 7  # native tool calls, all of them
    assert t.meta["model"] == "claude-sonnet-4-5-20250929" and t.meta["usage_joined"] == "by time"
    assert t.meta["tool_evidence"] == "in saoudrizwan.claude-dev's storage"


def test_cline_usage_is_its_own_count() -> None:
    """tokensIn + cacheReads + cacheWrites is the prompt (Cline's count adds tokensOut)."""
    t = one(CLINE / "1700000000001" / HISTORY)
    a9 = next(m for m in t.messages if m.id == "api-9")
    assert a9.usage is not None and (a9.usage.input + a9.usage.output, a9.usage.cache_write) == (161_000, 400)
    assert a9.meta["cost"] == 0.02


def test_cline_truncation_range_that_grows() -> None:
    """[2,5] applied at the 6th request, [2,9] at the 8th: each hides 4 more, keeps the first pair and the rest."""
    t = one(CLINE / "1700000000001" / HISTORY)
    first, second = t.compactions
    assert [t.messages[c.index].id for c in t.compactions] == ["api-11", "api-15"]
    assert (first.trigger, first.tokens_before, first.summary, first.meta["strategy"]) == ("auto", 161_000, "", "cline")
    assert first.kept_ids == ("api-0", "api-1", "api-6:0", "api-6", "api-7", "api-8:0", "api-8", "api-9", "api-10:0",
                              "api-10")
    assert first.meta["deleted_range"] == [2, 5] and second.meta["deleted_range"] == [2, 9]
    assert second.tokens_before == 165_000 and second.kept_ids[:3] == ("api-0", "api-1", "api-10:0")
    assert not any(m.meta.get("compaction") for m in t.messages)  # a truncation leaves no message behind


def test_cline_summarize_task_keeps_the_first_pair_and_only_its_context() -> None:
    t = one(CLINE / "1700000000002" / HISTORY)
    (c,) = t.compactions
    assert (c.trigger, c.tokens_before, c.meta["kind"], c.meta["strategy"]) == ("auto", 161_000, "summarize_task",
                                                                                "cline-condense")
    assert c.summary.startswith("1. Primary Request and Intent:") and "task_progress" not in c.summary
    assert c.kept_ids == ("api-0", "api-1") and t.messages[c.index].id == c.summary_id == "api-8:0"
    flags = {m.id: m.meta.get("compaction") for m in t.messages if m.meta.get("compaction")}
    # the instructions (not the tool result beside them), the model's call, the continuation result
    assert flags == {"api-6": "request", "api-7": "summarizer", "api-8:0": "summary"}
    a3 = next(m for m in t.messages if m.id == "api-3")
    assert a3.parts[0] == Reasoning("Parse flags first.")


def test_cline_xml_era_without_ui_messages() -> None:
    """No ui_messages.json: Cline's own metrics on assistant messages, no truncation records, said; the
    XML /smol condense (manual, the call kept) and summarize_task are found in the history itself."""
    t = one(DATA / "cline-xml" / "1700000000003" / HISTORY)
    assert "no ui_messages.json beside it: no per-request usage and no truncation records" in t.warnings
    assert t.meta["tool_evidence"] == "Cline's mode line in the environment details"
    a1 = next(m for m in t.messages if m.id == "api-1")
    assert a1.usage is not None and a1.usage.input == 8_012
    # the XML protocol read as calls and results (xml_tools), the condense's kept call still the XML one's
    assert a1.parts[1] == ToolCall("xml-1-0", "execute_command", '{"command": "make test", "requires_approval": '
                                                                 '"false"}')
    assert (t.count_parts(ToolCall), t.count_parts(ToolResult), t.meta["tool_protocol"]) == (6, 5, "xml")
    assert next(m for m in t.messages if m.id == "api-2:0").parts[0] == ToolResult(
        "xml-1-0", "execute_command", "Command executed.\nOutput:\nE   ModuleNotFoundError: No module named 'yaml'")
    condense, summarize = t.compactions
    assert (condense.trigger, condense.kept_ids, condense.meta["kind"]) == ("manual", ("api-0", "api-1", "api-5"),
                                                                            "condense")
    assert condense.summary.startswith("1. Previous Conversation: make test failed")
    assert summarize.summary == "1. Primary Request and Intent:\n   Make make test pass; then fix the Dockerfile."
    assert summarize.tokens_before is None  # the call before it recorded no usage: no count to compare


def test_roo_fresh_start_condense() -> None:
    t = one(ROO / "0d0d0d0d-0000-4000-8000-000000000001" / HISTORY)
    assert t.source == "roo-code" and t.meta["model"] == "claude-sonnet-4-5"  # from the environment details
    (c,) = t.compactions
    assert (c.trigger, c.tokens_before, c.kept_ids, c.summary_id) == ("auto", 176_100, (), "api-5")
    assert c.summary == "1. Primary Request and Intent:\n   Migrate config.yaml to TOML (port 8080)."
    assert c.meta["layout"].startswith("fresh start") and c.meta["newContextTokens"] == 6_000
    a3 = next(m for m in t.messages if m.id == "api-3")
    assert a3.usage is not None and a3.usage.input == 175_000  # tokensIn holds the cache (Roo Code 3.29.5+)
    assert a3.parts[0] == Reasoning("Write the TOML.")


def test_roo_sliding_window_marker_moves_to_where_it_happened() -> None:
    t = one(ROO / "0d0d0d0d-0000-4000-8000-000000000002" / HISTORY)
    (c,) = t.compactions
    ids = [m.id for m in t.messages]
    assert ids[c.index] == "api-5" and ids[c.index - 1] == "api-9" and ids[c.index + 1] == "api-10"
    assert t.messages[c.index].meta["compaction"] == "marker"
    assert c.kept_ids == ("api-0", "api-6", "api-7:0", "api-7", "api-8", "api-9:0", "api-9")
    assert (c.tokens_before, c.meta["messages_removed"]) == (185_670, 4)
    assert c.meta["stand_in"] == "[Sliding window truncation: 4 messages hidden to reduce context]"
    a1 = next(m for m in t.messages if m.id == "api-1")
    assert a1.usage is not None and a1.usage.input == 30_240  # older convention: tokensIn + cache reads + writes


def test_roo_assistant_summary_keeps_the_first_and_the_last_3() -> None:
    t = one(DATA / "roo-v1" / "0d0d0d0d-0000-4000-8000-000000000003" / HISTORY)
    (c,) = t.compactions
    assert c.kept_ids == ("api-0", "api-7:0", "api-7", "api-8", "api-9:0", "api-9")
    assert [m.id for m in t.messages][c.index - 1:c.index + 2] == ["api-9", "api-6", "api-10"]
    assert c.summary.startswith("1. Previous Conversation:") and c.trigger == "auto"


def test_kilo_code_manual_condense_of_the_destructive_layout() -> None:
    t = one(KILO / "0d0d0d0d-0000-4000-8000-000000000004" / HISTORY)
    assert (t.source, t.meta["tool_evidence"]) == ("kilo-code", "in kilocode.kilo-code's storage")
    (c,) = t.compactions
    assert (c.trigger, c.tokens_before) == ("manual", 30_500)  # not inside a request: the button
    assert c.kept_ids == ("api-0", "api-2:0", "api-2", "api-3", "api-4:0", "api-4")
    assert "1 tool results have no matching tool call (kept, flagged orphan)" in t.warnings


def test_the_tool_is_told_by_content_outside_its_storage(tmp_path: Path) -> None:
    for src, tool in ((ROO / "0d0d0d0d-0000-4000-8000-000000000002", "roo-code"),
                      (KILO / "0d0d0d0d-0000-4000-8000-000000000004", "kilo-code"),
                      (CLINE / "1700000000002", "cline")):
        d = tmp_path / src.name
        shutil.copytree(src, d)
        assert one(d / HISTORY).source == tool


def test_home_folders_import_in_one_command_with_per_agent_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    homes = [DATA / "saoudrizwan.claude-dev", DATA / "rooveterinaryinc.roo-cline", DATA / "kilocode.kilo-code"]
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", *homes, "--out", tmp_path / "ds")
    assert code == 0, err
    assert out.startswith("imported 5 transcripts (cline 2, kilo-code 1, roo-code 2)")
    assert "tasks folder: its tasks are read, not the 1 other file among them" in err  # Roo Code's _index.json
    assert "storage folder: its tasks are read, not the 1 other file around them" in err  # settings/
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "validate", *homes)
    assert code == 0 and out.splitlines()[-1].startswith("5 valid, 0 invalid; 5 transcripts")


def test_a_task_folder_is_read_through_its_api_history() -> None:
    files = list(iter_files([CLINE / "1700000000001"]))
    assert [f.name for f in files] == [HISTORY]


def test_broken_history_names_file_and_line() -> None:
    p = DATA / "cline-broken" / "1700000000008" / HISTORY
    with pytest.raises(TranscriptError, match=r"cline-broken/1700000000008/api_conversation_history\.json:9: "
                                              r"a complete JSON document \(file is truncated\)"):
        one(p)


def test_broken_ui_messages_cost_the_usage_not_the_transcript() -> None:
    t = one(DATA / "cline-broken-ui" / "1700000000009" / HISTORY)
    assert [m.text for m in t.messages] == ["hi", "hello"]
    assert any(w.startswith("ui_messages.json beside it is unreadable") for w in t.warnings)


def test_ui_messages_given_alone_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ui = CLINE / "1700000000001" / "ui_messages.json"
    assert detect(ui) == "cline"
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", ui, "--out", tmp_path / "ds")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "a task's api_conversation_history.json (this is its ui_messages.json, the UI's record" in err
    misfit = DATA / "cline-misfit" / "1700000000010" / HISTORY  # ui messages saved under the history's name
    with pytest.raises(TranscriptError, match=r"this is its ui_messages\.json"):
        one(misfit)


def test_a_history_that_does_not_fit_as_a_whole_is_not_this_format(tmp_path: Path) -> None:
    """One block of a type no writer emits: the document is not an API history (never half-read as one)."""
    doc = json.loads((CLINE / "1700000000002" / HISTORY).read_text())
    doc[3]["content"].append({"type": "tool_call_v9", "id": "x"})
    p = tmp_path / HISTORY
    p.write_text(json.dumps(doc))
    try:
        assert detect(p) != "cline"
    except TranscriptError:
        pass  # refused by every format: as good
    with pytest.raises(TranscriptError, match=r"element 3 to be a \{role: user\|assistant, content: string \| "
                                              r"\[content blocks of a known type\]\} message"):
        one(p, "cline")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]))
    with pytest.raises(TranscriptError, match="element 0 to be a"):
        one(chat, "cline")


def test_usage_joins_by_history_index_then_by_order(tmp_path: Path) -> None:
    """Without timestamps on the API messages, Cline's conversationHistoryIndex (the answer is two on); without
    either, the order of the requests that recorded usage (said in a warning)."""
    src = CLINE / "1700000000001"
    api = json.loads((src / HISTORY).read_text())
    ui = json.loads((src / "ui_messages.json").read_text())
    for m in api:
        m.pop("ts", None)
    d = tmp_path / "1700000000001"
    d.mkdir()
    (d / HISTORY).write_text(json.dumps(api))
    (d / "ui_messages.json").write_text(json.dumps(ui))
    t = one(d / HISTORY)
    assert t.meta["usage_joined"] == "by conversationHistoryIndex"
    assert [c.tokens_before for c in t.compactions] == [161_000, 165_000]
    for m in ui:
        m.pop("conversationHistoryIndex", None)
    (d / "ui_messages.json").write_text(json.dumps(ui))
    t = one(d / HISTORY)
    assert t.meta["usage_joined"].startswith("by order") and "requests joined to answers by order" in t.warnings[0]
    assert [m.usage.input + m.usage.output for m in t.messages if m.usage][:2] == [12_203, 40_000]


def test_text_blocks_and_images_of_a_user_message(tmp_path: Path) -> None:
    doc = [{"role": "user", "content": [{"type": "text", "text": "look"},
                                        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                     "data": "iVBORw0KGgo="}}], "ts": 1},
           {"role": "assistant", "content": "a plain string answer", "ts": 2}]
    p = tmp_path / HISTORY
    p.write_text(json.dumps(doc))
    t = one(p)
    assert t.messages[0].parts[0] == Text("look") and t.messages[0].parts[1].type == "media"
    assert t.messages[1].parts == (Text("a plain string answer"),)


@settings(max_examples=int(os.environ.get("COMPBENCH_FUZZ_EXAMPLES", "80")), deadline=None, derandomize=True,
          database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mangled_ui_messages_never_break_the_import(tmp_path_factory: pytest.TempPathFactory,
                                                    data: st.DataObject) -> None:
    """A ui_messages.json with wrong types, missing keys or odd records costs usage or records, never the import:
    the transcript comes out, or a TranscriptError naming the history (no importer bug)."""
    from mutations import _mutate

    src = data.draw(st.sampled_from([CLINE / "1700000000001", CLINE / "1700000000002",
                                     ROO / "0d0d0d0d-0000-4000-8000-000000000002",
                                     DATA / "roo-v1" / "0d0d0d0d-0000-4000-8000-000000000003"]))
    d = tmp_path_factory.mktemp("task") / src.name
    shutil.copytree(src, d)
    ui = json.loads((d / "ui_messages.json").read_text())
    (d / "ui_messages.json").write_text(json.dumps(_mutate(ui, data)))
    try:
        t = one(d / HISTORY)
        assert all(0 <= c.index <= len(t.messages) for c in t.compactions)
    except TranscriptError as e:
        assert not e.internal, str(e)


def test_sliding_window_without_ui_is_placed_by_the_rule(tmp_path: Path) -> None:
    """No ui record of the truncation: the marker goes after the fewest messages the rule keeps (as many as it
    hid), and the record says it was estimated."""
    d = tmp_path / "0d0d0d0d-0000-4000-8000-000000000002"
    d.mkdir()
    shutil.copy(ROO / d.name / HISTORY, d / HISTORY)
    (c,) = one(d / HISTORY).compactions
    assert c.meta["placement"].startswith("estimated") and c.trigger == "unknown" and c.tokens_before is None
    assert c.kept_ids == ("api-0", "api-6", "api-7:0", "api-7", "api-8", "api-9:0", "api-9")


def test_a_summarize_task_call_without_its_context_compacts_nothing(tmp_path: Path) -> None:
    doc = json.loads((CLINE / "1700000000002" / HISTORY).read_text())
    doc[7]["content"][1]["input"] = {"task_progress": "- [ ] x"}
    p = tmp_path / HISTORY
    p.write_text(json.dumps(doc))
    t = one(p)
    assert t.compactions == () and not any(m.meta.get("compaction") for m in t.messages)
