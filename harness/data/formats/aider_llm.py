"""``compbench.data.formats.aider_llm`` — aider's ``--llm-history-file`` log: every request aider sent its main model,
and the reply.

Read against Aider-AI/aider 5dc9490bb35f: ``Coder.send`` logs ``TO LLM <time>`` then the request's messages
(``utils.format_messages``: ``-------`` before each message since v0.73, every line of a message prefixed
with its role, ``SYSTEM`` / ``USER`` / ``ASSISTANT``; older logs have no separators, a change of role
starts a message) and ``LLM RESPONSE <time>`` then the reply, each line prefixed ``ASSISTANT``. The
summarizer's and the commit-message writer's requests (the weak model's) are not logged.

A request is aider's whole context (``ChatChunks``): system prompt, examples, repo map, read-only files,
the history (``done_messages``), the files in the chat, the current exchange (``cur_messages``), a system
reminder. The transcript is the conversation: the first request's system prompt, then each request's new
history messages (aligned on the ones already read) and its reply. The repo map, file contents and
examples, re-sent fresh with every request, are recognized by aider's fixed texts (``base_prompts.py``:
"Here are summaries of some files present in my git repository." …, each with its "Ok, …" reply) and left
out: each reply's meta has how many characters of them its request carried (``aider_preamble_chars``).

* **Compactions.** A request whose history starts with a new "I spoke to you previously about a number of
  things." message (``prompts.summary_prefix``) follows a summary: a recorded compaction, its summary that
  message, its kept messages the old ones the new history still holds (the tail ``ChatSummary`` keeps). A
  summary with no tail and no "Ok." after it is ``summarize_all``, which aider runs when the chat mode
  changes (``Coder.create``): ``trigger="manual"``, inferred. No usage is logged, and no model name.
* **Edits.** "I committed the changes with git hash …", "I updated the files." or "I made those changes to
  the files." after a reply (``move_back_cur_messages``) says the reply edited files: its meta has
  ``edited``, which aider's summarization waits for.
* **Restarts.** A request sharing no history with the ones before and holding no summary began anew
  (``/clear``, or a new aider run appending to the same file): a new transcript.

The project is the folder holding the log (``meta["project"]``, as for the chat history beside it).

Messages aider inserts without a model call ("Ok." after a saved-edit note or an added command output) are
assistant messages marked ``meta["aider_inserted"]``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript
from compbench.errors import TranscriptError

NAME = "aider-llm"
MULTI_TRANSCRIPT = True

SUMMARY_PREFIX = "I spoke to you previously about a number of things."  # prompts.summary_prefix
_EVENT = re.compile(r"^(TO LLM|LLM RESPONSE) (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)$")
_ROLE = re.compile(r"^(SYSTEM|USER|ASSISTANT)(?: (.*))?$")
SEPARATOR = "-------"
PREAMBLE_USER = (  # base_prompts.py: the chunks aider re-sends with each request, and the examples' end
    "Here are summaries of some files present in my git repository.",
    "Here are some READ ONLY files, provided for your reference.",
    "I have *added these files to the chat* so you can go ahead and edit them.",
    "I am not sharing any files that you can edit yet.",
    "Don't try and edit any existing code without asking me to add the files to the chat!",
)
EXAMPLES_END = "I switched to a new code base. Please don't consider the above files or try to edit them any longer."
PREAMBLE_REPLIES = frozenset({
    "Ok, I won't try and edit those files without asking first.", "Ok, I will use these files as references.",
    "Ok, I will use these images as references.", "Ok, any changes I propose will be to those files.",
    "Ok, based on your requests I will suggest which files need to be edited and then stop and wait for your "
    "approval."})
EDIT_NOTES = ("I committed the changes with git hash ", "I updated the files.", "I made those changes to the files.")


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """The file begins with a ``TO LLM <ISO time>`` line."""
    return first is None and _EVENT.match(head.split("\n", 1)[0].rstrip("\r")) is not None and head.startswith("TO ")


@dataclass
class _Request:
    line: int
    time: str
    messages: list[tuple[str, list[str]]] = field(default_factory=list)
    reply: list[str] | None = None
    reply_time: str = ""


def _parse(path: Path) -> list[_Request]:
    out: list[_Request] = []
    state = ""  # "request" | "reply"
    fresh = False  # a separator was read: the next role line starts a message
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, None, f"UTF-8 text (invalid byte at offset {e.start})") from None
    separated = f"\n{SEPARATOR}\n" in text  # v0.73 on: a role change alone starts no message
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        m = _EVENT.match(line)
        if m:
            if m.group(1) == "TO LLM":
                out.append(_Request(no, m.group(2)))
                state, fresh = "request", False
            elif not out or out[-1].reply is not None:
                raise TranscriptError(path, no, "'LLM RESPONSE' after a 'TO LLM' request")
            else:
                out[-1].reply, out[-1].reply_time, state = [], m.group(2), "reply"
            continue
        if not out:
            if line:
                raise TranscriptError(path, no, "'TO LLM <time>' first (aider's LLM history)")
            continue
        req = out[-1]
        if state == "request" and line == SEPARATOR:
            fresh = True
            continue
        r = _ROLE.match(line)
        if state == "reply":
            if r and r.group(1) == "ASSISTANT":
                assert req.reply is not None
                req.reply.append(r.group(2) or "")
            elif line:
                raise TranscriptError(path, no, "a reply line 'ASSISTANT <text>'")
            continue
        if not line:  # an empty message's content (format_content of "")
            if fresh:
                req.messages.append(("", []))
                fresh = False
            continue
        if not r:
            raise TranscriptError(path, no, "a request line: '-------' or a role (SYSTEM, USER, ASSISTANT) and "
                                            "its text")
        role, content = r.group(1).lower(), r.group(2) or ""
        if fresh or not req.messages or (req.messages[-1][0] not in (role, "") and not separated):
            req.messages.append((role, [content]))
        elif req.messages[-1][0] == "":
            req.messages[-1] = (role, [content])
        else:
            req.messages[-1][1].append(content)
        fresh = False
    return out


def read(path: Path) -> Iterator[Transcript]:
    requests = _parse(path)
    if not requests:
        raise TranscriptError(path, 1, "'TO LLM <time>' (aider's LLM history)")
    builder: _Builder | None = None
    for req in requests:
        system, history, preamble = _split(req.messages)
        if builder is not None and builder.restarts(history):
            yield builder.transcript()
            builder = None
        if builder is None:
            builder = _Builder(path, req, system)
        builder.add(req, history, preamble)
    assert builder is not None
    yield builder.transcript()


def _split(messages: list[tuple[str, list[str]]]) -> tuple[str, list[tuple[str, str]], int]:
    """A request's system prompt, its history (done + cur), and the characters of its re-sent chunks."""
    msgs = [(role, "\n".join(lines)) for role, lines in messages]
    system = msgs[0][1] if msgs and msgs[0][0] == "system" else ""
    rest = [(r, c) for r, c in msgs if r != "system"]
    end = next((i for i, (r, c) in enumerate(rest) if r == "user" and c.startswith(EXAMPLES_END)), None)
    preamble = sum(len(c) for _, c in rest[: end + 2]) if end is not None else 0
    rest = rest[end + 2:] if end is not None else rest
    history: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        role, content = rest[i]
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        if role == "user" and nxt is not None and nxt[0] == "assistant" and (
                content.startswith(PREAMBLE_USER) or nxt[1] in PREAMBLE_REPLIES):
            preamble += len(content) + len(nxt[1])
            i += 2
            continue
        history.append((role, content))
        i += 1
    return system, history, preamble


class _Builder:
    """One conversation's transcript, request by request."""

    def __init__(self, path: Path, first: _Request, system: str) -> None:
        self.path, self.first = path, first
        self.messages: list[Message] = []
        self.seen: list[tuple[str, str, str]] = []  # the conversation so far: (role, content, message id)
        self.compactions: list[RecordedCompaction] = []
        self.warnings: list[str] = []
        if system:
            self.messages.append(Message(f"L{first.line}:system", "system", (Text(system),), None,
                                         {"line": first.line}))

    def restarts(self, history: list[tuple[str, str]]) -> bool:
        return bool(self.seen) and bool(history) and not _is_summary(history[0]) and self.match(history)[0] == 0

    def match(self, history: list[tuple[str, str]]) -> tuple[int, list[str]]:
        """The longest head of ``history`` read before, as a run of the conversation (the latest such run)."""
        pairs = [(r, c) for r, c, _ in self.seen]
        best, where = 0, 0
        for p in range(len(pairs) - 1, -1, -1):
            if not history or pairs[p] != history[0]:
                continue
            n = 1
            while n < len(history) and p + n < len(pairs) and pairs[p + n] == history[n]:
                n += 1
            if n > best:
                best, where = n, p
        return best, [i for _, _, i in self.seen[where:where + best]]

    def append(self, role: str, content: str, line: int, **meta: Any) -> Message:
        m = Message(f"L{line}:{len(self.messages)}", role, (Text(content),) if content else (), None,  # type: ignore[arg-type]
                    {"line": line, **meta})
        self.messages.append(m)
        self.seen.append((role, content, m.id))
        return m

    def add(self, req: _Request, history: list[tuple[str, str]], preamble: int) -> None:
        if history and _is_summary(history[0]) and not any(c == history[0][1] for _, c, _ in self.seen):
            self.compact(req, history)
            history = history[1:]
            if history and history[0] == ("assistant", "Ok."):
                history = history[1:]
        n, _ = self.match(history)
        for k, (role, content) in enumerate(history[n:]):
            if role == "user" and k == 0 and content.startswith(EDIT_NOTES):
                self.edited()
            extra = {"aider_inserted": True} if role == "assistant" else {}
            self.append(role, content, req.line, timestamp=req.time, **extra)
        if req.reply is not None:
            self.append("assistant", "\n".join(req.reply), req.line, timestamp=req.reply_time or req.time,
                        aider_preamble_chars=preamble)

    def edited(self) -> None:
        """The reply before an edit note edited files (the note follows it as soon as aider applied them)."""
        j = next((i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i].role == "assistant"
                  and not self.messages[i].meta.get("aider_inserted")), None)
        if j is not None:
            self.messages[j] = replace(self.messages[j], meta={**self.messages[j].meta, "edited": True})

    def compact(self, req: _Request, history: list[tuple[str, str]]) -> None:
        summary = history[0][1]
        rest = history[1:]
        ok = bool(rest) and rest[0] == ("assistant", "Ok.")
        n, kept = self.match(rest[1:] if ok else rest)
        self.append("user", summary, req.line, timestamp=req.time, compaction="summary")
        if ok:
            self.append("assistant", "Ok.", req.line, timestamp=req.time, compaction="summary")
        switch = not ok and n == 0
        meta: dict[str, Any] = {"line": req.line}
        if switch:
            meta["via"] = "summarize_all (a chat mode switch), inferred: no kept tail and no 'Ok.'"
        self.compactions.append(RecordedCompaction(
            index=len(self.messages), tool="aider", trigger="manual" if switch else "auto", summary=summary,
            summary_id=self.messages[-2 if ok else -1].id, kept_ids=tuple(kept), meta=meta))

    def transcript(self) -> Transcript:
        body = "\n".join(f"{m.role}:{m.text}" for m in self.messages)
        digest = hashlib.sha256(body.encode()).hexdigest()[:10]
        stamp = self.first.time.replace("-", "").replace(":", "")[:15]
        meta = {"path": str(self.path), "started_at": self.first.time, "project": str(self.path.resolve().parent),
                "usage": "not logged: aider's LLM history records the requests and replies only"}
        return Transcript(f"aider-llm-{stamp}-{digest}", "aider", tuple(self.messages), meta,
                          tuple(self.compactions), tuple(self.warnings))


def _is_summary(message: tuple[str, str]) -> bool:
    return message[0] == "user" and message[1].startswith(SUMMARY_PREFIX)
