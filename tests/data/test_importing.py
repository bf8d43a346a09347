"""One pipeline for every command: broken lines, resumed sessions, whole tool homes, every shape at once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compbench.data import importing
from compbench.data.dataset import read_meta
from compbench.data.importing import Imported, Merged, Note, collect, iter_transcripts
from compbench.data.transcript import Transcript
from helpers import FIXTURES, main_cli, one_line_error, opencode_db

SHAPES = FIXTURES / "shapes"
BROKEN = "claude-broken-line.jsonl"
PARENT, CHILD = "44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555"


def shapes(tmp_path: Path, *names: str) -> Path:
    d = tmp_path / "logs"
    d.mkdir(exist_ok=True)
    for n in names:
        src = SHAPES / n
        (shutil.copytree if src.is_dir() else shutil.copy)(src, d / n)
    return d


def records(p: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]


def write_records(p: Path, recs: list[dict[str, Any]]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return p


# --- one broken line ---------------------------------------------------------------------------------------


def test_a_broken_line_fails_by_default_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    d = shapes(tmp_path, BROKEN, "claude-queue-first.jsonl")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds")
    assert one_line_error(code, err) == (f"{d / BROKEN}:3: a complete JSON object (line is truncated); rerun with "
                                         "--on-error skip-lines to skip broken lines and keep the rest of the file")
    assert out == "" and not (tmp_path / "ds").exists()
    # skip: the whole session is lost (said, and recorded)
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds",
                              "--on-error", "skip")
    assert code == 0 and out.startswith("imported 1 transcript (claude-code 1); 1 error skipped;")


def test_skip_lines_keeps_the_session_and_reports_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    d = shapes(tmp_path, BROKEN, "claude-queue-first.jsonl")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds",
                              "--on-error", "skip-lines")
    assert code == 0
    assert out == (f"imported 2 transcripts (claude-code 2); 0 errors skipped; 1 broken line skipped; written to "
                   f"{tmp_path / 'ds'}\n")
    assert err == f"warning: skipped broken line {d / BROKEN}:3: a complete JSON object (line is truncated)\n"
    t = next(t for t in importing.iter_transcripts(tmp_path / "ds") if t.id.startswith("6666"))
    assert [m.id for m in t.messages] == ["b-u1", "b-a1", "b-u2", "b-a2"]
    assert t.meta["skipped_lines"] == [3]
    assert t.warnings[-1] == "skipped line 3: a complete JSON object (line is truncated)"
    meta = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert meta["skipped_lines"] == [{"file": str(d / BROKEN), "line": 3,
                                      "expected": "a complete JSON object (line is truncated)"}]
    assert meta["errors"] == []
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", d, "--skip-lines")
    assert code == 0 and f"OK    {d / BROKEN} (1 transcript, claude-code; 1 broken line skipped)" in out.splitlines()


def test_a_broken_first_line_is_still_detected_and_skipped(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    lines = (SHAPES / "claude-queue-first.jsonl").read_text().splitlines()
    p.write_text("\n".join(["{\"type\": \"queue-op", *lines[3:]]) + "\n", encoding="utf-8")
    (ev,) = [e for e in collect([p], on_error="skip-lines") if isinstance(e, Imported)]
    assert ev.transcript.meta["skipped_lines"] == [1] and len(ev.transcript.messages) == 2


def test_fidelity_takes_the_same_on_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    d = shapes(tmp_path, BROKEN, "claude-2.1-records.jsonl")  # the second holds a real-shaped auto compaction
    code, out, err = main_cli(capsys, monkeypatch, "fidelity", d, "--format", "json")
    assert one_line_error(code, err) == (f"{d / BROKEN}:3: a complete JSON object (line is truncated); rerun with "
                                         "--on-error skip-lines to skip broken lines and keep the rest of the file")
    code, out, err = main_cli(capsys, monkeypatch, "fidelity", d, "--format", "json", "--on-error", "skip-lines")
    assert code == 0 and err.startswith(f"warning: skipped broken line {d / BROKEN}:3")
    assert {r["transcript"] for r in json.loads(out)} == {"33333333-3333-4333-8333-333333333333"}


# --- resumed sessions --------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["parent-first", "child-first"])
def test_a_resumed_session_is_imported_once_as_its_continuation(tmp_path: Path, order: str,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    d = shapes(tmp_path, "claude-resumed") / "claude-resumed"
    if order == "child-first":  # file order must not matter
        (d / f"{CHILD}.jsonl").rename(d / "a-child.jsonl")
        (d / f"{PARENT}.jsonl").rename(d / "b-parent.jsonl")
    parent_file = next(p for p in d.iterdir() if records(p)[-1].get("sessionId") == PARENT)
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds")
    assert code == 0 and out.startswith("imported 1 transcript (claude-code 1); 0 errors skipped; 1 resumed session "
                                        "merged into its continuation;")
    assert err == (f"warning: merged {parent_file}: session {PARENT} (4 messages) is the history that {CHILD} "
                   "resumes; imported once, as part of it\n")
    (t,) = importing.iter_transcripts(tmp_path / "ds")
    assert (t.id, len(t.messages), t.meta["continues"]) == (CHILD, 6, [PARENT])
    assert json.loads((tmp_path / "ds" / "dataset.json").read_text())["merged"] == [
        {"id": PARENT, "into": CHILD, "file": str(parent_file)}]
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", d)
    assert code == 0 and out.splitlines()[-1] == ("2 valid, 0 invalid; 1 transcript (claude-code 1); "
                                                  "1 resumed session merged into its continuation")


def test_a_parent_that_went_on_after_the_resume_is_kept(tmp_path: Path) -> None:
    """A fork: the parent's file has messages the continuation never saw, so merging would lose them."""
    d = shapes(tmp_path, "claude-resumed") / "claude-resumed"
    parent = d / f"{PARENT}.jsonl"
    recs = records(parent)
    extra = {**recs[1], "uuid": "r-u9", "parentUuid": "r-a2", "message": {"role": "user", "content": "one more"}}
    write_records(parent, [*recs, extra])
    events = list(collect([d]))
    assert sorted(e.transcript.id for e in events if isinstance(e, Imported)) == [PARENT, CHILD]
    assert not any(isinstance(e, Merged) for e in events)
    assert [e.text for e in events if isinstance(e, Note)] == [
        f"{parent}: session {PARENT} kept: the file resuming it does not hold all of its messages"]


def test_a_chain_of_resumes_is_one_transcript(tmp_path: Path) -> None:
    d = shapes(tmp_path, "claude-resumed") / "claude-resumed"
    third = "88888888-8888-4888-8888-888888888888"
    recs = records(d / f"{CHILD}.jsonl")
    more = {**recs[-2], "uuid": "r-u5", "parentUuid": "r-a3", "sessionId": third,
            "message": {"role": "user", "content": "and a changelog entry"}}
    write_records(d / f"{third}.jsonl", [*recs, more])
    events = list(collect([d]))
    assert [e.transcript.id for e in events if isinstance(e, Imported)] == [third]
    assert sorted((e.id, e.into) for e in events if isinstance(e, Merged)) == [(PARENT, third), (CHILD, third)]


# --- whole tool homes and every shape at once ---------------------------------------------------------------


def codex_rollout(path: Path) -> Path:
    """A minimal hand-made Codex rollout: meta, turn context, a prompt, a tool call, an answer, usage."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ts = "2026-02-05T10:00:00.000Z"
    return write_records(path, [
        {"timestamp": ts, "type": "session_meta", "payload": {"id": "019c0000-0000-7000-8000-000000000001",
                                                              "timestamp": ts, "cwd": "/work/demo",
                                                              "originator": "codex_cli_rs", "cli_version": "0.144.0"}},
        {"timestamp": ts, "type": "turn_context", "payload": {"cwd": "/work/demo", "model": "gpt-5.4"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What does main.py do?"}]}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                               "arguments": '{"command": ["cat", "main.py"]}',
                                                               "call_id": "call_c1"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_c1",
                                                               "output": "print('hi')"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "It prints hi."}]}},
    ])


def opencode_store(d: Path) -> Path:
    """OpenCode's data folder: its database, and the legacy storage/ JSON and credentials beside it."""
    d.mkdir(parents=True)
    msg = {"info": {"id": "msg_1", "sessionID": "ses_demo", "role": "user", "time": {"created": 1}},
           "parts": [{"id": "prt_1", "sessionID": "ses_demo", "messageID": "msg_1", "type": "text", "text": "hi"}]}
    opencode_db(d / "opencode.db", [{"info": {"id": "ses_demo", "title": "t", "version": "1.3.0", "directory": "/w",
                                              "time": {"created": 0}}, "messages": [msg]}])
    (d / "auth.json").write_text('{"anthropic": {"type": "api", "key": "never-read"}}')
    (d / "storage" / "part" / "msg_1").mkdir(parents=True)
    (d / "storage" / "part" / "msg_1" / "prt_1.json").write_text('{"id": "prt_1", "type": "text", "text": "hi"}')
    return d


def copilot_state(d: Path) -> Path:
    """~/.copilot/session-state: one folder per session, its events.jsonl beside the CLI's own files."""
    session = d / "77777777-7777-4777-8777-777777777777"
    shutil.copytree(SHAPES / "copilot" / session.name, session)
    (session / "workspace.yaml").write_text("id: 77777777\nsummary_count: 1\n")
    (session / "checkpoints").mkdir()
    (session / "checkpoints" / "001-build.md").write_text("checkpoint")
    (session / "files").mkdir()
    (session / "files" / "scratch.json").write_text('{"made": "by the agent"}')  # not a transcript
    return d


def test_claude_projects_codex_sessions_an_opencode_store_and_copilot_sessions_in_one_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "claude" / "projects"
    shapes(tmp_path, "claude-resumed", "claude-queue-first.jsonl")
    shutil.copytree(tmp_path / "logs", projects / "-work-demo")
    sessions = tmp_path / "codex" / "sessions"
    codex_rollout(sessions / "2026" / "02" / "05" / "rollout-2026-02-05T10-00-00-019c.jsonl")
    store = opencode_store(tmp_path / "opencode")
    state = copilot_state(tmp_path / "copilot" / "session-state")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", projects, sessions, store, state,
                              "--out", tmp_path / "ds", "--keep-empty")  # the store's one session has no reply
    assert code == 0, err
    assert out.startswith("imported 5 transcripts (claude-code 2, codex 1, copilot 1, opencode 1); 0 errors skipped; "
                          "1 resumed session merged into its continuation;")
    assert err.splitlines()[-2:] == [
        f"warning: {store}: OpenCode's store: read its database, not the 2 other files beside it (legacy storage/, "
        "settings, credentials)",
        f"warning: {state / '77777777-7777-4777-8777-777777777777'}: a Copilot CLI session: read its events.jsonl, "
        "not the 2 other files beside it (checkpoints, plan, files)"]


def test_a_folder_of_every_shape_imports_in_one_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from shapes import BIG, mini_doc

    d = shapes(tmp_path, *sorted(p.name for p in SHAPES.iterdir()))
    (d / "big.traj.json").write_text(json.dumps(mini_doc(BIG), indent=2), encoding="utf-8")
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", d, "--out", tmp_path / "ds",
                              "--on-error", "skip-lines")
    assert code == 0, err
    assert out == ("imported 15 transcripts (claude-code 7, copilot 1, goose 1, mini-swe-agent 1, openhands 2, "
                   "openhands-eval 2, openhands-v0 1); 0 errors skipped; "
                   "1 broken line skipped; 1 resumed session merged into its continuation; written to "
                   f"{tmp_path / 'ds'}\n")
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", d, "--skip-lines")
    assert code == 0 and out.splitlines()[-1].startswith("15 valid, 0 invalid; 15 transcripts")
    # an unknown record type is never fatal, and always said
    assert (f"OK    {d / 'claude-2.1-records.jsonl'} (1 transcript, claude-code; unknown record types: "
            "record-from-the-future 1)") in out.splitlines()


def test_crush_aider_and_goose_folders_import_in_one_command_and_validate_agrees(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A project with Crush's .crush/ and aider's histories, and Goose's data folder (its store beside the legacy
    JSONL it imported): every session once, counted per agent, the tools' other files passed over and said."""
    from aider_logs import HISTORY, request
    from stores import crush_db, goose_db, part

    project = tmp_path / "project"
    (project / ".crush").mkdir(parents=True)
    crush_db(project / ".crush" / "crush.db", [{"id": "c1", "messages": [
        {"id": "u", "role": "user", "parts": [part("text", text="hi")]},
        {"id": "a", "role": "assistant", "parts": [part("text", text="yo")]}]}, {"id": "c2", "messages": []}])
    (project / ".crush" / "crush.json").write_text("{}")
    (project / ".aider.chat.history.md").write_text(HISTORY)
    (project / ".aider.llm.history").write_text(request(("user", "hi"), reply="yo"))
    goose = tmp_path / "goose" / "sessions"
    goose.mkdir(parents=True)
    hello = [{"id": "g", "role": "user", "created": 1, "content": [{"type": "text", "text": "hi"}]}]
    goose_db(goose / "sessions.db", [{"id": "20260217_1", "messages": hello}])
    (goose / "20260217_1.jsonl").write_text('{"working_dir": "/w", "description": "", "message_count": 1}\n')
    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", project, goose.parent, "--out",
                              tmp_path / "ds")
    assert code == 0, err
    # Crush's c2 and Goose's session hold no reply: left out, and said
    assert out.startswith("imported 4 transcripts (aider 3, crush 1); 0 errors skipped; 2 empty sessions (no reply) "
                          "left out (--keep-empty imports them);")
    assert f"warning: {project / '.crush'}: Crush's data folder: read its crush.db, not the 1 other file" in err
    assert f"warning: {goose}: Goose's session store: read its sessions.db, not the 1 other file" in err
    assert (f"warning: left out 1 empty session (no reply: a prompt and nothing after it) of "
            f"{project / '.crush' / 'crush.db'}") in err
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", project, goose.parent)
    assert code == 0 and out.splitlines()[-1] == ("4 valid, 0 invalid; 4 transcripts (aider 3, crush 1); 2 empty "
                                                  "sessions (no reply) left out (--keep-empty keeps them)")
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", project, goose.parent, "--keep-empty")
    assert code == 0 and out.splitlines()[-1] == "4 valid, 0 invalid; 6 transcripts (aider 3, crush 2, goose 1)"
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "import", project, goose.parent, "--out",
                            tmp_path / "all", "--keep-empty")
    assert code == 0 and out.startswith("imported 6 transcripts (aider 3, crush 2, goose 1); 0 errors skipped;")


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("notes.md", "# My notes\n\nnot a log\n", "notes.md:1: JSON or JSONL text, or a markdown task export "
                                                   "(a known transcript format)"),
    ("cache.db", None, "cache.db: a tool's SQLite store (OpenCode's opencode.db, Crush's crush.db, Goose's "
                       "sessions.db); this SQLite file has tables: notes"),
    ("export.md", "# Session Export: x\n\n*Total messages: 2*\n\n---\n\n### User:\nhi\n",
     "export.md: 2 messages (the export's *Total messages*), found 1: a message's text holds the export's own "
     "separators"),
])
def test_a_misfit_log_is_refused_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, name: str, content: str | None,
                                               expected: str) -> None:
    import sqlite3

    f = tmp_path / name
    if content is None:
        sqlite3.connect(f).execute("CREATE TABLE notes (id integer)").connection.close()
    else:
        f.write_text(content)
    code, _, err = main_cli(capsys, monkeypatch, "datasets", "import", f, "--out", tmp_path / "ds")
    assert one_line_error(code, err) == f"{f.parent}/{expected}"
    assert not (tmp_path / "ds").exists()


def _session(sid: str, *roles: str) -> Transcript:
    from compbench.data.transcript import Message, Text

    return Transcript(sid, "compbench",
                      tuple(Message(f"{sid}{k}", r, (Text(f"{r} {k}"),)) for k, r in enumerate(roles)))


@pytest.mark.parametrize(("roles", "empty"), [((), True), (("user",), True), (("user", "user"), True),
                                              (("system", "user", "tool"), True), (("user", "assistant"), False),
                                              (("assistant",), False)])
def test_a_session_is_empty_when_it_holds_no_reply(roles: tuple[str, ...], empty: bool) -> None:
    from compbench.data.dataset import is_empty

    assert is_empty(_session("s", *roles)) is empty


def test_empty_sessions_are_left_out_of_an_import_and_a_replay_unless_kept(tmp_path: Path) -> None:
    """A Crush store held 27 sessions of 41 with one or two messages and no reply; counted as transcripts they
    diluted "acted k of n". Now they are left out, in one line a file, and in the dataset's manifest."""
    from stores import crush_db, part

    from compbench.data.importing import replayable, write_dataset

    def msg(mid: str, role: str) -> dict[str, object]:
        return {"id": mid, "role": role, "parts": [part("text", text=f"{role} text")]}

    db = crush_db(tmp_path / "crush.db", [
        {"id": "s1", "messages": [msg("u1", "user"), msg("a1", "assistant")]},
        {"id": "e1", "messages": [msg("u2", "user")]},
        {"id": "e2", "messages": [msg("u3", "user"), msg("u4", "user")]},
        {"id": "s2", "messages": [msg("u5", "user"), msg("a5", "assistant")]}])
    said: list[str] = []
    r = write_dataset(tmp_path / "ds", [db], warn=said.append)
    assert (r.transcripts, [e["id"] for e in r.empty]) == (2, ["e1", "e2"])
    assert said == [f"left out 2 empty sessions (no reply: a prompt and nothing after it) of {db}"]
    assert [e["messages"] for e in read_meta(tmp_path / "ds")["empty"]] == [1, 2]
    kept = write_dataset(tmp_path / "all", [db], keep_empty=True)
    assert (kept.transcripts, kept.empty) == (4, [])
    ticks: list[str] = []
    said.clear()
    replayed = [t.id for t in replayable(iter_transcripts(tmp_path / "all"), False, said.append, ticks.append)]
    assert (replayed, ticks) == (["s1", "s2"], ["e1", "e2"])
    assert said == ["left out 2 empty sessions (no reply: nothing to replay); --keep-empty replays them"]
    assert [t.id for t in replayable(iter_transcripts(tmp_path / "all"), True)] == ["s1", "e1", "e2", "s2"]


def test_the_project_of_crush_and_aider_logs_is_the_folder_they_are_in(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`compare --by project` put them under "(not recorded)": Crush's store and aider's histories record no
    working directory, but they live in the project (.crush/crush.db, .aider.chat.history.md)."""
    from aider_logs import HISTORY
    from stores import crush_db, part

    from compbench.data.dataset import project_of
    from compbench.run.engine import units

    app = tmp_path / "app"
    (app / ".crush").mkdir(parents=True)
    crush_db(app / ".crush" / "crush.db", [
        {"id": "c1", "messages": [{"id": "u", "role": "user", "parts": [part("text", text="hi")]},
                                  {"id": "a", "role": "assistant", "parts": [part("text", text="yo")]}]}])
    (app / ".aider.chat.history.md").write_text(HISTORY)
    elsewhere = crush_db(tmp_path / "copy-of-crush.db", [{"id": "c9", "messages": []}])
    ts = {t.id: t for t in importing.transcripts([app, elsewhere])}
    assert {project_of(t) for k, t in ts.items() if k != "c9"} == {str(app)}
    assert project_of(ts["c9"]) == ""  # a store copied elsewhere: its project is not known
    assert units(ts["c1"])["project"] == str(app)
    code, out, _ = main_cli(capsys, monkeypatch, "run", app, "--strategy", "none", "--tokenizer", "chars4",
                            "--context-window", "4000", "--quiet", "--out", tmp_path / "run")
    assert code == 0
    code, out, _ = main_cli(capsys, monkeypatch, "compare", tmp_path / "run", "--by", "project")
    assert code == 0 and f"project {app}" in out and "(not recorded)" not in out
