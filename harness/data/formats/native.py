"""``compbench.data.formats.native`` — compbench's own JSONL: a ``transcript`` header record, then its messages and
recorded compactions.

Several transcripts may follow each other in one file; each header starts a new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl
from compbench.data.transcript import (
    FORMAT_VERSION,
    Message,
    RecordedCompaction,
    Transcript,
    assemble,
    compaction_from_dict,
    message_from_dict,
    to_jsonl,
)
from compbench.errors import TranscriptError

NAME = "compbench"


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    return first is not None and first.get("type") == "transcript" and first.get("format") == "compbench"


def read(path: Path) -> Iterator[Transcript]:
    header: dict[str, Any] | None = None
    header_line = 0
    messages: list[Message] = []
    compactions: list[RecordedCompaction] = []
    lineno = 0
    for lineno, rec in iter_jsonl(path):
        kind = rec.get("type")
        if kind == "transcript":
            if header is not None:
                yield _build(path, header_line, header, messages, compactions)
            version = rec.get("format_version")
            if not isinstance(version, int) or version > FORMAT_VERSION:
                raise TranscriptError(path, lineno, f"format_version <= {FORMAT_VERSION}, found {version!r}")
            header, header_line, messages, compactions = rec, lineno, [], []
        elif header is None:
            raise TranscriptError(path, lineno, "a 'transcript' header record first")
        elif kind == "message":
            messages.append(_message(path, lineno, rec))
        elif kind == "compaction":
            compactions.append(_compaction(path, lineno, rec))
        else:
            raise TranscriptError(path, lineno, f"a record of type transcript|message|compaction, found {kind!r}")
    if header is None:
        raise TranscriptError(path, lineno or None, "a 'transcript' header record")
    yield _build(path, header_line, header, messages, compactions)


def _message(path: Path, lineno: int, rec: dict[str, Any]) -> Message:
    """One message record, built (and so validated) on its own line so an error names that line."""
    try:
        return message_from_dict(rec)
    except (KeyError, TypeError, ValueError) as e:
        raise TranscriptError(path, lineno, f"a valid message record ({_what(e)})") from None


def _compaction(path: Path, lineno: int, rec: dict[str, Any]) -> RecordedCompaction:
    try:
        return compaction_from_dict(rec)
    except (KeyError, TypeError, ValueError) as e:
        raise TranscriptError(path, lineno, f"a valid compaction record ({_what(e)})") from None


def _what(e: Exception) -> str:
    return f"missing field {e}" if isinstance(e, KeyError) else str(e)


def _build(path: Path, line: int, header: dict[str, Any], messages: list[Message],
           compactions: list[RecordedCompaction]) -> Transcript:
    try:
        return assemble(header, tuple(messages), tuple(compactions))
    except (KeyError, TypeError, ValueError) as e:
        raise TranscriptError(path, line, f"a valid transcript header ({_what(e)})") from None


def write(transcripts: Iterable[Transcript], path: Path) -> None:
    """Write transcripts atomically: a temporary file renamed into place."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for t in transcripts:
            f.write(to_jsonl(t))
    tmp.replace(path)
