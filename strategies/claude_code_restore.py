"""``compbench.strategies.claude_code_restore`` — What Claude Code attaches again after a compaction: the recent files as
they are on disk, the skills the session invoked, the plan file.

Claude Code is closed source. The budgets and the order are those of ``compact.ts`` in the 2.1.88 bundle as
public analyses quote it (``createPostCompactFileAttachments``, ``createSkillAttachmentIfNeeded``,
``createPlanAttachmentIfNeeded``, ``shouldExcludeFromPostCompactRestore``; the constants
``POST_COMPACT_MAX_FILES_TO_RESTORE = 5``, ``POST_COMPACT_TOKEN_BUDGET = 50_000``,
``POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000``, ``POST_COMPACT_MAX_TOKENS_PER_SKILL = 5_000``,
``POST_COMPACT_SKILLS_TOKEN_BUDGET = 25_000``); what the logs show is said where it is used:

* **Files** come from Claude Code's read-file state, most recently read or written first, and are read
  from disk again: a file the agent edited after its last read is attached with the edit in it. The one
  real session that persists its post-compaction attachments (2.1.217, 6c0a282a in ../shared/real-compactions)
  attaches the four files the agent last read or edited, in that order, each as the disk then held it, and
  names a fifth that was too large (``compact_file_reference``). A log holds only the agent's own changes:
  its ``Edit`` / ``MultiEdit`` / ``Write`` calls are applied to the last content it showed; a change made by
  a sub-agent or a shell command (three of the four files in that session) is not in the log, and the
  content stays the last one known. A file only edited, never read in the log, is named, not included
  (its content is unknown; the tool attached it in full).
* **Skills** (every preset from 2.0.76: the packages of 2.0.76, 2.1.69-2.1.83 attach them, :mod:`.claude_code_versions`):
  each skill the session invoked (the ``Skill`` tool; the skill's text follows its result as a user message), most
  recent first; from 2.1.84 each cut to 5,000 rough tokens (``slice(0, 5000 * 4 - marker.length) + marker``) and
  skipped when it would take the skills past 25,000, a later smaller one still attached; the budget counts the
  skill's content as attached, not the reminder around it. Before 2.1.84 every skill whole. A skill whose text a kept
  message already carries as an earlier re-attachment is skipped (2.1.205 on; kept messages exist in the presets
  from 2.1.217), unless a kept message holds the text as its own body. No log of ours persists this attachment: in
  the 2.1.217 session (two skills invoked, 3,700 and 9,200 characters) the first call after the compaction leaves
  room for them beside what the log persisted (a heuristic reading, one session). The wording around it is ours.
* **The plan file** (``~/.claude/plans/<slug>.md``, plan mode) goes through its own channel, whole, and not
  through the files' (``shouldExcludeFromPostCompactRestore``), from 2.0.76. The wording is ours; no log of ours
  shows it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence

from compbench.sdk import Message, Text, ToolCall, ToolResult, call_args, touches

RESTORE_FILES = 5  # POST_COMPACT_MAX_FILES_TO_RESTORE
RESTORE_TOKENS_PER_FILE = 5_000  # POST_COMPACT_MAX_TOKENS_PER_FILE: a larger file is only named (compact_file_reference)
RESTORE_BUDGET = 50_000  # POST_COMPACT_TOKEN_BUDGET, over the attachments' rough token counts
SKILLS_BUDGET = 25_000  # POST_COMPACT_SKILLS_TOKEN_BUDGET
TOKENS_PER_SKILL = 5_000  # POST_COMPACT_MAX_TOKENS_PER_SKILL
SKILL_TRUNCATED = ("\n\n[... skill content truncated for compaction; use Read on the skill path if you need the full "
                   "text]")  # the marker as ports of the 2.1.88 bundle quote it
SKILL_BASE = "Base directory for this skill:"  # the user message that carries an invoked skill's text
MEMORY_FILES = re.compile(r"(^|/)(claude(\.local)?\.md|agents\.md)$|/\.claude/", re.I)  # not restored
PLAN_FILE = re.compile(r"(^|/)\.claude/plans/[^/]+\.md$", re.I)  # plan mode's plan file
LINE_NUMBER = re.compile(r"(?m)^\s*(\d+)(?:→|\t)")
_NUMBERED_LINE = re.compile(r"^(\s*)(\d+)(→|\t)(.*)$")
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})  # Claude Code's own: their arguments say what changed


def _js_len(text: str) -> int:
    """JavaScript's ``String.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def rough(text: str) -> int:
    """``roughTokenCountEstimation``: ``Math.round(length / 4)``."""
    return math.floor(_js_len(text) / 4 + 0.5)


def _file_size(output: str, tokens: int) -> int:
    """A file's whole size in rough tokens from one read of it: a slice's line numbers tell how long the
    file is at least (``offset``/``limit`` reads), its own size how long a line is."""
    lines = max(1, output.count("\n") + 1)
    numbers = [int(n) for n in LINE_NUMBER.findall(output)]
    return round(max(numbers, default=lines) * tokens / lines) if numbers else tokens


def _plain(output: str) -> tuple[str, int, str, int] | None:
    """A Read output as (plain text, first line number, separator, number width) when every line is numbered."""
    lines = output.split("\n")
    found = [_NUMBERED_LINE.match(line) for line in lines]
    if not lines or not all(found):
        return None
    first = found[0]
    assert first is not None
    return ("\n".join(m.group(4) for m in found if m is not None), int(first.group(2)), first.group(3),
            len(first.group(1)) + len(first.group(2)))


def _numbered(text: str, start: int, sep: str, width: int) -> str:
    return "\n".join(f"{n:>{width}}{sep}{line}" for n, line in enumerate(text.split("\n"), start))


def edited(content: str, call: ToolCall) -> str | None:
    """``content`` (as the log last showed the file) with the agent's own ``Edit`` / ``MultiEdit`` applied (the
    file as Claude Code reads it from disk again), or None when an edit's old text is not in it."""
    args = call_args(call)
    edits = args.get("edits") if call.name == "MultiEdit" else [args]
    if not isinstance(edits, list):
        return None
    plain = _plain(content)
    text = plain[0] if plain else content
    for e in edits:
        if not isinstance(e, dict):
            return None
        old, new = str(e.get("old_string", "")), str(e.get("new_string", ""))
        if not old or old not in text:
            return None
        text = text.replace(old, new) if e.get("replace_all") else text.replace(old, new, 1)
    return _numbered(text, plain[1], plain[2], plain[3]) if plain else text


def last_contents(messages: Sequence[Message]) -> dict[str, tuple[int, str, str]]:
    """Per file key, (order of its last touch, path as written, content as Claude Code would read it now: the
    last read with the agent's later edits applied; "" when unknown)."""
    results = {p.call_id: p for m in messages for p in m.parts if isinstance(p, ToolResult)}
    last: dict[str, tuple[int, str, str]] = {}
    order = 0
    for m in messages:
        for p in m.parts:
            if not isinstance(p, ToolCall):
                continue
            for touch in touches(p):
                if not touch.key.startswith("file:"):
                    continue
                args = call_args(p)
                path = str(args.get("file_path") or args.get("path") or touch.key[5:])
                res = results.get(p.id)
                before = last.get(touch.key, (0, "", ""))[2]
                if touch.verb == "read":
                    content = res.output if res is not None and not res.is_error else before
                elif p.name == "Write":
                    content = str(args.get("content", ""))
                elif p.name in EDIT_TOOLS and before and (res is None or not res.is_error):
                    content = edited(before, p) or before
                else:
                    content = before
                order += 1
                last[touch.key] = (order, path, content)
    return last


def _read_text(path: str, content: str) -> str:
    return (f"<system-reminder>\nCalled the Read tool with the following input: {json.dumps({'file_path': path})}\n"
            f"</system-reminder>\n<system-reminder>\nResult of calling the Read tool: "
            f"{json.dumps(content, ensure_ascii=False)}\n</system-reminder>")


def restored_files(messages: Sequence[Message], files: int = RESTORE_FILES, per_file: int = RESTORE_TOKENS_PER_FILE,
                   budget: int = RESTORE_BUDGET, exclude: Collection[str] = ()) -> list[tuple[str, str]]:
    """``(path, attachment text)`` of the files Claude Code re-attaches after compacting ``messages``: the
    ``files`` most recently read or written (its read-file state), memory files (CLAUDE.md, anything under a
    ``.claude/`` folder: the plan file has its own channel) and the keys in ``exclude`` (files a kept segment
    read) left out; one whose size exceeds ``per_file``, or whose content is unknown, is named, not included
    (``compact_file_reference``); the attachments stop at ``budget`` rough tokens."""
    out: list[tuple[str, str]] = []
    used = 0
    chosen = [(order, path, content) for key, (order, path, content) in last_contents(messages).items()
              if key not in exclude and not MEMORY_FILES.search(path.lower().replace("\\", "/"))]
    for _, path, content in sorted(chosen, reverse=True)[:files]:
        if content and _file_size(content, rough(content)) <= per_file:
            text = _read_text(path, content)
        else:
            text = (f"<system-reminder>\nNote: {path} was read before the last conversation was summarized, but "
                    f"the contents are too large to include. Use Read tool if you need to access it.\n</system-reminder>")
        if used + rough(text) > budget:
            continue
        used += rough(text)
        out.append((path, text))
    return out


def invoked_skills(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """``(skill, text)`` of every skill the session invoked through the ``Skill`` tool, most recent first (each
    once): its text is the user message after the tool's result that starts with "Base directory for this
    skill:", else the result itself."""
    found: dict[str, tuple[int, str]] = {}
    pending: dict[str, str] = {}  # call id -> skill name, until its text is seen
    for k, m in enumerate(messages):
        for p in m.parts:
            if isinstance(p, ToolCall) and p.name == "Skill":
                pending[p.id] = str(call_args(p).get("skill") or call_args(p).get("command") or p.id)
            elif isinstance(p, ToolResult) and p.call_id in pending and not p.is_error:
                name = pending[p.call_id]
                text = next((x.text for later in messages[k + 1:k + 3] if later.role == "user"
                             for x in later.parts if isinstance(x, Text) and x.text.startswith(SKILL_BASE)), "")
                if text or not p.output.startswith("Launching skill"):
                    found[name] = (k, text or p.output)
                del pending[p.call_id]
    return [(name, text) for name, (_, text) in sorted(found.items(), key=lambda kv: -kv[1][0])]


def skill_attachments(messages: Sequence[Message], budget: int = SKILLS_BUDGET, per_skill: int = TOKENS_PER_SKILL,
                      kept: Sequence[Message] = ()) -> list[tuple[str, str]]:
    """``(skill, attachment text)`` of the invoked skills Claude Code attaches again, most recent first: each cut to
    ``per_skill`` rough tokens (with the truncation marker), skipped when its content would take the skills past
    ``budget`` (the content counted, not the reminder around it); 0: no cap, as 2.0.76-2.1.83. A skill a ``kept``
    message already re-attaches is skipped, unless a kept message holds its text as its own body."""
    out: list[tuple[str, str]] = []
    used = 0
    for name, text in invoked_skills(messages):
        if _reattached(kept, text):
            continue
        if per_skill and rough(text) > per_skill:
            text = text[:max(0, per_skill * 4 - len(SKILL_TRUNCATED))] + SKILL_TRUNCATED
        if budget and used + rough(text) > budget:
            continue
        used += rough(text)
        out.append((name, f"<system-reminder>\nSkill {name}, invoked earlier in this session:\n{text}\n"
                          "</system-reminder>"))
    return out


def _reattached(kept: Sequence[Message], text: str) -> bool:
    """``G_o`` of the bundle: scanning the kept messages from the newest, a message whose text is the skill's is its
    body (attached again); an earlier re-attachment that carries it spares it."""
    found = False
    for m in reversed(kept):
        restored = str(m.meta.get("restored") or "")
        if restored.startswith("skill:"):
            found = found or text in m.text
        elif m.role == "user" and m.text == text:
            return False
    return found


def preset_attachments(history: Sequence[Message], preset: Mapping[str, object],
                       kept: Sequence[Message] = ()) -> list[str]:
    """The plan file and the invoked skills a ``claude-code`` preset (its parameter values) attaches after compacting
    ``history``, ``kept`` kept verbatim: what the recorded row sends where the log does not say."""
    out: list[str] = []
    if preset.get("restore_plan"):
        plan = plan_attachment(history)
        out += [plan[1]] if plan else []
    if preset.get("restore_skills"):
        budget, each = preset.get("skills_budget", SKILLS_BUDGET), preset.get("skill_tokens", TOKENS_PER_SKILL)
        out += [text for _, text in skill_attachments(history, budget if isinstance(budget, int) else SKILLS_BUDGET,
                                                      each if isinstance(each, int) else TOKENS_PER_SKILL, kept)]
    return out


def plan_attachment(messages: Sequence[Message]) -> tuple[str, str] | None:
    """``(path, attachment text)`` of the plan file the session last read or wrote (plan mode), whole, or None."""
    plans = [(order, path, content) for key, (order, path, content) in last_contents(messages).items()
             if PLAN_FILE.search(path.replace("\\", "/")) and content]
    if not plans:
        return None
    _, path, content = max(plans)
    plain = _plain(content)
    return path, (f"<system-reminder>\nA plan file exists from plan mode at: {path}\n\nPlan contents:\n\n"
                  f"{plain[0] if plain else content}\n</system-reminder>")
