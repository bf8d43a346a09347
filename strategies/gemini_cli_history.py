"""``compbench.strategies.gemini_cli_history`` — Gemini CLI's view of a chat history, shared by its compression and its
tool-output masking.

Both mechanisms work on ``Content`` objects (``{role, parts}``) and count tokens with Gemini CLI's own
estimator, so both are reproduced here as the tool has them (google-gemini/gemini-cli @ 5411f11):

* ``packages/core/src/utils/tokenCalculation.ts`` ``estimateTokenCountSync``: a text part costs 0.25 a
  character up to 127 and 1.5 above (a string over 100,000 characters: length / 4); a function response
  costs (name length + ``JSON.stringify(response)`` length) / 4; any other part ``JSON.stringify(part)`` / 4;
  the sum is floored once. Lengths are JavaScript's (UTF-16 code units).
* A compbench message is one Content; consecutive ``tool`` messages form one user Content of function
  responses, as Gemini CLI sends a turn's responses together. Assistant text and tool calls are ``model``
  parts (readable reasoning is left out: Gemini CLI keeps thoughts out of the history it resends); a tool
  result is ``{functionResponse: {id, name, response: {output}}}`` (``{error}`` for an error, as its
  scheduler builds them).
* The history Gemini CLI compresses or masks is the chat *before* the request being sent: the recorded
  messages that arrived since the last model turn (the new prompt, or the tool responses) are that request,
  so they are neither compressed nor masked, and the leading system messages are the system instruction.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.sdk import Entry, IdentityMemo, Media, Message, Reasoning, Text, ToolCall, ToolResult

NON_ASCII_TOKENS_PER_CHAR = 1.5  # tokenCalculation.ts NON_ASCII_TOKENS_PER_CHAR
MAX_CHARS_FOR_FULL_HEURISTIC = 100_000  # tokenCalculation.ts
CHARS_PER_TOKEN = 4  # tokenCalculation.ts DEFAULT_CHARS_PER_TOKEN
IMAGE_TOKEN_ESTIMATE = 3_000  # tokenCalculation.ts
PDF_TOKEN_ESTIMATE = 25_800  # tokenCalculation.ts
# Storage.getProjectTempDir(): ~/.gemini/tmp/<project identifier>; a fixed stand-in keeps placeholders stable
PROJECT_TEMP_DIR = "/home/user/.gemini/tmp/project"
SESSION_ID = "00000000-0000-4000-8000-000000000000"  # a fixed stand-in for the session's UUID

Ref = tuple[str, int]  # (message id, part index) of a function response in the view


def js_len(text: str) -> int:
    """JavaScript's ``length``: UTF-16 code units."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def estimate_text(text: str, chars_per_token: int = CHARS_PER_TOKEN) -> float:
    """``estimateTextTokens`` (before the floor): ASCII at ``1 / charsPerToken`` a character (the compression
    service's default 4; the context pipeline passes 3, :mod:`.gemini_cli_nodes`)."""
    n = js_len(text)
    if n > MAX_CHARS_FOR_FULL_HEURISTIC:
        return n / chars_per_token
    ascii_chars = len(text.encode("ascii", "ignore"))
    return ascii_chars / chars_per_token + (n - ascii_chars) * NON_ASCII_TOKENS_PER_CHAR


def stringify(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def estimate_part(part: dict[str, Any], chars_per_token: int = CHARS_PER_TOKEN) -> float:
    """One part's share of ``estimateTokenCountSync(parts, 0, charsPerToken)`` (before the floor)."""
    if "text" in part:
        return estimate_text(part["text"], chars_per_token)
    if "functionResponse" in part:
        fr = part["functionResponse"]
        return (js_len(fr.get("name", "")) + js_len(stringify(fr["response"]))) / chars_per_token
    if "inlineData" in part:
        mime = str(part["inlineData"].get("mimeType", ""))
        if mime.startswith("image/"):
            return IMAGE_TOKEN_ESTIMATE
        if mime.startswith("application/pdf"):
            return PDF_TOKEN_ESTIMATE
    return js_len(stringify(part)) / chars_per_token


def estimate(parts: Sequence[dict[str, Any]]) -> int:
    """``estimateTokenCountSync(parts)``."""
    return math.floor(sum(estimate_part(p) for p in parts))


def response_of(p: ToolResult) -> dict[str, str]:
    return {"error": p.output} if p.is_error else {"output": p.output}


def response_text(response: dict[str, str]) -> str:
    """The string ``truncateHistoryToBudget`` measures: ``output`` or ``content`` if a string, else the
    pretty JSON of the response."""
    for key in ("output", "content"):
        if isinstance(response.get(key), str):
            return response[key]
    return json.dumps(response, indent=2, ensure_ascii=False)


def _args(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw


Measured = tuple[dict[str, Any], int, float, int]  # a part, its JSON length, its estimate, its text's estimate
EMPTY_CONTENT = {"user": len('{"role":"user","parts":[]}'), "model": len('{"role":"model","parts":[]}')}


@dataclass(slots=True)
class Content:
    """One Gemini ``Content``: its role, its parts, the view positions it came from, and per part the view
    part it renders (a function response) or None, its JSON length, its estimate and (a function response)
    the floored estimate of the text ``truncateHistoryToBudget`` measures."""

    role: str
    parts: list[dict[str, Any]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    refs: list[Ref | None] = field(default_factory=list)
    lens: list[int] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    text_tokens: list[int] = field(default_factory=list)

    def add(self, part: dict[str, Any], ref: Ref | None) -> None:
        self.parts.append(part)
        self.refs.append(ref)
        self.lens.append(0)
        self.tokens.append(0.0)
        self.text_tokens.append(0)
        self.set(len(self.parts) - 1, part)

    def set(self, j: int, part: dict[str, Any]) -> None:
        fr = part.get("functionResponse")
        self.put(j, (part, js_len(stringify(part)), estimate_part(part),
                     math.floor(estimate_text(response_text(fr["response"]))) if fr else 0))

    def put(self, j: int, measured: Measured) -> None:
        """Replace part ``j`` by a part measured before (``measure``)."""
        self.parts[j], self.lens[j], self.tokens[j], self.text_tokens[j] = measured

    def measured(self, j: int) -> Measured:
        return self.parts[j], self.lens[j], self.tokens[j], self.text_tokens[j]

    def copy(self) -> Content:
        return Content(self.role, list(self.parts), self.positions, self.refs, list(self.lens), list(self.tokens),
                       list(self.text_tokens))

    def json_len(self) -> int:
        """``JSON.stringify(content).length``."""
        return EMPTY_CONTENT[self.role] + sum(self.lens) + max(0, len(self.parts) - 1)

    def estimate(self) -> float:
        """This Content's share of ``estimateTokenCountSync`` (before the floor)."""
        return sum(self.tokens)

    def has_response(self) -> bool:
        return any("functionResponse" in p for p in self.parts)

    def has_call(self) -> bool:
        return any("functionCall" in p for p in self.parts)


def parts_of(m: Message) -> list[tuple[dict[str, Any], int | None]]:
    """A message's Gemini parts, each with the index of the compbench part it renders."""
    out: list[tuple[dict[str, Any], int | None]] = []
    for j, p in enumerate(m.parts):
        if isinstance(p, Text):
            if p.text:
                out.append(({"text": p.text}, None))
        elif isinstance(p, ToolCall):
            out.append(({"functionCall": {"name": p.name, "args": _args(p.args)}}, None))
        elif isinstance(p, ToolResult):
            out.append(({"functionResponse": {"id": p.call_id, "name": p.name, "response": response_of(p)}}, j))
        elif isinstance(p, Media):
            out.append(({"inlineData": {"mimeType": p.mime or p.kind}}, None))
        elif isinstance(p, Reasoning):
            continue
    return out


Cache = dict[tuple[str, tuple[tuple[int, str], ...]], Content]


def contents(entries: Sequence[Entry], start: int = 0, cache: Cache | None = None,
             shared: IdentityMemo[Message, Content] | None = None) -> list[Content]:
    """The Contents of ``entries`` (view positions from ``start``), rendered as the model sees them. Each
    message's parts are measured once per rendering (``cache``, kept by the caller; a message shown as recorded
    once per transcript, ``shared`` by every configuration replaying it: a Content made here is never changed)."""
    out: list[Content] = []
    for k, e in enumerate(entries):
        whole = shared is not None and not e.pruned
        one = shared.get(e.message) if whole and shared is not None else None
        key = (e.id, tuple(sorted(e.pruned.items())))
        if one is None and cache is not None:
            one = cache.get(key)
        if one is None:
            m = e.rendered()
            one = Content("model" if m.role == "assistant" else "user")
            for part, j in parts_of(m):
                one.add(part, (m.id, j) if j is not None else None)
            if cache is not None:
                cache[key] = one
            if whole and shared is not None:
                shared.put(e.message, one)
        if e.role == "tool" and out and k > 0 and entries[k - 1].role == "tool":
            c = out[-1]
        else:
            c = Content(one.role)
            out.append(c)
        c.positions.append(start + k)
        c.parts += one.parts
        c.refs += one.refs
        c.lens += one.lens
        c.tokens += one.tokens
        c.text_tokens += one.text_tokens
    return out


def history_bounds(entries: Sequence[Entry]) -> tuple[int, int]:
    """``(head, stop)``: the chat history is ``entries[head:stop]``; before it the system instruction
    (leading system messages), after it the request being sent (what arrived since the last model turn)."""
    head = 0
    while head < len(entries) and entries[head].role == "system":
        head += 1
    stop = len(entries)
    while stop > head and entries[stop - 1].role != "assistant":
        stop -= 1
    return head, stop


def safe_name(name: str) -> str:
    """``sanitizeFilenamePart(name).toLowerCase()`` (fileUtils.ts)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name).lower()


def random_suffix(key: str) -> str:
    """A stand-in for ``Math.random().toString(36).substring(7)``: five base-36 characters, derived from
    ``key`` so that a replay is deterministic."""
    n = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    for _ in range(5):
        n, r = divmod(n, 36)
        out += digits[r]
    return out


def js_slice(text: str, start: int, end: int | None = None) -> str:
    """``String.prototype.slice`` (negative indices count from the end)."""
    n = len(text)

    def norm(i: int) -> int:
        return max(n + i, 0) if i < 0 else min(i, n)

    a, b = norm(start), (n if end is None else norm(end))
    return text[a:b] if a < b else ""
