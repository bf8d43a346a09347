"""``compbench.data.formats.codex_builder`` — The Codex importer's message assembly: model calls are built from
consecutive output items and closed by an input item or their usage (:mod:`compbench.data.formats.codex`)."""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.transcript import Media, Message, Part, RecordedCompaction, Usage

TOOL = "codex"
MANUAL_COMMAND = "/compact"  # the TUI slash command that runs a compaction by hand
BLOB_MIN_CHARS = 100  # the shortest Fernet token in base64 (73 bytes)
BLOB_RE = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
INNER_CALLS = "inner_calls"  # message meta: call id -> [[name, args], ...] an exec script makes (codex_exec)
COMPACT_TASK = "a turn of its own: no user input and no model call before or after it (Codex's /compact task)"


def is_blob(text: str) -> bool:
    """An encrypted blob (a Fernet token), not a placeholder a checkpoint tool wrote over one (``REDACTED``)."""
    return len(text) >= BLOB_MIN_CHARS and BLOB_RE.fullmatch(text) is not None


def image(item: dict[str, Any]) -> Media:
    """An ``input_image`` item: a ``data:`` URL decoded to bytes, any other URL kept by name."""
    raw = item.get("image_url")
    url = raw if isinstance(raw, str) else ""
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        try:
            return Media("image", head[5:], base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            return Media("image", head[5:])
    return Media("image", name=url)


class Builder:
    """Assembles messages; holds the model call being built until an input item or its usage closes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []
        self.open: list[Part] | None = None  # parts of the model call being assembled
        self.open_line = 0
        self.calls: dict[str, str] = {}
        self.warnings: list[str] = []
        self.unknown_items: Counter[str] = Counter()
        self.last_total = 0  # input + output of the last recorded call
        self.last_input = ""  # text of the last user input, for the /compact check
        self.replay: list[tuple[str, str]] = []  # replacement history a rollout may re-emit after compaction
        self.replayed = 0
        self.compactions: list[RecordedCompaction] = []
        self.turn_start: int | None = None  # messages imported when the current turn began (None: no turn events)
        self.compact_only: int | None = None  # a compaction alone in its turn so far, awaiting the turn's end
        self.redacted = 0  # reasoning items whose encrypted_content is a placeholder
        self.inner: dict[str, list[list[str]]] = {}  # the open call's exec scripts: call id -> the calls they make
        self.window: int | None = None  # the model_context_window in force (task_started, token_count)
        self.unconfirmed: list[int] = []  # compactions whose context_compacted event has not come yet
        self.v2_trigger: int | None = None  # the line of a compaction_trigger item awaiting its compaction
        self.stray_events = 0  # context_compacted events with no compacted record before them

    def turn_started(self) -> None:
        self.turn_ended()  # a turn that never recorded its end ended here
        self.turn_start = len(self.messages)

    def turn_ended(self) -> None:
        """The turn's model call is over; a compaction that stayed alone in its turn was Codex's /compact task."""
        self.close()
        if self.compact_only is not None:
            c = self.compactions[self.compact_only]
            self.compactions[self.compact_only] = replace(c, trigger="manual", meta={
                **c.meta, "trigger_evidence": COMPACT_TASK})
        self.compact_only = None
        self.turn_start = None

    def went_on(self) -> None:
        """The turn of a compaction alone in it so far went on (a prompt, a model call): a pre-turn auto one."""
        if self.compact_only is not None:
            c = self.compactions[self.compact_only]
            self.compactions[self.compact_only] = replace(c, meta={
                **c.meta, "trigger_evidence": "at the start of a turn that went on with the user's prompt "
                                              "(Codex's pre-turn auto compaction)"})
        self.compact_only = None

    def close(self, usage: Usage | None = None) -> None:
        if self.open is not None:
            meta: dict[str, Any] = {"line": self.open_line}
            if self.inner:
                meta[INNER_CALLS] = self.inner
            self.messages.append(Message(f"m{len(self.messages)}", "assistant", tuple(self.open), usage, meta))
        self.open = None
        self.inner = {}

    def output(self, line: int, part: Part) -> None:
        self.replay = []
        self.went_on()
        if self.open is None:
            self.open, self.open_line = [], line
        self.open.append(part)

    def add(self, role: str, parts: tuple[Part, ...], meta: dict[str, Any]) -> None:
        self.close()
        self.messages.append(Message(f"m{len(self.messages)}", "tool" if role == "tool" else "user" if role == "user"
                                     else "system", parts, None, meta))

    def usage(self, u: Usage) -> None:
        """A new call's usage: the open call's, or the last call's if an input item closed it first."""
        self.last_total = u.total
        if self.open is not None:
            self.close(u)
            return
        for i in range(len(self.messages) - 1, -1, -1):
            m = self.messages[i]
            if m.role == "assistant":
                if m.usage is None:
                    self.messages[i] = Message(m.id, m.role, m.parts, u, m.meta)
                return
            if m.role == "user":
                return  # a new turn began: this count belongs to no imported call
