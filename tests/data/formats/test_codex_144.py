"""Codex 0.144+ rollout shapes, on hand-made records: code mode (``exec`` scripts that read and patch files),
``world_state`` baselines, a ``context_compacted`` event four records after its ``compacted`` record, replacement
histories that end in a user message, ``thread_settings_applied``, a window that changes mid-session, and remote
compaction v2 (a ``compaction_trigger`` item)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compbench.data.formats.codex import read as read_codex
from compbench.data.transcript import ToolCall, Transcript
from compbench.measure.tokens import TokenCounter
from compbench.measure.workset import WorkingSet
from compbench.validation.reacquisition import observed_by_key

BLOB = "gAAAAAB" + "x" * 120
FILE = "/w/src/app/main.py"
BODY = "\n".join(f"def handler_{i}(request):  # route number {i} of the service" for i in range(40))
READ = f'const r = await tools.exec_command({{cmd:"sed -n \'1,200p\' {FILE}",workdir:"/w"}});text(r.output)'
PATCH = (f'const patch = "*** Begin Patch\\n*** Update File: {FILE}\\n@@\\n-def handler_1\\n+def handler_one\\n'
         '*** End Patch";\ntext(await tools.apply_patch(patch));')


def _r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-07-13T00:00:00Z", "type": kind, "payload": payload}


def _msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return _r("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def _count(total: int, window: int = 258_400, inp: int | None = None) -> dict[str, Any]:
    last = {"input_tokens": total - 10 if inp is None else inp, "cached_input_tokens": 0,
            "output_tokens": 10 if inp is None else 0, "reasoning_output_tokens": 0, "total_tokens": total}
    return _r("event_msg", {"type": "token_count", "info": {"last_token_usage": last, "model_context_window": window,
                                                             "total_token_usage": {"total_tokens": total * 7}}})


def _exec(cid: str, script: str, output: str, total: int) -> list[dict[str, Any]]:
    """One model call running an ``exec`` script: the call, its output parts (as 0.144 writes them), its usage."""
    out = [{"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
           {"type": "input_text", "text": output}]
    return [_r("response_item", {"type": "custom_tool_call", "call_id": cid, "name": "exec", "input": script,
                                 "status": "completed"}),
            _r("response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": out}),
            _count(total)]


WORLD = _r("world_state", {"full": True, "state": {"agents_md": {"text": "# Global preferences\n" * 50},
                                                    "skills": {"includeInstructions": True}}})


def _compacted(history_tail: list[dict[str, Any]], message: str = "") -> dict[str, Any]:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the routes"}]}
    dev = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]}
    return _r("compacted", {"message": message, "replacement_history": [user, dev, *history_tail],
                            "window_id": "w2"})


def _rollout(compacted: dict[str, Any], *, after: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A code-mode session: read main.py, patch it, compact (then ``after``: by default world_state, turn_context,
    the estimate of the new history, context_compacted, as 0.144 writes them), read it again."""
    tail = after if after is not None else [WORLD, _r("turn_context", {"model": "gpt-5.6-sol"}), _count(15_000, inp=0),
                                            _r("event_msg", {"type": "context_compacted"})]
    return [_r("session_meta", {"id": "s144", "cwd": "/w", "cli_version": "0.144.2"}),
            _r("event_msg", {"type": "task_started", "turn_id": "t1", "model_context_window": 353_400}),
            _msg("developer", "<permissions>"), _msg("user", "# AGENTS.md instructions for /w"), WORLD,
            _r("event_msg", {"type": "thread_settings_applied", "thread_settings": {
                "model": "gpt-5.6-sol", "model_provider_id": "openai", "reasoning_effort": "medium"}}),
            _msg("user", "fix the routes"),
            _r("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "REDACTED"}),
            *_exec("c1", READ, BODY, 20_000),
            _r("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "REDACTED"}),
            *_exec("c2", PATCH, "Success. Updated the following files:\nM src/app/main.py", 30_000),
            compacted, *tail,
            *_exec("c3", READ, BODY, 16_000),
            _msg("assistant", "done"), _count(17_000)]


def _read(tmp_path: Path, records: list[dict[str, Any]]) -> Transcript:
    p = tmp_path / "rollout.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (t,) = read_codex(p)
    return t


ENCRYPTED = _compacted([{"type": "compaction", "encrypted_content": BLOB}])


def test_an_exec_script_stays_as_the_model_wrote_it_and_lists_the_calls_it_makes(tmp_path: Path) -> None:
    t = _read(tmp_path, _rollout(ENCRYPTED))
    calls = [(m, p) for m in t.messages for p in m.parts if isinstance(p, ToolCall)]
    assert [(p.id, p.name, p.args) for _, p in calls] == [("c1", "exec", READ), ("c2", "exec", PATCH),
                                                          ("c3", "exec", READ)]  # counted as the JS the model saw
    inner = [m.meta["inner_calls"][p.id] for m, p in calls]
    assert inner[0] == [["exec_command", json.dumps({"cmd": f"sed -n '1,200p' {FILE}", "workdir": "/w"})]]
    assert inner[1] == [["apply_patch", f"*** Begin Patch\n*** Update File: {FILE}\n@@\n-def handler_1\n"
                                        "+def handler_one\n*** End Patch"]]
    (result,) = t.messages[4].tool_results()
    assert result.output == "Script completed\nWall time 0.1 seconds\nOutput:\n\n" + BODY
    assert t.meta["exec_inner_calls"] == 3 and t.warnings == (
        "2 reasoning items' encrypted_content is a placeholder, not an encrypted blob (redacted): imported without "
        "the blob",)


def test_reads_edits_and_re_reads_inside_scripts_are_seen_as_plain_calls(tmp_path: Path) -> None:
    """The working set keys the script's read as a file read, its patch as an edit of that file, and the read
    after the compaction as re-acquiring what the agent had; without the inner calls it saw nothing."""
    t = _read(tmp_path, _rollout(ENCRYPTED))
    counter = TokenCounter("chars4")
    ws = WorkingSet.build(t, counter.index(t).part_tokens)
    assert [(d.key, d.kind, d.message) for d in ws.deliveries] == [("file:app/main.py", "file", 4),
                                                                   ("file:app/main.py", "file", 8)]
    assert [(i, u.key, u.how) for i, us in ws.uses.items() for u in us] == [(5, "file:app/main.py", "edit")]
    (rc,) = t.compactions
    assert observed_by_key(ws, rc.index, len(t.messages)) == {"file:app/main.py": ws.deliveries[1].tokens}
    bare = Transcript(t.id, t.source, tuple(type(m)(m.id, m.role, m.parts, m.usage, {}) for m in t.messages))
    assert WorkingSet.build(bare, counter.index(bare).part_tokens).deliveries == ()


def test_world_state_is_a_baseline_not_context(tmp_path: Path) -> None:
    """Codex sends its sections as the messages the rollout records (AGENTS.md, developer instructions); the
    world_state record is the snapshot it diffs the next update against: no message of its own."""
    with_state = _read(tmp_path, _rollout(ENCRYPTED))
    without = _read(tmp_path, [r for r in _rollout(ENCRYPTED) if r["type"] != "world_state"])
    assert [(m.role, m.text) for m in with_state.messages] == [(m.role, m.text) for m in without.messages]
    assert with_state.meta["world_states"] == 2 and "world_states" not in without.meta
    assert not any("unknown type" in w for w in with_state.warnings)


def test_context_compacted_four_records_after_its_record(tmp_path: Path) -> None:
    (rc,) = _read(tmp_path, _rollout(ENCRYPTED)).compactions
    assert (rc.meta["line"], rc.meta["event_line"]) == (16, 20)  # world_state, turn_context, the estimate between
    assert (rc.meta["estimate_after"], rc.meta["model_context_window"]) == (15_000, 258_400)
    late = _rollout(ENCRYPTED, after=[WORLD, _r("turn_context", {}), _count(15_000, inp=0), WORLD, WORLD,
                                      _r("event_msg", {"type": "context_compacted"})])
    assert _read(tmp_path, late).compactions[0].meta["event_line"] == 22
    stray = _read(tmp_path, [*_rollout(ENCRYPTED), _r("event_msg", {"type": "context_compacted"})])
    assert stray.warnings[-1] == "1 context_compacted events follow no compacted record (no compaction made of them)"
    assert len(stray.compactions) == 1


def test_the_session_settings_and_its_windows(tmp_path: Path) -> None:
    t = _read(tmp_path, _rollout(ENCRYPTED))
    assert (t.meta["model"], t.meta["provider"], t.meta["effort"]) == ("gpt-5.6-sol", "openai", "medium")
    assert (t.meta["model_context_window"], t.meta["model_context_windows"]) == (353_400, [353_400, 258_400])


def test_an_encrypted_summary_item(tmp_path: Path) -> None:
    (rc,) = _read(tmp_path, _rollout(ENCRYPTED)).compactions
    assert (rc.trigger, rc.summary, rc.kept_ids) == ("auto", "", ("m2",))
    assert {k: rc.meta[k] for k in ("encrypted", "summary_item", "encrypted_chars", "replacement")} == {
        "encrypted": True, "summary_item": "encrypted", "encrypted_chars": len(BLOB),
        "replacement": [["developer", "<permissions>"]]}
    redacted = _compacted([{"type": "compaction", "encrypted_content": "REDACTED"}])
    (rc,) = _read(tmp_path, _rollout(redacted)).compactions
    assert rc.meta["summary_item"] == "encrypted" and "encrypted_chars" not in rc.meta  # no size to estimate


def test_a_history_ending_in_the_last_user_message_with_no_compaction_item(tmp_path: Path) -> None:
    """0.140-0.142's remote compactions: the summary is nowhere in the log (not readable, not sized)."""
    (rc,) = _read(tmp_path, _rollout(_compacted([]))).compactions
    assert (rc.summary, rc.kept_ids, rc.meta["summary_item"], rc.meta["encrypted"]) == ("", ("m2",), "absent", True)
    assert "encrypted_chars" not in rc.meta


def test_a_local_summary_message_is_the_summary_never_a_kept_message(tmp_path: Path) -> None:
    summary = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": (
        "Another language model started to solve this problem and produced a summary of its thinking process.\n"
        "main.py routes renamed")}]}
    for message in ("", "main.py routes renamed"):
        (rc,) = _read(tmp_path, _rollout(_compacted([summary], message))).compactions
        assert (rc.summary, rc.kept_ids, rc.meta["summary_item"], rc.meta["encrypted"]) == (
            "main.py routes renamed", ("m2",), "text", False)
        assert rc.meta["replacement"] == [["developer", "<permissions>"]]  # the summary is not re-inserted


def test_remote_compaction_v2(tmp_path: Path) -> None:
    """0.147+: a compaction_trigger item marks the request; its compacted record is the compaction. A log that
    records only the compaction item after the trigger still has its compaction, there."""
    trigger = _r("response_item", {"type": "compaction_trigger"})
    records = _rollout(ENCRYPTED)
    at = records.index(ENCRYPTED)
    (rc,) = _read(tmp_path, [*records[:at], trigger, *records[at:]]).compactions
    assert (rc.meta["remote"], rc.trigger, rc.kept_ids) == ("v2", "auto", ("m2",)) and "recorded_as" not in rc.meta
    item = _r("response_item", {"type": "compaction", "encrypted_content": BLOB})
    t = _read(tmp_path, [*records[:at], trigger, item, *records[at + 1:]])
    (rc,) = t.compactions
    assert (rc.index, rc.trigger, rc.kept_ids, rc.meta["remote"], rc.meta["recorded_as"]) == (
        7, "auto", ("m2",), "v2", "compaction item, no record")
    assert rc.meta["encrypted_chars"] == len(BLOB) and rc.meta["event_line"] == 21
    assert not any("unknown type" in w for w in t.warnings)
    # the item and then its record: one compaction, the record's
    t = _read(tmp_path, [*records[:at], trigger, item, *records[at:]])
    (rc,) = t.compactions
    assert (rc.index, rc.meta["line"], rc.meta["remote"], rc.meta["event_line"]) == (7, 18, "v2", 22)
    assert "recorded_as" not in rc.meta and not t.warnings[1:]


def test_a_tool_output_keeps_its_recorded_items_size(tmp_path: Path) -> None:
    """Codex estimates a pending output from the item it serializes (``input_text`` parts, the turn's metadata):
    the importer keeps that size, the strategy counts it while the output is as recorded, its text once changed."""
    from compbench.data.transcript import Usage
    from compbench.sdk.session import ModelLimits
    from compbench.strategies import resolve
    from compbench.strategies.codex import item_tokens
    from helpers import view_of

    output = {"type": "custom_tool_call_output", "call_id": "c1",
              "output": [{"type": "input_text", "text": "Script completed\n"},
                         {"type": "input_text", "text": "x" * 400}],
              "internal_chat_message_metadata_passthrough": {"turn_id": "t1"}}
    path = tmp_path / "r.jsonl"
    records = [{"timestamp": "2026-07-13T00:00:00Z", "type": t, "payload": p} for t, p in (
        ("session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.144.2"}),
        ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("response_item", {"type": "custom_tool_call", "name": "exec", "input": "1", "call_id": "c1"}),
        ("response_item", output))]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (t,) = read_codex(path)
    tool = t.messages[-1]
    size = len(json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode())
    assert tool.meta["wire_bytes"] == size == 604
    assert item_tokens(tool) == 151 and item_tokens(tool, as_recorded=False) == 120  # the text alone: 31 fewer
    view = view_of(t.messages, TokenCounter("chars4"), ModelLimits(272_000, 128_000))
    view.last_usage = Usage(input=100)
    codex = resolve("codex:preset=current").create()
    assert codex.pending_tokens(view) == 151
    view.entries[-1].pruned[0] = "[pruned]"
    assert codex.pending_tokens(view) == item_tokens(view.entries[-1].rendered(), as_recorded=False) < 151
