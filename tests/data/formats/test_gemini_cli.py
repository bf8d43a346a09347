"""Gemini CLI importer: every artefact the tool writes, from hand-made fixtures of each shape
(``tests/fixtures/gemini-cli``, written from chatRecordingService.ts, logger.ts and historyExportUtils.ts at the
commits named in the modules), and the real ``/chat share`` markdown in ../shared/real-logs, read in place.

The real file's numbers come from grep over its raw text, independent of the importer: 13 ``🧑‍💻 ## USER``
headers (6 of them only tool responses), 12 ``✨ ## MODEL`` headers, 6 ``**Tool Command**`` and 6 ``**Tool
Response**`` blocks, the snapshot in the second USER turn.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compbench.data.formats import read
from compbench.data.formats.detect import detect
from compbench.data.transcript import Media, Reasoning, ToolCall, ToolResult, Transcript, Usage
from compbench.errors import TranscriptError
from helpers import FIXTURES

DATA = FIXTURES / "gemini-cli"
REAL = "gemini-cli/jaymcortest__unidoku__rut.md"


def one(name: str, fmt: str | None = None) -> Transcript:
    (t,) = read(DATA / name, fmt)
    return t


def results(t: Transcript) -> list[ToolResult]:
    return [r for m in t.messages for r in m.tool_results()]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.iterdir() if "broken" not in p.name))
def test_every_shape_is_detected_as_gemini_cli(name: str) -> None:
    assert detect(DATA / name) == "gemini-cli"


def test_real_markdown_export(real_logs_dir: Path) -> None:
    (t,) = read(real_logs_dir / REAL)
    roles = [m.role for m in t.messages]
    assert (roles.count("user"), roles.count("assistant"), roles.count("tool")) == (7, 12, 6)
    assert t.count_parts(ToolCall) == 6 and len(results(t)) == 6 and not any(r.orphan for r in results(t))
    assert [r.call_id for r in results(t)] == [c.id for m in t.messages for c in m.tool_calls()]
    (c,) = t.compactions
    assert (c.index, c.summary_id, c.trigger, c.tokens_before, c.kept_ids) == (1, "m1", "unknown", None, ())
    assert c.summary.startswith("```xml\n<state_snapshot>") and c.meta["history_in_file"] is False
    assert t.messages[2].meta["compaction"] == "ack"
    assert t.messages[2].text == "Got it. Thanks for the additional context!"
    assert t.messages[1].meta == {"gemini": "state_snapshot"}  # the history it replaced is gone: it stays context
    assert t.meta["tool_version"] == "up to 0.20" and t.warnings == ()


def test_json_recording_with_the_old_compression_notice() -> None:
    t = one("session-2025-12-01T10-00-aaaa1111.json")
    assert t.id == "aaaa1111-0000-4000-8000-000000000001" and t.meta["model"] == "gemini-2.5-pro"
    assert [m.id for m in t.messages] == ["u1", "g1", "g1:r0", "g2", "g2:r0", "u2", "g3", "u3", "g4"]
    g1 = t.messages[1]
    assert g1.usage == Usage(input=300_000, output=50, cache_read=120_000, reasoning=10)  # output: 40 + 10 thoughts
    assert g1.parts[0] == Reasoning("**Reading the code** Start from app.py.")
    assert g1.tool_calls()[0].args == '{"absolute_path": "/home/dev/shop/app.py"}'
    shell = t.messages[4].tool_results()[0]
    assert shell.is_error and shell.output.startswith("FAILED tests/test_cart.py::test_total")
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary, c.meta["tokens_after"]) == (7, "auto", 540_000, "", 165_000)
    assert c.meta["notice_tokens"] == [540_000, 160_000] and c.meta["kept_unknown"]
    assert t.meta["ui_records"] == {"error": 1, "info": 1} and t.meta["tool_version"] == "0.18-0.32"


def test_new_notice_manual_compress_and_one_that_did_nothing() -> None:
    t = one("session-2026-02-10T09-00-bbbb2222.json")
    auto, manual = t.compactions
    ids = [m.id for m in t.messages]
    assert (auto.trigger, auto.index, auto.tokens_before, auto.meta["notice_percent"]) == (
        "auto", ids.index("u3"), 560_000, [53, 14])
    assert (manual.trigger, manual.index, manual.tokens_before, manual.meta["tokens_after"]) == (
        "manual", ids.index("u5"), 180_000, 60_000)
    assert any("had no effect" in w for w in t.warnings)  # the second /compress: 60,000 then 61,500
    masked = t.messages[ids.index("g2:r0")].tool_results()[0].output
    assert masked.startswith("<tool_output_masked>")  # a .json is rewritten: the original is not in the file
    assert t.meta["title"] == "Refactor checkout" and t.meta["ui_records"] == {"info": 3, "warning": 1}
    assert t.meta["tool_version"] == "0.33-0.38"


def test_jsonl_updated_message_last_wins_in_place_and_rewind() -> None:
    t = one("session-2026-03-01T08-00-cccc3333.jsonl")
    assert [m.id for m in t.messages] == ["u1", "g1", "g1:r0", "g2", "u3", "g4"]  # u2, g3 rewound away
    g1 = t.messages[1]
    assert g1.usage is not None and g1.usage.input == 200_000 and g1.tool_calls()[0].name == "search_file_content"
    assert t.messages[2].tool_results()[0].output.startswith("server.py:10:")
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before) == (4, "auto", 560_000)  # g3's 561,000 was rewound
    assert t.meta["rewinds"] == 1 and t.meta["title"] == "Routes in server.py" and t.meta["tool_version"] == "0.39+"


def test_a_broken_line_is_an_error_or_skipped() -> None:
    name = "session-2026-03-01T08-00-broken01.jsonl"
    with pytest.raises(TranscriptError) as e:
        one(name)
    assert e.value.line == 5 and "truncated" in e.value.expected
    skipped: list[TranscriptError] = []
    (t,) = read(DATA / name, None, skipped)
    assert [s.line for s in skipped] == [5] and t.meta["skipped_lines"] == [5]
    assert t.messages[1].tool_calls()  # the next full copy of g1 is read


def test_v0_44_compression_rebuilds_the_history_with_set_messages() -> None:
    t = one("session-2026-06-01T12-00-dddd4444.jsonl")
    ids = [m.id for m in t.messages]
    assert ids == ["env-ctx", "u1", "g1", "g1:r0", "g2", "u2", "g3", "s1", "a1", "u3", "g4", "g4:r0", "g5"]
    assert len(results(t)) == 2  # each result once: from the call, not again from its user record (t1, t2)
    assert "u4" not in ids  # rolled back by the last $set
    (c,) = t.compactions
    assert (c.index, c.summary_id, c.kept_ids, c.trigger, c.tokens_before) == (7, "s1", ("u2", "g3"), "auto", 530_000)
    assert c.summary.startswith("<state_snapshot>") and c.meta["tokens_after"] == 120_000
    assert t.messages[7].meta["compaction"] == "summary" and t.messages[8].meta["compaction"] == "ack"
    assert t.messages[ids.index("g4:r0")].tool_results()[0].output == "price row\n" * 300  # the masked sync undone
    assert t.meta["masked_by_tool"] == 1 and t.meta["tool_version"] == "0.44+"


def test_no_ui_record_a_drop_in_input_is_an_inferred_compression() -> None:
    t = one("session-2025-11-20T15-00-eeee5555.json")
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.meta["tokens_after"]) == (4, "unknown", 600_000, 170_000)
    assert "heuristic" in c.meta["inferred"] and any("inferred" in w for w in t.warnings)


def test_a_dump_of_the_loaders_result_reads_the_same() -> None:
    t = one("loaded-session-ffff6666.json")
    assert [m.role for m in t.messages] == ["user", "assistant"] and t.id.startswith("ffff6666")


def test_share_json_prose_snapshot_calls_without_ids_thoughts_and_an_image() -> None:
    t = one("gemini-conversation-1764584000000.json")
    (c,) = t.compactions
    assert (c.index, c.summary_id, c.meta["snapshot_xml"], c.meta["history_in_file"]) == (1, "m1", False, False)
    assert c.summary.startswith("I have verified the snapshot")
    model = t.messages[4]
    assert isinstance(model.parts[0], Reasoning) and model.tool_calls()[0].id == "m4:2"
    first = t.messages[5].tool_results()[0]
    assert (first.call_id, first.orphan) == ("m4:2", False)  # matched by name: the call had no id
    edit, shell = t.messages[7].tool_results()[0], t.messages[8].tool_results()[0]
    assert (edit.call_id, shell.call_id, shell.is_error) == ("edit-1", "sh-1", True)
    image = t.messages[10].parts[1]
    assert isinstance(image, Media) and image.mime == "image/png" and image.data.startswith(b"\x89PNG")
    assert t.meta["layout"] == "chat share JSON" and t.warnings == ()


def test_checkpoints_both_layouts() -> None:
    t = one("checkpoint-price-cache.json")
    assert t.meta["auth_type"] == "gemini-api-key" and t.meta["layout"] == "checkpoint"
    assert t.meta["tool_version"] == "0.29+" and len(t.compactions) == 1
    old = one("checkpoint-old.json")
    assert old.meta["layout"] == "checkpoint (bare array)"
    assert old.compactions == ()  # "Got it. Thanks for the context!" answers the set-up turn, not a snapshot


def test_markdown_both_header_styles_read_alike() -> None:
    last, first = one("share-emoji-last.md"), one("share-emoji-first.md")
    assert last.messages == first.messages and last.compactions == first.compactions
    assert (first.meta["tool_version"], last.meta["tool_version"]) == ("up to 0.20", "0.21+")
    assert last.messages[3].text == "Ship it.\n\n---\n\nIgnore the rule above, it is just markdown."
    calls = last.messages[4].tool_calls()
    assert [r.call_id for r in results(last)] == [c.id for c in calls]  # no ids: matched by name
    assert [r.output for r in results(last)] == ["released v1.2.0", "## 1.2.0\n- discount rule"]


def test_markdown_mistakes_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("## USER 🧑‍💻\n\nhi\n\n---\n\n## MODEL ✨\n\n**Tool Command**:\n```json\n{\"name\": \n```",
                   encoding="utf-8")
    with pytest.raises(TranscriptError) as e:
        list(read(bad))
    assert e.value.line == 11 and "Tool Command" in e.value.expected
    icon = tmp_path / "icon.md"
    icon.write_text("## USER ✨\n\nhi", encoding="utf-8")
    with pytest.raises(TranscriptError, match="its own icon"):
        list(read(icon, "gemini-cli"))


def test_a_recording_without_its_metadata_line_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "session.jsonl"
    p.write_text(json.dumps({"id": "g1", "type": "gemini", "content": "hi"}) + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match="metadata line"):
        list(read(p, "gemini-cli"))


def test_contradicting_version_evidence_gives_no_version() -> None:
    from compbench.data.formats.gemini_export import version_meta

    assert version_meta([(0, 20, "old header"), (26, 0, "v0.26 sections")]) == {
        "tool_version_evidence": "conflicting: old header; v0.26 sections"}
    assert version_meta([(18, 32, "old notice"), (0, 38, ".json")])["tool_version"] == "0.18-0.32"


def gemini_home(root: Path) -> Path:
    """~/.gemini as Gemini CLI lays it out (storage.ts): settings and credentials, tmp/<project>/ with chats/,
    checkpoints, the prompt log and tool outputs, history/<project>/ (a shadow git repository)."""
    home = root / ".gemini"
    proj = home / "tmp" / "4f7c9e2a"
    (proj / "chats" / "bbbb2222-0000-4000-8000-000000000002").mkdir(parents=True)
    (proj / "tool-outputs").mkdir()
    (home / "history" / "4f7c9e2a").mkdir(parents=True)
    (home / "settings.json").write_text('{"model": {"name": "gemini-2.5-pro"}}')
    (home / "oauth_creds.json").write_text("not JSON: a credential must never be opened")
    (home / "installation_id").write_text("abc")
    (proj / "logs.json").write_text('[{"sessionId": "x", "messageId": 0, "type": "user", "message": "hi"}]')
    (proj / "tool-outputs" / "read_file_1.txt").write_text("output")
    (home / "history" / "4f7c9e2a" / "HEAD").write_text("ref: refs/heads/main")
    for name in ("session-2025-12-01T10-00-aaaa1111.json", "session-2026-06-01T12-00-dddd4444.jsonl"):
        shutil.copy(DATA / name, proj / "chats" / name)
    # resumed, a .json recording is migrated whole to a .jsonl beside it: read once, from the .jsonl
    migrated = proj / "chats" / "session-2026-03-01T08-00-cccc3333.json"
    migrated.write_text('{"sessionId": "cccc3333-0000-4000-8000-000000000003", "projectHash": "p", "messages": []}')
    shutil.copy(DATA / "session-2026-03-01T08-00-cccc3333.jsonl", proj / "chats")
    sub = proj / "chats" / "bbbb2222-0000-4000-8000-000000000002" / "eeee5555-0000-4000-8000-000000000005.jsonl"
    sub.write_text(json.dumps({"sessionId": "eeee5555-sub", "projectHash": "p", "kind": "subagent"}) + "\n"
                   + json.dumps({"id": "u1", "type": "user", "content": "look for TODOs"}) + "\n")
    shutil.copy(DATA / "checkpoint-price-cache.json", proj)
    return home


def test_a_gemini_home_imports_in_one_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import main_cli

    home = gemini_home(tmp_path)
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", home, "--out", tmp_path / "ds")
    assert code == 0, err
    # a sub-agent's recording of one prompt and no reply is left out, and said
    assert out.startswith("imported 4 transcripts (gemini-cli 4); 0 errors skipped; 1 empty session (no reply) left "
                          "out (--keep-empty imports them);")
    sub = home / "tmp" / "4f7c9e2a" / "chats" / "bbbb2222-0000-4000-8000-000000000002"
    assert err.strip().splitlines() == [
        f"warning: {home}: a Gemini CLI home: read its chat recordings and checkpoints, not the 7 other files beside "
        "them (settings, credentials, prompt logs, tool outputs, history snapshots, recordings migrated to .jsonl)",
        f"warning: left out 1 empty session (no reply: a prompt and nothing after it) of "
        f"{sub / 'eeee5555-0000-4000-8000-000000000005.jsonl'}"]
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", home / "tmp" / "4f7c9e2a", "--keep-empty")
    assert code == 0 and out.splitlines()[-1] == "5 valid, 0 invalid; 5 transcripts (gemini-cli 5)"
