"""``compbench.data.formats.gemini_log`` — A Gemini CLI chat recording as its loader rebuilds it, record by record: what
the reader (:mod:`compbench.data.formats.gemini_recording`) fills and the builder
(:mod:`compbench.data.formats.gemini_build`) turns into a transcript."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.formats.gemini_content import is_ack
from compbench.errors import TranscriptError

NAME = "gemini-cli"


MASKED = "<tool_output_masked"  # toolOutputMaskingService.ts MASKING_INDICATOR_TAG


UI_TYPES = ("info", "error", "warning")


@dataclass
class RecordingLog:
    """The recording as the loader rebuilds it (``live``), and the history compbench keeps (``order``): the
    same, plus the messages a compression replaced."""

    path: Path
    meta: dict[str, Any] = field(default_factory=dict)
    live: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    recs: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)
    kept: dict[str, tuple[str, ...]] = field(default_factory=dict)  # snapshot id -> ids the compression kept
    replaced: set[str] = field(default_factory=set)
    original: dict[str, Any] = field(default_factory=dict)  # call id -> its first unmasked result
    evidence: list[tuple[int, int, str]] = field(default_factory=list)
    rewinds: int = 0
    warnings: list[str] = field(default_factory=list)

    def message(self, rec: dict[str, Any], line: int | None) -> None:
        rid = rec["id"]
        if rid not in self.order:  # new, or re-added after a rewind or a rollback dropped it
            self.order.append(rid)
        self.live[rid] = rec
        self.recs[rid] = rec
        self.lines[rid] = line
        calls = rec.get("toolCalls")
        for tc in calls if isinstance(calls, list) else []:
            if isinstance(tc, dict) and isinstance(tc.get("id"), str) and tc.get("result") is not None \
                    and MASKED not in str(tc["result"]):
                self.original.setdefault(tc["id"], tc["result"])

    def rewind(self, target: Any, line: int) -> None:
        self.rewinds += 1
        ids = list(self.live)
        if isinstance(target, str) and target in self.live:
            gone = ids[ids.index(target):]
        else:
            gone = ids
            self.warnings.append(f"line {line}: $rewindTo names an unknown message {target!r}: everything dropped, "
                                 "as Gemini CLI's loader does")
        for rid in gone:
            del self.live[rid]
            self.order.remove(rid)

    def set_messages(self, msgs: list[Any], line: int) -> None:
        """A whole new list: a compression when it brings a new snapshot and its acknowledgement, else a sync
        (a rollback drops what is gone; content the tool masked stays as first recorded)."""
        self.evidence.append((44, 0, "$set messages (v0.44+)"))
        for m in msgs:
            if not (isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("type"), str)):
                raise TranscriptError(self.path, line, "message records with string 'id' and 'type' in $set messages")
        recs: list[dict[str, Any]] = msgs
        ids = [m["id"] for m in recs]
        snap = next((ids[k] for k in range(len(recs) - 1) if recs[k].get("type") == "user"
                     and recs[k + 1].get("type") == "gemini" and is_ack(recs[k + 1].get("content"))
                     and ids[k] not in self.kept), None)
        before = set(self.live)
        # the list is the model's history: the UI's records (info, error, warning) are never in it
        gone = [rid for rid, r in self.live.items() if rid not in set(ids) and r.get("type") not in UI_TYPES]
        if snap is not None:
            at = ids.index(snap)
            self.kept[snap] = tuple(i for i in ids[at + 2:] if i in before)
            self.replaced.update(gone)
        else:
            for rid in gone:
                self.order.remove(rid)
        self.live = {}
        for m in recs:
            self.message(m, line)
