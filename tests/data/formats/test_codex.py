"""Codex rollout importer: exact counts on the real rollouts (read in place, never copied: they carry no
licence), hand-made records written by these tests for the shapes the real files lack, malformed input.

Expected values were established from the raw JSONL with one-off ``python3 -c`` scripts independent of
the importer: response_item counts by type and role, ``token_count`` records whose ``total_token_usage``
moved (one per model call: 280 and 173, as many as ``turn_context`` records), their usage sums, and the
``compacted`` record's replacement history.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import need_shared

from compbench.data.formats import read
from compbench.data.formats.codex import read as read_codex
from compbench.data.formats.detect import detect
from compbench.data.formats.native import read as read_native
from compbench.data.transcript import Reasoning, ToolCall, ToolResult, Transcript, Usage, to_jsonl
from compbench.errors import TranscriptError

A = "TravelBlogs__rollout-2025-12-20T18-34-53-019b3cd4-2000-7553-b475-7027684d1f18.jsonl"  # cli 0.72.0
B = "TravelBlogs__rollout-2025-12-29T21-39-00-019b6bd5-ed54-7b23-873a-2177ca046ce3.jsonl"  # cli 0.77.0

# file: user, assistant, tool messages; calls, results; session-prefix user messages
COUNTS = {A: (86, 280, 195, 195, 195, 1), B: (16, 173, 159, 159, 159, 2)}
# file: first call's usage; calls with usage; sums of input, cache_read, output, reasoning
USAGE = {
    A: (Usage(3_602, 42, 2_944, 0, 0), 280, (17_158_824, 16_540_928, 71_956, 17_344)),
    B: (Usage(4_190, 34, 3_200, 0, 0), 173, (14_492_825, 13_910_016, 70_003, 32_448)),
}
META = {A: ("gpt-5.1-codex-max", "0.72.0", "019b3cd4-2000-7553-b475-7027684d1f18"),
        B: ("gpt-5.2-codex", "0.77.0", "019b6bd5-ed54-7b23-873a-2177ca046ce3")}

_cache: dict[str, Transcript] = {}


def _path(transcripts_dir: Path, name: str) -> Path:
    path = transcripts_dir / "codex" / name
    need_shared(path, "real rollout")
    return path


def _real(transcripts_dir: Path, name: str) -> Transcript:
    if name not in _cache:
        (_cache[name],) = read(_path(transcripts_dir, name))
    return _cache[name]


@pytest.mark.parametrize("name", [A, B])
def test_detected_as_codex(transcripts_dir: Path, name: str) -> None:
    assert detect(_path(transcripts_dir, name)) == "codex"


@pytest.mark.parametrize("name", [A, B])
def test_counts_and_meta(transcripts_dir: Path, name: str) -> None:
    t = _real(transcripts_dir, name)
    roles = Counter(m.role for m in t.messages)
    user, asst, tool, calls, results, prefix = COUNTS[name]
    assert (roles["user"], roles["assistant"], roles["tool"], roles["system"]) == (user, asst, tool, 0)
    assert (t.count_parts(ToolCall), t.count_parts(ToolResult)) == (calls, results)
    assert sum(1 for m in t.messages if m.meta.get("session_prefix")) == prefix
    assert [m.id for m in t.messages] == [f"m{i}" for i in range(len(t.messages))]
    assert not any(p.orphan for m in t.messages for p in m.tool_results()) and t.warnings == ()
    model, version, sid = META[name]
    assert (t.meta["model"], t.meta["tool_version"], t.id, t.meta["session_id"]) == (model, version, sid, sid)
    assert (t.meta["cwd"], t.meta["model_context_window"]) == ("/Users/tommy/Development/TravelBlogs", 258_400)


@pytest.mark.parametrize("name", [A, B])
def test_usage_once_per_call(transcripts_dir: Path, name: str) -> None:
    t = _real(transcripts_dir, name)
    first, n, sums = USAGE[name]
    assistants = [m for m in t.messages if m.role == "assistant"]
    assert assistants[0].usage == first
    usages = [m.usage for m in assistants if m.usage is not None]
    assert len(usages) == n == len(assistants)
    assert tuple(sum(getattr(u, k) for u in usages) for k in ("input", "cache_read", "output", "reasoning")) == sums
    # reasoning is stored (encrypted blobs flagged), never as model-visible text
    assert all(p.encrypted for m in assistants for p in m.parts if isinstance(p, Reasoning) and len(p.text) > 2000)


def test_remote_compaction(transcripts_dir: Path) -> None:
    t = _real(transcripts_dir, B)
    assert not _real(transcripts_dir, A).compactions
    (c,) = t.compactions
    # the last call before it: input 210,336 + output 316; the compaction ran after a tool output, mid-turn
    assert (c.index, c.trigger, c.tokens_before, c.summary) == (343, "auto", 210_652, "")
    # the encrypted summary's blob is in the rollout: its length, which Codex sizes it by; the context_compacted
    # event right after it; Codex's estimate of the new history in the zero-input token count two records later
    assert c.meta == {"line": 1153, "encrypted": True, "summary_item": "encrypted", "replacement_items": 31,
                      "encrypted_chars": 6520, "model_context_window": 258_400, "event_line": 1154,
                      "estimate_after": 8_581,
                      "trigger_evidence": "inside a turn (after a tool output or a model call)"}
    users = [m.id for m in t.messages if m.role == "user"]
    assert c.kept_ids == tuple(users) and len(users) == 16  # every user message is in replacement_history
    assert t.messages[c.index - 1].role == "tool" and t.messages[c.index].role == "assistant"
    assert "replayed_items_skipped" not in t.meta


def test_round_trip_through_native_jsonl(transcripts_dir: Path, tmp_path: Path) -> None:
    t = _real(transcripts_dir, B)
    p = tmp_path / "native.jsonl"  # a temporary file, removed with tmp_path: nothing lands in the project
    p.write_text(to_jsonl(t), encoding="utf-8")
    assert list(read_native(p)) == [t]


# --- hand-made rollouts -----------------------------------------------------------------------------


BLOB = "gAAAAAB" + "x" * 120  # a Fernet token's shape (the real ones are 868+ characters)


def _r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def _msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return _r("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def _count(inp: int, out: int, total: int) -> dict[str, Any]:
    last = {"input_tokens": inp, "cached_input_tokens": inp // 2, "output_tokens": out,
            "reasoning_output_tokens": 0, "total_tokens": inp + out}
    return _r("event_msg", {"type": "token_count", "info": {"last_token_usage": last,
                                                             "total_token_usage": {"total_tokens": total}}})


def _rollout() -> list[dict[str, Any]]:
    return [
        _r("session_meta", {"id": "sess", "cwd": "/w", "cli_version": "0.77.0", "timestamp": "2026-01-01T00:00:00Z"}),
        _r("turn_context", {"model": "gpt-x"}),
        _msg("developer", "be careful"),
        _msg("user", "<environment_context>cwd</environment_context>"),
        _msg("user", "fix the bug"),
        _r("event_msg", {"type": "user_message", "message": "fix the bug"}),
        _r("event_msg", {"type": "token_count", "info": None}),
        _r("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}],
                              "encrypted_content": BLOB}),
        _r("response_item", {"type": "function_call", "name": "shell", "arguments": "{\"cmd\":\"ls\"}",
                              "call_id": "c1"}),
        _r("response_item", {"type": "function_call_output", "call_id": "c1",
                              "output": {"content": "denied", "success": False}}),
        _count(100, 10, 110),  # arrives after the output: still the c1 call's usage
        _count(100, 10, 110),  # re-emitted at the next request: not a call
        _r("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin",
                              "call_id": "c2", "status": "completed"}),
        _r("response_item", {"type": "custom_tool_call_output", "call_id": "c2", "output": "ok"}),
        _r("response_item", {"type": "function_call_output", "call_id": "zz", "output": "late"}),
        _msg("assistant", "done"),
        _count(200, 20, 330),
        _r("response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
        _r("response_item", {"type": "future_item"}),
        _r("mystery", {}),
        _r("event_msg", {"type": "user_message", "message": "/compact"}),
        _r("compacted", {"message": "SUMMARY", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUMMARY"}]}]}),
        _msg("user", "fix the bug"),  # the replacement history re-emitted: not imported twice
        _msg("user", "SUMMARY"),
        _msg("user", "next"),
        _msg("assistant", "ok"),
        _count(50, 5, 385),
    ]


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    p = tmp_path / "rollout.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def test_hand_made_rollout(tmp_path: Path) -> None:
    p = _write(tmp_path, _rollout())
    assert detect(p) == "codex"
    (t,) = read_codex(p)
    assert [(m.id, m.role) for m in t.messages] == [
        ("m0", "system"), ("m1", "user"), ("m2", "user"), ("m3", "assistant"), ("m4", "tool"), ("m5", "assistant"),
        ("m6", "tool"), ("m7", "tool"), ("m8", "assistant"), ("m9", "user"), ("m10", "assistant")]
    assert t.messages[1].meta["session_prefix"] is True and "session_prefix" not in t.messages[2].meta
    assert [type(p).__name__ for p in t.messages[3].parts] == ["Reasoning", "Reasoning", "ToolCall"]
    assert t.messages[3].usage == Usage(100, 10, 50, 0, 0)
    assert t.messages[5].usage is None  # its only count was the re-emission
    assert t.messages[4].tool_results()[0] == ToolResult("c1", "shell", "denied", True, False)
    assert t.messages[7].tool_results()[0].orphan
    assert t.messages[8].usage == Usage(200, 20, 100, 0, 0)
    (c,) = t.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary, c.kept_ids) == (9, "manual", 220, "SUMMARY", ("m2",))
    assert c.meta["encrypted"] is False and t.meta["replayed_items_skipped"] == 2
    assert t.warnings == ("line 15: tool output zz has no matching call (kept, flagged orphan)",
                          "skipped 1 records of unknown type 'mystery'",
                          "skipped 1 response items of unknown type 'future_item'")
    assert (t.meta["model"], t.meta["tool_version"], t.id) == ("gpt-x", "0.77.0", "sess")


@pytest.mark.parametrize("kind", [["deep", ["list"]], {"an": "object"}, 7, None])
def test_an_event_whose_type_is_not_a_string_is_an_unknown_event(tmp_path: Path, kind: Any) -> None:
    """A newer or damaged writer's event_msg whose type is a list or an object: passed over as an event we do not
    know, the rollout read as without it (not an importer failure)."""
    base = _rollout()
    (plain,) = read_codex(_write(tmp_path, base))
    odd = [*base[:3], _r("event_msg", {"type": kind}), *base[3:]]
    (t,) = read_codex(_write(tmp_path, odd))
    assert [(m.role, m.text) for m in t.messages] == [(m.role, m.text) for m in plain.messages]


def test_compaction_between_turns_without_command_is_auto(tmp_path: Path) -> None:
    recs = [r for r in _rollout() if r["payload"].get("message") != "/compact"]
    (t,) = read_codex(_write(tmp_path, recs))
    assert t.compactions[0].trigger == "auto"
    assert t.compactions[0].meta["trigger_evidence"].startswith("between turns")


def test_truncated_line(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _rollout()]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines[:6]) + "\n" + lines[6][:30] + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match="a complete JSON object") as e:
        list(read(p))
    assert e.value.line == 7


def test_invalid_utf8(tmp_path: Path) -> None:
    lines = [json.dumps(r).encode() for r in _rollout()]
    lines[4] = lines[4].replace(b"fix the", b"fix \xff the")
    p = tmp_path / "u.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(TranscriptError, match="UTF-8") as e:
        list(read(p, "codex"))
    assert e.value.line == 5


@pytest.mark.parametrize(("index", "payload", "expected"), [
    (2, {"type": "message", "role": "developer", "content": 3}, "a message 'content' list"),
    (4, {"type": "message", "role": "robot", "content": []}, "a message role user|assistant|developer|system"),
    (8, {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": 9}, "a string 'call_id'"),
    (8, {"type": "function_call", "name": "shell", "arguments": {}, "call_id": "c1"}, "string 'arguments'"),
    (9, {"type": "function_call_output", "output": "x"}, "a string 'call_id'"),
    (10, {"type": "token_count", "info": {"last_token_usage": {"input_tokens": "many"}}}, "integers"),
    (1, "not an object", "a turn_context record with a 'payload' object"),
])
def test_wrong_types_name_their_line(tmp_path: Path, index: int, payload: Any, expected: str) -> None:
    recs = _rollout()
    recs[index]["payload"] = payload
    with pytest.raises(TranscriptError, match=expected) as e:
        list(read_codex(_write(tmp_path, recs)))
    assert e.value.line == index + 1


def test_no_history(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="at least one response_item message"):
        list(read_codex(_write(tmp_path, _rollout()[:2])))


# --- 0.14x turns: a /compact task, a pre-turn compaction, redacted reasoning ------------------------------


def _turn(*records: dict[str, Any], end: str | None = "task_complete") -> list[dict[str, Any]]:
    """One turn of a 0.14x rollout: task_started, the records, and its end event (None: the log stops)."""
    tail = [_r("event_msg", {"type": end, "turn_id": "t"})] if end else []
    return [_r("event_msg", {"type": "task_started", "turn_id": "t"}), *records, *tail]


def _compacted() -> dict[str, Any]:
    return _r("compacted", {"message": "", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
        {"type": "compaction", "encrypted_content": BLOB}]})


def _v14x(*turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = [_r("session_meta", {"id": "s14", "cwd": "/w", "cli_version": "0.142.5"}),
            _r("turn_context", {"model": "m"})]
    first = _turn(_msg("user", "fix the bug"), _msg("assistant", "done"), _count(200, 20, 220))
    return [*head, *first, *(r for t in turns for r in t)]


def _trigger(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[str, str]:
    (t,) = read_codex(_write(tmp_path, records))
    (c,) = t.compactions
    return c.trigger, str(c.meta["trigger_evidence"])


def test_a_compaction_alone_in_its_turn_is_the_compact_task(tmp_path: Path) -> None:
    """0.14x records no /compact input: the compaction is a turn of its own, with nothing before or after it."""
    later = _turn(_msg("user", "go on"), _msg("assistant", "ok"), _count(50, 5, 275))
    for end in ("task_complete", "turn_aborted"):
        trigger, why = _trigger(tmp_path, _v14x(_turn(_compacted(), _count(0, 0, 220), end=end), later))
        assert (trigger, why) == ("manual", "a turn of its own: no user input and no model call before or after it "
                                            "(Codex's /compact task)")
    # a turn that never records its end: the next turn's start closes it
    trigger, _ = _trigger(tmp_path, _v14x(_turn(_compacted(), end=None), later))
    assert trigger == "manual"
    # the turn before ended on a model call with no usage recorded: its end closed the call, no mid-turn
    records = _v14x(_turn(_msg("user", "more"), _msg("assistant", "sure")), _turn(_compacted()), later)
    assert _trigger(tmp_path, records)[0] == "manual"


def test_a_compaction_whose_turn_goes_on_is_pre_turn_auto(tmp_path: Path) -> None:
    """Codex compacts before recording the new prompt; the turn then goes on: auto. Context messages
    (developer, AGENTS.md) recorded after it do not decide; the prompt or a model call does."""
    for after in ([_msg("user", "next")], [_msg("assistant", "resuming")]):
        records = _v14x(_turn(_compacted(), _msg("developer", "perms"), _msg("user", "# AGENTS.md instructions x"),
                              *after, _msg("assistant", "ok"), _count(30, 3, 253)))
        assert _trigger(tmp_path, records) == (
            "auto", "at the start of a turn that went on with the user's prompt (Codex's pre-turn auto compaction)")


def test_a_compaction_in_a_turn_that_has_begun_is_not_the_compact_task(tmp_path: Path) -> None:
    """Something in its turn before it (here the prompt): never the /compact task, whatever follows."""
    records = _v14x(_turn(_msg("user", "next"), _compacted(), end="task_complete"))
    assert _trigger(tmp_path, records) == (
        "auto", "between turns, no /compact input recorded (Codex's default path assumed)")


def test_a_compaction_at_the_start_of_a_turn_the_log_ends_in_stays_auto(tmp_path: Path) -> None:
    trigger, why = _trigger(tmp_path, _v14x(_turn(_compacted(), end=None)))
    assert (trigger, why) == ("auto", "at the start of a turn the log ends in (no user input or model call after it)")


@pytest.mark.parametrize(("blob", "redacted"), [
    ("REDACTED", True), ("[REDACTED]" * 20, True),  # placeholders: too short, or not base64
    ("g" * 99, True), ("g" * 100, False),  # the shortest Fernet token is 100 base64 characters
    (BLOB + "==", False), ("gAAAAA-_" * 20, False),  # padding, the urlsafe alphabet
])
def test_a_placeholder_is_not_an_encrypted_blob(tmp_path: Path, blob: str, redacted: bool) -> None:
    records = _v14x(_turn(_msg("user", "think"),
                          _r("response_item", {"type": "reasoning", "summary": [], "encrypted_content": blob}),
                          _count(10, 1, 231)))
    (t,) = read_codex(_write(tmp_path, records))
    call = t.messages[-1]
    assert call.role == "assistant" and call.usage == Usage(10, 1, 5, 0, 0)  # the call is kept either way
    (part,) = call.parts
    assert isinstance(part, Reasoning) and part.encrypted and part.text == ("" if redacted else blob)
    assert t.meta.get("reasoning_redacted") == (1 if redacted else None)
    assert any("placeholder" in w for w in t.warnings) is redacted


def test_redacted_reasoning_is_stood_in_like_unrecorded_reasoning(tmp_path: Path) -> None:
    """Fidelity fills a redacted blob as it fills a missing one (from the call's reported reasoning tokens);
    a rollout with real blobs keeps them."""
    from compbench.run.missing_usage import blob_chars, complete

    def rollout(blob: str) -> Path:
        count = _count(10, 4, 231)
        count["payload"]["info"]["last_token_usage"]["reasoning_output_tokens"] = 100
        return _write(tmp_path, _v14x(_turn(
            _msg("user", "think"), _r("response_item", {"type": "reasoning", "summary": [], "encrypted_content": blob}),
            count), _turn(_compacted())))

    (t,) = read_codex(rollout("REDACTED"))
    filled, notes = complete(t)
    (stand_in, marker) = filled.messages[-1].parts
    assert isinstance(stand_in, Reasoning) and stand_in.encrypted and marker == Reasoning("", encrypted=True)
    from compbench.strategies.codex import reasoning_item_tokens

    assert len(stand_in.text) == blob_chars(100) and reasoning_item_tokens(stand_in.text) == 135
    assert notes[0].startswith("the rollout records no encrypted reasoning (redacted): 1 calls' blobs stood in")
    (t,) = read_codex(rollout(BLOB))
    assert complete(t) == (t, {})
