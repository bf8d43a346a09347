"""``compbench.data.formats.cline_api`` — The API history of a Cline, Roo Code or Kilo Code task
(``api_conversation_history.json``): Anthropic-style messages, checked as a whole and turned into compbench
messages.

Writers followed: cline/cline 9ee618111d58 (``src/core/task/message-state.ts``, ``src/core/task/index.ts``:
``{role, content, ts}``, assistant messages with ``modelInfo``, ``id``, ``metrics``); RooCodeInc/Roo-Code
cb836567180a (``src/core/task-persistence/apiMessages.ts`` ``ApiMessage``: ``ts``, ``isSummary``,
``condenseId``/``condenseParent``, ``truncationId``/``truncationParent``/``isTruncationMarker``, standalone
``{type: "reasoning"}`` items; ``Task.addToApiConversationHistory``: ``thinking``, ``reasoning`` and
``thoughtSignature`` blocks); Kilo-Org/kilocode-legacy 56b73d3bdad4 (Roo Code's layout).

Each API message ``i`` becomes one compbench message ``api-<i>`` (an assistant's blocks, a user's text), a
user message's tool results each a ``tool`` message ``api-<i>:<k>`` before its text, as Claude Code's are.
A standalone reasoning item is the next assistant message's reasoning. XML-era tool calls (``<read_file>``
in the assistant's text, ``[read_file for 'x'] Result:`` in the user's) are made blocks first
(:mod:`.xml_tools`), so they are tool calls and results here too; such an assistant message's meta says
``tool_protocol: "xml"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.claude_code import _media
from compbench.data.formats.jsonio import as_text, json_args
from compbench.data.transcript import Message, Part, Reasoning, Text, ToolCall, ToolResult

ROLES = ("user", "assistant")
# Every content-block type the writers put in a message; a document with any other is not this format.
BLOCKS = frozenset({"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
                    "reasoning", "thoughtSignature"})
# Keys only these writers put on a message (the evidence that a plain list of role messages is one of theirs).
MARKERS = frozenset({"ts", "isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent",
                     "isTruncationMarker", "modelInfo", "metrics", "reasoning_details", "reasoning_content"})
ANTHROPIC_ONLY = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "thoughtSignature"})


def _block_fits(b: Any) -> bool:
    return isinstance(b, dict) and isinstance(b.get("type"), str) and b["type"] in BLOCKS


def _message_fits(m: Any) -> bool:
    """One stored message: a role message with string or block-list content, or a standalone reasoning item."""
    if not isinstance(m, dict):
        return False
    if "role" not in m and m.get("type") == "reasoning":
        return True
    if m.get("role") not in ROLES:
        return False
    c = m.get("content")
    return isinstance(c, str) or (isinstance(c, list) and all(_block_fits(b) for b in c))


def fits(doc: Any) -> bool:
    """The whole document is an API history of this family: a non-empty list whose every element fits, with
    the writers' own evidence (a key only they write, or an Anthropic block type a chat log has not)."""
    if not isinstance(doc, list) or not doc or not all(_message_fits(m) for m in doc):
        return False
    return any(MARKERS & m.keys() or (isinstance(m.get("content"), list)
                                      and any(b.get("type") in ANTHROPIC_ONLY for b in m["content"]))
               for m in doc)


def misfit(doc: Any) -> str:
    """What part of a document does not fit (for the one-line error of a forced or named file)."""
    if not isinstance(doc, list):
        return f"a JSON array of API messages, found {type(doc).__name__}"
    if not doc:
        return "a non-empty JSON array of API messages"
    for i, m in enumerate(doc):
        if not _message_fits(m):
            return (f"element {i} to be a {{role: user|assistant, content: string | [content blocks of a known "
                    f"type]}} message")
    return "a Cline, Roo Code or Kilo Code API history (no key or content block only they write)"


@dataclass
class Converted:
    """The messages of an API history, and where each API message went."""

    messages: list[Message] = field(default_factory=list)
    at: dict[int, list[int]] = field(default_factory=dict)  # API index -> positions in ``messages``
    assistant_of: dict[int, int] = field(default_factory=dict)  # API index of an assistant -> its position
    unknown_blocks: dict[str, int] = field(default_factory=dict)
    orphans: int = 0


def _text(b: Mapping[str, Any]) -> str:
    t = b.get("text")
    return t if isinstance(t, str) else ""


def _reasoning(b: Mapping[str, Any]) -> Reasoning | None:
    t = b.get("type")
    if t == "thinking":
        return Reasoning(str(b.get("thinking") or ""))
    if t == "redacted_thinking":
        return Reasoning(str(b.get("data") or ""), encrypted=True)
    if t == "reasoning":  # Roo Code: plain text, or OpenAI's encrypted content
        if isinstance(b.get("text"), str) and b["text"]:
            return Reasoning(b["text"])
        if isinstance(b.get("encrypted_content"), str):
            return Reasoning(b["encrypted_content"], encrypted=True)
    return None


def convert(doc: Sequence[Any]) -> Converted:
    """The compbench messages of a document that :func:`fits`."""
    out = Converted()
    calls: dict[str, str] = {}
    pending: list[Part] = []  # standalone reasoning items, for the next assistant message

    def add(i: int, m: Message) -> None:
        out.at.setdefault(i, []).append(len(out.messages))
        out.messages.append(m)

    def unknown(t: Any) -> None:
        out.unknown_blocks[str(t)] = out.unknown_blocks.get(str(t), 0) + 1

    for i, raw in enumerate(doc):
        meta = _meta(raw)
        if "role" not in raw:  # a standalone reasoning item
            r = _reasoning(raw)
            if r is not None:
                pending.append(r)
            out.at[i] = []
            continue
        blocks = [{"type": "text", "text": raw["content"]}] if isinstance(raw["content"], str) else raw["content"]
        if raw["role"] == "assistant":
            parts: list[Part] = pending
            pending = []
            for b in blocks:
                t = b["type"]
                if t == "text":
                    parts.append(Text(_text(b)))
                elif t == "tool_use":
                    cid, name = str(b.get("id") or f"api-{i}-call-{len(parts)}"), str(b.get("name") or "")
                    calls[cid] = name
                    parts.append(ToolCall(cid, name, json_args(b.get("input", {}))))
                elif (r := _reasoning(b)) is not None:
                    parts.append(r)
                elif t != "thoughtSignature":
                    unknown(t)
            out.assistant_of[i] = len(out.messages)
            add(i, Message(f"api-{i}", "assistant", tuple(parts), None, meta))
            continue
        texts: list[Part] = []
        results = 0
        for b in blocks:
            t = b["type"]
            if t == "tool_result":
                cid = str(b.get("tool_use_id") or "")
                orphan = cid not in calls
                out.orphans += orphan
                content = b.get("content")
                images: list[Part] = []
                if isinstance(content, list):
                    images = [_media(x) for x in content if isinstance(x, dict) and x.get("type") == "image"]
                    content = [x for x in content if not (isinstance(x, dict) and x.get("type") == "image")]
                name = calls.get(cid) or (b["name"] if isinstance(b.get("name"), str) else "")  # xml_tools names it
                res = ToolResult(cid, name, as_text(content), b.get("is_error") is True, orphan)
                add(i, Message(f"api-{i}:{results}" if results or len(blocks) > 1 else f"api-{i}", "tool",
                               (res, *images), None, dict(meta)))
                results += 1
            elif t == "text":
                texts.append(Text(_text(b)))
            elif t == "image":
                texts.append(_media(b))
            elif t == "document":
                texts.append(Text("[Document]"))
            else:
                unknown(t)
        if texts or not results:
            add(i, Message(f"api-{i}", "user", tuple(texts), None, meta))
    return out


def _meta(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The writer's facts worth keeping on a message: time, model, the condense / truncation tags."""
    meta: dict[str, Any] = {}
    if isinstance(raw.get("ts"), (int, float)) and not isinstance(raw.get("ts"), bool):
        meta["ts"] = raw["ts"]
    mi = raw.get("modelInfo")
    if isinstance(mi, dict) and isinstance(mi.get("modelId"), str):
        meta["model"] = mi["modelId"]
    for k, key in (("condenseParent", "condense_parent"), ("truncationParent", "truncation_parent"),
                   ("condenseId", "condense_id"), ("truncationId", "truncation_id")):
        if isinstance(raw.get(k), str):
            meta[key] = raw[k]
    if raw.get("isSummary") is True:
        meta["is_summary"] = True
    if raw.get("isTruncationMarker") is True:
        meta["is_truncation_marker"] = True
    if raw.get("xmlToolCalls") is True:  # set by xml_tools.to_native: its calls were XML in the text
        meta["tool_protocol"] = "xml"
    return meta
