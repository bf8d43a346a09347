"""``compbench.data.formats.gemini_export`` — Gemini CLI's dumps of its API history: ``/chat share file.json`` (a JSON
array of Content), ``/chat save <tag>`` (``checkpoint-<tag>.json``: ``{history, authType}``, before that a bare
array) and ``/chat share file.md`` (the markdown rendering).

Followed: google-gemini/gemini-cli 5411f113ca ``packages/cli/src/ui/utils/historyExportUtils.ts``
(``serializeHistoryToMarkdown``, ``exportHistoryToFile``: ``JSON.stringify(history, null, 2)``) and
``packages/core/src/core/logger.ts`` (``Checkpoint {history, authType?}``); v0.10.0-v0.24.0
``packages/cli/src/ui/commands/chatCommand.ts`` for the older markdown header. The header moved its emoji to
the end of the line in v0.21.0 (1e6243045e, "Markdown export: move the emoji to the end of the line"), not at
v0.25 as ../shared/real-logs/FORMATS.md has it: ``🧑‍💻 ## USER`` up to v0.20, ``## USER 🧑‍💻`` from v0.21.

These are the history *after* any compression: the turns it replaced are not in the file. A compression
shows as a user Content (the ``<state_snapshot>``, or whatever text the model wrote instead: one real
export holds the verification prose) answered by a model Content that is only :data:`~.gemini_content.ACK`. It becomes a
RecordedCompaction at the snapshot, ``trigger="unknown"``, no tokens (these dumps record no usage),
``kept_ids`` empty and ``meta["history_in_file"] = False``. The snapshot stays a user message (with the
history gone it is what the agent knew); the acknowledgement, made by no model call, is flagged
``compaction: "ack"`` so a replay does not count it as a step.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.formats.gemini_content import SNAPSHOT_TAG, Contents, content_text, is_ack
from compbench.data.transcript import RecordedCompaction, Transcript
from compbench.errors import TranscriptError

USER_ICON = "\U0001f9d1\u200d\U0001f4bb"  # 🧑‍💻
MODEL_ICON = "\u2728"  # ✨
_ICON = f"(?:{USER_ICON}|{MODEL_ICON})"
HEADER = re.compile(rf"(?:(?P<i1>{_ICON}) ## (?P<r1>[A-Z]+)|## (?P<r2>[A-Z]+) (?P<i2>{_ICON}))\n\n")
SEPARATOR = re.compile(rf"\n\n---\n\n(?={HEADER.pattern})")
TOOL_BLOCK = re.compile(r"\*\*Tool (Command|Response)\*\*:\n```json\n(.*?)\n```", re.S)
SNAPSHOT_SECTIONS = re.compile(r"<(active_constraints|artifact_trail|task_state)>")


def sniff_markdown(head: str) -> bool:
    """A markdown export starts with a turn header of either style."""
    return HEADER.match(head.lstrip("\ufeff")) is not None


def is_checkpoint(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("history"), list) and set(doc) <= {"history", "authType"}


def read_document(path: Path, doc: Any) -> Transcript:
    """A share JSON or a checkpoint (both layouts), parsed."""
    from compbench.data.formats.openai_chat import line_of

    where: tuple[str, ...]
    if is_checkpoint(doc):
        history, where = doc["history"], ("history",)
        layout = "checkpoint"
    elif isinstance(doc, list):
        history, where = doc, ()
        layout = "checkpoint (bare array)" if path.name.startswith("checkpoint-") else "chat share JSON"
    else:
        raise TranscriptError(path, 1, "a Gemini CLI export: a list of Content or {history, authType}")
    for i, c in enumerate(history):
        if not isinstance(c, dict) or not isinstance(c.get("role"), str):
            raise TranscriptError(path, line_of(path, (*where, i)), f"a Content object with a string 'role' (item {i})")
    meta: dict[str, Any] = {"layout": layout}
    if isinstance(doc, dict) and isinstance(doc.get("authType"), str):
        meta["auth_type"] = doc["authType"]
    return build(path, [(c["role"], c.get("parts")) for c in history],
                 lambda i: line_of(path, (*where, i)), meta)


def read_markdown(path: Path) -> Transcript:
    """A ``/chat share`` markdown file: its turns back into Contents, then as the JSON dump."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, None, f"UTF-8 text (invalid byte at offset {e.start})") from None
    text = text.removeprefix("\ufeff")
    turns: list[tuple[str, Any]] = []
    lines: list[int] = []
    styles: set[str] = set()
    pos = 0
    while pos < len(text):
        m = HEADER.match(text, pos)
        if m is None:
            raise TranscriptError(path, text.count("\n", 0, pos) + 1,
                                  "a turn header ('## USER 🧑‍💻' or '🧑‍💻 ## USER') after each '---' separator")
        icon, role = (m["i1"], m["r1"]) if m["i1"] else (m["i2"], m["r2"])
        styles.add("emoji first (up to v0.20)" if m["i1"] else "emoji last (v0.21+)")
        if (icon == USER_ICON) != (role == "USER"):
            raise TranscriptError(path, text.count("\n", 0, pos) + 1, f"the {role} header with its own icon")
        sep = SEPARATOR.search(text, m.end())
        end = sep.start() if sep else len(text)
        lines.append(text.count("\n", 0, pos) + 1)
        turns.append((role.lower(), _parts(path, text, m.end(), end)))
        pos = sep.end() if sep else len(text)
    if not turns:
        raise TranscriptError(path, 1, "at least one turn")
    meta: dict[str, Any] = {"layout": "chat share markdown", "header_style": " and ".join(sorted(styles))}
    return build(path, turns, lambda i: lines[i] if i < len(lines) else None, meta)


def _parts(path: Path, text: str, start: int, end: int) -> list[dict[str, Any]]:
    """A turn's body: text, and the fenced JSON of each tool call and response (glued to the text, as the
    parts were joined with no separator)."""
    body = text[start:end]
    parts: list[dict[str, Any]] = []
    at = 0
    for m in TOOL_BLOCK.finditer(body):
        if m.start() > at:
            parts.append({"text": body[at:m.start()]})
        try:
            obj = json.loads(m[2])
        except json.JSONDecodeError as e:
            line = text.count("\n", 0, start + m.start(2)) + e.lineno
            raise TranscriptError(path, line, f"valid JSON in a Tool {m[1]} block ({e.msg})") from None
        parts.append({"functionCall" if m[1] == "Command" else "functionResponse": obj})
        at = m.end()
    if at < len(body):
        parts.append({"text": body[at:]})
    return parts


def build(path: Path, turns: list[tuple[str, Any]], where: Any, meta: dict[str, Any]) -> Transcript:
    """The messages of a list of Contents, with a compaction at each snapshot the model acknowledged."""
    c = Contents(str(path), where)
    compactions: list[RecordedCompaction] = []
    first: dict[int, int] = {}  # Content index -> its first message's position
    for i, (role, parts) in enumerate(turns):
        first[i] = len(c.messages)
        ack = role == "model" and is_ack(parts) and i > 0 and turns[i - 1][0] == "user"
        extra: dict[str, Any] = {"compaction": "ack", "synthetic": True} if ack else {}
        c.add(i, f"m{i}", role, parts, extra)
        if ack:
            k = first[i - 1]
            text = content_text(turns[i - 1][1])
            if k < first[i]:  # the snapshot produced its message (a blank one produces none)
                c.messages[k] = replace(c.messages[k], meta={**c.messages[k].meta, "gemini": "state_snapshot"})
            compactions.append(RecordedCompaction(
                index=k, tool="gemini-cli", trigger="unknown", summary=text,
                summary_id=c.messages[k].id if k < first[i] else "",
                meta={"history_in_file": False, "kept_unknown": True, "snapshot_xml": SNAPSHOT_TAG in text}))
    meta = {"path": str(path), **meta, **version_evidence(turns, meta)}
    return Transcript(_stem(path), "gemini-cli", tuple(c.messages), meta, tuple(compactions), tuple(c.finish()))


def version_evidence(turns: list[tuple[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The range of Gemini CLI versions that writes what the file shows (the dumps record no version)."""
    found: list[tuple[int, int, str]] = []  # (from, up to, why); 0 = unbounded
    style = str(meta.get("header_style", ""))
    if style.startswith("emoji first"):
        found.append((0, 20, "markdown header with the emoji first (up to v0.20)"))
    elif style.startswith("emoji last"):
        found.append((21, 0, "markdown header with the emoji last (v0.21+)"))
    if turns and "<session_context>" in content_text(turns[0][1]):
        found.append((29, 0, "<session_context> set-up turn (v0.29+)"))
    if any(SNAPSHOT_SECTIONS.search(content_text(p)) for r, p in turns if r == "user"):
        found.append((26, 0, "snapshot with v0.26's sections"))
    if not found:
        return {}
    return version_meta(found)


def version_meta(found: list[tuple[int, int, str]]) -> dict[str, Any]:
    """``tool_version`` (a range) and its evidence; evidence that contradicts itself gives no version."""
    lo = max(f[0] for f in found)
    hi = min((f[1] for f in found if f[1]), default=0)
    why = "; ".join(dict.fromkeys(f[2] for f in found))
    if hi and lo > hi:
        return {"tool_version_evidence": f"conflicting: {why}"}
    return {"tool_version": version_range(lo, hi), "tool_version_evidence": why}


def version_range(lo: int, hi: int) -> str:
    """``0.lo-0.hi``, ``0.lo+`` or ``up to 0.hi`` (0 = unbounded)."""
    if lo and hi:
        return f"0.{lo}" if lo == hi else f"0.{lo}-0.{hi}"
    return f"0.{lo}+" if lo else f"up to 0.{hi}"


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".json", ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem
