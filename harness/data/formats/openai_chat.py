"""``compbench.data.formats.openai_chat`` — OpenAI chat-format conversations: the generic format, tried last.

Accepted layouts:

* JSONL, one conversation a line: ``{"messages": [...], "id"?, "model"?, "metadata"?}``; each line is one
  Transcript, its id the line's ``id`` or ``<file stem>-<line>``.
* One JSON document: a list of messages, or ``{"messages": [...]}`` (pretty-printed allowed).

Messages follow the Chat Completions shapes: roles system / developer (both become ``system``; the
original kept in ``meta["role"]``) / user / assistant / tool (and the legacy ``function``); content a
string, null, or a list of parts (``text``, ``image_url``, ``input_audio``, ``file``, ``refusal``);
assistant ``tool_calls`` ``[{id, type: function, function: {name, arguments}}]`` (legacy
``function_call`` too); tool messages answer by ``tool_call_id``. A result whose call is missing is kept
as an orphan. Non-standard but common extras are read when present: ``reasoning_content`` /
``reasoning`` (Reasoning parts) and a per-message ``usage`` (OpenAI convention: prompt_tokens includes
cached tokens). The :class:`Chat` converter is shared with the SWE-agent and mini-swe-agent importers,
whose messages are this format with extra keys.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compbench.data.formats.chat_fit import UNFIT, unfit
from compbench.data.formats.chat_fit import misfit as misfit  # this format's misfit(), for detection
from compbench.data.formats.coverage import check_value
from compbench.data.formats.jsonio import is_document, iter_jsonl, json_args, load_json
from compbench.data.transcript import (
    Media,
    Message,
    Part,
    Reasoning,
    Role,
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from compbench.errors import TranscriptError

NAME = "openai"

ROLE_MAP: dict[str, Role] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
                             "tool": "tool", "function": "tool"}  # Chat Completions roles (function: legacy)
TEXT_PARTS = ("text", "input_text", "output_text")  # Chat Completions + Responses-style text parts
FOREIGN_KEYS = ("type", "info", "history", "trajectory", "trajectory_format", "payload", "sessionId")
_DOC_HEAD = re.compile(
    r'^\s*(?:\[\s*\{\s*"(?:role|content)"'  # a bare list of messages
    r'|\{\s*(?:"(?:id|model)"\s*:\s*"[^"\n]*"\s*,\s*)*"messages"\s*:\s*\[\s*(?:\]|\{\s*"(?:role|content)"))')
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A ``messages`` list of chat messages, each whole (:func:`unfit`), and none of the keys other formats put
    beside it."""
    if first is not None:
        msgs = first.get("messages")
        if not isinstance(msgs, list) or any(k in first for k in FOREIGN_KEYS):
            return False
        return all(unfit(m) is None for m in msgs)
    return bool(_DOC_HEAD.match(head))


def sniff_document(doc: Any) -> bool:
    """A whole document: a list of chat messages, or one conversation object (same test as a line)."""
    if isinstance(doc, list):
        return bool(doc) and all(unfit(m) is None for m in doc)
    return isinstance(doc, dict) and sniff("", doc)


def read(path: Path) -> Iterator[Transcript]:
    if is_document(path):
        yield _read_document(path)
        return
    for lineno, obj in iter_jsonl(path):
        msgs = obj.get("messages")
        if not isinstance(msgs, list):
            raise TranscriptError(path, lineno, "a conversation object with a 'messages' list")
        tid = obj["id"] if isinstance(obj.get("id"), str) and obj["id"] else f"{_stem(path)}-{lineno}"
        yield check_value(path, lineno, NAME, obj, _conversation(path, tid, obj, msgs, _fixed(lineno)))


def _fixed(lineno: int) -> Callable[[int], int | None]:
    """Every message of a JSONL conversation is on its line."""
    return lambda _i: lineno


def _read_document(path: Path) -> Transcript:
    doc = load_json(path)
    if isinstance(doc, list):
        t = _conversation(path, _stem(path), {}, doc, lambda i: line_of(path, (i,)))
    elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        tid = doc["id"] if isinstance(doc.get("id"), str) and doc["id"] else _stem(path)
        t = _conversation(path, tid, doc, doc["messages"], lambda i: line_of(path, ("messages", i)))
    else:
        raise TranscriptError(path, 1, "a list of messages or an object with a 'messages' list")
    return check_value(path, None, NAME, doc, t)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _conversation(path: Path, tid: str, obj: Mapping[str, Any], msgs: list[Any],
                  where: Callable[[int], int | None]) -> Transcript:
    chat = Chat(path, where)
    for i, raw in enumerate(msgs):
        chat.add(i, raw)
    meta: dict[str, Any] = {"path": str(path)}
    if isinstance(obj.get("model"), str):
        meta["model"] = obj["model"]
    if isinstance(obj.get("metadata"), dict):
        meta["metadata"] = obj["metadata"]
    if isinstance(obj.get("tools"), list):
        meta["tools"] = len(obj["tools"])
    return Transcript(tid, NAME, tuple(chat.messages), meta, (), tuple(chat.finish()))


# --- the shared converter -----------------------------------------------------------------------------


@dataclass
class Chat:
    """Turns Chat Completions messages into compbench messages, one at a time.

    ``where(i)`` gives the source line of message ``i`` so every error names a line; importers of
    formats built on chat messages (SWE-agent, mini-swe-agent) add their own parts and meta through
    :meth:`add`.
    """

    path: Path
    where: Callable[[int], int | None]
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    ids: set[str] = field(default_factory=set)
    pending_function: list[tuple[str, str]] = field(default_factory=list)  # legacy function_call (id, name)

    def fail(self, i: int, expected: str) -> TranscriptError:
        return TranscriptError(self.path, self.where(i), expected)

    def finish(self) -> list[str]:
        """The warnings, with one line per kind of skipped record."""
        return self.warnings + [f"skipped {n} records of unknown type {k!r}" for k, n in sorted(self.skipped.items())]

    def new_id(self, raw: Mapping[str, Any]) -> str:
        own = raw.get("id")
        mid = own if isinstance(own, str) and own and own not in self.ids else f"m{len(self.messages)}"
        while mid in self.ids:
            mid += "'"
        self.ids.add(mid)
        return mid

    def add(self, i: int, raw: Any, *, role: Role | None = None, parts: tuple[Part, ...] = (),
            usage: Usage | None = None, meta: Mapping[str, Any] | None = None) -> Message | None:
        """Convert message ``i`` and append it; ``parts`` are appended after its own. None if skipped."""
        why = unfit(raw)
        if why == "object":
            raise self.fail(i, f"a message object (message {i})")
        if why in ("parts", "blocks"):
            raise self.fail(i, f"a chat message (message {i} {UNFIT[why][0]})")
        src_role = raw.get("role")
        if not isinstance(src_role, str):
            raise self.fail(i, f"a string 'role' in message {i}")
        if src_role not in ROLE_MAP:
            self.skipped[f"role {src_role}"] += 1
            return None
        mrole = role or ROLE_MAP[src_role]
        m: dict[str, Any] = dict(meta or {})
        if src_role in ("developer", "function"):
            m["role"] = src_role
        if isinstance(raw.get("name"), str) and src_role != "function":
            m["name"] = raw["name"]
        own: list[Part]
        if src_role in ("tool", "function") and mrole == "tool":
            own = self._result(i, raw, src_role)
        else:
            own = content_parts(self, i, raw.get("content"))
            if src_role == "assistant":
                own = self._reasoning(i, raw) + own + self._calls(i, raw)
        if usage is None and isinstance(raw.get("usage"), dict):
            usage = openai_usage(self, i, raw["usage"])
        return self.append(raw, mrole, (*own, *parts), usage, m)

    def append(self, raw: Mapping[str, Any], role: Role, parts: tuple[Part, ...], usage: Usage | None = None,
               meta: Mapping[str, Any] | None = None) -> Message:
        """Append a message the caller built (an importer's own mapping of a source message)."""
        msg = Message(self.new_id(raw), role, parts, usage, dict(meta or {}))
        self.messages.append(msg)
        return msg

    def _reasoning(self, i: int, raw: Mapping[str, Any]) -> list[Part]:
        for key in ("reasoning_content", "reasoning"):
            if isinstance(raw.get(key), str) and raw[key]:
                return [Reasoning(raw[key])]
        return []

    def _calls(self, i: int, raw: Mapping[str, Any]) -> list[Part]:
        out: list[Part] = []
        calls = raw.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise self.fail(i, f"a list 'tool_calls' in message {i}")
        for c in calls or []:
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(fn, dict) or not (
                    isinstance(fn.get("name"), str)):
                raise self.fail(i, f"tool calls {{id, function: {{name, arguments}}}} in message {i}")
            out.append(ToolCall(c["id"], fn["name"], json_args(fn.get("arguments", ""))))
            self.calls[c["id"]] = fn["name"]
        fc = raw.get("function_call")
        if isinstance(fc, dict) and isinstance(fc.get("name"), str):
            cid = f"m{len(self.messages)}:function_call"
            out.append(ToolCall(cid, fc["name"], json_args(fc.get("arguments", ""))))
            self.calls[cid] = fc["name"]
            self.pending_function.append((cid, fc["name"]))
        return out

    def _result(self, i: int, raw: Mapping[str, Any], src_role: str) -> list[Part]:
        parts = content_parts(self, i, raw.get("content"))
        output = "\n".join(p.text for p in parts if isinstance(p, Text))
        media = [p for p in parts if isinstance(p, Media)]
        name: str
        if src_role == "function":
            name = raw["name"] if isinstance(raw.get("name"), str) else ""
            match = next((c for c in self.pending_function if c[1] == name), None)
            if match is not None:
                self.pending_function.remove(match)
            call_id = match[0] if match else ""
        else:
            cid = raw.get("tool_call_id")
            if cid is not None and not isinstance(cid, str):
                raise self.fail(i, f"a string 'tool_call_id' in message {i}")
            call_id = cid or ""
            name = self.calls.get(call_id, raw["name"] if isinstance(raw.get("name"), str) else "")
        return [self.result(i, call_id, name, output), *media]

    def result(self, i: int, call_id: str, name: str, output: str, is_error: bool = False) -> ToolResult:
        """A ToolResult, flagged orphan (with a warning) when no earlier message made the call."""
        orphan = call_id not in self.calls
        if orphan:
            line = self.where(i)
            at = f"line {line}, message {i}" if line is not None else f"message {i}"
            self.warnings.append(f"{at}: tool result {call_id!r} has no matching tool call")
        return ToolResult(call_id, name or self.calls.get(call_id, ""), output, is_error, orphan)


def content_parts(chat: Chat, i: int, content: Any) -> list[Part]:
    """A message's content (string, null or list of parts) as compbench parts; empty text dropped."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    if not isinstance(content, list):
        raise chat.fail(i, f"'content' as a string, null or a list of parts in message {i}")
    out: list[Part] = []
    for p in content:
        if isinstance(p, str):
            out.append(Text(p))
            continue
        t = p.get("type") if isinstance(p, dict) else None
        if not isinstance(p, dict) or not isinstance(t, str):
            raise chat.fail(i, f"content parts with a string 'type' in message {i}")
        if t in TEXT_PARTS or t == "refusal":
            text = p.get("text" if t != "refusal" else "refusal")
            if not isinstance(text, str):
                raise chat.fail(i, f"a string text in a {t} part of message {i}")
            out.append(Text(text))
        elif t in ("image_url", "input_image"):
            img = p.get("image_url")
            url = img.get("url") if isinstance(img, dict) else img
            if not isinstance(url, str):
                raise chat.fail(i, f"an image_url with a string 'url' in message {i}")
            out.append(media_from_url(chat, i, url, "image"))
        elif t == "input_audio":
            audio = p.get("input_audio")
            data = audio.get("data") if isinstance(audio, dict) else None
            if not isinstance(data, str):
                raise chat.fail(i, f"input_audio with base64 'data' in message {i}")
            fmt = audio.get("format") if isinstance(audio, dict) and isinstance(audio.get("format"), str) else ""
            out.append(Media("audio", f"audio/{fmt}" if fmt else "", _b64(chat, i, data)))
        elif t == "file":
            f: dict[str, Any] = p["file"] if isinstance(p.get("file"), dict) else {}
            name = f.get("filename") or f.get("file_id") or ""
            data = f.get("file_data")
            out.append(media_from_url(chat, i, data, "file", str(name)) if isinstance(data, str) and data.startswith(
                "data:") else Media("file", "", b"", str(name)))
        elif t == "cache_control":
            continue
        else:
            chat.skipped[f"content part {t}"] += 1
    return out


def media_from_url(chat: Chat, i: int, url: str, kind: str, name: str = "") -> Media:
    """A data: URL's bytes are embedded; any other URL is kept by name only (offline: never fetched)."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Media(kind, head, _b64(chat, i, data), name)
    return Media(kind, "", b"", name or url)


def _b64(chat: Chat, i: int, data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise chat.fail(i, f"base64 data in message {i}") from None


def openai_usage(chat: Chat, i: int, u: Mapping[str, Any]) -> Usage:
    """OpenAI usage: ``prompt_tokens`` already includes ``cached_tokens`` (no conversion needed)."""
    def num(d: Any, key: str) -> int:
        v = d.get(key, 0) if isinstance(d, dict) else 0
        if v is None:
            return 0
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise chat.fail(i, f"a non-negative integer usage '{key}' in message {i}")
        return v

    details = u.get("prompt_tokens_details")
    return Usage(input=num(u, "prompt_tokens"), output=num(u, "completion_tokens"),
                 cache_read=num(details, "cached_tokens"), cache_write=num(details, "cache_write_tokens"),
                 reasoning=num(u.get("completion_tokens_details"), "reasoning_tokens"))


# --- where in a whole-JSON document -------------------------------------------------------------------


def line_of(path: Path, where: tuple[str | int, ...]) -> int | None:
    """The 1-based line where the value at ``where`` (keys and indexes) starts; None if not found.

    Only called on the error path: it re-scans the document, so normal reads pay nothing for it.
    """
    try:
        text = path.read_bytes().decode("utf-8")
        pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
        for step in where:
            found = _child(text, pos, step)
            if found is None:
                return None
            pos = found
    except (ValueError, IndexError, RecursionError, OSError):
        return None
    return text.count("\n", 0, pos) + 1


def _child(text: str, pos: int, step: str | int) -> int | None:
    """Offset of member ``step`` of the object or array starting at ``pos``."""
    opener, closer = ("{", "}") if isinstance(step, str) else ("[", "]")
    if text[pos] != opener:
        return None
    pos = _skip(text, pos + 1)
    n = 0
    while text[pos] != closer:
        if isinstance(step, str):
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos] != ":":
                return None
            pos = _skip(text, pos + 1)
            if key == step:
                return pos
        elif n == step:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
        n += 1
    return None


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]
