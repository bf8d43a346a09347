"""``compbench.strategies.langchain_messages`` — LangChain's view of a conversation, for the ``langchain``,
``langchain-clear-tool-uses`` and ``deepagents`` strategies: messages as LangChain builds them,
``count_tokens_approximately``, ``trim_messages(strategy="last")`` and ``get_buffer_string(format="xml")``, as
langchain-core 1.8.2 (PyPI; ``langchain_core/messages/utils.py``) implements them.

A compbench message maps to LangChain messages the way an OpenAI-style chat model returns them: a user
message is a ``HumanMessage``, a system message a ``SystemMessage``, an assistant message one ``AIMessage``
whose ``content`` is its text and whose ``tool_calls`` are ``{'name', 'args', 'id', 'type': 'tool_call'}``
dicts, and every tool result its own ``ToolMessage``. Reasoning is not content (compbench never counts
it); an image is a content block (85 tokens, ``tokens_per_image``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from compbench.sdk import Entry, Media, Message, Part, Text, ToolCall, ToolResult

LC_TYPES = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}
OPENAI_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
CHARS_PER_TOKEN = 4.0  # count_tokens_approximately: chars_per_token default
ANTHROPIC_CHARS_PER_TOKEN = 3.3  # summarization._get_approximate_token_counter for anthropic-chat models
EXTRA_TOKENS_PER_MESSAGE = 3.0  # count_tokens_approximately: extra_tokens_per_message default
TOKENS_PER_IMAGE = 85  # count_tokens_approximately: tokens_per_image default
SCALE_CAP = 1.25  # count_tokens_approximately: usage-metadata scaling clamped to [1.0, 1.25]


@dataclass(frozen=True, slots=True)
class LCMessage:
    """One LangChain message. ``entry`` is the view position it came from; ``total_tokens`` is an AI
    message's ``usage_metadata["total_tokens"]`` (None: no usage reported)."""

    type: str  # human | ai | system | tool
    content: str
    entry: int
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str = ""
    name: str = ""
    images: int = 0
    total_tokens: int | None = None
    part: int = -1  # a ToolMessage's tool-result part in its entry


def _args(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def lc_messages(entries: Sequence[Entry], start: int = 0, usage: dict[str, int] | None = None) -> list[LCMessage]:
    """The LangChain messages of ``entries[start:]`` as the model sees them (placeholders applied)."""
    out: list[LCMessage] = []
    for k in range(start, len(entries)):
        out.extend(entry_messages(entries[k], k, usage or {}))
    return out


def entry_messages(e: Entry, k: int, usage: dict[str, int], original: bool = False) -> list[LCMessage]:
    """One view entry (at position ``k``) as LangChain messages: as the model sees it, or as recorded
    (``original``: what a middleware that edits only its request copy finds in the state)."""
    m = e.message if original else e.rendered()
    kind = LC_TYPES[m.role]
    images = sum(1 for p in m.parts if isinstance(p, Media))
    if kind == "ai":
        calls = tuple({"name": p.name, "args": _args(p.args), "id": p.id, "type": "tool_call"}
                      for p in m.parts if isinstance(p, ToolCall))
        return [LCMessage("ai", m.text, k, calls, images=images, total_tokens=usage.get(e.id))]
    if not any(isinstance(p, ToolResult) for p in m.parts):
        return [LCMessage(kind, m.text, k, images=images)]
    out = [LCMessage("tool", r.output, k, tool_call_id=r.call_id, name=r.name, part=j)
           for j, r in enumerate(m.parts) if isinstance(r, ToolResult)]
    text = "\n".join(p.text for p in m.parts if isinstance(p, Text))
    if text or images:
        out.append(LCMessage("human" if kind == "tool" else kind, text, k, images=images))
    return out


def source_messages(entries: Sequence[Entry], messages: Sequence[LCMessage]) -> tuple[Message, ...]:
    """The compbench messages a summarizer is shown for these LangChain messages: recorded parts as they
    are (so facts keep their provenance), a message trimmed to its last lines as new text."""
    out: list[Message] = []
    k = 0
    while k < len(messages):
        entry = messages[k].entry
        orig = entries[entry].rendered()
        parts: list[Part] = []
        while k < len(messages) and messages[k].entry == entry:
            m = messages[k]
            if m.type == "tool":
                r = orig.parts[m.part]
                assert isinstance(r, ToolResult)
                parts.append(r if r.output == m.content else replace(r, output=m.content))
            else:
                calls = {str(tc.get("id")): tc.get("args") for tc in m.tool_calls}
                own = [replace(p, args=json.dumps(calls[p.id], ensure_ascii=False))
                       if isinstance(p, ToolCall) and p.id in calls and _args(p.args) != calls[p.id] else p
                       for p in orig.parts if not isinstance(p, ToolResult)]
                text = "\n".join(p.text for p in own if isinstance(p, Text))
                if text == m.content:
                    parts.extend(own)
                else:
                    parts.append(Text(m.content))
                    parts.extend(p for p in own if not isinstance(p, Text))
            k += 1
        out.append(Message(orig.id, orig.role, tuple(parts)))
    return tuple(out)


def message_chars(m: LCMessage, count_name: bool = True) -> int:
    """The characters ``count_tokens_approximately`` counts for one message (images apart)."""
    chars = len(m.content) + len(OPENAI_ROLES[m.type])
    if m.type == "ai" and m.tool_calls:
        chars += len(repr(list(m.tool_calls)))
    if m.type == "tool":
        chars += len(m.tool_call_id)
    if m.name and count_name:
        chars += len(m.name)
    return chars


def count_tokens_approximately(messages: Sequence[LCMessage], *, chars_per_token: float = CHARS_PER_TOKEN,
                               extra_tokens_per_message: float = EXTRA_TOKENS_PER_MESSAGE,
                               use_usage_metadata_scaling: bool = False, prefix_tokens: int = 0,
                               memo: dict[int, tuple[LCMessage, float]] | None = None) -> int:
    """langchain-core's ``count_tokens_approximately``: per message ceil(chars / chars_per_token) + images
    + extra; scaled by the most recent AI message's reported total over the count up to it (clamped to
    [1, 1.25]) when asked. ``prefix_tokens`` stands for the ``tools`` it is given (counted first);
    ``memo`` (keyed by message identity, for one chars_per_token) saves recounting a message."""
    total = float(prefix_tokens)
    last_total: int | None = None
    at_last = 0.0
    for m in messages:
        hit = memo.get(id(m)) if memo is not None else None
        if hit is not None and hit[0] is m:
            total += hit[1]
        else:
            own = TOKENS_PER_IMAGE * m.images + math.ceil(message_chars(m) / chars_per_token) + extra_tokens_per_message
            if memo is not None:
                memo[id(m)] = (m, own)
            total += own
        if use_usage_metadata_scaling and m.type == "ai" and m.total_tokens is not None:
            last_total, at_last = m.total_tokens, total
    if use_usage_metadata_scaling and len(messages) > 1 and last_total is not None and at_last > 0:
        total *= min(SCALE_CAP, max(1.0, last_total / at_last))
    return math.ceil(total)


Counter = Callable[[Sequence[LCMessage]], int]


def _split_lines(text: str) -> list[str]:
    """``_default_text_splitter``: lines, each keeping its newline."""
    splits = text.split("\n")
    return [s + "\n" for s in splits[:-1]] + splits[-1:]


def _first_max_tokens(messages: list[LCMessage], max_tokens: int, counter: Counter, partial_last: bool,
                      end_on: str | None) -> list[LCMessage]:
    """``_first_max_tokens`` for string contents (``partial_strategy`` "last" or none)."""
    if not messages:
        return messages
    if counter(messages) <= max_tokens:
        if end_on:
            while messages and messages[-1].type != end_on:
                messages.pop()
        return messages
    left, right = 0, len(messages)
    for _ in range(len(messages).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if counter(messages[:mid]) <= max_tokens:
            left = mid
        else:
            right = mid - 1
    idx = left
    if partial_last and idx < len(messages) and messages[idx].content:
        excluded = messages[idx]
        splits = list(reversed(_split_lines(excluded.content)))
        base = counter(messages[:idx])
        lo, hi = 0, len(splits)
        for _ in range(len(splits).bit_length()):
            if lo >= hi:
                break
            mid = (lo + hi + 1) // 2
            if base + counter([replace(excluded, content="".join(splits[:mid]))]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        if lo > 0:
            messages = [*messages[:idx], replace(excluded, content="".join(reversed(splits[:lo])))]
            idx += 1
    if end_on:
        for _ in range(idx):
            if idx > 0 and messages[idx - 1].type != end_on:
                idx -= 1
            else:
                break
    return messages[:idx]


def trim_last(messages: Sequence[LCMessage], max_tokens: int, counter: Counter, *, allow_partial: bool,
              start_on: str | None, include_system: bool) -> list[LCMessage]:
    """``trim_messages(strategy="last", end_on=None)``: the newest messages within ``max_tokens``, a
    partial one (its last lines) allowed, starting on ``start_on``, a leading system message kept."""
    msgs = list(messages)
    if not msgs:
        return []
    system = msgs[0] if include_system and msgs[0].type == "system" else None
    if system is not None:
        msgs = msgs[1:]
    remaining = max(0, max_tokens - counter([system])) if system is not None else max_tokens
    kept = _first_max_tokens(msgs[::-1], remaining, counter, allow_partial, start_on)[::-1]
    return [system, *kept] if system is not None else kept


def buffer_string_xml(messages: Sequence[LCMessage]) -> str:
    """``get_buffer_string(messages, format="xml")`` for string contents."""
    out: list[str] = []
    for m in messages:
        kind = quoteattr(m.type)
        content = [escape(m.content)] if m.content else []
        if m.type == "ai" and m.tool_calls:
            parts = [f"<message type={kind}>"]
            if content:
                parts.append(f"  <content>{' '.join(content)}</content>")
            for tc in m.tool_calls:
                tc_id = str(tc.get("id") or "")
                tc_id = tc_id if len(tc_id) <= 64 else tc_id[:64] + "..."
                args = escape(json.dumps(tc.get("args", {}), ensure_ascii=False))
                parts.append(f"  <tool_call id={quoteattr(tc_id)} name={quoteattr(str(tc.get('name') or ''))}>"
                             f"{args}</tool_call>")
            parts.append("</message>")
            out.append("\n".join(parts))
        else:
            out.append(f"<message type={kind}>{' '.join(content)}</message>")
    return "\n".join(out)
