"""Content sniffing: which importer reads this file. Reads only the head of the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compbench.errors import TranscriptError

HEAD_BYTES = 64 * 1024


def head_of(path: Path) -> tuple[str, dict[str, Any] | None]:
    """The file's first 64 KiB as text and its first line parsed as a JSON object (None if not one)."""
    with path.open("rb") as f:
        raw = f.read(HEAD_BYTES)
    if not raw.strip():
        raise TranscriptError(path, None, "a transcript (file is empty)")
    head = raw.decode("utf-8", errors="replace")
    first_line = head.lstrip().split("\n", 1)[0]
    first: dict[str, Any] | None = None
    try:
        obj = json.loads(first_line)
        if isinstance(obj, dict):
            first = obj
    except (json.JSONDecodeError, RecursionError):
        first = None
    return head, first


def detect(path: Path) -> str:
    """The name of the format that recognizes ``path``; a TranscriptError if none does."""
    from compbench.formats import FORMATS, module

    head, first = head_of(path)
    for name in FORMATS:
        try:
            mod = module(name)
        except ModuleNotFoundError:  # an importer that is not installed cannot claim the file
            continue
        if mod.sniff(head, first):
            return name
    if not head.lstrip().startswith(("{", "[")):
        raise TranscriptError(path, 1, "JSON or JSONL text (a known transcript format)")
    raise TranscriptError(path, 1, f"a known transcript format ({', '.join(FORMATS)}); none matched")
