"""``compbench.strategies.gemini_cli_nodes`` — the node graph Gemini CLI's ``ContextManager`` keeps of a chat, and its
token estimate (google-gemini/gemini-cli @ 5411f11, ``packages/core/src/context``).

``graph/toGraph.ts`` maps every part of every Content to one node (``ContextGraphBuilder``): a user text part is a
``USER_PROMPT`` (a ``SNAPSHOT`` when it holds a Master State; here: a compbench summary entry, which stands in
for the JSON the tool writes), a function response or call a ``TOOL_EXECUTION``, model text an
``AGENT_THOUGHT``. A Content is a turn; the first one, when it holds the ``<session_context>`` header, is the
environment context, always protected. Contents are grouped as :mod:`.gemini_cli_history` does.

Cost (``utils/contextTokenCalculator.ts`` ``StaticTokenCalculator`` with ``charsPerToken = 3`` from
``initializer.ts``): a node's base units are ``estimateTokenCountSync([part], 0, 3)`` (1/3 a character up to
127, 1.5 above, a string over 100,000 characters its length / 3; a function response (name + JSON of the
response) / 3; any other part its JSON / 3; floored), a list adds 5 (``MSG_OVERHEAD_TOKENS``) for each turn
it touches, and ``AdaptiveTokenCalculator`` multiplies by its learned weight and rounds (``Math.round``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compbench.sdk import Entry, Media, Reasoning, Text, ToolCall, ToolResult
from compbench.strategies.gemini_cli_history import (
    PROJECT_TEMP_DIR,
    SESSION_ID,
    _args,
    estimate_part,
    js_len,
    response_of,
    safe_name,
    stringify,
)

CHARS_PER_TOKEN = 3  # context/initializer.ts charsPerToken
MSG_OVERHEAD_TOKENS = 5  # utils/tokenCalculation.ts
ENV_HEADER = "<session_context>"  # graph/toGraph.ts: the environment context's turn (pinned)
MASK_TAG = "<tool_output_masked>"  # processors/toolMaskingProcessor.ts isAlreadyMasked
UNMASKABLE_TOOLS = ("activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode")  # toolMaskingProcessor.ts

Key = tuple[str, int]  # (message id, part index): a node
Measured = tuple[Key, str, int, dict[str, Any]]  # a node's key, kind, base units and Gemini part


def js_round(x: float) -> int:
    """``Math.round``: halves up."""
    return math.floor(x + 0.5)


def estimate3(part: dict[str, Any]) -> int:
    """``estimateTokenCountSync([part], 0, 3)``."""
    return math.floor(estimate_part(part, CHARS_PER_TOKEN))


@dataclass(frozen=True, slots=True)
class Node:
    key: Key
    kind: str  # "user" | "snapshot" | "tool" | "call" | "thought" | "media"
    turn: int  # the Content it belongs to
    position: int  # its message's position in the view
    base: int  # base units
    part: dict[str, Any]  # the Gemini part as rendered


def gemini_part(p: Any, shown: str | None) -> dict[str, Any] | None:
    """A compbench part as the Gemini part the view renders (``shown``: its placeholder)."""
    if isinstance(p, Text):
        text = p.text if shown is None else shown
        return {"text": text} if text else None
    if isinstance(p, ToolCall):
        return {"functionCall": {"name": p.name, "args": _args(p.args if shown is None else shown)}}
    if isinstance(p, ToolResult):
        part = p if shown is None else ToolResult(p.call_id, p.name, shown, p.is_error)
        return {"functionResponse": {"id": p.call_id, "name": p.name, "response": response_of(part)}}
    if isinstance(p, Media):
        return {"inlineData": {"mimeType": p.mime or p.kind}} if shown is None else {"text": shown}
    if isinstance(p, Reasoning):
        return None
    return None


class Graph:
    """The nodes of a view, measured once per rendering of each message (``overlay``: placeholders returned
    but not yet applied by the loop)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, tuple[tuple[int, str], ...]], tuple[object, list[Measured]]] = {}
        self._last: tuple[tuple[object, int] | None, int, int, list[Node], int] | None = None

    def message_nodes(self, e: Entry, overlay: Mapping[Key, str]) -> list[Measured]:
        shown = dict(e.pruned)
        shown.update({j: t for (mid, j), t in overlay.items() if mid == e.id})
        key = (e.id, tuple(sorted(shown.items())))
        hit = self._cache.get(key)
        if hit is not None and hit[0] is e.message:
            return hit[1]
        got: list[Measured] = []
        for j, p in enumerate(e.message.parts):
            part = gemini_part(p, shown.get(j))
            if part is None:
                continue
            kind = ("tool" if isinstance(p, ToolResult) else "call" if isinstance(p, ToolCall)
                    else "media" if isinstance(p, Media)
                    else "snapshot" if e.origin == "summary"
                    else "thought" if e.role == "assistant" else "user")
            got.append(((e.id, j), kind, estimate3(part), part))
        self._cache[key] = (e.message, got)
        return got

    def nodes(self, entries: Sequence[Entry], head: int, overlay: Mapping[Key, str],
              view: tuple[object, int] | None = None) -> list[Node]:
        """The nodes of ``entries[head:]``, turn by turn (consecutive tool messages are one turn). ``view``: the
        view and its revision; while they are the same and nothing is in the overlay, the entries only grew at
        the end and the last list is extended (read-only for the caller)."""
        last = self._last
        if view is not None and not overlay and last is not None and last[0] == view and last[1] == head \
                and last[2] <= len(entries) and last[0][0] is view[0]:
            out, start, turn = last[3], last[2], last[4]
        else:
            out, start, turn = [], head, -1
        for k in range(start, len(entries)):
            e = entries[k]
            if not (e.role == "tool" and k > head and entries[k - 1].role == "tool"):
                turn += 1
            for key, kind, base, part in self.message_nodes(e, overlay):
                out.append(Node(key, kind, turn, k, base, part))
        self._last = (view, head, len(entries), out, turn) if view is not None and not overlay else None
        return out


def env_turns(nodes: Sequence[Node]) -> set[int]:
    """The environment context's turn: the first, when a text part of it starts with ``<session_context>``."""
    first = [n for n in nodes if n.turn == 0]
    return {0} if any(n.part.get("text", "").strip().startswith(ENV_HEADER) for n in first) else set()


def list_tokens(nodes: Sequence[Node], weight: float) -> int:
    """``calculateConcreteListTokens``: base units plus 5 a turn, times the learned weight, rounded."""
    return js_round((sum(n.base for n in nodes) + MSG_OVERHEAD_TOKENS * len({n.turn for n in nodes})) * weight)


def raw_units(nodes: Sequence[Node]) -> int:
    """``getRawBaseUnits``."""
    return sum(n.base for n in nodes) + MSG_OVERHEAD_TOKENS * len({n.turn for n in nodes})


def aged_out(nodes: Sequence[Node], weight: float, retained: int, protected: set[int]) -> list[Node]:
    """``evaluateTriggers`` / ``render``: scanning from the newest node back, a node whose newer nodes already
    weigh more than ``retained`` (each counted alone with its turn's 5) has aged out, unless its turn is
    protected. Oldest first."""
    out: list[Node] = []
    rolling = 0
    for n in reversed(nodes):
        prior = rolling
        rolling += js_round((n.base + MSG_OVERHEAD_TOKENS) * weight)
        if prior > retained and n.turn not in protected:
            out.append(n)
    out.reverse()
    return out


def masked_text(content: str, tool: str, call_id: str) -> str:
    """``handleMasking`` of ``toolMaskingProcessor.ts`` for an observation string, with the file it wrote
    (``deriveStableId([content])``: the SHA-256 of the content, 32 hex digits)."""
    folder = f"{PROJECT_TEMP_DIR}/tool-outputs/session-{safe_name(SESSION_ID)}"
    stable = hashlib.sha256(content.encode()).hexdigest()[:32]
    name = f"{safe_name(tool)}_{safe_name(call_id)}_observation_{stable}.txt"
    mb = len(content.encode()) / 1024 / 1024
    lines = len(content.split("\n"))
    return (f"{MASK_TAG}\n[Tool observation string ({mb:.2f}MB, {lines} lines) masked to preserve context window. "
            f"Full string saved to: {folder}/{name}]\n</tool_output_masked>")


def degraded_text(media: Media, msg_id: str, j: int) -> str:
    """``BlobDegradationProcessor``: an inline blob as the line that replaces it (its file named after the node: a
    stand-in derived from the message and part, the tool's node id holding a random turn id); a file reference
    (no bytes, a name) as its URI line."""
    mime = media.mime or media.kind  # as :mod:`.gemini_cli_history` sends it
    if not media.data and media.name:
        return (f"[File Reference ({mime}) degraded to text to preserve context window. Original URI: "
                f"{media.name}]")
    folder = f"{PROJECT_TEMP_DIR}/degraded-blobs/session-{safe_name(SESSION_ID)}"
    ext = mime.split("/")[1] if "/" in mime and mime.split("/")[1] else "bin"
    stable = hashlib.sha256(f"{msg_id}:{j}".encode()).hexdigest()[:32]
    mb = len(media.data) / 1024 / 1024
    return (f"[Multi-Modal Blob ({mime}, {mb:.2f}MB) degraded to text to preserve context window. Saved to: "
            f"{folder}/blob_{stable}.{ext}]")


def response_chars(p: ToolResult, shown: str | None) -> int:
    """``JSON.stringify(functionResponse.response).length`` of a tool result as the view renders it."""
    part = p if shown is None else ToolResult(p.call_id, p.name, shown, p.is_error)
    return js_len(stringify(response_of(part)))
