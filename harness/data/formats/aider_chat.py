"""``compbench.data.formats.aider_chat`` — aider's chat history, ``.aider.chat.history.md``: one transcript per aider
run in the file.

Read against Aider-AI/aider 5dc9490bb35f: ``aider/io.py`` writes it (``InputOutput.__init__``: "# aider chat
started at <time>"; ``user_input``: each line of the input as ``#### <line>``; ``ai_output``: the reply as
plain Markdown; ``tool_output`` / ``tool_error`` / ``tool_warning`` / ``confirm_ask``: ``> <line>``) and
``aider/utils.py`` reads it back the same way (``split_chat_history_markdown``, ``--restore-chat-history``).
A line beginning ``> `` is aider's console output, never sent to the model; ``####`` lines form the user's
input; every other line belongs to the reply (a Markdown heading in a reply included, which aider's own
reader drops).

What the model was sent is only partly here. The user's inputs and the replies are; aider's commands are
not messages (``/add``, ``/drop``, ``/undo``… are counted in the warnings; ``/ask``, ``/code``,
``/architect``, ``/context`` and ``/ok`` send their text, which is kept); ``/clear`` and ``/reset`` empty
aider's history (the transcript notes where); the system prompt, the repo map and the files in the chat, which
aider re-sends with every request, are never in this file (the ``--llm-history-file`` log has them:
``aider_llm``). Console output is kept in the meta of the message it follows (``aider_output``); the files a
reply edited ("Applied edit to …") in its ``edited_files``, which is what aider's history summary waits
for. The header's lines give the version, the main and weak models and the edit format; the project is the
folder holding the file (aider writes it in the git repository's root: ``meta["project"]``). aider's history
summaries leave no trace here but, with ``--verbose``, "Starting to summarize chat history." (noted in the
meta of the reply before it): no summary text, so no recorded compaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.transcript import Message, Text, Transcript
from compbench.errors import TranscriptError

NAME = "aider-chat"
MULTI_TRANSCRIPT = True

HEADER = "# aider chat started at "
_STARTED = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
SENT_COMMANDS = ("/ask", "/code", "/architect", "/context", "/ok")  # commands whose text goes to the model
CLEARING = ("/clear", "/reset")
_EDITED = re.compile(r"^Applied edit to (.+?)\s*$")
_HEADER_FACTS = (("tool_version", re.compile(r"^Aider v(\S+)")),
                 ("model", re.compile(r"^Main model: (\S+)")),
                 ("weak_model", re.compile(r"^Weak model: (\S+)")),
                 ("edit_format", re.compile(r"^Main model: \S+ with (\S+) edit format")))


WALK_SUFFIXES = (".md",)  # a walk offers .md files to sniff (a README is passed over)


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """The file begins with an aider run's header line (aider writes it first, before anything else)."""
    return first is None and _STARTED.match(head.lstrip("\r\n").split("\n", 1)[0]) is not None


@dataclass
class _Run:
    """One aider run: its header time, first line, and the blocks of its lines."""

    started: str
    line: int
    lines: list[tuple[int, str]] = field(default_factory=list)


def read(path: Path) -> Iterator[Transcript]:
    runs: list[_Run] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, None, f"UTF-8 text (invalid byte at offset {e.start})") from None
    for no, raw in enumerate(text.splitlines(), 1):
        m = _STARTED.match(raw)
        if m:
            runs.append(_Run(m.group(1), no))
        elif runs:
            runs[-1].lines.append((no, raw))
        elif raw.strip():
            raise TranscriptError(path, no, f"'{HEADER}<time>' before anything else (an aider chat history)")
    if not runs:
        raise TranscriptError(path, 1, f"'{HEADER}<time>' (an aider chat history)")
    for run in runs:
        yield _Reader(path, run).transcript()


class _Reader:
    def __init__(self, path: Path, run: _Run) -> None:
        self.path, self.run = path, run
        self.messages: list[Message] = []
        self.meta: dict[str, Any] = {"path": str(path), "started_at": run.started.replace(" ", "T"),
                                     "project": str(path.resolve().parent)}  # aider writes it in the repo's root
        self.warnings: list[str] = []
        self.commands: dict[str, int] = {}

    def transcript(self) -> Transcript:
        kind, block = "", list[tuple[int, str]]()  # kind: "user" | "assistant" | "tool"
        for no, raw in self.run.lines:
            line = raw.rstrip("\r")
            if line.startswith("#### "):
                new = "user"
            elif line.startswith("> ") or line == ">":
                new = "tool"
            else:
                new = "assistant"
            if new == "assistant" and kind == "user" and not line.strip():
                self.flush(kind, block)  # the blank line that ends an input is not a reply
                kind, block = "", []
                continue
            if new != kind and kind:
                self.flush(kind, block)
                block = []
            kind = new
            block.append((no, line))
        if kind:
            self.flush(kind, block)
        for name, n in sorted(self.commands.items()):
            self.warnings.append(f"skipped {n} {name} command{'s' * (n != 1)} (aider's, not sent to the model)")
        digest = hashlib.sha256("\n".join(line for _, line in self.run.lines).encode()).hexdigest()[:10]
        stamp = self.run.started.replace("-", "").replace(":", "").replace(" ", "T")
        return Transcript(f"aider-{stamp}-{digest}", "aider", tuple(self.messages), self.meta, (), tuple(self.warnings))

    def flush(self, kind: str, block: list[tuple[int, str]]) -> None:
        first = block[0][0]
        if kind == "tool":
            self.output([line[2:].rstrip() if line.startswith("> ") else "" for _, line in block])
        elif kind == "user":
            self.user(first, "\n".join(_unbreak(line[5:]) for _, line in block))
        else:
            text = "\n".join(line for _, line in block).strip()
            if text:
                self.messages.append(Message(f"{self.run.started}#{first}", "assistant", (Text(text),), None,
                                             {"line": first}))

    def user(self, line: int, text: str) -> None:
        words = text.split(maxsplit=1)
        head = words[0] if words else ""
        if head.startswith(("/", "!")):
            rest = words[1] if len(words) > 1 else ""
            if head == "/ok":
                text = f"Ok, please go ahead and make those changes. {rest}".strip()
            elif head in SENT_COMMANDS and rest:
                text = rest
            else:
                if head in CLEARING:
                    self.warnings.append(f"line {line}: {head} emptied aider's chat history (the replay keeps it)")
                    self.meta.setdefault("cleared_at", []).append(len(self.messages))
                name = "!" if head.startswith("!") else head
                self.commands[name] = self.commands.get(name, 0) + 1
                return
        text = "" if text == "<blank>" else text
        self.messages.append(Message(f"{self.run.started}#{line}", "user", (Text(text),), None, {"line": line}))

    def output(self, lines: list[str]) -> None:
        """Console output: the header's facts before any message, else the meta of the message before it."""
        if not self.messages:
            for line in lines:
                for key, pattern in _HEADER_FACTS:
                    m = pattern.match(line)
                    if m and key not in self.meta:
                        self.meta[key] = m.group(1)
            return
        last = self.messages[-1]
        meta = dict(last.meta)
        meta["aider_output"] = [*meta.get("aider_output", []), *lines]
        edited = [m.group(1) for line in lines if (m := _EDITED.match(line))]
        if edited and last.role == "assistant":
            meta["edited_files"] = [*meta.get("edited_files", []), *edited]
        if any(line.startswith("Starting to summarize chat history") for line in lines):
            meta["aider_summarizing"] = True
        self.messages[-1] = Message(last.id, last.role, last.parts, last.usage, meta)


def _unbreak(line: str) -> str:
    """``user_input`` ends each line with a Markdown line break (two spaces)."""
    return line[:-2] if line.endswith("  ") else line.rstrip()
