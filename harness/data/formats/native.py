"""``compbench.data.formats.native`` — compbench's own JSONL: a ``transcript`` header record, then its messages and
recorded compactions.

Several transcripts may follow each other in one file; each header starts a new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats.jsonio import iter_jsonl
from compbench.data.transcript import FORMAT_VERSION, Transcript, build_transcript, to_jsonl
from compbench.errors import TranscriptError

NAME = "compbench"


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    return first is not None and first.get("type") == "transcript" and first.get("format") == "compbench"


def read(path: Path) -> Iterator[Transcript]:
    header: dict[str, Any] | None = None
    header_line = 0
    messages: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
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
            _check(path, lineno, rec)
            messages.append(rec)
        elif kind == "compaction":
            _check(path, lineno, rec, compaction=True)
            compactions.append(rec)
        else:
            raise TranscriptError(path, lineno, f"a record of type transcript|message|compaction, found {kind!r}")
    if header is None:
        raise TranscriptError(path, lineno or None, "a 'transcript' header record")
    yield _build(path, header_line, header, messages, compactions)


def _check(path: Path, lineno: int, rec: dict[str, Any], compaction: bool = False) -> None:
    """Validate one record now so the error names its own line."""
    from compbench.data.transcript import compaction_from_dict, message_from_dict

    try:
        (compaction_from_dict if compaction else message_from_dict)(rec)
    except (KeyError, TypeError, ValueError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        kind = "compaction" if compaction else "message"
        raise TranscriptError(path, lineno, f"a valid {kind} record ({what})") from None


def _build(path: Path, line: int, header: dict[str, Any], messages: list[dict[str, Any]],
           compactions: list[dict[str, Any]]) -> Transcript:
    try:
        return build_transcript(header, messages, compactions)
    except (KeyError, TypeError, ValueError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise TranscriptError(path, line, f"a valid transcript header ({what})") from None


def write(transcripts: Iterable[Transcript], path: Path) -> None:
    """Write transcripts atomically: a temporary file renamed into place."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for t in transcripts:
            f.write(to_jsonl(t))
    tmp.replace(path)
