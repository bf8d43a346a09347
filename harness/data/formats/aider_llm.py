"""``compbench.data.formats.aider_llm`` — aider's ``--llm-history-file`` log: every request aider sent its main model,
and the reply.

Read against Aider-AI/aider 5dc9490bb35f9729ef2c95d00a19ccd30c26339c: ``Coder.send`` logs ``TO LLM <time>`` then the
request's messages (``utils.format_messages``: each message after a ``-------`` line since v0.72, after an empty
line before; every line of a message prefixed with its role, ``SYSTEM`` / ``USER`` / ``ASSISTANT``, an empty line
of it as ``USER ``) and ``LLM RESPONSE <time>`` then the reply, each line prefixed ``ASSISTANT``
(``io.log_llm_history``, appending to the file; ``format_content``). The separator is told per request, so a file
an older aider began and a newer one went on with is read whole. What a request holds is taken apart by
:mod:`.aider_requests`: only ``done`` + ``cur`` are the conversation (the repo map, the files, the examples and
the reminder are re-sent with every request and left out: each reply's meta has how many characters of them
its request carried, ``aider_preamble_chars``).

* **The conversation** is read request by request as aider builds it: a request's history is the previous
  request's history and reply (``done`` grows by ``move_back_cur_messages``, ``cur`` by the exchange), then what
  is new. It is aligned on that prefix, never on a match anywhere in what was read before (a tail kept by a
  summary, matched against its first copy, would be read as new again, and again at every request).
* **Compactions.** A request whose history starts with a summary it has not carried before
  (:func:`.aider_requests.is_summary`) follows a summarization: its kept messages are the longest tail of the
  previous request's context that the history carries on (``ChatSummary.summarize_real`` keeps a tail of
  ``done``), the rest was summarized. A summary with no "Ok." after it in a request whose system prompt is
  another than the previous one's is ``summarize_all``, which aider runs when the chat mode changes
  (``Coder.create``, the new coder's prompts): ``trigger="manual"``, inferred. **A summary never
  replaces a history smaller than itself** (aider summarizes a history over its budget, briefly): a message
  with the prefix that is not smaller than what it would replace is kept as a message and said in the
  transcript's warnings, no compaction (it summarizes a history this log does not hold: aider's
  ``--restore-chat-history``, a log begun later). No usage is logged, and no model name.
* **Edits.** "I committed the changes with git hash …", "I updated the files." or "I made those changes to
  the files." (``move_back_cur_messages``) says the reply before it edited files: its meta has ``edited``, which
  aider's summarization waits for. A log whose summaries follow no such reply is said to leave the ``aider``
  strategy nothing to act on (its warnings).
* **Conversations.** A request that carries on no conversation read so far (its history is none's context) and
  holds no new summary began anew (``/clear``, a new aider run appending to the same file): a new transcript.
  Architect mode's editor runs in between with a history of its own (``ArchitectCoder.reply_completed``: the
  architect's reply as its one prompt): its requests are a transcript of their own whose
  ``meta["parent_session"]`` is the architect's, and the architect's conversation goes on after them.

The project is the folder holding the log (``meta["project"]``, as for the chat history beside it). Messages
aider inserts without a model call ("Ok." after a saved-edit note or an added command output) are assistant
messages marked ``meta["aider_inserted"]``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compbench.data.formats.aider_requests import SUMMARY_PREFIX, anatomy, is_summary, same, text_of
from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript
from compbench.errors import TranscriptError

NAME = "aider-llm"
MULTI_TRANSCRIPT = True

_EVENT = re.compile(r"^(TO LLM|LLM RESPONSE) (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)$")
_ROLE = re.compile(r"^(SYSTEM|USER|ASSISTANT)(?: (.*))?$")
SEPARATOR = "-------"
EDIT_NOTES = ("I committed the changes with git hash ", "I updated the files.", "I made those changes to the files.")
Lines = list[tuple[bool, str]]  # a logged message's lines: (prefixed with its role, text)


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """The file begins with a ``TO LLM <ISO time>`` line."""
    return first is None and _EVENT.match(head.split("\n", 1)[0].rstrip("\r")) is not None and head.startswith("TO ")


@dataclass
class _Request:
    line: int
    time: str
    messages: list[tuple[str, Lines]] = field(default_factory=list)
    reply: list[str] | None = None
    reply_time: str = ""
    separated: bool | None = None  # "-------" before each message (v0.72 on); None until its first line


def _is_list(msg: tuple[str, Lines] | None) -> bool:
    """A content list (``--cache-prompts``, an image): its text's next lines are logged without the role."""
    return msg is not None and bool(msg[1]) and msg[1][0][0] and msg[1][0][1].startswith("type: ")


def _parse(path: Path) -> list[_Request]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, None, f"UTF-8 text (invalid byte at offset {e.start})") from None
    lines = [raw.rstrip("\r") for raw in text.split("\n")]
    out: list[_Request] = []
    state = ""  # "request" | "reply"
    fresh = False  # a separator was read: the next role line starts a message
    for no, line in enumerate(lines, 1):
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
        if state == "reply":
            r = _ROLE.match(line)
            if r and r.group(1) == "ASSISTANT":
                assert req.reply is not None
                req.reply.append(r.group(2) or "")
            elif line:
                raise TranscriptError(path, no, "a reply line 'ASSISTANT <text>'")
            continue
        if req.separated is None:
            req.separated = line == SEPARATOR
        last = req.messages[-1] if req.messages else None
        if line == SEPARATOR and req.separated:
            fresh = True
            continue
        if not line:
            nxt = lines[no] if no < len(lines) else ""
            if _is_list(last) and not fresh and nxt and not _ROLE.match(nxt) and not _EVENT.match(nxt) \
                    and nxt != SEPARATOR:
                assert last is not None
                last[1].append((False, ""))  # an empty line of a content list's text
            elif fresh:  # an empty message's content (format_content of "")
                req.messages.append(("", []))
                fresh = False
            elif not req.separated:  # before v0.72 an empty line starts each message
                fresh = True
            continue
        r = _ROLE.match(line)
        if not r:
            if _is_list(last) and not fresh:
                assert last is not None
                last[1].append((False, line))
                continue
            raise TranscriptError(path, no, "a request line: '-------' or a role (SYSTEM, USER, ASSISTANT) and "
                                            "its text")
        role, content = r.group(1).lower(), r.group(2) or ""
        if fresh or last is None or (last[0] not in (role, "") and not req.separated):
            req.messages.append((role, [(True, content)]))
        elif last[0] == "":
            req.messages[-1] = (role, [(True, content)])
        else:
            last[1].append((True, content))
        fresh = False
    return out


def read(path: Path) -> Iterator[Transcript]:
    requests = _parse(path)
    if not requests:
        raise TranscriptError(path, 1, "'TO LLM <time>' (aider's LLM history)")
    convs: list[_Conversation] = []
    side: dict[str, int] = {}
    for k, req in enumerate(requests):
        a = anatomy([(role, text_of(lines)) for role, lines in req.messages])
        if a.side:  # the weak model's request, not the conversation (aider does not log it; a fork may)
            side[a.side] = side.get(a.side, 0) + 1
            continue
        conv = _route(convs, a.history)
        if conv is None:
            conv = _Conversation(path, req, a.system, _parent(convs, a.history))
            convs.append(conv)
        conv.used = k
        conv.add(req, a.history, a.preamble, a.system)
    if not convs:
        raise TranscriptError(path, 1, "a request of aider's conversation (only the weak model's were found)")
    if side:
        latest = max(convs, key=lambda c: c.used)
        latest.warnings.append("left out: " + ", ".join(f"{n} {what} request{'s' * (n != 1)}" for what, n in
                                                        side.items()) + " of the weak model (not the conversation)")
    ids: dict[int, str] = {}
    for conv in convs:
        t = conv.transcript(ids.get(id(conv.parent)) if conv.parent is not None else None)
        ids[id(conv)] = t.id
        yield t


def _route(convs: Sequence[_Conversation], history: Sequence[tuple[str, str]]) -> _Conversation | None:
    """The conversation a request carries on, or None (it begins one)."""
    if not convs:
        return None
    if not history:
        return max(convs, key=lambda c: c.used)
    if is_summary(history[0]) and not any(c.current and same(history[0], c.current[0][:2]) for c in convs):
        after = _after_summary(history)
        return max(convs, key=lambda c: (c.tail(after)[1], c.used))
    found = [(n, c.used, c) for c in convs if (n := c.prefix(history)) and (n >= len(c.current) - 1 or n >= 2)]
    return max(found, key=lambda x: (x[0], x[1]))[2] if found else None


def _parent(convs: Sequence[_Conversation], history: Sequence[tuple[str, str]]) -> _Conversation | None:
    """The conversation whose last reply a new one opens with: architect mode's editor, given the architect's
    reply as its prompt."""
    if not history or history[0][0] != "user" or not history[0][1]:
        return None
    return next((c for c in reversed(convs) if c.current and c.current[-1][:2] == ("assistant", history[0][1])),
                None)


def _after_summary(history: Sequence[tuple[str, str]]) -> Sequence[tuple[str, str]]:
    """A summarized history's messages after its summary (and the "Ok." ``ChatSummary.summarize`` adds)."""
    return history[2:] if len(history) > 1 and history[1] == ("assistant", "Ok.") else history[1:]


class _Conversation:
    """One conversation's transcript, request by request."""

    def __init__(self, path: Path, first: _Request, system: str, parent: _Conversation | None) -> None:
        self.path, self.first, self.parent = path, first, parent
        self.messages: list[Message] = []
        self.current: list[tuple[str, str, str]] = []  # the context after the last request: (role, text, id)
        self.compactions: list[RecordedCompaction] = []
        self.warnings: list[str] = []
        self.used = 0
        self.realigned = 0
        self.system = system  # the last request's system prompt: a chat-mode switch changes it
        if system:
            self.messages.append(Message(f"L{first.line}:system", "system", (Text(system),), None,
                                         {"line": first.line}))

    def prefix(self, history: Sequence[tuple[str, str]]) -> int:
        """How many of ``history``'s first messages are the context's first messages."""
        n = 0
        while n < len(history) and n < len(self.current) and same(history[n], self.current[n][:2]):
            n += 1
        return n

    def tail(self, after: Sequence[tuple[str, str]]) -> tuple[int, int]:
        """Where in the context the tail a summary kept starts, and its length: the longest end of the context
        ``after`` begins with (``summarize_real`` keeps the end of ``done``); else the longest run of it
        ``after`` begins with; (0, 0) if none."""
        cur = [x[:2] for x in self.current]
        for start in range(len(cur)):
            k = len(cur) - start
            if k <= len(after) and all(same(after[i], cur[start + i]) for i in range(k)):
                return start, k
        best = (0, 0)
        for start in range(len(cur)):
            k = 0
            while k < len(after) and start + k < len(cur) and same(after[k], cur[start + k]):
                k += 1
            if k > best[1]:
                best = (start, k)
        return best

    def append(self, role: str, content: str, line: int, **meta: Any) -> tuple[str, str, str]:
        if role == "user" and content.startswith(EDIT_NOTES):
            self.edited()
        m = Message(f"L{line}:{len(self.messages)}", "assistant" if role == "assistant" else "user",
                    (Text(content),) if content else (), None, {"line": line, **meta})
        self.messages.append(m)
        return role, content, m.id

    def add(self, req: _Request, history: Sequence[tuple[str, str]], preamble: int, system: str) -> None:
        stamp = {"timestamp": req.time}
        switched, self.system = system != self.system, system
        if history and is_summary(history[0]) and not (self.current and same(history[0], self.current[0][:2])):
            context, n = self.summarized(req, history, switched), len(history)
        else:
            n = self.prefix(history)
            if n < len(self.current) - 1 and n < len(history):
                self.realigned += 1
            context = self.current[:n]
        for role, content in history[n:]:
            context.append(self.append(role, content, req.line, **stamp,
                                       **({"aider_inserted": True} if role == "assistant" else {})))
        if req.reply is not None:
            context.append(self.append("assistant", "\n".join(req.reply), req.line,
                                       timestamp=req.reply_time or req.time, aider_preamble_chars=preamble))
        self.current = context

    def summarized(self, req: _Request, history: Sequence[tuple[str, str]], switched: bool
                   ) -> list[tuple[str, str, str]]:
        """A request after a summarization: the summary (a recorded compaction if it is one), the kept messages,
        and the new ones after them (the context so far; the caller appends the reply). ``ChatSummary.summarize``
        ends what it returns with an assistant message ("Ok." when the tail does not); ``summarize_all`` on a
        chat-mode switch returns the summary alone, and the new coder's system prompt is another: that is
        ``manual``, the messages after it the exchange in progress it carried over (``cur_messages``)."""
        summary = history[0][1]
        after = _after_summary(history)
        ok = len(after) < len(history) - 1
        start, k = self.tail(after)
        kept = self.current[start:start + k]
        replaced = sum(len(x[1]) for i, x in enumerate(self.current) if not start <= i < start + k)
        compaction = len(summary) < replaced
        meta: dict[str, Any] = {"compaction": "summary"} if compaction else {
            "aider_summary": f"not read as a compaction: {len(summary):,} characters, not smaller than the "
                             f"{replaced:,} of history it would replace"}
        context = [self.append("user", summary, req.line, timestamp=req.time, **meta)]
        if ok:
            context.append(self.append("assistant", "Ok.", req.line, timestamp=req.time, **meta))
        if compaction:
            switch = not ok and switched
            rc_meta: dict[str, Any] = {"line": req.line, "history_chars": replaced}
            if switch:
                rc_meta["via"] = ("summarize_all (a chat mode switch), inferred: the system prompt changed and no "
                                  "'Ok.' follows the summary")
            self.compactions.append(RecordedCompaction(
                index=len(self.messages), tool="aider", trigger="manual" if switch else "auto", summary=summary,
                summary_id=context[0][2], kept_ids=tuple(x[2] for x in kept), meta=rc_meta))
        else:
            self.warnings.append(
                f"line {req.line}: a message opening with aider's summary prefix ({SUMMARY_PREFIX.strip()!r}) is "
                f"{len(summary):,} characters, not smaller than the {replaced:,} of history before it: a summary "
                "never replaces a history smaller than itself, so it is read as a message, no compaction (a "
                "summary of a history this log does not hold: --restore-chat-history, or a log begun later)")
        context += kept
        context += [self.append(role, content, req.line, timestamp=req.time,
                                **({"aider_inserted": True} if role == "assistant" else {}))
                    for role, content in after[k:]]
        return context

    def edited(self) -> None:
        """The reply before an edit note edited files (the note follows it as soon as aider applied them)."""
        j = next((i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i].role == "assistant"
                  and not self.messages[i].meta.get("aider_inserted")
                  and not self.messages[i].meta.get("compaction")), None)
        if j is not None:
            self.messages[j] = replace(self.messages[j], meta={**self.messages[j].meta, "edited": True})

    def transcript(self, parent: str | None) -> Transcript:
        body = "\n".join(f"{m.role}:{m.text}" for m in self.messages)
        digest = hashlib.sha256(body.encode()).hexdigest()[:10]
        stamp = self.first.time.replace("-", "").replace(":", "")[:15]
        meta: dict[str, Any] = {"path": str(self.path), "started_at": self.first.time,
                                "project": str(self.path.resolve().parent),
                                "usage": "not logged: aider's LLM history records the requests and replies only"}
        warnings = list(self.warnings)
        if parent is not None:
            meta["parent_session"] = parent
            warnings.append("architect mode's editor: its prompt is the architect's reply (meta parent_session), "
                            "whose conversation goes on after it")
        if self.realigned:
            warnings.append(f"{self.realigned} request{'s' * (self.realigned != 1)} did not carry on the previous "
                            "request's history as aider builds it (a message changed or dropped): read from the "
                            "first difference as new messages")
        auto = sum(1 for rc in self.compactions if rc.trigger == "auto")
        if auto and not any(m.meta.get("edited") for m in self.messages):
            warnings.append(f"aider summarized its history {auto} time{'s' * (auto != 1)} here, but no reply is "
                            "marked as editing files (no 'I committed the changes…' note after one): aider "
                            "summarizes only after a reply that edited files, so the aider strategy has nothing "
                            "to act on in this log")
        return Transcript(f"aider-llm-{stamp}-{digest}", "aider", tuple(self.messages), meta,
                          tuple(self.compactions), tuple(warnings))
