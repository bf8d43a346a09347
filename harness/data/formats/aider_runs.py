"""``compbench.data.formats.aider_runs`` — One transcript per aider run when a project folder holds both of aider's
logs of the same runs: the chat history (``.aider.chat.history.md``) and the ``--llm-history-file`` request log.

The two logs record the same work twice. The request log holds what the model was sent (system prompt, every
request, aider's history summaries: :mod:`.aider_llm`); the chat history only the user's inputs and the replies,
and no summary (:mod:`.aider_chat`). So a run is read from the request log where it is there, and the chat
history's run is merged into it (reported as a merge, as a resumed Claude Code session is):

* a chat run owns the request-log conversations that started inside it (at or after its ``# aider chat started
  at`` time, before the next run's) when they share a user message with it (the same input, as aider sent it):
  both logs are written with the local clock (Aider-AI/aider 5dc9490bb ``aider/io.py``: ``InputOutput.__init__``
  and ``log_llm_history``, ``datetime.now()``);
* a run with conversations: one transcript, the request log's; several conversations of one run (a ``/clear``
  or ``/reset`` emptied aider's history between them) are joined, where aider's history was emptied noted in
  ``meta["cleared_at"]`` as the chat history's reader notes it; the run's header facts (aider's version, main
  and weak models, edit format), which the request log lacks, go to its meta;
* a run with none (a request log started later, or no request made) stays the chat history's; a conversation
  no run owns stays the request log's.

Pairs are found by :func:`pairs`: one chat history and the request logs beside it (the same folder), each known by
its content, never by its name (both take any name; ``.aider.chat.history.md`` is the chat history's default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from compbench.data.transcript import Message, Transcript

HEADER_FACTS = ("tool_version", "model", "weak_model", "edit_format")


@dataclass(frozen=True)
class Merge:
    """A chat history run read from the request log instead: its id, the transcript that holds it, its messages."""

    run: str
    into: str
    messages: int


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace(" ", "T"))
    except ValueError:
        return None


def _inputs(t: Transcript) -> set[str]:
    return {m.text.strip() for m in t.messages if m.role == "user" and m.text.strip()}


def combine(chat: Sequence[Transcript], llm: Sequence[Transcript]) -> tuple[list[Transcript], list[Merge]]:
    """The transcripts of both logs, one per aider run (see the module docstring), in time order, and the merges.
    Architect mode's editor conversations (``meta["parent_session"]``) are no part of a run's conversation: they
    stay transcripts of their own, under the transcript their architect's conversation became."""
    starts = [_time(t.meta.get("started_at")) for t in chat]
    inside: dict[int, list[Transcript]] = {}
    free: list[Transcript] = []
    editors = [c for c in llm if c.meta.get("parent_session")]
    for c in (c for c in llm if not c.meta.get("parent_session")):
        k = _run_of(_time(c.meta.get("started_at")), starts)
        if k is None:
            free.append(c)
        else:
            inside.setdefault(k, []).append(c)
    owned: dict[int, list[Transcript]] = {}
    for k, convs in inside.items():  # the same run only if the two logs share an input (another project's log
        if set().union(*map(_inputs, convs)) & _inputs(chat[k]):  # laid beside it would not)
            owned[k] = convs
        else:
            free += convs
    out: list[Transcript] = []
    merges: list[Merge] = []
    became: dict[str, str] = {}  # a request-log conversation's id -> the transcript's it joined
    for k, run in enumerate(chat):
        if k not in owned:
            out.append(run)
            continue
        joined = _join(owned[k], run)
        became.update((c.id, joined.id) for c in owned[k])
        out.append(joined)
        merges.append(Merge(run.id, joined.id, len(run.messages)))
    out += free
    out += [replace(e, meta={**e.meta, "parent_session": became.get(str(e.meta["parent_session"]),
                                                                   e.meta["parent_session"])}) for e in editors]
    out.sort(key=lambda t: (_time(t.meta.get("started_at")) or datetime.min, t.id))
    return out, merges


def _run_of(at: datetime | None, starts: Sequence[datetime | None]) -> int | None:
    """The run whose window holds ``at``: the last run started at or before it."""
    if at is None:
        return None
    found = None
    for k, s in enumerate(starts):
        if s is not None and s <= at:
            found = k
    return found


def _join(convs: list[Transcript], run: Transcript) -> Transcript:
    """One run's request-log conversations as one transcript, with the chat run's header facts."""
    first = convs[0]
    messages: list[Message] = list(first.messages)
    compactions = list(first.compactions)
    warnings = list(first.warnings)
    cleared: list[int] = []
    system = next((m.text for m in first.messages if m.role == "system"), None)
    for c in convs[1:]:
        cleared.append(len(messages))
        body = [m for m in c.messages if not (m.role == "system" and m.text == system)]
        shift = len(messages) - (len(c.messages) - len(body))
        messages += body
        compactions += [replace(rc, index=rc.index + shift) for rc in c.compactions]
        warnings += c.warnings
    meta = dict(first.meta)
    meta.update({k: run.meta[k] for k in HEADER_FACTS if k in run.meta})
    meta["aider_chat_history"] = {"path": run.meta.get("path"), "run": run.id, "started_at": run.meta.get("started_at")}
    if cleared:
        meta["cleared_at"] = cleared
        warnings.append(f"{len(convs)} request-log conversations of one aider run joined: aider's history was emptied "
                        f"(/clear or /reset) before message{'s' * (len(cleared) != 1)} "
                        f"{', '.join(map(str, cleared))} (the replay keeps it)")
    warnings.append(f"read from the request log; the chat history's run {run.id} ({len(run.messages)} messages, "
                    "no summaries) merged into it, its header's version and models kept")
    return Transcript(first.id, first.source, tuple(messages), meta, tuple(compactions), tuple(warnings))


def pairs(files: Sequence[Path], head: Callable[[Path], str] | None = None) -> dict[Path, list[Path]]:
    """Each chat history that has request logs beside it (same folder), with them; both known by their first line
    whatever their names (aider's ``--chat-history-file`` and ``--llm-history-file`` take any): ``head`` gives a
    file's first bytes as text (its first :data:`FIRST_BYTES` by default). A folder with two chat histories pairs
    none (which run is whose is not to be guessed)."""
    from compbench.data.formats import aider_chat, aider_llm

    read = head or _first_bytes
    chats: dict[Path, list[Path]] = {}
    logs: dict[Path, list[Path]] = {}
    for f in files:
        if not f.is_file():
            continue
        text = read(f)
        if aider_chat.sniff(text, None):
            chats.setdefault(f.parent, []).append(f)
        elif aider_llm.sniff(text, None):
            logs.setdefault(f.parent, []).append(f)
    return {found[0]: logs[d] for d, found in chats.items() if len(found) == 1 and d in logs}


FIRST_BYTES = 512  # what tells both logs apart: their first line


def _first_bytes(path: Path) -> str:
    with path.open("rb") as f:
        return f.read(FIRST_BYTES).decode("utf-8", errors="replace")
