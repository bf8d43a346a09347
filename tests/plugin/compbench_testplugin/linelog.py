"""``linelog``: a made-up log format, one JSON object a line: ``{"linelog": SESSION, "role": R, "text": T}``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.transcript import Message, Text, Transcript
from compbench.errors import TranscriptError

NAME = "linelog"


def sniff(head: str, record: dict[str, Any] | None) -> bool:
    return record is not None and "linelog" in record and "role" in record


def read(path: Path) -> Iterator[Transcript]:
    messages: list[Message] = []
    session = ""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec.get("role") not in ("system", "user", "assistant"):
            raise TranscriptError(path, n, "a role of system, user or assistant")
        session = str(rec["linelog"])
        messages.append(Message(f"{session}:{n}", rec["role"], (Text(str(rec.get("text", ""))),)))
    yield Transcript(session, NAME, tuple(messages), {"path": str(path)})
