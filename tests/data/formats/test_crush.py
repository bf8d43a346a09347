"""Crush's SQLite store (crush.db, charmbracelet/crush 37f36e93): every session as Crush sends it to the model, its
summaries as recorded compactions, its usage per session only; the real sample read in place."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import pytest
from conftest import SHARED, need_shared
from stores import crush_db, part

from compbench.data.formats import iter_files, read
from compbench.data.formats.crush_db import MEDIA_FAILED, REQUEUE_PREFIX
from compbench.data.formats.detect import detect
from compbench.data.transcript import Media, Reasoning, Text, ToolCall, ToolResult
from compbench.errors import TranscriptError

SAMPLE = SHARED / "real-logs" / "crush" / "AndresGaibor__cisco-auto__crush.db"
FINISH = part("finish", reason="end_turn", time=1)


def msg(mid: str, role: str, *parts: dict[str, object], **kw: object) -> dict[str, object]:
    return {"id": mid, "role": role, "parts": [*parts, FINISH], **kw}


def session(sid: str = "s1", *messages: dict[str, object], **kw: object) -> dict[str, object]:
    return {"id": sid, "messages": list(messages), **kw}


def work(n: int = 0) -> list[dict[str, object]]:
    """A prompt, a tool call and its result, and a final answer (messages u{n}, a{n}, t{n}, b{n})."""
    return [msg(f"u{n}", "user", part("text", text=f"  fix bug {n}  ")),
            msg(f"a{n}", "assistant", part("text", text="looking"), part("tool_call", id=f"c{n}", name="view",
                                                                          input='{"file_path": "a.py"}'),
                model="claude-haiku-4.5", provider="copilot"),
            msg(f"t{n}", "tool", part("tool_result", tool_call_id=f"c{n}", name="view", content=f"line {n}")),
            msg(f"b{n}", "assistant", part("text", text="done"), model="claude-haiku-4.5", provider="copilot")]


def test_messages_are_what_crush_sends(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    db = crush_db(tmp_path / "crush.db", [session(
        "s1",
        msg("u1", "user", part("text", text="  read this  "), part("text", text="second text is not sent"),
            part("binary", Path="notes.txt", MIMEType="text/plain", Data=base64.b64encode(b"hello").decode()),
            part("binary", Path="shot.png", MIMEType="image/png", Data=png),
            part("shell_command", command="ls", output="\x1b[32ma.py\x1b[0m", exit_code=0)),
        msg("a1", "assistant", part("reasoning", thinking="hmm", signature="sig"), part("text", text=" ok "),
            part("tool_call", id="c1", name="bash", input="", finished=True), model="m", provider="p"),
        msg("t1", "tool", part("tool_result", tool_call_id="c1", name="bash", content="boom", is_error=True),
            part("tool_result", tool_call_id="c2", name="view", content="", data=png, mime_type="image/png"),
            part("tool_result", tool_call_id="c3", name="view", content="", data="%%%", mime_type="image/png")),
        prompt_tokens=1234, completion_tokens=56, cost=0.5, title="Fix")])
    assert detect(db) == "crush-db"
    (t,) = read(db)
    u, a, tool = t.messages
    assert u.text == ("read this\n<system_info>The files below have been attached by the user, consider them in your "
                      "response</system_info>\n<file path='notes.txt'>\n\nhello\n</file>\n\n\n"
                      "$ ls\na.py\n(exit code 0)")
    assert [type(p) for p in u.parts] == [Text, Media] and u.parts[1] == Media("image", "image/png", b"\x89PNG",
                                                                                "shot.png")
    assert a.parts == (Text("ok"), Reasoning("hmm"), ToolCall("c1", "bash", "{}"))
    assert tool.parts == (ToolResult("c1", "bash", "boom", is_error=True), ToolResult("c2", "view", ""),
                          ToolResult("c3", "view", MEDIA_FAILED), Media("image", "image/png", b"\x89PNG", "view"))
    assert a.meta["model"] == "m" and a.meta["finish"] == "end_turn" and a.meta["timestamp"].startswith("2026-")


def test_usage_is_per_session_only_and_never_a_calls(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session("s1", *work(), prompt_tokens=72_452, completion_tokens=504,
                                                  cost=1.25)])
    (t,) = read(db)
    assert all(m.usage is None for m in t.messages)
    assert t.meta["session_usage"] == {"prompt_tokens": 72_452, "completion_tokens": 504, "cost": 1.25}
    assert "per session only" in t.meta["usage"]
    assert t.meta["model"] == "claude-haiku-4.5" and t.meta["provider"] == "copilot"
    assert t.meta["schema_version"] == "20260127000000"


def test_a_summary_with_a_requeued_run_is_an_automatic_compaction(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session(
        "s1", *work(0)[:3],
        msg("sum", "assistant", part("text", text="## Current State\nfixing bug 0"), summary=True),
        msg("rq", "user", part("text", text=REQUEUE_PREFIX + "fix bug 0`")),
        *work(1), summary="sum")])
    (t,) = read(db)
    (c,) = t.compactions
    ids = [m.id for m in t.messages]
    assert c.index == ids.index("rq") + 1 and c.trigger == "auto" and c.kept_ids == ()
    assert c.summary == "## Current State\nfixing bug 0" and c.summary_id == "sum" and c.meta["current"] is True
    assert t.messages[ids.index("sum")].meta["compaction"] == "summary"
    assert t.messages[ids.index("rq")].meta["compaction"] == "continue"
    assert c.tokens_before is None  # no per-call usage: nothing to compare a trigger with


def test_summaries_without_a_requeue_or_that_failed(tmp_path: Path) -> None:
    failed = {"id": "bad", "role": "assistant", "summary": True,
              "parts": [part("text", text="partial"), part("finish", reason="error", message="Summarization Error")]}
    db = crush_db(tmp_path / "crush.db", [session(
        "s1", *work(0), msg("sum1", "assistant", part("text", text="first summary"), summary=True), *work(1),
        failed, *work(2), msg("sum2", "assistant", part("text", text="second"), summary=True),
        msg("next", "user", part("text", text="go on")),
        msg("late", "user", part("text", text=REQUEUE_PREFIX + "not right after")), summary="sum2")])
    (t,) = read(db)
    assert [(c.summary_id, c.trigger, c.meta["current"]) for c in t.compactions] == [
        ("sum1", "unknown", False), ("sum2", "unknown", True)]
    bad = next(m for m in t.messages if m.id == "bad")
    assert "compaction" not in bad.meta and bad.meta["failed_summary"] is True and bad.text == "partial"
    assert any("summary message bad failed (Summarization Error)" in w for w in t.warnings)
    assert "compaction" not in t.messages[-1].meta  # a requeue text that does not follow its summary


def test_a_store_before_is_summary_message_knows_only_the_latest_summary(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session(
        "s1", *work(0), msg("old", "assistant", part("text", text="older summary")), *work(1),
        msg("sum", "assistant", part("text", text="latest summary")), *work(2), summary="sum")], schema="early")
    (t,) = read(db)
    assert [c.summary_id for c in t.compactions] == ["sum"]
    assert "compaction" not in next(m for m in t.messages if m.id == "old").meta
    assert any("predates Crush's is_summary_message" in w for w in t.warnings)
    assert "provider" not in t.meta and t.meta["schema_version"] == "20250515105448"


def test_every_session_in_creation_order_empty_and_sub_agent_ones_too(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session("late", *work(), created=30), session("empty", created=10),
                                          session("child", *work(1), parent="late", created=20)])
    ts = list(read(db))
    assert [t.id for t in ts] == ["empty", "child", "late"]
    assert ts[0].messages == () and "the session has no messages" in ts[0].warnings
    assert ts[1].meta["parent_session"] == "late"


def test_messages_of_the_same_second_keep_their_insertion_order(tmp_path: Path) -> None:
    same = [{**m, "created": 5} for m in work()]
    (t,) = read(crush_db(tmp_path / "crush.db", [session("s1", *reversed(same[:2]), *same[2:])]))
    assert [m.id for m in t.messages] == ["a0", "u0", "t0", "b0"]  # rowid order, as SQLite returns Crush's rows


BROKEN = [
    ("{oops", "a JSON list of parts in the 'parts' column; found {oops"),
    ('[{"data": {}}]', 'parts of the form {"type": string, "data": object} (part 1); found {"data":{}}'),
    ('[{"type": "tool_call", "data": {"name": "x"}}]',
     "a tool_call part with a string 'id' (and a 'name', or none when it continues the call streamed before it); "
     'found {"type":"tool_call","data":{"name":"x"}}'),
    ('[{"type": "tool_result", "data": {"content": "x"}}]',
     """a tool_result part with a string 'tool_call_id'; found {"type":"tool_result","data":{"content":"x"}}"""),
]


def _role(parts: str) -> str:
    return "assistant" if "tool_call" in parts else "tool" if "tool_result" in parts else "user"


@pytest.mark.parametrize(("parts", "expected"), BROKEN)
def test_a_broken_row_says_session_message_what_was_expected_and_found(tmp_path: Path, parts: str,
                                                                       expected: str) -> None:
    db = crush_db(tmp_path / "crush.db", [session("s1", {"id": "u0", "role": _role(parts), "parts": parts})])
    with pytest.raises(TranscriptError) as e:
        list(read(db))
    assert str(e.value) == f"{db}: session s1, message u0: {expected}"
    assert not e.value.internal


@pytest.mark.parametrize(("parts", "expected"), BROKEN)
def test_under_skip_lines_a_broken_message_is_skipped_its_session_and_the_others_kept(tmp_path: Path, parts: str,
                                                                                    expected: str) -> None:
    db = crush_db(tmp_path / "crush.db", [session("s1", *work(0)),
                                          session("s2", *work(1)[:2], {"id": "x1", "role": _role(parts),
                                                                       "parts": parts}, *work(1)[2:]),
                                          session("s3", *work(2))])
    with pytest.raises(TranscriptError):
        list(read(db))
    skipped: list[TranscriptError] = []
    ts = {t.id: t for t in read(db, skipped=skipped)}
    assert sorted(ts) == ["s1", "s2", "s3"]
    assert [m.id for m in ts["s2"].messages] == ["u1", "a1", "t1", "b1"]
    assert [str(e) for e in skipped] == [f"{db}: session s2, message x1: {expected}"]
    assert f"skipped message x1: {expected}" in ts["s2"].warnings
    assert not ts["s1"].warnings and not ts["s3"].warnings


def test_streamed_tool_call_parts_are_joined_as_crush_joins_them(tmp_path: Path) -> None:
    """Crush 3280b4a85's OpenAI stream started a new part for a call's later chunks sent under a new index: a
    fresh id, no name, the rest of the arguments; its agent answered that part "Tool not found: "."""
    db = crush_db(tmp_path / "crush.db", [session(
        "s1", msg("u0", "user", part("text", text="read a.py and b.py")),
        msg("a0", "assistant",
            part("tool_call", id="call_1", name="view", input='{"file_path": "a', finished=True),
            part("tool_call", id="6f0c-uuid", name="", input='.py"}', finished=True),
            part("tool_call", id="call_2", name="view", input='{"file_path": "b.py"}', finished=True),
            part("tool_call", id="7a1d-uuid", name="", input='{"pattern": "x"}', finished=True)),
        msg("t0", "tool", part("tool_result", tool_call_id="call_1", name="view", content="a body"),
            part("tool_result", tool_call_id="6f0c-uuid", name="", content="Tool not found: ", is_error=True),
            part("tool_result", tool_call_id="call_2", name="view", content="b body"),
            part("tool_result", tool_call_id="7a1d-uuid", name="", content="Tool not found: ", is_error=True)))])
    (t,) = read(db)
    a, tool = t.messages[1:]
    assert a.parts == (ToolCall("call_1", "view", '{"file_path": "a.py"}'),
                       ToolCall("call_2", "view", '{"file_path": "b.py"}'),
                       ToolCall("7a1d-uuid", "", '{"pattern": "x"}'))  # a whole call: not a continuation
    assert [p.call_id for p in tool.parts if isinstance(p, ToolResult)] == ["call_1", "call_2", "7a1d-uuid"]
    assert t.warnings == (
        "joined 1 nameless streamed tool-call part to the call before it (6f0c-uuid -> call_1), as Crush's stream "
        "does since 0c8e111af",
        "dropped 1 result of joined parts (\"Tool not found\"), as Crush's reader drops a result with no call: "
        "6f0c-uuid",
        "1 tool call with an empty name kept as Crush sent it: 7a1d-uuid")


def test_a_nameless_part_first_in_its_message_is_a_call_crush_sent_with_no_name(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session(
        "s1", msg("u0", "user", part("text", text="go")),
        msg("a0", "assistant", part("tool_call", id="u-1", name="", input='{"command": "ls"}')))])
    (t,) = read(db)
    assert t.messages[1].parts == (ToolCall("u-1", "", '{"command": "ls"}'),)


def test_unknown_parts_and_roles_are_counted_not_guessed(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session("s1", msg("u0", "user", part("text", text="hi"),
                                                            part("from_the_future", x=1)),
                                                  msg("x", "system", part("text", text="?")))])
    (t,) = read(db)
    assert [m.id for m in t.messages] == ["u0"]
    assert "skipped 1 from_the_future part Crush's model messages do not carry" in t.warnings
    assert "skipped 1 role:system part Crush's model messages do not carry" in t.warnings


def test_a_live_wal_is_read_and_nothing_is_written_beside_the_store(tmp_path: Path) -> None:
    db = crush_db(tmp_path / "crush.db", [session("s1", *work())])
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert list(before) == ["crush.db"]
    assert [t.id for t in read(db)] == ["s1"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    live = sqlite3.connect(db)  # Crush running: its writes sit in the -wal until a checkpoint
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s2', 't', 9, 9)")
    live.execute("INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES "
                 "('w1', 's2', 'user', '[{\"type\": \"text\", \"data\": {\"text\": \"only in the wal\"}}]', 9, 9)")
    live.commit()
    assert (tmp_path / "crush.db-wal").exists()
    ts = {t.id: t for t in read(db)}
    assert ts["s2"].messages[0].text == "only in the wal"
    live.close()


def test_a_project_folder_reads_its_hidden_crush_store_and_passes_over_the_rest(tmp_path: Path) -> None:
    data = tmp_path / "project" / ".crush"
    data.mkdir(parents=True)
    crush_db(data / "crush.db", [session("s1", *work())])
    (data / "crush.json").write_text("{}")
    (data / "logs").mkdir()
    (data / "logs" / "crush.log").write_text("{}\n")
    (data / "crush.db-wal").write_bytes(b"")
    (tmp_path / "project" / ".git").mkdir()
    (tmp_path / "project" / ".git" / "x.json").write_text("{}")
    notes: list[str] = []
    assert [f.name for f in iter_files([tmp_path / "project"], notes.append)] == ["crush.db"]
    assert notes == [f"{data}: Crush's data folder: read its crush.db, not the 2 other files beside it "
                     "(settings, logs)",
                     f"{tmp_path / 'project'}: passed over 1 hidden folder no supported tool keeps its logs in (not "
                     "opened): .git"]


def test_a_copy_under_another_name_is_walked_by_its_tables(tmp_path: Path) -> None:
    crush_db(tmp_path / "someone__crush.db", [session("s1", *work())])
    other = sqlite3.connect(tmp_path / "cache.db")
    other.execute("CREATE TABLE notes (id integer)")
    other.close()
    notes: list[str] = []
    assert [f.name for f in iter_files([tmp_path], notes.append)] == ["someone__crush.db"]
    assert notes == [f"{tmp_path / 'cache.db'}: a SQLite file that is no known tool's store, passed over"]


@pytest.fixture(scope="module")
def sample() -> Path:
    need_shared(SAMPLE, "the real Crush sample")
    return SAMPLE


def test_the_real_store_reads_in_place(sample: Path) -> None:
    before = sorted(p.name for p in sample.parent.iterdir())
    ts = {t.id: t for t in read(sample)}
    assert sorted(p.name for p in sample.parent.iterdir()) == before
    assert len(ts) == 2
    t = ts["e369aabc-3f6a-4c03-b4bc-4293becef366"]
    assert len(t.messages) == 369 and t.meta["model"] == "claude-haiku-4.5"
    (c,) = t.compactions
    assert t.messages[c.index - 2].id.startswith("7befe899") and c.trigger == "auto" and c.meta["requeued"]
    assert c.summary.startswith("# RESUMEN COMPLETO") and c.kept_ids == ()
    assert t.meta["session_usage"]["prompt_tokens"] == 72_452 and all(m.usage is None for m in t.messages)


def test_fidelity_shows_the_real_compaction_compared_where_crush_made_it(sample: Path) -> None:
    from compbench.data.formats import read_all
    from compbench.validation.fidelity import fidelity

    rows = {r.preset: r for r in fidelity(read_all([sample.parent]))}
    cur = rows["current"]
    assert cur.tool == "crush" and cur.real_step == 110 and cur.kept_jaccard == 1.0
    assert cur.our_step is None and cur.d_steps is None  # no per-call usage: the trigger is not compared
    assert "no per-call usage in the log" in cur.cause and cur.facts_our_summary != "–"
    # the store records no version, its session's date says which build ran: v0.13.0's rule on (preset current)
    assert "recorded by crush session of 2026-04-02, the version this preset models" in cur.cause
    assert cur.kept_real.endswith("/81")


def test_a_store_with_a_broken_message_imports_every_session_under_skip_lines(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape a real store showed: one session's message unreadable cost all 5 sessions, even under
    skip-lines; now that message alone is skipped, said in one line, and every session is imported."""
    from helpers import main_cli

    bad = {"id": "x1", "role": "assistant", "parts": '[{"type": "tool_call", "data": {"name": ""}}]'}
    db = crush_db(tmp_path / "crush.db", [session(f"s{n}", *work(n), *([bad] if n == 2 else [])) for n in range(5)])
    expected = (f"{db}: session s2, message x1: a tool_call part with a string 'id' (and a 'name', or none when it "
                """continues the call streamed before it); found {"type":"tool_call","data":{"name":""}}""")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", db, "--out", tmp_path / "ds")
    assert (code, out) == (2, "")
    assert err == (f"error: {expected}; rerun with --on-error skip-lines to skip broken lines and keep the rest of "
                   "the file\n")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", db, "--out", tmp_path / "ds",
                              "--on-error", "skip-lines")
    assert code == 0
    assert err == f"warning: skipped an unreadable record, the rest of its session kept: {expected}\n"
    assert out == (f"imported 5 transcripts (crush 5); 0 errors skipped; 1 unreadable message of stores skipped "
                   f"(their sessions kept); written to {tmp_path / 'ds'}\n")
