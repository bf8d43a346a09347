"""What Claude Code attaches again after a compaction (compbench.strategies.claude_code_restore): files as the disk
holds them (the agent's own edits after the last read applied), the invoked skills within their budgets, the
plan file through its own channel. Hand-made sessions of the shapes real logs show."""

from __future__ import annotations

import json

import pytest

from compbench.data.transcript import Message, Text
from compbench.strategies.claude_code_restore import (
    SKILL_TRUNCATED,
    edited,
    invoked_skills,
    plan_attachment,
    restored_files,
    rough,
    skill_attachments,
)
from helpers import assistant, tool

INDEX = "1\texport default function Home() {\n2\t  return <Hero />;\n3\t}"


def read(k: int, path: str, body: str) -> list[Message]:
    return [assistant(f"a{k}", "", [(f"c{k}", "Read", {"file_path": path})]), tool(f"t{k}", f"c{k}", body, "Read")]


def edit(k: int, path: str, old: str, new: str, name: str = "Edit") -> list[Message]:
    args: dict[str, object] = ({"file_path": path, "edits": [{"old_string": old, "new_string": new}]}
                               if name == "MultiEdit" else {"file_path": path, "old_string": old, "new_string": new})
    return [assistant(f"e{k}", "", [(f"d{k}", name, args)]), tool(f"r{k}", f"d{k}", "updated", name)]


def restored_text(messages: list[Message], path: str = "/p/index.js") -> str:
    ((_, text),) = [(p, t) for p, t in restored_files(messages) if p == path]
    return json.loads(text.split("Result of calling the Read tool: ", 1)[1].rsplit("\n</system-reminder>", 1)[0])


@pytest.mark.parametrize("name", ["Edit", "MultiEdit"])
def test_an_edit_after_the_last_read_is_in_the_reattached_file(name: str) -> None:
    """The tool reads the file from disk again: the agent's edit after its last read is in it (it was not: the
    last read was re-attached as the log showed it), line numbers kept in the Read format."""
    msgs = [*read(1, "/p/index.js", INDEX), *edit(2, "/p/index.js", "<Hero />", "<Install />", name)]
    assert restored_text(msgs) == "1\texport default function Home() {\n2\t  return <Install />;\n3\t}"


def test_an_edit_the_known_content_does_not_hold_leaves_it_as_known() -> None:
    """A change the log does not show (a sub-agent's, a shell's) moved the text: the content stays the last known."""
    msgs = [*read(1, "/p/index.js", INDEX), *edit(2, "/p/index.js", "<Footer />", "<Install />")]
    assert restored_text(msgs) == INDEX


def test_a_write_replaces_the_content_and_an_edit_of_an_unread_file_is_named_only() -> None:
    write = [assistant("w", "", [("cw", "Write", {"file_path": "/p/new.py", "content": "x = 1\n"})]),
             tool("tw", "cw", "File created successfully", "Write")]
    msgs = [*write, *edit(2, "/p/never_read.py", "a", "b")]
    got = dict(restored_files(msgs))
    assert "Result of calling the Read tool" in got["/p/new.py"] and '"x = 1\\n"' in got["/p/new.py"]
    assert "too large to include" in got["/p/never_read.py"]  # its content is not in the log


def test_a_file_the_kept_segment_read_is_not_reattached() -> None:
    msgs = [*read(1, "/p/a.py", "1\ta = 1"), *read(2, "/p/b.py", "1\tb = 2")]
    assert [p for p, _ in restored_files(msgs)] == ["/p/b.py", "/p/a.py"]
    assert [p for p, _ in restored_files(msgs, exclude={"file:p/b.py"})] == ["/p/a.py"]


def skill(k: int, name: str, text: str) -> list[Message]:
    return [assistant(f"s{k}", "", [(f"k{k}", "Skill", {"skill": name})]),
            tool(f"sr{k}", f"k{k}", f"Launching skill: {name}", "Skill"),
            Message(f"sb{k}", "user", (Text(f"Base directory for this skill: /p/.claude/skills/{name}\n\n{text}"),))]


def test_invoked_skills_are_read_most_recent_first_once_each() -> None:
    msgs = [*skill(1, "review", "old"), *skill(2, "design", "D"), *skill(3, "review", "R")]
    assert [(n, t.rsplit("\n", 1)[-1]) for n, t in invoked_skills(msgs)] == [("review", "R"), ("design", "D")]


@pytest.mark.parametrize(("chars", "cut"), [(19_998, False), (20_001, False), (20_002, True)])
def test_a_skill_is_cut_at_5000_rough_tokens(chars: int, cut: bool) -> None:
    """Math.round(length / 4): 20,001 characters (the base line included) round to 5,000 tokens, 20,002 to
    5,001: cut, with the marker."""
    base = "Base directory for this skill: /p/.claude/skills/big\n\n"
    msgs = skill(1, "big", "x" * (chars - len(base)))
    ((_, text),) = skill_attachments(msgs)
    assert (SKILL_TRUNCATED in text) is cut


def test_the_skills_budget_counts_the_content_not_the_reminder_around_it() -> None:
    """2.1.84 on: ``by(content)`` against 25,000; the reminder compbench wraps it in is not Claude Code's count."""
    msgs = [m for k in range(6) for m in skill(k, f"s{k}", "y" * 19_000)]  # ~4,760 rough tokens each
    contents = [text for _, text in invoked_skills(msgs)]
    sizes = [rough(t) for t in contents]
    assert len(skill_attachments(msgs, budget=0)) == 6
    assert len(skill_attachments(msgs)) == 5  # 25,000: five fit, the sixth does not
    assert len(skill_attachments(msgs, budget=sizes[0] + sizes[1])) == 2  # the reminders would not fit
    assert len(skill_attachments(msgs, budget=sizes[0] + sizes[1] - 1)) == 1
    assert sum(rough(t) for _, t in skill_attachments(msgs, budget=sizes[0] + sizes[1])) > sizes[0] + sizes[1]


def test_a_skill_that_does_not_fit_leaves_room_for_a_smaller_one() -> None:
    """``if (n + d > budget) continue``: the loop goes on with the older skills."""
    msgs = [*skill(1, "small", "s" * 400), *skill(2, "big", "b" * 19_000), *skill(3, "mid", "m" * 4_000)]
    sizes = {n: rough(t) for n, t in invoked_skills(msgs)}
    got = [n for n, _ in skill_attachments(msgs, budget=sizes["mid"] + sizes["small"])]
    assert got == ["mid", "small"]


@pytest.mark.parametrize(("chars", "whole"), [(19_000, True), (200_000, True)])
def test_before_2_1_84_every_skill_is_attached_whole(chars: int, whole: bool) -> None:
    msgs = [m for k in range(8) for m in skill(k, f"s{k}", "z" * chars)]
    got = skill_attachments(msgs, budget=0, per_skill=0)
    assert len(got) == 8 and all((SKILL_TRUNCATED not in t) is whole and "z" * chars in t for _, t in got)


def test_a_cut_skill_keeps_its_size_with_the_marker() -> None:
    """``slice(0, 5000 * 4 - marker.length) + marker``: the cut content is 20,000 characters, 5,000 rough tokens."""
    ((_, text),) = skill_attachments(skill(1, "big", "q" * 50_000))
    body = text.split("invoked earlier in this session:\n", 1)[1].rsplit("\n</system-reminder>", 1)[0]
    assert body.endswith(SKILL_TRUNCATED) and len(body) == 20_000 and rough(body) == 5_000


def test_a_skill_already_re_attached_in_the_kept_messages_is_skipped() -> None:
    """2.1.205 on (``G_o``): a kept earlier re-attachment carrying the skill's text spares it; a kept message holding
    the text as its own body does not."""
    msgs = [*skill(1, "review", "R" * 300), *skill(2, "design", "D" * 300)]
    review = dict(invoked_skills(msgs))["review"]
    kept_attachment = Message("k1", "user", (Text(f"<system-reminder>\n{review}\n</system-reminder>"),),
                              meta={"restored": "skill:review"})
    assert [n for n, _ in skill_attachments(msgs, kept=[kept_attachment])] == ["design"]
    body = Message("k0", "user", (Text(review),), meta={"is_meta": True})
    assert [n for n, _ in skill_attachments(msgs, kept=[body, kept_attachment])] == ["design", "review"]
    assert [n for n, _ in skill_attachments(msgs, kept=[kept_attachment, body])] == ["design", "review"]


def test_the_plan_file_goes_through_its_own_channel_whole() -> None:
    plan = "/home/u/.claude/plans/tidy-river.md"
    body = "\n".join(f"{i}\t- step {i}: " + "z" * 60 for i in range(1, 400))  # far over 5,000 rough tokens
    msgs = [*read(1, plan, body), *read(2, "/p/a.py", "1\ta = 1")]
    assert [p for p, _ in restored_files(msgs)] == ["/p/a.py"]  # never among the files (a .claude/ path)
    got = plan_attachment(msgs)
    assert got is not None and got[0] == plan and "- step 399: " in got[1] and "399\t" not in got[1]


def test_edited_returns_none_for_a_malformed_multiedit() -> None:
    from compbench.data.transcript import ToolCall

    assert edited("a", ToolCall("c", "MultiEdit", json.dumps({"edits": "nope"}))) is None
