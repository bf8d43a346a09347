"""aider's request log read as aider builds each request (Aider-AI/aider 5dc9490bb35f): what is a summarization and
what is not, on hand-made logs of the shapes that were misread (issue 40: a "summary" of 110,626 tokens replacing
a history of 7,938, the recorded row at -57.5%)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from aider_logs import (
    ASK_FILES_REPLY,
    CODE_SYSTEM,
    chunked,
    file_listing,
    mode_switch_log,
    request,
    summarized_log,
)

from compbench.data.formats import read
from compbench.data.formats.aider_requests import IMAGE, anatomy, same
from compbench.data.transcript import Transcript

SUMMARY = "I spoke to you previously about a number of things.\nI asked you for app.py."


def _read(tmp: Path, text: str) -> list[Transcript]:
    f = tmp / "requests.log"
    f.write_text(text)
    return list(read(f))


@pytest.mark.parametrize("old", [False, True], ids=["v0.72 on", "before v0.72"])
def test_a_chat_mode_switch_with_files_in_the_chat_is_no_110k_summary(tmp_path: Path, old: bool) -> None:
    """/chat-mode ask with a file in the chat: aider's request is the summary alone, then the files chunk in the
    ask coder's wording. Before v0.72 (an empty line before each message) the summary and the files were read as
    one 43,000-character "summary"; from v0.72 the ask wording's files were read as history. Both are the
    chunk aider re-sends, never the conversation."""
    (t,) = _read(tmp_path, mode_switch_log(files=40_000, old=old))
    assert not any("def f1()" in m.text for m in t.messages)  # the file's contents are nowhere in the history
    assert [(c.trigger, c.meta["history_chars"] > len(c.summary)) for c in t.compactions] == [
        ("manual", True), ("manual", True)]  # both switches: summarize_all, no "Ok.", another system prompt
    first, second = t.compactions
    assert first.summary.endswith("steps 1 to 3 in app.py.") and first.kept_ids == ()
    kept = [next(m.text for m in t.messages if m.id == i) for i in second.kept_ids]
    assert kept == ["why does f1 return 1?", "Because of step 1.", "and f2?", "Step 2."]  # ask's cur, carried
    replies = [m for m in t.messages if m.meta.get("aider_preamble_chars")]
    assert all(m.meta["aider_preamble_chars"] > 40_000 for m in replies)  # the files, counted as re-sent
    assert [m.text for m in t.messages if m.role == "user" and m.meta.get("compaction") is None][-1] == \
        "now rename f2"


@pytest.mark.parametrize("old", [False, True], ids=["v0.72 on", "before v0.72"])
def test_as_it_ran_replaces_the_history_with_a_summary_smaller_than_it(tmp_path: Path, old: bool) -> None:
    """The recorded row on the misread shape: each compaction leaves a smaller context than it found, and as it
    ran saves against never compacting (the misread read 288 -> 16,247 tokens and -2,997%)."""
    from compbench.run.spec import RunSpec
    from compbench.run.write import write_run
    from compbench.sdk.session import ModelLimits

    ts = _read(tmp_path, mode_switch_log(files=40_000, old=old))
    write_run(tmp_path / "run", RunSpec(strategies=("none", "recorded"), limits=ModelLimits(200_000, 8_000),
                                        tokenizer="chars4"), "hand-made", ts)
    comp = pd.read_parquet(tmp_path / "run" / "compactions.parquet")
    rec = comp[comp["strategy"] == "recorded"]
    assert len(rec) == 2 and (rec["tokens_after"] < rec["tokens_before"]).all()
    results = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index("strategy")
    assert results.loc["recorded", "savings"] > 0


def test_a_summarys_kept_tail_is_carried_on_not_read_again(tmp_path: Path) -> None:
    """Two summarizations with a kept tail: each later request carries the summary, the tail and what followed.
    The tail was matched against its first copy and everything after it read as new again (41 messages for 29)."""
    (t,) = _read(tmp_path, summarized_log())
    prompts = [m.text.split(":")[0] for m in t.messages if m.role == "user" and m.text.startswith("step ")]
    assert prompts == [f"step {k}" for k in range(1, 8)]  # each prompt once
    assert len(t.messages) == 29 and [c.trigger for c in t.compactions] == ["auto", "auto"]
    ids = [m.id for m in t.messages]
    for c, step in zip(t.compactions, (3, 5), strict=True):
        kept = [t.messages[ids.index(i)] for i in c.kept_ids]
        assert kept[0].text.startswith(f"step {step}:")
        assert all(ids.index(i) < c.index for i in c.kept_ids)
        assert c.index > ids.index(c.summary_id) and len(c.summary) < c.meta["history_chars"]
    assert ids.index(t.compactions[1].kept_ids[0]) > ids.index(t.compactions[0].summary_id)  # the latest copy
    # every reply an edit note follows is marked (aider summarizes after one): 6 of 7
    assert sum(1 for m in t.messages if m.meta.get("edited")) == 6


@pytest.mark.parametrize(("extra", "compaction"), [(-1, False), (0, False), (1, True)])
def test_a_summary_never_replaces_a_history_smaller_than_itself(tmp_path: Path, extra: int, compaction: bool) -> None:
    """At the boundary: a summary as long as the history before it, or longer, is read as a message (a summary of
    a history the log does not hold), said in the warnings; a history one character longer is summarized."""
    prompt = "x" * (len(SUMMARY) + extra - len("ok"))  # the history before: the prompt and its reply "ok"
    (t,) = _read(tmp_path, request(("user", prompt), reply="ok")
                 + request(("user", SUMMARY), ("assistant", "Ok."), ("user", "next"), reply="done", time="10:01:00"))
    assert len(t.compactions) == int(compaction)
    summary = next(m for m in t.messages if m.text == SUMMARY)
    assert (summary.meta.get("compaction") == "summary") is compaction
    assert ("aider_summary" in summary.meta) is not compaction
    assert any("never replaces a history smaller than itself" in w for w in t.warnings) is not compaction
    assert [m.text for m in t.messages if m.role == "user"] == [prompt, SUMMARY, "next"]


def test_a_log_that_begins_with_a_summary_holds_no_compaction(tmp_path: Path) -> None:
    """--restore-chat-history: the first request already carries a summary of a history this log never held."""
    (t,) = _read(tmp_path, request(("user", SUMMARY), ("assistant", "Ok."), ("user", "go on"), reply="sure"))
    assert t.compactions == () and t.messages[1].text == SUMMARY and "aider_summary" in t.messages[1].meta


def test_the_weak_models_requests_are_not_the_conversation(tmp_path: Path) -> None:
    """The summarizer's request (prompts.summarize over # USER / # ASSISTANT sections) and the commit writer's,
    which aider does not log but a fork may: left out, said; the conversation goes on as one transcript."""
    summarizer = ("TO LLM 2025-05-01T10:00:30\n-------\nSYSTEM *Briefly* summarize this partial conversation about "
                  "programming.\n-------\nUSER # USER\nUSER make it\nUSER # ASSISTANT\nUSER done\n"
                  "LLM RESPONSE 2025-05-01T10:00:31\nASSISTANT I asked you to make it.\n")
    commit = ("TO LLM 2025-05-01T10:00:32\n-------\nSYSTEM You are an expert software engineer that generates "
              "concise, one-line Git commit messages based on the provided diffs.\n-------\nUSER diff\n"
              "LLM RESPONSE 2025-05-01T10:00:33\nASSISTANT feat: make it\n")
    (t,) = _read(tmp_path, request(("user", "make it"), reply="done") + summarizer + commit
                 + request(("user", "make it"), ("assistant", "done"), ("user", "more"), reply="more done",
                           time="10:01:00"))
    assert [m.text for m in t.messages[1:]] == ["make it", "done", "more", "more done"]
    assert any("1 summarizer request, 1 commit message request of the weak model" in w for w in t.warnings)


def test_architect_modes_editor_is_its_own_transcript_and_the_architect_goes_on(tmp_path: Path) -> None:
    """The editor runs between two of the architect's requests with the architect's reply as its one prompt: its
    own transcript, under the architect's; the architect's conversation is one transcript, not three."""
    arch = "Act as an expert architect engineer and provide direction to your editor engineer."
    plan = "Change app.py: rename f to g."
    log = (request(("user", "rename f"), reply=plan, system=arch)
           + request(("user", plan), reply="app.py\n<<<<<<< SEARCH\nf\n=======\ng\n>>>>>>> REPLACE",
                     time="10:00:20")
           + request(("user", "rename f"), ("assistant", plan), ("user", "I made those changes to the files."),
                     ("assistant", "Ok."), ("user", "now h"), reply="Rename h too.", time="10:01:00", system=arch))
    architect, editor = _read(tmp_path, log)
    assert [m.text for m in architect.messages[1:]] == ["rename f", plan, "I made those changes to the files.",
                                                        "Ok.", "now h", "Rename h too."]
    assert architect.messages[2].meta["edited"] is True and "parent_session" not in architect.meta
    assert editor.meta["parent_session"] == architect.id and [m.role for m in editor.messages] == [
        "system", "user", "assistant"]


def test_a_clear_begins_a_new_transcript_even_with_the_same_first_prompt(tmp_path: Path) -> None:
    """A request that carries on no conversation's context begins one: after /clear, "hi" again is not the old
    conversation's "hi" with the rest dropped."""
    log = (request(("user", "hi"), reply="hello") + request(("user", "hi"), ("assistant", "hello"), ("user", "go"),
                                                             reply="went", time="10:01:00")
           + request(("user", "hi"), reply="hello again", time="10:02:00"))
    first, second = _read(tmp_path, log)
    assert [m.text for m in first.messages[1:]] == ["hi", "hello", "go", "went"]
    assert [m.text for m in second.messages[1:]] == ["hi", "hello again"]


def test_what_aider_changes_in_place_is_the_same_message() -> None:
    """An interrupted prompt gains "^C KeyboardInterrupt"; a reply's reasoning is stripped before aider keeps it."""
    assert same(("user", "fix it"), ("user", "fix it\n^C KeyboardInterrupt"))
    assert same(("assistant", "<think>\nhm\n</think>\nDone."), ("assistant", "Done."))
    assert not same(("user", "fix it"), ("user", "fix it now"))  # not at a line break
    assert not same(("user", "fix it"), ("assistant", "fix it"))


def test_cache_prompts_content_lists_and_images_are_read_back(tmp_path: Path) -> None:
    """--cache-prompts logs a chunk's last message as a content list (its text's next lines unprefixed); an image
    in the chat is a chunk too. Neither fails the import nor enters the conversation."""
    log = ("TO LLM 2025-05-01T10:00:05\n-------\nSYSTEM type: text\nSYSTEM text: Act as an expert software "
           "developer.\nAlways use best practices.\n\nBe brief.\nSYSTEM cache_control: {'type': 'ephemeral'}\n"
           "-------\nUSER Here are summaries of some files present in my git repository.\nUSER app.py:\n-------\n"
           "ASSISTANT type: text\nASSISTANT text: Ok, I won't try and edit those files without asking first.\n"
           "ASSISTANT cache_control: {'type': 'ephemeral'}\n-------\nUSER type: text\nUSER text: Image file: a.png\n"
           "USER type: image_url\nUSER Image_url URL: data:image/png;base64," + "A" * 5_000 + "\n-------\n"
           "ASSISTANT Ok.\n-------\nUSER what is in a.png?\nLLM RESPONSE 2025-05-01T10:00:09\nASSISTANT A cat.\n")
    (t,) = _read(tmp_path, log)
    assert t.messages[0].text == "Act as an expert software developer.\nAlways use best practices.\n\nBe brief."
    assert [m.text for m in t.messages[1:]] == ["what is in a.png?", "A cat."]
    a = anatomy([("user", "Image file: a.png\n" + IMAGE), ("assistant", "Ok."), ("user", "hi")])
    assert a.history == (("user", "hi"),)


def test_the_ask_coders_files_chunk_and_reply_are_left_out() -> None:
    a = anatomy([("system", CODE_SYSTEM), ("user", "hi"), ("user", "I have *added these files to the chat* so you "
                 "see all of their contents.\n" + file_listing(500)), ("assistant", ASK_FILES_REPLY),
                 ("user", "why?")])
    assert a.history == (("user", "hi"), ("user", "why?")) and a.preamble > 500
    old = chunked([], [("user", "why?")], reply="because", time="10:00:00", ask=True, files="x", old=True)
    assert old.startswith("TO LLM 2025-05-01T10:00:00\n\nSYSTEM ")  # before v0.72: an empty line, no -------
