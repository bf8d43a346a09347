"""``compbench.data.formats.gemini_content`` — Gemini ``Content`` (``{role, parts}``) as compbench messages, shared
by every Gemini CLI artefact: the ``/chat share`` and ``/chat save`` dumps (a list of Content), their
markdown rendering, and the parts inside a chat recording's messages.

Followed: google-gemini/gemini-cli 5411f113ca (``packages/core/src/utils/generateContentResponseUtilities.ts``
``convertToFunctionResponse``: a result is ``{functionResponse: {id, name, response: {output}}}``, an error
``{error}``; ``packages/core/src/context/chatCompressionService.ts``: the compression's new history starts
with the ``<state_snapshot>`` user Content and the model's :data:`ACK`, the same text since v0.10.0).

A model Content is one assistant message: text parts (``thought: true`` ones are Reasoning, as Gemini CLI
keeps thoughts out of what it resends), ``functionCall`` parts as tool calls. A user Content is one
``tool`` message per ``functionResponse`` part, then a user message for its text and media. Calls recorded
without an ``id`` (older versions) are matched to their responses by name, in order, as the API does.
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.jsonio import as_text, json_args
from compbench.data.transcript import Media, Message, Part, Reasoning, Role, Text, ToolCall, ToolResult
from compbench.errors import TranscriptError

ACK = "Got it. Thanks for the additional context!"  # chatCompressionService.ts, v0.10.0 to 5411f11
SNAPSHOT_TAG = "<state_snapshot>"
ROLES: dict[str, Role] = {"user": "user", "model": "assistant"}
QUIET_PARTS = frozenset({"thoughtSignature", "videoMetadata"})  # carry nothing the model reads as text


@dataclass
class Contents:
    """Converts Contents into messages, one at a time; ``where(i)`` is the source line of Content ``i``."""

    path: str
    where: Callable[[int], int | None]
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    unnamed: dict[str, list[str]] = field(default_factory=dict)  # tool name -> ids of calls recorded without one
    answered: set[str] = field(default_factory=set)

    def fail(self, i: int, expected: str) -> TranscriptError:
        return TranscriptError(self.path, self.where(i), expected)

    def finish(self) -> list[str]:
        return self.warnings + [f"skipped {n} parts of unknown kind {k!r}" for k, n in sorted(self.skipped.items())]

    def add(self, i: int, mid: str, role: str, parts: Any, meta: dict[str, Any] | None = None) -> list[Message]:
        """Content ``i`` (role ``user`` or ``model``) as messages appended under ids ``mid``, ``mid:1``, ..."""
        if role not in ROLES:
            raise self.fail(i, f"a Content role 'user' or 'model' (found {role!r})")
        plist = as_parts(self, i, parts)
        if ROLES[role] == "assistant":
            return [self.append(mid, "assistant", tuple(self.model_parts(i, mid, plist)), meta)]
        out: list[Message] = []
        rest: list[Part] = []
        for p in plist:
            fr = p.get("functionResponse")
            if fr is not None:
                result = self.response(i, fr)
                if result is not None:
                    out.append(self.append(f"{mid}:{len(out)}" if out else mid, "tool", (result,), meta))
            else:
                rest.extend(self.plain(i, p))
        if rest:
            out.append(self.append(f"{mid}:{len(out)}" if out else mid, "user", tuple(rest), meta))
        return out

    def append(self, mid: str, role: Role, parts: tuple[Part, ...], meta: dict[str, Any] | None) -> Message:
        msg = Message(mid, role, parts, None, dict(meta or {}))
        self.messages.append(msg)
        return msg

    def model_parts(self, i: int, mid: str, plist: Sequence[dict[str, Any]]) -> list[Part]:
        out: list[Part] = []
        for k, p in enumerate(plist):
            fc = p.get("functionCall")
            if fc is not None:
                out.append(self.call(i, fc, f"{mid}:{k}"))
            elif "functionResponse" in p:
                self.skipped["functionResponse in a model turn"] += 1
            else:
                out.extend(self.plain(i, p))
        return out

    def call(self, i: int, fc: Any, fallback: str) -> ToolCall:
        if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
            raise self.fail(i, "a functionCall with a string 'name'")
        cid = fc.get("id")
        if not isinstance(cid, str) or not cid:
            cid = fallback
            self.unnamed.setdefault(fc["name"], []).append(cid)
        self.calls[cid] = fc["name"]
        return ToolCall(cid, fc["name"], json_args(fc.get("args") if fc.get("args") is not None else {}))

    def response(self, i: int, fr: Any) -> ToolResult | None:
        """A functionResponse as a ToolResult; None when its call was already answered (a duplicate)."""
        if not isinstance(fr, dict) or not isinstance(fr.get("name"), str):
            raise self.fail(i, "a functionResponse with a string 'name'")
        name, cid = fr["name"], fr.get("id")
        if not isinstance(cid, str) or cid not in self.calls:
            waiting = self.unnamed.get(name)
            if waiting:
                cid = waiting.pop(0)
        if isinstance(cid, str) and cid in self.answered:
            return None
        cid = cid if isinstance(cid, str) else ""
        output, error = response_text(fr.get("response"))
        orphan = cid not in self.calls
        if orphan:
            line = self.where(i)
            self.warnings.append(f"{'line ' + str(line) if line else 'Content ' + str(i)}: tool result {cid!r} "
                                 "has no matching tool call")
        self.answered.add(cid)
        return ToolResult(cid, name, output, error, orphan)

    def plain(self, i: int, p: dict[str, Any]) -> list[Part]:
        """A part that is neither call nor response: text, thought, media; anything else is counted."""
        if isinstance(p.get("text"), str):
            if not p["text"]:
                return []
            return [Reasoning(p["text"])] if p.get("thought") is True else [Text(p["text"])]
        if isinstance(p.get("inlineData"), dict):
            d = p["inlineData"]
            try:
                data = base64.b64decode(str(d.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                raise self.fail(i, "base64 'data' in an inlineData part") from None
            return [Media(_kind(d.get("mimeType")), str(d.get("mimeType") or ""), data)]
        if isinstance(p.get("fileData"), dict):
            d = p["fileData"]
            return [Media(_kind(d.get("mimeType")), str(d.get("mimeType") or ""), b"", str(d.get("fileUri") or ""))]
        kinds = [k for k in p if k not in QUIET_PARTS]
        if kinds:
            self.skipped[kinds[0]] += 1
        return []


def as_parts(c: Contents, i: int, parts: Any) -> list[dict[str, Any]]:
    """A ``PartListUnion`` (a string, one part, or a list of parts and strings) as a list of part objects."""
    if parts is None:
        return []
    if isinstance(parts, str):
        return [{"text": parts}]
    if isinstance(parts, dict):
        return [parts]
    if not isinstance(parts, list):
        raise c.fail(i, "'parts' as a list of part objects")
    out: list[dict[str, Any]] = []
    for p in parts:
        if isinstance(p, str):
            out.append({"text": p})
        elif isinstance(p, dict):
            out.append(p)
        else:
            raise c.fail(i, f"part objects in 'parts' (found {type(p).__name__})")
    return out


def response_text(response: Any) -> tuple[str, bool]:
    """What a functionResponse tells the model: its ``output`` (or ``error``, flagged), else its JSON."""
    if isinstance(response, dict):
        if "error" in response and "output" not in response:
            return as_text(response["error"]), True
        if "output" in response and len(response) == 1:
            return as_text(response["output"]), False
    return as_text(response), False


def _kind(mime: Any) -> str:
    m = str(mime or "")
    return "image" if m.startswith("image/") else "audio" if m.startswith("audio/") else "file"


def content_text(parts: Any) -> str:
    """The text parts of a Content's parts (no thoughts), joined as Gemini CLI joins them."""
    if isinstance(parts, str):
        return parts
    items = parts if isinstance(parts, list) else [parts] if isinstance(parts, dict) else []
    return "".join(p if isinstance(p, str) else p["text"] for p in items
                   if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str)
                                             and p.get("thought") is not True))


def is_ack(parts: Any) -> bool:
    """The model's reply to a compression's snapshot, and nothing else."""
    return content_text(parts).strip() == ACK


def is_content(x: Any) -> bool:
    """One Gemini Content, as a whole: a role and a list of part objects (or no parts), and no chat-message
    ``content`` beside them."""
    return (isinstance(x, dict) and isinstance(x.get("role"), str) and x["role"] in ROLES
            and isinstance(x.get("parts", []), list)
            and "content" not in x and all(isinstance(p, dict) for p in x.get("parts", [])))
