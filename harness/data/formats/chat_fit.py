"""``compbench.data.formats.chat_fit`` — Does a message fit the Chat Completions shape as a whole? Other APIs'
messages look alike at the top (a string ``role``): Gemini's ``{role, parts}``, Anthropic's ``content`` blocks
(Cline's ``api_conversation_history.json``), whose tool calls and results the chat reader would drop. The
generic reader (:mod:`.openai_chat`) claims a file only when every message fits, refuses such a message even
when the format is forced, and says how far a file it does not claim is from it (``misfit``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from compbench.data.formats.detect import Misfit

NAME = "openai"
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result"})
UNFIT = {  # why a message is not a chat message: (said of one, said of many)
    "object": ("is not an object", "are not objects"),
    "role": ("has no string 'role'", "have no string `role`"),
    "parts": ("has 'parts' where a chat message has 'content' (a Gemini Content)",
              "have `parts` where it expects `content` (Gemini Content)"),
    "blocks": ("holds Anthropic content blocks (tool_use, tool_result) where a chat message has content parts",
               "hold Anthropic content blocks (tool_use, tool_result) where it expects chat content parts"),
}


def unfit(m: Any) -> str | None:
    """Why one message is not a Chat Completions message: a key of :data:`UNFIT`, or None."""
    if not isinstance(m, dict):
        return "object"
    if not isinstance(m.get("role"), str):
        return "role"
    if "parts" in m and "content" not in m:
        return "parts"
    content = m.get("content")
    if isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("type"), str)
                                         and p["type"] in ANTHROPIC_BLOCKS for p in content):
        return "blocks"
    return None


def misfit(doc: Any) -> Misfit | None:
    """A list of messages (a document, or conversations' ``messages``), most of them chat-shaped at the top
    (a string role): how many do not fit, and the most common reason."""
    layout = "a list of chat messages"
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        doc, layout = doc["messages"], "a chat conversation"
    elif isinstance(doc, list) and doc and all(isinstance(r, dict) and isinstance(r.get("messages"), list)
                                               for r in doc):
        doc, layout = [m for r in doc for m in r["messages"]], "chat JSONL"
    if not isinstance(doc, list) or not doc or not any(isinstance(m, dict) and isinstance(m.get("role"), str)
                                                       for m in doc):
        return None
    why = Counter(w for w in map(unfit, doc) if w is not None)
    if not why:
        return None
    return Misfit(NAME, layout, sum(why.values()), len(doc), f"messages {UNFIT[why.most_common(1)[0][0]][1]}")
