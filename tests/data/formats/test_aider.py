"""aider's logs (Aider-AI/aider 5dc9490bb35f): the chat history Markdown, one transcript per run in the file, and the
--llm-history-file log, the requests themselves, with the history summaries they show; hand-made fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from aider_logs import HISTORY, request

from compbench.data.formats import iter_files, read
from compbench.data.formats.detect import detect
from compbench.errors import TranscriptError


def test_every_run_in_the_chat_history_is_a_transcript(tmp_path: Path) -> None:
    f = tmp_path / ".aider.chat.history.md"
    f.write_text(HISTORY)
    assert detect(f) == "aider-chat"
    first, second = read(f)
    assert first.source == second.source == "aider"
    assert first.meta["tool_version"] == "0.82.2" and first.meta["model"] == "anthropic/claude-3-7-sonnet-20250219"
    assert first.meta["weak_model"] == "anthropic/claude-3-5-haiku-20241022" and first.meta["edit_format"] == "diff"
    assert [(m.role, m.text.split("\n")[0]) for m in first.messages] == [
        ("user", "make a flask app"), ("assistant", "I'll create it."), ("user", "why?"),
        ("assistant", "Because you asked."), ("user", ""), ("assistant", "Hello?")]
    assert first.messages[0].text == "make a flask app\nwith a /hello endpoint"
    reply = first.messages[1]
    assert "# A heading in the reply" in reply.text and ">>>>>>> REPLACE" in reply.text
    assert reply.meta["edited_files"] == ["app.py"] and reply.meta["aider_summarizing"] is True
    assert reply.meta["aider_output"][:2] == ["Applied edit to app.py", "Commit 414c394 feat: hello"]
    assert "skipped 1 /add command (aider's, not sent to the model)" in first.warnings
    assert first.meta["cleared_at"] == [4] and any("/clear emptied aider's chat history" in w for w in first.warnings)
    assert first.compactions == () and all(m.usage is None for m in first.messages)
    assert second.meta["tool_version"] == "0.86.1" and [m.text for m in second.messages] == ["hello again", "Hi!"]
    assert first.id != second.id and first.id.startswith("aider-20250501T100000-")


def test_a_history_that_does_not_open_with_a_run_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    f.write_text("# My notes\n\n#### not aider\n")
    with pytest.raises(TranscriptError, match=r"notes\.md:1: JSON or JSONL text"):
        list(read(f))
    with pytest.raises(TranscriptError, match=r"notes\.md:1: '# aider chat started at <time>' before anything else"):
        list(read(f, "aider-chat"))






def test_the_llm_history_is_the_conversation_with_its_summaries(tmp_path: Path) -> None:
    f = tmp_path / ".aider.llm.history"
    f.write_text(
        request(("user", "make a flask app"), reply="app.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE")
        + request(("user", "make a flask app"), ("assistant", "app.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE"),
                  ("user", "I committed the changes with git hash 414c394 & commit msg: feat: app"),
                  ("assistant", "Ok."), ("user", "add a test"), reply="Done.", time="10:01:00")
        + request(("user", "I spoke to you previously about a number of things.\nI asked you for an app."),
                  ("user", "add a test"), ("assistant", "Done."), ("user", "and docs"), reply="Docs added.",
                  time="10:05:00"))
    assert detect(f) == "aider-llm"
    (t,) = read(f)
    assert t.source == "aider" and t.messages[0].role == "system" and "Reminder" not in t.messages[0].text
    assert [(m.role, m.text.split("\n")[0]) for m in t.messages[1:]] == [
        ("user", "make a flask app"), ("assistant", "app.py"), ("user", "I committed the changes with git hash "
                                                                         "414c394 & commit msg: feat: app"),
        ("assistant", "Ok."), ("user", "add a test"), ("assistant", "Done."),
        ("user", "I spoke to you previously about a number of things."), ("user", "and docs"),
        ("assistant", "Docs added.")]
    by_text = {m.text.split("\n")[0]: m for m in t.messages}
    assert by_text["app.py"].meta["edited"] is True and by_text["Ok."].meta["aider_inserted"] is True
    assert by_text["app.py"].meta["aider_preamble_chars"] > 0  # the repo map and files, re-sent each time
    (c,) = t.compactions
    assert c.trigger == "auto" and c.summary.endswith("I asked you for an app.") and c.tokens_before is None
    assert [t.messages[[m.id for m in t.messages].index(i)].text for i in c.kept_ids] == ["add a test", "Done."]
    assert t.messages[c.index].text == "and docs"
    assert by_text["I spoke to you previously about a number of things."].meta["compaction"] == "summary"


EXPLAINED = "It prints. " * 20  # a reply longer than the summary that replaces it
ASK = "Act as an expert code analyst.\nAnswer questions about the supplied code."  # the ask coder's main_system


def test_a_summary_with_nothing_kept_and_no_ok_is_a_chat_mode_switch(tmp_path: Path) -> None:
    f = tmp_path / "llm.log"
    f.write_text(request(("user", "explain app.py"), reply=EXPLAINED)
                 + request(("user", "I spoke to you previously about a number of things.\nI asked about app.py."),
                           ("user", "now change it"), reply="Changed.", time="10:03:00", system=ASK))
    (t,) = read(f)
    (c,) = t.compactions
    assert c.trigger == "manual" and c.kept_ids == () and "chat mode switch" in c.meta["via"]


def test_a_restart_is_a_new_transcript_and_the_old_format_has_no_separators(tmp_path: Path) -> None:
    old = ("TO LLM 2025-01-20T11:10:43\nSYSTEM You are helpful.\nUSER hello\nUSER there\nLLM RESPONSE "
           "2025-01-20T11:10:45\nASSISTANT hi\nTO LLM 2025-01-20T11:11:00\nSYSTEM You are helpful.\nUSER hello\n"
           "USER there\nASSISTANT hi\nUSER again\nLLM RESPONSE 2025-01-20T11:11:02\nASSISTANT sure\n"
           "TO LLM 2025-01-21T09:00:00\nSYSTEM You are helpful.\nUSER a new day\nLLM RESPONSE 2025-01-21T09:00:02\n"
           "ASSISTANT \n")
    f = tmp_path / "old.history"
    f.write_text(old)
    first, second = read(f)
    assert [m.text for m in first.messages] == ["You are helpful.", "hello\nthere", "hi", "again", "sure"]
    assert [m.text for m in second.messages] == ["You are helpful.", "a new day", ""]
    assert first.id != second.id


def test_an_unfinished_request_and_broken_lines(tmp_path: Path) -> None:
    f = tmp_path / "cut.history"
    f.write_text("TO LLM 2025-05-01T10:00:05\n-------\nUSER hello\n")
    (t,) = read(f)
    assert [m.role for m in t.messages] == ["user"]
    bad = tmp_path / "bad.history"
    bad.write_text("TO LLM 2025-05-01T10:00:05\n-------\nUSER hello\nsomething else\n")
    with pytest.raises(TranscriptError, match=r"bad\.history:4: a request line: '-------' or a role"):
        list(read(bad))
    orphan = tmp_path / "orphan.history"
    orphan.write_text("TO LLM 2025-05-01T10:00:05\nUSER hi\nLLM RESPONSE 2025-05-01T10:00:06\nASSISTANT a\n"
                      "LLM RESPONSE 2025-05-01T10:00:07\n")
    with pytest.raises(TranscriptError, match=r"orphan\.history:5: 'LLM RESPONSE' after a 'TO LLM' request"):
        list(read(orphan))
    notes = tmp_path / "notes.txt"
    notes.write_text("USER hello\n")
    with pytest.raises(TranscriptError, match=r"notes\.txt:1: 'TO LLM <time>' first"):
        list(read(notes, "aider-llm"))


def test_a_project_folder_walks_aiders_hidden_histories_not_other_markdown(tmp_path: Path) -> None:
    (tmp_path / ".aider.chat.history.md").write_text(HISTORY)
    (tmp_path / ".aider.llm.history").write_text(request(("user", "hi"), reply="yo"))
    (tmp_path / ".aider.input.history").write_text("+hi\n")
    (tmp_path / "README.md").write_text("# project\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "saved-chat.md").write_text(HISTORY.lstrip("\n"))
    names = [f.relative_to(tmp_path).as_posix() for f in iter_files([tmp_path])]
    assert names == [".aider.chat.history.md", ".aider.llm.history", "docs/saved-chat.md"]
    assert sum(1 for f in iter_files([tmp_path]) for _ in read(f)) == 5


def test_fidelity_compares_aiders_trigger_on_its_own_count(tmp_path: Path) -> None:
    """aider counts its history itself: the trigger is compared without usage. The strategy's summary is used,
    as the logs show (it compacts after the edited reply, as the log's summary follows one); preset=snapshot-race
    drops it (the row says so). The rows name aider's summarization, not a /compact."""
    from compbench.validation.fidelity import fidelity

    words = " ".join(f"w{i}" for i in range(3_000))
    done: list[tuple[str, str]] = []
    log = ""
    for k in range(4):
        prompt = f"change {k}: {words}"
        log += request(*done, ("user", prompt), reply=f"edited {k}", time=f"10:0{k}:00")
        done += [("user", prompt), ("assistant", f"edited {k}"),
                 ("user", f"I committed the changes with git hash {k}abc & commit msg: c{k}"), ("assistant", "Ok.")]
    log += request(("user", "I spoke to you previously about a number of things.\nI asked you for 4 changes."),
                   ("assistant", "Ok."), ("user", "next"), reply="fine", time="10:09:00")
    f = tmp_path / ".aider.llm.history"
    f.write_text(log)
    (t,) = read(f)
    assert len(t.compactions) == 1 and t.compactions[0].trigger == "auto"
    rows = {r.preset: r for r in fidelity([t])}
    assert rows["snapshot-race"].our_step is None and "did not apply (summarize_end" in rows["snapshot-race"].cause
    for preset in ("seed", "0.71"):
        assert rows[preset].our_step is not None and rows[preset].d_steps is not None
        assert "no per-call usage" not in rows[preset].cause and "/compact" not in rows[preset].cause
        assert "aider's chat-history summary" in rows[preset].cause


def test_a_chat_mode_switch_is_compared_with_aiders_summarize_all_not_a_compact(tmp_path: Path) -> None:
    """The summary with nothing kept and no "Ok." (summarize_all, inferred): the strategy summarizes everything
    there; the row never says /compact, which aider does not have."""
    from compbench.validation.fidelity import fidelity

    f = tmp_path / "llm.log"
    f.write_text(request(("user", "explain app.py"), reply=EXPLAINED)
                 + request(("user", "I spoke to you previously about a number of things.\nI asked about app.py."),
                           ("user", "now change it"), reply="Changed.", time="10:03:00", system=ASK))
    (t,) = read(f)
    (row, *_) = [r for r in fidelity([t]) if r.preset == "seed"]
    assert row.trigger == "manual" and row.rebuilt_tokens and "manual summary failed" not in row.cause
    assert "summarize_all on a chat-mode switch" in row.cause and "/compact" not in row.cause


RUNS = """
# aider chat started at 2025-05-01 10:00:00

> Aider v0.82.2  
> Main model: anthropic/claude-3-7-sonnet-20250219 with diff edit format  
> Weak model: anthropic/claude-3-5-haiku-20241022  

#### make a flask app  

app.py

#### add a test  

Done.

#### /clear  

#### start over  

Fresh.

# aider chat started at 2025-05-01 11:00:00

#### explain app.py  

It prints.

# aider chat started at 2025-05-01 12:00:00

> Aider v0.82.2  

#### and docs  

Docs.

#### more docs  

More.
"""  # noqa: W291 - aider ends its lines with a Markdown line break

SUMMARY = "I spoke to you previously about a number of things.\nI asked for an app and its docs."
DOCS = "Docs: " + "README.md and a section on each endpoint. " * 4  # longer than the summary that replaces it


def project(tmp_path: Path, chat: str = ".aider.chat.history.md", log: str = "aider.llm.history") -> Path:
    """Both of aider's logs of the same runs, as a project folder holds them (the request log under a name of the
    user's choosing); one request-log conversation in run 2's time is another project's (no input in common)."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / chat).write_text(RUNS)
    (tmp_path / log).write_text(
        request(("user", "make a flask app"), reply="app.py")
        + request(("user", "make a flask app"), ("assistant", "app.py"), ("user", "add a test"), reply="Done.",
                  time="10:01:00")
        + request(("user", "start over"), reply="Fresh.", time="10:02:00")
        + request(("user", "unrelated"), reply="?", time="11:00:10")
        + request(("user", "and docs"), reply=DOCS, time="12:00:05")
        + request(("user", SUMMARY), ("assistant", "Ok."), ("user", "more docs"), reply="More.", time="12:05:00"))
    return tmp_path


def test_both_logs_of_a_project_import_one_transcript_per_run_from_the_request_log(tmp_path: Path) -> None:
    from compbench.data.importing import Imported, Merged, collect

    events = list(collect([project(tmp_path)]))
    ts = [e.transcript for e in events if isinstance(e, Imported)]
    merged = [e for e in events if isinstance(e, Merged)]
    assert [(t.id.split("-")[1], t.meta["started_at"]) for t in ts] == [
        ("llm", "2025-05-01T10:00:05"), ("20250501T110000", "2025-05-01T11:00:00"), ("llm", "2025-05-01T11:00:10"),
        ("llm", "2025-05-01T12:00:05")]
    first, chat_only, other, last = ts
    assert [m.text for m in first.messages if m.role == "user"] == ["make a flask app", "add a test", "start over"]
    assert first.meta["cleared_at"] == [5] and first.messages[5].text == "start over"  # after the /clear
    assert (first.meta["tool_version"], first.meta["model"], first.meta["edit_format"]) == (
        "0.82.2", "anthropic/claude-3-7-sonnet-20250219", "diff")
    assert first.meta["aider_chat_history"]["started_at"] == "2025-05-01T10:00:00"
    assert chat_only.source == "aider" and "path" in chat_only.meta and not chat_only.compactions
    assert [m.text for m in other.messages if m.role == "user"] == ["unrelated"]
    (c,) = last.compactions  # the chat history has no summaries; the request log does
    assert c.summary == SUMMARY and c.trigger == "auto"
    assert [(m.id, m.into, m.messages, Path(m.via).name) for m in merged] == [
        (m.id, ts[k].id, n, "aider.llm.history") for m, k, n in zip(merged, (0, 3), (6, 4), strict=True)]
    assert str(merged[0]) == (f"{tmp_path / '.aider.chat.history.md'}: aider run {merged[0].id} (6 messages) is also "
                              f"in the request log {tmp_path / 'aider.llm.history'}, as {first.id}; imported once, "
                              "from the request log (it holds the requests and the summaries)")


def test_the_import_says_which_runs_it_read_from_the_request_log(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import main_cli

    code, out, err = main_cli(capsys, monkeypatch, "datasets", "import", project(tmp_path / "p"), "--out",
                              tmp_path / "ds")
    assert code == 0 and err.count("warning: merged ") == 2
    assert out.startswith("imported 4 transcripts (aider 4); 0 errors skipped; 2 aider runs of the chat history "
                          "read from the request log instead (merged);")
    code, out, _ = main_cli(capsys, monkeypatch, "datasets", "validate", tmp_path / "p")
    assert code == 0 and out.splitlines()[-1] == ("2 valid, 0 invalid; 4 transcripts (aider 4); 2 aider runs of the "
                                                  "chat history read from the request log instead (merged)")


def test_a_request_log_sharing_no_input_with_the_runs_is_not_merged(tmp_path: Path) -> None:
    from compbench.data.importing import Imported, collect

    (tmp_path / ".aider.chat.history.md").write_text(RUNS)
    (tmp_path / "session-llm.log").write_text(request(("user", "another project"), reply="ok"))  # any name
    (tmp_path / "llm-notes.txt").write_text("not a log\n")
    ts = [e.transcript for e in collect([tmp_path]) if isinstance(e, Imported)]
    assert len(ts) == 4 and sum(t.id.startswith("aider-llm-") for t in ts) == 1


@pytest.mark.parametrize(("chat", "log"), [
    (".aider.chat.history.md", "home-me-app__aider.llm.history"), ("session.md", "requests"),
    ("chat.md", "2025-05-01.txt"), (".aider.chat.history.md", ".aider.requests.bak")])
def test_both_logs_pair_whatever_their_names(tmp_path: Path, chat: str, log: str) -> None:
    """aider's --chat-history-file and --llm-history-file take any name: a folder walk offers every file beside a
    chat history whose first line is a request, and pairs the two by content. A hidden file is opened only if its
    name is aider's (.aider*): a .env holding a request's first line is never read."""
    from compbench.data.importing import Imported, Merged, collect

    folder = project(tmp_path / "p", chat, log)
    (folder / ".env").write_text("TO LLM 2025-05-01T10:00:05\n-------\nUSER secret\n")
    (folder / "notes.txt").write_text("TO LLM is how aider's log begins\n")
    names = [f.name for f in iter_files([folder])]
    assert sorted(names) == sorted([chat, log])
    events = list(collect([folder]))
    ts = [e.transcript for e in events if isinstance(e, Imported)]
    assert len(ts) == 4 and sum(isinstance(e, Merged) for e in events) == 2
    assert not any("secret" in m.text for t in ts for m in t.messages)
    (c,) = ts[-1].compactions
    assert c.summary == SUMMARY


def test_two_chat_histories_in_a_folder_pair_with_no_request_log(tmp_path: Path) -> None:
    """Which run is whose is not guessed: with two chat histories beside it, the request log is read alone."""
    from compbench.data.formats.aider_runs import pairs

    folder = project(tmp_path / "p", "a.md", "requests")
    (folder / "b.md").write_text(RUNS)
    assert pairs(sorted(folder.iterdir())) == {}
    (folder / "b.md").unlink()
    assert pairs(sorted(folder.iterdir())) == {folder / "a.md": [folder / "requests"]}
