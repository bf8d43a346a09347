"""``compbench.data.formats.coverage`` — Did the import read what the file holds? A file read as the wrong format,
or by an importer that does not know most of its records, imports "successfully" with most of its content
dropped (a Gemini CLI export read as OpenAI chat: 82 user messages, no answers, 172 tokens from 550 KB).
This module compares the two and refuses such an import.

* **held**: the characters of the file's distinct strings (JSON and JSON lines: each string counted once
  however often the file repeats it, as a session id on every line, escapes decoded; any other text file:
  all its characters). Ids, timestamps, type tags, keys and a tool's UI copies are in it too, so it is
  larger than what any importer reads, by an amount that depends on the tool. One regular-expression pass:
  about 1 s of CPU for the 54 MB of real files, next to their import's 0.9-2 s.
* **read**: the characters of the transcripts' parts (text, reasoning, tool names, arguments and outputs,
  media names and data), of the recorded compactions' summaries and of the strings an importer kept in
  ``meta`` (a trajectory's final patch, a session title).

An import is refused when read / held is below :data:`MIN_RATIO` and at least :data:`MIN_DROPPED`
characters are left unread (a small file is mostly ids and timestamps, whatever its format); one the user
forced with ``--format`` is imported with a warning instead. Measured with ``python -m
compbench.data.formats PATH...`` (it prints read / held for every file) on the 30 real files in
``../shared`` (transcripts, real-compactions, real-logs): 0.17-1.11 — Claude Code 0.17-0.88 (the lowest: a
session whose sub-agent ``progress`` records hold 2.9 M characters compbench does not import), OpenCode
exports 0.30-0.34, SWE-agent 0.41-0.83, mini-swe-agent 0.87-1.01, pi 0.88, Codex 0.93-0.99, the Gemini CLI
export 1.11; the hand-made Gemini CLI and Cline fixtures 0.58-1.33. A Gemini CLI export read by the former
chat reader gave 0.00 (none of its ``parts`` read). The rule sits at 0.05, a third of the lowest real file: a
heuristic on 30 files, named so in its message. It does not catch a partial misread (Cline's API history read
as chat would keep 0.34 of its fixture, its text blocks): structure does
(:func:`~compbench.data.formats.chat_fit.unfit`). Databases (OpenCode's store) are not measured.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.transcript import Media, Reasoning, Text, ToolCall, ToolResult, Transcript
from compbench.errors import TranscriptError

MIN_RATIO = 0.05
FORCED: ContextVar[bool] = ContextVar("FORCED", default=False)  # the user named the format: warn, never refuse
MIN_DROPPED = 20_000  # characters left unread before the ratio says anything
_STRING = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"', re.S)  # a JSON string's body, escapes as written
BINARY_PREFIX = b"SQLite format 3\x00"


def held(path: Path) -> int | None:
    """The characters of ``path``'s string content; None for a file it does not measure (a database)."""
    raw = path.read_bytes()
    if raw.startswith(BINARY_PREFIX):
        return None
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.lstrip().startswith(("{", "[")):
        return len(text)
    seen: set[str] = set(_STRING.findall(text))  # keys too: a file's distinct keys are a few hundred characters
    # escapes decoded: a backslash escape is one character, a \uXXXX one for six (an escaped backslash is
    # counted twice: the measure is a heuristic)
    return sum(map(len, seen)) - sum(s.count("\\") + 4 * s.count("\\u") for s in seen if "\\" in s)


def read_chars(transcripts: list[Transcript]) -> int:
    n = 0
    for t in transcripts:
        for m in t.messages:
            for p in m.parts:
                if isinstance(p, (Text, Reasoning)):
                    n += len(p.text)
                elif isinstance(p, ToolCall):
                    n += len(p.name) + len(p.args)
                elif isinstance(p, ToolResult):
                    n += len(p.name) + len(p.output)
                elif isinstance(p, Media):
                    n += len(p.name) + (len(p.data) * 4 + 2) // 3
        n += sum(len(c.summary) for c in t.compactions) + held_value(dict(t.meta))
    return n


def ratio(path: Path, transcripts: list[Transcript]) -> float | None:
    h = held(path)
    if h is None or h == 0:
        return None
    return read_chars(transcripts) / h


def held_value(value: Any, seen: set[str] | None = None) -> int:
    """The characters of the distinct string values inside one parsed JSON value (object keys not counted)."""
    seen = set() if seen is None else seen
    if isinstance(value, str):
        if value in seen:
            return 0
        seen.add(value)
        return len(value)
    if isinstance(value, dict):
        return sum(held_value(v, seen) for v in value.values())
    if isinstance(value, list):
        return sum(held_value(v, seen) for v in value)
    return 0


def check(path: Path, fmt: str, t: Transcript) -> Transcript:
    """Refuse an import that read less than :data:`MIN_RATIO` of the file's string content; when the user named
    the format (:data:`FORCED`), import it with a warning instead."""
    h = held(path)
    return _refuse(path, None, fmt, t, h) if h else t


def check_value(path: Path, line: int | None, fmt: str, value: Any, t: Transcript) -> Transcript:
    """The same rule for one record of a file that holds many transcripts (a chat JSONL line)."""
    h = held_value(value)
    return _refuse(path, line, fmt, t, h) if h else t


def _refuse(path: Path, line: int | None, fmt: str, t: Transcript, h: int) -> Transcript:
    got = read_chars([t])
    r = got / h
    if r >= MIN_RATIO or h - got < MIN_DROPPED:
        return t
    said = f"read as {fmt}, it gives {got:,} characters of the {h:,} the file holds ({r:.1%}"
    if FORCED.get():
        return replace(t, warnings=(*t.warnings, f"{said}): most of the file was not imported (a heuristic)"))
    raise TranscriptError(path, line, (
        f"an import that reads the file's content: {said}; every real file gives {MIN_RATIO:.0%} or more, a "
        "heuristic): most of it would be dropped (pass --format NAME to import it so anyway)"))
