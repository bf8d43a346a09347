"""``compbench.strategies.langchain_clear_tool_uses`` — ``langchain-clear-tool-uses``: LangChain's
``ContextEditingMiddleware`` with its default edit, ``ClearToolUsesEdit`` (langchain 1.5.0 on PyPI,
``langchain/agents/middleware/context_editing.py``), which "mirrors Anthropic's context editing" with the same
defaults.

Before every model call (``wrap_model_call``) the middleware deep-copies the request's messages (the
state is never edited, so every call starts again from the full history), counts them with
``count_tokens_approximately`` (chars / 4, + 3 per message; the system prompt and tools are not counted),
and when the count exceeds ``trigger`` (``tokens <= trigger`` returns) it clears every tool result but the
``keep`` newest (``keep`` counts all tool results, excluded tools' too): a result whose call is not in the
nearest AI message before it is skipped, an excluded tool's is skipped, the rest become ``placeholder``
("[cleared]"); with ``clear_tool_inputs`` the call's ``args`` become ``{}``. ``clear_at_least`` > 0 stops
clearing once the recount shows that many tokens reclaimed (LangChain's reading: Anthropic's docs say the
edit is not applied when it cannot reach the amount). As the count only grows with the history, the set
cleared from scratch each call only grows, so compbench's persistent prune is the same view; each new
clear breaks the prompt cache at the first newly cleared message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.sdk import Action, Entry, Message, Prune, SessionView, ToolCall, Usage, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.langchain import system_head
from compbench.strategies.langchain_messages import (
    CHARS_PER_TOKEN,
    EXTRA_TOKENS_PER_MESSAGE,
    LCMessage,
    entry_messages,
    message_chars,
)

TRIGGER = 100_000  # ClearToolUsesEdit.trigger
KEEP = 3  # ClearToolUsesEdit.keep
PLACEHOLDER = "[cleared]"  # context_editing.py: DEFAULT_TOOL_PLACEHOLDER
CLEARED_ARGS = "{}"  # _build_cleared_tool_input_message: updated_call["args"] = {}


@dataclass(frozen=True)
class LangChainClearToolUsesParams:
    """``ClearToolUsesEdit``'s fields, with the approximate token count (``token_count_method``)."""

    trigger: int = param(TRIGGER, "Clear when the approximate count of the messages exceeds this many tokens.")
    clear_at_least: int = param(0, "Stop clearing once this many tokens are reclaimed (0: clear all but keep).")
    keep: int = param(KEEP, "Newest tool results never cleared (counted over all tool results).")
    clear_tool_inputs: bool = param(False, "Also set the cleared calls' arguments to {}.")
    exclude_tools: tuple[str, ...] = param((), "Tool names whose results are never cleared.")
    placeholder: str = param(PLACEHOLDER, "Text a cleared tool result is replaced with.")


def _tokens(m: LCMessage) -> int:
    """One message's share of ``count_tokens_approximately`` (additive without usage scaling)."""
    return math.ceil(message_chars(m) / CHARS_PER_TOKEN) + int(EXTRA_TOKENS_PER_MESSAGE) + 85 * m.images


def recorded_tokens(m: Message) -> int:
    """A recorded message's share of the approximate count (the wake's weight)."""
    return sum(_tokens(x) for x in entry_messages(Entry(m, 0, ()), 0, {}, original=True))


class LangChainClearToolUses:
    """One instance per replay: what it has cleared (the view keeps it; the source recomputes it)."""

    name = "langchain-clear-tool-uses"

    def __init__(self, p: LangChainClearToolUsesParams) -> None:
        self.p = p
        self.cleared: set[tuple[str, int]] = set()
        self.cache: dict[int, tuple[object, list[LCMessage], int, int]] = {}
        # the last view's original messages, kept while the view grows and rebuilt from where the view diff
        # says it changed: the view, its revision, the head, each entry's first message and the tokens before it
        self._view: tuple[SessionView, int, int] | None = None
        self._out: list[LCMessage] = []
        self._starts: list[int] = []
        self._before: list[int] = []
        self._tokens = 0

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """The recorded messages' approximate count passes the trigger: each new message adds its own."""
        return Wake(grown=(recorded_tokens, self.p.trigger + 1 - self.original(s)[1]))

    def original(self, s: SessionView) -> tuple[list[LCMessage], int]:
        """The state's messages as recorded (the request copy the edit starts from) and their count (the
        list is the instance's own: read it, do not keep or change it). Built incrementally: kept while the
        view only grows, and from the first position the view diff names after an action."""
        entries = s.entries
        head = system_head(s)
        c = self._view
        if c is not None and c[0] is s and c[2] == head:
            start = min(s.unchanged_below(c[1]), len(self._starts))
        else:
            start = 0
        start = max(start, head) - head  # the entries from ``head + start`` on are built again
        out, starts, before = self._out, self._starts, self._before
        if start < len(starts):
            del out[starts[start]:]
            self._tokens = before[start]
            del starts[start:], before[start:]
        tokens = self._tokens
        for k in range(head + len(starts), len(entries)):
            e = entries[k]
            hit = self.cache.get(id(e.message))
            if hit is None or hit[0] is not e.message or hit[2] != k:
                msgs = entry_messages(e, k, {}, original=True)
                hit = (e.message, msgs, k, sum(_tokens(m) for m in msgs))
                self.cache[id(e.message)] = hit
            starts.append(len(out))
            before.append(tokens)
            out.extend(hit[1])
            tokens += hit[3]
        self._tokens = tokens
        self._view = (s, s.revision, head)
        return out, tokens

    def before_step(self, s: SessionView) -> Sequence[Action]:
        messages, tokens = self.original(s)
        if tokens <= self.p.trigger:
            return ()
        tools = [i for i, m in enumerate(messages) if m.type == "tool"]
        candidates = [] if self.p.keep >= len(tools) else tools[:-self.p.keep] if self.p.keep else tools
        excluded = set(self.p.exclude_tools)
        targets: list[tuple[str, int, str]] = []
        reclaimed = 0
        edited_ai: dict[int, LCMessage] = {}
        tally = self.p.clear_at_least > 0  # what the clears reclaim matters only with clear_at_least
        for i in candidates:
            tm = messages[i]
            if not tally and (s.entries[tm.entry].id, tm.part) in self.cleared:
                continue  # cleared at an earlier step: nothing new (its call's arguments were cleared with it)
            ai = next((j for j in range(i - 1, -1, -1) if messages[j].type == "ai"), None)
            if ai is None:
                continue
            call = next((c for c in messages[ai].tool_calls if c.get("id") == tm.tool_call_id), None)
            if call is None or (tm.name or str(call["name"])) in excluded:
                continue
            e = s.entries[tm.entry]
            targets.append((e.id, tm.part, self.p.placeholder))
            if tally:
                reclaimed += _tokens(tm) - _tokens(replace(tm, content=self.p.placeholder))
            if self.p.clear_tool_inputs:
                before = edited_ai.get(ai, messages[ai])
                calls = tuple({**c, "args": {}} if c.get("id") == tm.tool_call_id else c for c in before.tool_calls)
                edited_ai[ai] = replace(before, tool_calls=calls)
                if tally:
                    reclaimed += _tokens(before) - _tokens(edited_ai[ai])
                ai_entry = s.entries[messages[ai].entry]
                part = next(j for j, p in enumerate(ai_entry.message.parts)
                            if isinstance(p, ToolCall) and p.id == tm.tool_call_id)
                targets.append((ai_entry.id, part, CLEARED_ARGS))
            if self.p.clear_at_least > 0 and reclaimed >= self.p.clear_at_least:
                break
        new = [t for t in targets if (t[0], t[1]) not in self.cleared]
        self.cleared.update((m, j) for m, j, _ in new)
        return (Prune(tuple(new), "clear_tool_uses"),) if new else ()


@strategy("langchain-clear-tool-uses", params=LangChainClearToolUsesParams,
          upstream="langchain-ai/langchain ContextEditingMiddleware + ClearToolUsesEdit (langchain 1.5.0)",
          summary="before each call, over 100k approximate tokens, clear all but the 3 newest tool results")
def langchain_clear_tool_uses(p: LangChainClearToolUsesParams) -> LangChainClearToolUses:
    return LangChainClearToolUses(p)
