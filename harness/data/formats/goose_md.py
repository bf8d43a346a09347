"""``compbench.data.formats.goose_md`` — ``goose session export`` Markdown (the default export format).

Read against block/goose 9a91fccfb5d7: ``crates/goose-cli/src/commands/session.rs``
(``export_session_to_markdown``: ``# Session Export: <name>``, ``*Total messages: N*``, each message after a
``---`` line, under ``### User:`` / ``### Assistant:``, a user message of tool responses only under no
heading) and ``crates/goose-cli/src/session/export.rs`` (``#### Tool Call: `<tool>` (namespace:
`<extension>`)`` with its ``**Arguments:**`` as a Markdown list; ``#### Tool Response:`` with the text, JSON
and XML outputs fenced; thinking as ``**Thinking:**`` quotes; ``*<notification>*``).

The export is lossy, and the transcript says what it rebuilt: tool call ids do not exist (each call gets one,
each response the id of the call it answers, in order); arguments are read back from the Markdown list
(strings, booleans, numbers and fenced blocks; anything nested is kept as its Markdown text); no times, no
usage, no visibility flags. Every message of the session is exported, those the agent no longer saw included:
a summary is the user message before an assistant continuation ("Your context was compacted…"), read as a
compaction as in the session store (:mod:`compbench.data.formats.goose_messages`); a tool-pair summary is
recognized only by the "[Historical tool call summary]" opening later Goose versions give it. Each tool call
of a reply stays its own step (the export has no times to join them by).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compbench.data.formats import goose_messages as gm
from compbench.data.transcript import Transcript
from compbench.errors import TranscriptError

NAME = "goose-md"
HEADER = "# Session Export: "
SEPARATOR = "\n\n---\n\n"
EMPTY = "*(This session has no messages)*"
TOOL_PAIR_PREFIX = "[Historical tool call summary]"
_TOTAL = re.compile(r"^\*Total messages: (\d+)\*$")
_CALL = re.compile(r"^#### Tool Call: `(.*)` \(namespace: `(.*)`\)$")
_ARG = re.compile(r"^\*   \*\*(.+?)\*\*:(?: (.*))?$")
_FENCED = re.compile(r"\A```(?:json|xml)\n(.*)\n```\Z", re.S)


WALK_SUFFIXES = (".md",)  # a walk offers .md files to sniff (a README is passed over)


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """The export's title line, then its message count (or the empty session's note)."""
    lines = head.replace("\r\n", "\n").split("\n")
    return first is None and len(lines) > 2 and lines[0].startswith(HEADER) and (
        _TOTAL.match(lines[2]) is not None or lines[2] == EMPTY)


def read(path: Path) -> Iterator[Transcript]:
    try:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as e:
        raise TranscriptError(path, None, f"UTF-8 text (invalid byte at offset {e.start})") from None
    lines = text.split("\n")
    if not lines[0].startswith(HEADER) or len(lines) < 3:
        raise TranscriptError(path, 1, f"'{HEADER}<name>' (a Goose Markdown export)")
    name = lines[0][len(HEADER):].strip()
    meta: dict[str, Any] = {"path": str(path), "title": name, "usage": "none: a Goose export records no usage"}
    sid = f"goose-export-{path.stem}"
    if lines[2] == EMPTY:
        yield Transcript(sid, "goose", (), meta, (), ("the session has no messages",))
        return
    total = _TOTAL.match(lines[2])
    if total is None:
        raise TranscriptError(path, 3, "'*Total messages: N*' (a Goose Markdown export)")
    body = "\n".join(lines[3:]).lstrip("\n")
    if not body.startswith("---\n\n"):
        raise TranscriptError(path, 4, "'---' before the first message")
    chunks = _chunks(body[len("---\n\n"):])
    if len(chunks) != int(total.group(1)):
        raise TranscriptError(path, None, f"{total.group(1)} messages (the export's *Total messages*), found "
                                          f"{len(chunks)}: a message's text holds the export's own separators")

    def fail(where: str, expected: str) -> TranscriptError:
        return TranscriptError(path, None, f"{where}: {expected}")

    calls: list[str] = []  # ids of the latest assistant message's calls, answered in order
    dicts = [_message(k, chunk, calls) for k, chunk in enumerate(chunks)]
    for k in range(1, len(dicts)):  # the summary: the user message a continuation follows
        hidden = not dicts[k]["metadata"]["userVisible"]
        if hidden and dicts[k]["role"] == "assistant" and dicts[k - 1]["role"] == "user":
            dicts[k - 1]["metadata"] = {"userVisible": False, "agentVisible": True}
    stored = [gm.raw(d, f"message {k + 1}", d["id"], fail) for k, d in enumerate(dicts)]
    yield gm.build(sid, stored, meta, fail)


def _chunks(body: str) -> list[str]:
    """The messages: pieces between separators that open as a message does (a piece that does not belongs
    to the message before it)."""
    out: list[str] = []
    for piece in body.split(SEPARATOR):
        if piece.startswith(("### User:\n", "### Assistant:\n", "#### Tool Response:")) or not out:
            out.append(piece)
        elif piece.strip():
            out[-1] += SEPARATOR + piece
    if out and not out[-1].strip():
        out.pop()
    out = [c.rstrip("\n") for c in out]
    return out


def _message(k: int, chunk: str, calls: list[str]) -> dict[str, Any]:
    if chunk.startswith("### Assistant:\n"):
        role, rest = "assistant", chunk[len("### Assistant:\n"):]
    elif chunk.startswith("### User:\n"):
        role, rest = "user", chunk[len("### User:\n"):]
    else:
        role, rest = "user", chunk
    content: list[dict[str, Any]] = []
    text: list[str] = []
    if role == "assistant":
        calls.clear()
    blocks = re.split(r"(?m)^(?=#### Tool Call: `|#### Tool Response:)", rest)
    for block in blocks:
        head, _, tail = block.partition("\n")
        m = _CALL.match(head)
        if m:
            tool, ns = m.group(1), m.group(2)
            call_id = f"m{k + 1}c{len(calls) + 1}" if role == "assistant" else f"m{k + 1}c"
            if role == "assistant":
                calls.append(call_id)
            content.append({"type": "toolRequest", "id": call_id, "toolCall": {"status": "success", "value": {
                "name": tool if ns == "Tool" else f"{ns}__{tool}", "arguments": _arguments(tail)}}})
        elif head == "#### Tool Response:":
            answered = sum(1 for c in content if c["type"] == "toolResponse")
            call_id = calls[answered] if answered < len(calls) else f"m{k + 1}r{answered + 1}"
            out = tail.strip("\n")
            fenced = _FENCED.match(out)
            out = fenced.group(1) if fenced else "" if out == "*No textual output from tool.*" else out
            content.append({"type": "toolResponse", "id": call_id, "toolResult": {"status": "success", "value": {
                "content": [{"type": "text", "text": out}]}}})
        elif block.strip():
            text.append(block.strip("\n"))
    prose = "\n\n".join(text)
    thinking, prose = _thinking(prose)
    if thinking:
        content.insert(0, {"type": "thinking", "thinking": thinking, "signature": ""})
    if prose:
        content.insert(1 if thinking else 0, {"type": "text", "text": prose})
    hidden = prose.startswith(gm.CONTINUATIONS) or prose.startswith(TOOL_PAIR_PREFIX)
    return {"id": f"m{k + 1}", "role": role, "created": k, "content": content,
            "metadata": {"userVisible": not hidden, "agentVisible": True}}


def _thinking(prose: str) -> tuple[str, str]:
    """``**Thinking:**`` then ``> `` quoted lines, before the text."""
    if not prose.startswith("**Thinking:**\n"):
        return "", prose
    lines = prose.split("\n")[1:]
    quoted = []
    while lines and lines[0].startswith(">"):
        quoted.append(lines.pop(0)[2:] if lines[0].startswith("> ") else lines.pop(0)[1:])
    return "\n".join(quoted), "\n".join(lines).strip("\n")


def _arguments(md: str) -> dict[str, Any]:
    """The ``**Arguments:**`` list read back (see the module docstring)."""
    lines = md.split("\n")
    if lines and lines[0] == "**Arguments:**":
        lines = lines[1:]
    if lines and lines[0].strip() == "*No arguments*":
        return {}
    args: dict[str, Any] = {}
    key: str | None = None
    extra: list[str] = []
    for line in [*lines, None]:
        m = _ARG.match(line) if line is not None else None
        if line is None or m:
            if key is not None and extra:
                args[key] = _block(extra) if args[key] == "" else args[key]
            if m is None:
                break
            key, extra = m.group(1), []
            args[key] = _scalar(m.group(2) or "")
        elif key is not None:
            extra.append(line)
    return args


def _scalar(v: str) -> Any:
    v = v.strip()
    if len(v) >= 2 and v.startswith("`") and v.endswith("`"):
        return v[1:-1].replace("\\`", "`")
    if v in ("*true*", "*false*"):
        return v == "*true*"
    try:
        return json.loads(v) if v else ""
    except ValueError:
        return v


def _block(lines: list[str]) -> str:
    """A fenced value (``command``, ``code_edit``) without its fence and indent; any other nesting as written."""
    body = [x[4:] if x.startswith("    ") else x for x in lines]
    while body and not body[-1].strip():
        body.pop()
    if body and body[0].startswith("```") and body[-1].strip() == "```":
        return "\n".join(body[1:-1])
    return "\n".join(lines).strip("\n")
