"""``recorded``: the context after a replayed compaction is what the tool sent, on hand-made logs of each shape:
Codex's replacement history (its developer instructions put back, its encrypted summary sized as Codex sizes
it), Claude Code's re-attached files (modelled where the log leaves them out, read where 2.1.217 records them,
and the session's own context it announces again not counted twice)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from compbench.data.importing import iter_transcripts
from compbench.data.transcript import Transcript
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from compbench.strategies.recorded import LACKS_CODEX_BLOB, LACKS_CODEX_SUMMARY, LACKS_REATTACHED, codex_estimate

DEVELOPER = "<permissions instructions>\nsandbox_mode is workspace-write. " + "rule " * 400  # 2,000+ characters


def replay(tmp: Path, path: Path) -> tuple[Transcript, Any]:
    """The transcript read from ``path`` and its recorded row's compaction (one)."""
    (t,) = [t for t in iter_transcripts(path) if t.compactions]
    out = tmp / f"run-{path.stem}"
    write_run(out, RunSpec(strategies=("none", "recorded"), limits=ModelLimits(1_000_000, 8_000),
                           tokenizer="chars4", token_correction="none"), "hand-made", [t])
    c = pd.read_parquet(out / "compactions.parquet")
    (ev,) = c[c["strategy"] == "recorded"].itertuples()
    return t, ev


def codex_rollout(tmp: Path, name: str, developer: bool, blob: int) -> Path:
    """A Codex 0.77 rollout whose turn compacts: the replacement history keeps the first prompt, puts the developer
    instructions back (``developer``) and holds the encrypted summary (a ``compaction`` item of ``blob``
    characters; none with 0)."""
    def r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-12-29T21:00:00Z", "type": kind, "payload": payload}

    def msg(role: str, text: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    def count(n: int, total: int) -> dict[str, Any]:
        last = {"input_tokens": n, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": n + 10}
        tot = {**last, "input_tokens": total, "total_tokens": total + 10}
        return r("event_msg", {"type": "token_count", "info": {"last_token_usage": last, "total_token_usage": tot}})

    history = [msg("user", "fix the bug")] + ([msg("developer", DEVELOPER)] if developer else [])
    if blob:
        history.append({"type": "compaction", "encrypted_content": "gAAAAA" + "x" * (blob - 6)})
    records = [r("session_meta", {"id": name, "cwd": "/w", "cli_version": "0.77.0"}), r("turn_context", {"model": "m"}),
               r("response_item", msg("developer", DEVELOPER)), r("response_item", msg("user", "fix the bug")),
               r("response_item", msg("assistant", "looked " + "word " * 400)), count(2_000, 2_000),
               r("response_item", {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}),
               r("response_item", {"type": "function_call_output", "call_id": "c1", "output": "out " * 300}),
               count(2_500, 4_500),
               r("compacted", {"message": "", "replacement_history": history}),
               r("response_item", msg("assistant", "continuing")), count(900, 5_400)]
    p = tmp / f"rollout-2025-12-29T21-00-00-{name}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    return p


def test_codex_estimates_an_encrypted_item_as_its_source_does() -> None:
    assert codex_estimate(2_000) == 213  # (2,000 x 3/4 - 650) / 4, rounded up
    assert codex_estimate(800) == 0 and codex_estimate(None) == 0 and codex_estimate(True) == 0


def test_codex_replacement_history_puts_back_its_developer_instructions_and_its_encrypted_summary(
        tmp_path: Path) -> None:
    bare_t, bare = replay(tmp_path, codex_rollout(tmp_path, "bare", developer=False, blob=0))
    t, ev = replay(tmp_path, codex_rollout(tmp_path, "full", developer=True, blob=2_000))
    (rc,) = t.compactions
    assert rc.meta["encrypted"] and rc.meta["encrypted_chars"] == 2_000
    assert rc.meta["replacement"] == [["developer", DEVELOPER]]  # the kept prompt is a kept message, not added
    assert "replacement" not in bare_t.compactions[0].meta
    added = ev.tokens_after - bare.tokens_after
    expected = (len(DEVELOPER) + 3) // 4 + 4 + 213 + 4  # the developer message, the stand-in (4 per message)
    assert abs(added - expected) <= 0.03 * expected
    # what each log lacks is named beside the compaction: the blob's text, or the whole summary
    assert (ev.recorded_lacks, bare.recorded_lacks) == (LACKS_CODEX_BLOB, LACKS_CODEX_SUMMARY)


def claude_log(tmp: Path, name: str, version: str, file_text: str, attachments: list[dict[str, Any]]) -> Path:
    """A Claude Code session that reads a file, compacts automatically, and calls the model again; ``attachments``
    are the records the log persists after the summary (2.1.217 does)."""
    sid = "55555555-5555-4555-8555-55555555555" + name[-1]
    n = [0]

    def rec(kind: str, parent: str | None, **kw: Any) -> dict[str, Any]:
        n[0] += 1
        return {"parentUuid": parent, "isSidechain": False, "sessionId": sid, "version": version, "cwd": "/w",
                "type": kind, "uuid": f"{name}-{n[0]}", "timestamp": "2026-02-01T10:00:00.000Z", **kw}

    def call(parent: str, mid: str, content: list[dict[str, Any]], inp: int) -> dict[str, Any]:
        usage = {"input_tokens": 10, "cache_read_input_tokens": inp, "cache_creation_input_tokens": 0,
                 "output_tokens": 50}
        return rec("assistant", parent, message={"model": "claude-sonnet-4-5-20250929", "id": mid, "role": "assistant",
                                                 "type": "message", "content": content, "usage": usage})

    numbered = "\n".join(f"{k:>6}\u2192{line}" for k, line in enumerate(file_text.split("\n"), 1))
    out = [rec("user", None, message={"role": "user", "content": "Why does parse() fail on empty input?"})]
    out.append(call(out[-1]["uuid"], "m1", [{"type": "tool_use", "id": "t1", "name": "Read",
                                            "input": {"file_path": "/w/parse.py"}}], 20_000))
    out.append(rec("user", out[-1]["uuid"], message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": numbered}]}))
    out.append(call(out[-1]["uuid"], "m2", [{"type": "text", "text": "It indexes [0] unguarded."}], 22_000))
    boundary = rec("system", None, subtype="compact_boundary", content="Conversation compacted",
                   logicalParentUuid=out[-1]["uuid"], compactMetadata={"trigger": "auto", "preTokens": 160_000})
    out.append(boundary)
    out.append(rec("user", boundary["uuid"], isCompactSummary=True, message={
        "role": "user", "content": "This session is being continued from a previous conversation. Summary: "
                                   "parse() indexes [0] without a guard."}))
    for a in attachments:
        out.append(rec("attachment", out[-1]["uuid"], attachment=a))
    out.append(call(out[-1]["uuid"], "m3", [{"type": "text", "text": "Adding the guard."}], 9_000))
    p = tmp / f"{name}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in out), encoding="utf-8")
    return p


def test_claude_code_files_read_before_a_compaction_are_attached_again_where_the_log_leaves_them_out(
        tmp_path: Path) -> None:
    """2.1.49 persists no attachment: the recorded row attaches the file read before the compaction as Claude Code
    does (compbench.strategies.claude_code_restore), so a larger file makes a larger next prompt."""
    small = "def parse(s):\n    return s[0]"
    large = small + "\n" + "\n".join(f"# note {k} " + "x" * 60 for k in range(60))  # ~4,000 characters
    _, a = replay(tmp_path, claude_log(tmp_path, "s1", "2.1.49", small, []))
    _, b = replay(tmp_path, claude_log(tmp_path, "s2", "2.1.49", large, []))
    assert b.tokens_after - a.tokens_after > (len(large) - len(small)) // 4  # its content (and line numbers) in
    assert a.recorded_lacks == LACKS_REATTACHED  # modelled, and said so


def test_claude_code_attachments_the_log_records_are_sent_and_the_sessions_own_context_is_not_counted_twice(
        tmp_path: Path) -> None:
    """2.1.217 persists what it attached: the recorded row sends the recorded file (not a modelled one), and the
    context the session's first call carried, announced again (deferred tools, a SessionStart hook), stays in the
    hidden overhead that counts it."""
    attached = {"type": "file", "filename": "/w/other.py",
                "content": {"type": "text", "file": {"filePath": "/w/other.py", "content": "X = 1\n" * 100}}}
    again = [{"type": "deferred_tools_delta", "addedNames": ["WebFetch", "WebSearch"] * 50},
             {"type": "hook_success", "hookEvent": "SessionStart", "hookName": "SessionStart:compact",
              "content": "terse mode " * 200},
             {"type": "task_reminder", "content": [], "itemCount": 0}]
    t, a = replay(tmp_path, claude_log(tmp_path, "r1", "2.1.217", "def parse(s):\n    return s[0]",
                                       [attached, *again]))
    (rc,) = t.compactions
    (text,) = rc.meta["attached"]
    assert "/w/other.py" in text and "     1\u2192X = 1" in text
    assert rc.meta["attached_in_overhead"] == 2  # the empty task list carries nothing
    # the file read before the compaction is not modelled on top of what the log recorded
    _, b = replay(tmp_path, claude_log(tmp_path, "r2", "2.1.217", "def parse(s):\n" + "    pass\n" * 500,
                                       [attached, *again]))
    assert a.tokens_after == b.tokens_after
    assert a.recorded_lacks == ""  # the log holds what was attached
