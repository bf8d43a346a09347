"""``recorded`` on a hand-made log of each tool that records its compactions, read as a user's log is (the
importer of its format): every compaction the log records is replayed, before the call the log recorded after
it, with the tool's own summary, replacing only what the log recorded before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from aider_logs import request
from stores import crush_db, part

from compbench.data.importing import iter_transcripts
from compbench.data.transcript import Transcript
from compbench.run.spec import RunSpec
from compbench.run.write import write_run
from compbench.sdk.session import ModelLimits
from helpers import FIXTURES

FILES = {  # hand-made fixtures of each shape a tool records a compaction in
    "claude-code 2.1": "shapes/claude-2.1-records.jsonl",
    "claude-code 2.1.217": "shapes/claude-2.1.217-preserved.jsonl",
    "cline": "cline-family/saoudrizwan.claude-dev/tasks/1700000000001/api_conversation_history.json",
    "cline markdown": "cline-family/exports/cline_task_mar-1-2025_8-00-00-am.md",
    "roo-code": "cline-family/roo-v1/0d0d0d0d-0000-4000-8000-000000000003/api_conversation_history.json",
    "kilo-code": "cline-family/kilocode.kilo-code/tasks/0d0d0d0d-0000-4000-8000-000000000004/"
                 "api_conversation_history.json",
    "gemini-cli": "gemini-cli/session-2025-11-20T15-00-eeee5555.json",
    "pi": "pi-current.jsonl",
    "goose": "shapes/goose-session.jsonl",
    "openhands v1": "shapes/openhands/v1-events.jsonl",
    "openhands v0": "shapes/openhands/v0-trajectory.json",
    "copilot": "shapes/copilot/77777777-7777-4777-8777-777777777777/events.jsonl",
}


def _codex(tmp: Path) -> Path:
    """A Codex 0.14x rollout: a turn, an automatic compaction whose replacement history keeps the first prompt,
    a turn after it."""
    def r(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-05-01T10:00:00Z", "type": kind, "payload": payload}

    def msg(role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return r("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    def count(total: int) -> dict[str, Any]:
        usage = {"input_tokens": total - 20, "cached_input_tokens": 0, "output_tokens": 20, "total_tokens": total}
        return r("event_msg", {"type": "token_count", "info": {"last_token_usage": usage,
                                                                "total_token_usage": usage}})

    def turn(*records: dict[str, Any]) -> list[dict[str, Any]]:
        return [r("event_msg", {"type": "task_started", "turn_id": "t"}), *records,
                r("event_msg", {"type": "task_complete", "turn_id": "t"})]

    records = [r("session_meta", {"id": "cx", "cwd": "/w", "cli_version": "0.142.5"}),
               r("turn_context", {"model": "m"}),
               *turn(msg("user", "fix the bug " + "word " * 400), msg("assistant", "looked " + "word " * 400),
                     count(900), msg("user", "and the tests"), msg("assistant", "done"), count(1_000)),
               *turn(msg("user", "next " + "word " * 50),
                     r("compacted", {"message": "SUMMARY of the work", "replacement_history": [
                         {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                           "text": "fix the bug"}]}]}),
                     msg("assistant", "ok"), count(300))]
    p = tmp / "rollout-2026-05-01T10-00-00-cx.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    return p


def _opencode(tmp: Path) -> Path:
    """An OpenCode export: a step, an automatic compaction (marker, summary, continue), a step after it."""
    def m(mid: str, role: str, parts: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
        return {"info": {"id": mid, "sessionID": "ses_x", "role": role, **info},
                "parts": [{"id": f"prt_{mid}_{i}", "sessionID": "ses_x", "messageID": mid, **p}
                          for i, p in enumerate(parts)]}

    def step(text: str, inp: int) -> list[dict[str, Any]]:
        return [{"type": "step-start"}, {"type": "text", "text": text},
                {"type": "step-finish", "reason": "stop", "cost": 0.0,
                 "tokens": {"input": inp, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}}}]

    doc = {"info": {"id": "ses_x", "title": "t", "version": "1.3.0", "directory": "/w", "time": {"created": 0}},
           "messages": [
               m("msg_u1", "user", [{"type": "text", "text": "go " + "word " * 400}]),
               m("msg_a1", "assistant", step("one " + "word " * 400, 900), modelID="m1", providerID="p1"),
               m("msg_u2", "user", [{"type": "compaction", "auto": True}]),
               m("msg_s", "assistant", step("SUMMARY", 950), summary=True, modelID="m1"),
               m("msg_c", "user", [{"type": "text", "text": "Continue if you have next steps, or stop.",
                                    "synthetic": True}]),
               m("msg_u3", "user", [{"type": "text", "text": "thanks"}]),
               m("msg_a3", "assistant", step("welcome", 120), modelID="m1", providerID="p1")]}
    p = tmp / "ses_x.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def _crush(tmp: Path) -> Path:
    """A Crush store: a run, its summary and the re-queued prompt (Crush's automatic summarize), a run after."""
    finish = part("finish", reason="end_turn", time=1)

    def m(mid: str, role: str, text: str, **kw: object) -> dict[str, object]:
        return {"id": mid, "role": role, "parts": [part("text", text=text), finish], **kw}

    from compbench.data.formats.crush_db import REQUEUE_PREFIX
    msgs = [m("u0", "user", "fix bug " + "word " * 400),
            m("a0", "assistant", "looked " + "word " * 400, model="claude-haiku-4.5", provider="copilot"),
            m("sum", "assistant", "## Current State\nfixing bug 0", summary=True),
            m("rq", "user", REQUEUE_PREFIX + "fix bug 0`"),
            m("a1", "assistant", "fixed", model="claude-haiku-4.5", provider="copilot")]
    return crush_db(tmp / "crush.db", [{"id": "s1", "messages": msgs, "summary": "sum"}])


def _aider(tmp: Path) -> Path:
    f = tmp / ".aider.llm.history"
    f.write_text(
        request(("user", "make a flask app " + "word " * 300), reply="app.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> "
                "REPLACE")
        + request(("user", "make a flask app " + "word " * 300), ("assistant", "Done " + "word " * 300),
                  ("user", "add a test"), reply="Done.", time="10:01:00")
        + request(("user", "I spoke to you previously about a number of things.\nI asked you for an app."),
                  ("user", "add a test"), ("assistant", "Done."), ("user", "and docs"), reply="Docs added.",
                  time="10:05:00"), encoding="utf-8")
    return f


BUILT = {"codex": _codex, "opencode": _opencode, "crush": _crush, "aider": _aider}


def _log(name: str, tmp: Path) -> Path:
    return BUILT[name](tmp) if name in BUILT else FIXTURES / FILES[name]


@pytest.mark.parametrize("name", [*FILES, *BUILT])
def test_each_tools_recorded_compactions_are_replayed_where_the_log_put_them(name: str, tmp_path: Path) -> None:
    ts: list[Transcript] = [t for t in iter_transcripts(_log(name, tmp_path)) if t.compactions]
    assert ts, f"{name}: the log records no compaction"
    out = tmp_path / "run"
    write_run(out, RunSpec(strategies=("none", "recorded"), limits=ModelLimits(1_000_000, 8_000),
                           tokenizer="chars4"), "hand-made", ts)
    comp = pd.read_parquet(out / "compactions.parquet")
    steps = pd.read_parquet(out / "steps.parquet")
    for t in ts:
        got = comp[(comp["strategy"] == "recorded") & (comp["transcript_id"] == t.id)].sort_values("seq")
        assert len(got) == len(t.compactions), name
        calls = [m for m in t.messages if m.role == "assistant" and not m.meta.get("compaction")]
        for rc, ev in zip(t.compactions, got.itertuples(), strict=True):
            after = next((k for k, m in enumerate(calls) if t.messages.index(m) >= rc.index), len(calls))
            assert ev.ok and ev.reason == f"recorded {rc.trigger}"
            # before the first call the log recorded after the compaction (after the last one, when none follows)
            assert (ev.step, ev.phase) == ((after, "before") if after < len(calls) else (after - 1, "after")), name
            if rc.summary:
                assert ev.summary == rc.summary, name
            # what it replaced is what the log recorded before the compaction, and the prompt there changed
            before = {m.id for m in t.messages[:rc.index]}
            assert {x for x in ev.replaced_ids if not x.startswith("compbench:")} <= before, name  # and summaries
            if ev.phase == "before":
                mine = steps[(steps["transcript_id"] == t.id) & (steps["step"] == ev.step)]
                by = dict(zip(mine["strategy"], mine["input"], strict=True))
                assert by["recorded"] != by["none"], name


def test_a_compaction_whose_replaced_history_the_log_deleted_is_applied_and_named(tmp_path: Path) -> None:
    """Kilo Code's (and Roo Code's older) condense deleted the history it summarized from the log: the recorded
    row still inserts the tool's summary and pays for it, and the run names what the log lacks instead of
    calling the row degenerate."""
    from compbench.decide.flags import flag_details

    ts = list(iter_transcripts(FIXTURES / FILES["kilo-code"]))
    out = tmp_path / "run"
    write_run(out, RunSpec(strategies=("none", "recorded"), limits=ModelLimits(1_000_000, 8_000),
                           tokenizer="chars4"), "hand-made", ts)
    results = pd.read_parquet(out / "results.parquet")
    row = results[results["strategy"] == "recorded"].iloc[0]
    assert (row["compactions"], row["noop_compactions"]) == (1, 1) and row["summarizer_output_tokens"] > 0
    flags = flag_details(results)["recorded"]
    assert {f.kind for f in flags} == {"designed"}
    assert any("deleted it from its log" in f.text for f in flags)
    from compbench.decide.breakdown import breakdown
    from compbench.decide.metrics import metric
    from compbench.decide.toolverdict import build, lines

    (g,) = breakdown(results, "source", [metric("effective_savings"), metric("needed_recall")], 200)
    as_ran = next(x for x in lines(build(g)) if x.startswith("  as it ran"))
    assert "the log lacks what 1 of its compactions replaced" in as_ran
