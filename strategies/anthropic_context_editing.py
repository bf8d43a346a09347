"""``compbench.strategies.anthropic_context_editing`` — ``anthropic-context-editing``: the Messages API's server-side
context editing (beta ``context-management-2025-06-27``): ``clear_tool_uses_20250919`` and
``clear_thinking_20251015``.

Source: the Claude API docs page "Context editing"
(platform.claude.com/docs/en/build-with-claude/context-editing), read as mirrored on 2026-09 (the
Opus 5.5 edition; the 2026-02-07 edition has the same options table), and the SDKs' type docs
(``BetaClearToolUses20250919Edit``: ``clear_tool_inputs`` is a bool or a list of tool names).

What the docs say, and how it is modelled:

- The edit is applied *server-side, before the prompt reaches Claude*; the client keeps sending the full,
  unedited history. So each request is edited afresh from the original prompt: the trigger compares the
  original input tokens (``original_input_tokens`` in the docs' count_tokens example) with ``trigger``
  ("Once the prompt exceeds this threshold": ``>``), or the number of tool uses with a ``tool_uses``
  trigger. compbench's view keeps what was cleared, so the original size is the view's plus what the
  strategy cleared; the cleared set only grows as the history grows, so a persistent prune is the same.
- When it fires, the oldest tool results are cleared, keeping the ``keep`` most recent tool uses (3);
  ``exclude_tools`` are never cleared. The docs do not say whether excluded uses count towards ``keep``;
  as LangChain's ``ClearToolUsesEdit`` (which "mirrors Anthropic's defaults") they do.
- ``clear_at_least``: "If the API can't clear at least the specified amount, the strategy will not be
  applied" (tokens of the cleared results, and of the inputs when those are cleared too).
- ``clear_tool_inputs`` also clears the tool call's parameters; the docs give no replacement text, so a
  cleared input becomes ``{}`` (what LangChain's mirror writes).
- The placeholder: the docs say only "placeholder text indicating to Claude that it was removed"; its
  exact wording is not published (nor in the SDKs). The default is LangChain's mirror's ``[cleared]``;
  ``placeholder`` changes it.
- Cache: "Invalidates cached prompt prefixes when content is cleared": a prune marks the first cleared
  position, the loop's cache model re-writes everything after it.
- ``clear_thinking_20251015`` keeps the thinking of the last ``keep`` assistant turns (``thinking_turns``;
  0 = ``"all"``); listed first in ``edits`` as the API requires. Readable thinking is context only under
  the Claude token correction (``--token-correction auto`` on a Claude transcript: the fitted rate at
  which recorded usage shows thinking resent); there clearing it saves that context, without the
  correction it saves nothing. Either way it changes the cache: "when thinking blocks are cleared, the
  cache is invalidated at the point where clearing occurs", and the prune of a reasoning part marks that
  point. The default
  keep is model-specific today (all turns on Opus 4.5+ / Sonnet 4.6+, the last turn on earlier models);
  1 is the original (2025-10) default. A turn is an *assistant turn*: everything the assistant does between
  two user prompts, the whole tool-use loop ("a tool-use loop is one assistant turn"; "an assistant turn may
  include multiple content blocks, e.g. when using tools, and multiple thinking blocks": the Context editing
  page; platform.claude.com/docs/build-with-claude/thinking-tool-workflows), so every assistant message from one prompt to the next is one turn; a user message carrying only
  tool results does not start one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compbench.errors import UsageError
from compbench.sdk import NEXT_QUESTION, Action, Part, Prune, Reasoning, SessionView, ToolCall, ToolResult, Usage, Wake
from compbench.sdk.registry import param, strategy

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
TRIGGER_INPUT_TOKENS = 100_000  # docs: trigger default "100,000 input tokens"
KEEP_TOOL_USES = 3  # docs: keep default "3 tool uses"
KEEP_THINKING_TURNS = 1  # docs (2025-10 edition): keep {type: "thinking_turns", value: 1}
PLACEHOLDER = "[cleared]"  # not published by Anthropic; LangChain's ClearToolUsesEdit DEFAULT_TOOL_PLACEHOLDER
CLEARED_INPUT = "{}"  # not published by Anthropic; LangChain's mirror sets the call's args to {}

Target = tuple[str, int, Part, str]  # message id, part index, the part, its replacement


@dataclass(frozen=True)
class AnthropicContextEditingParams:
    """The API's edit parameters, flattened: ``trigger`` = {type: trigger_type, value: trigger_value}."""

    edits: tuple[str, ...] = param((CLEAR_TOOL_USES,), "Edits applied, in the API's order (clear_thinking_20251015 "
                                   "must come first): clear_tool_uses_20250919 and/or clear_thinking_20251015.")
    trigger_type: Literal["input_tokens", "tool_uses"] = param(
        "input_tokens", "What the trigger counts: the original prompt's input tokens, or its tool uses.")
    trigger_value: int = param(TRIGGER_INPUT_TOKENS, "Clearing starts once the original prompt exceeds this many "
                               "input tokens (or tool uses).", lo=1)
    keep: int = param(KEEP_TOOL_USES, "Most recent tool uses kept uncleared (keep: {type: tool_uses}).")
    clear_at_least: int = param(0, "Input tokens a clear must reclaim or the edit is not applied (0: unset).")
    exclude_tools: tuple[str, ...] = param((), "Tool names whose uses and results are never cleared.")
    clear_tool_inputs: bool = param(False, "Also clear the parameters of every cleared tool call.")
    clear_tool_inputs_for: tuple[str, ...] = param((), "The list form of clear_tool_inputs: clear the parameters "
                                                   "of these tools' calls only.")
    placeholder: str = param(PLACEHOLDER, "Text a cleared tool result is replaced with (Anthropic does not "
                             "publish its wording).")
    keep_thinking_turns: int = param(KEEP_THINKING_TURNS, "clear_thinking_20251015: assistant turns whose "
                                     "thinking is kept (0 = \"all\").")

    def __post_init__(self) -> None:
        unknown = [e for e in self.edits if e not in (CLEAR_TOOL_USES, CLEAR_THINKING)]
        if unknown or not self.edits:
            raise UsageError(f"anthropic-context-editing: edits must name {CLEAR_TOOL_USES} and/or {CLEAR_THINKING}, "
                             f"got {'|'.join(self.edits) or 'nothing'}")
        if CLEAR_THINKING in self.edits and self.edits[0] != CLEAR_THINKING:
            raise UsageError(f"anthropic-context-editing: {CLEAR_THINKING} must be listed first in edits (API rule)")


class AnthropicContextEditing:
    """Per replay: the view's tool results, calls and thinking turns in order (scanned once as the view
    grows), and what the clears took out (the original prompt's size is the view's plus that)."""

    name = "anthropic-context-editing"

    def __init__(self, p: AnthropicContextEditingParams) -> None:
        self.p = p
        self.cleared_delta = 0
        self.scanned = 0
        self.results: list[tuple[str, int, ToolResult]] = []
        self.calls: dict[str, tuple[str, int, ToolCall]] = {}
        self.thinking: list[list[tuple[str, tuple[tuple[int, Part], ...]]]] = []  # per assistant turn
        self.turn_open = False  # the last assistant turn may still grow (no user prompt since)
        self.cleared: set[tuple[str, int]] = set()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Clearing tool uses starts once the original prompt (the view plus what was cleared) passes the
        trigger. Clearing thinking, or a trigger on tool uses, is asked every question."""
        if CLEAR_THINKING in self.p.edits or self.p.trigger_type != "input_tokens":
            return NEXT_QUESTION
        return Wake(tokens=self.p.trigger_value - self.cleared_delta + 1)

    def _scan(self, s: SessionView) -> None:
        entries = s.entries
        if len(entries) < self.scanned:  # someone else rebuilt the view: start over
            self.scanned, self.results, self.calls, self.thinking, self.cleared = 0, [], {}, [], set()
            self.turn_open = False
        for e in entries[self.scanned:]:
            for j, p in enumerate(e.message.parts):
                if isinstance(p, ToolResult):
                    self.results.append((e.id, j, p))
                elif isinstance(p, ToolCall):
                    self.calls[p.id] = (e.id, j, p)
            if e.role == "assistant":
                if not self.turn_open:
                    self.thinking.append([])
                    self.turn_open = True
                parts = tuple((j, p) for j, p in enumerate(e.message.parts) if isinstance(p, Reasoning))
                if parts:
                    self.thinking[-1].append((e.id, parts))
            elif e.role == "user" and not all(isinstance(p, ToolResult) for p in e.message.parts):
                self.turn_open = False  # a prompt: the next assistant message starts a new turn
        self.scanned = len(entries)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        self._scan(s)
        actions: list[Action] = []
        for edit in self.p.edits:
            targets = self.thinking_targets(s) if edit == CLEAR_THINKING else self.tool_use_targets(s)
            if targets:
                self.cleared.update((m, j) for m, j, _, _ in targets)
                self.cleared_delta += sum(_reclaimed(s, p, text) for _, _, p, text in targets)
                actions.append(Prune(tuple((m, j, text) for m, j, _, text in targets), edit))
        return actions

    # --- clear_tool_uses_20250919 ---------------------------------------------------------------------------

    def tool_use_targets(self, s: SessionView) -> list[Target]:
        """Every tool result but the ``keep`` most recent (and excluded tools'), when the original prompt
        is over the trigger; only the ones not cleared yet are returned."""
        if self.p.trigger_type == "tool_uses":
            fired = len(self.results) > self.p.trigger_value
        else:
            fired = s.context_tokens + self.cleared_delta > self.p.trigger_value
        if not fired:
            return []
        candidates = self.results[:-self.p.keep] if self.p.keep else self.results
        excluded = set(self.p.exclude_tools)
        chosen: list[Target] = []
        for msg_id, j, r in candidates:
            call = self.calls.get(r.call_id)
            tool = r.name or (call[2].name if call else "")
            if tool in excluded:
                continue
            chosen.append((msg_id, j, r, self.p.placeholder))
            if call and (self.p.clear_tool_inputs or tool in self.p.clear_tool_inputs_for):
                chosen.append((call[0], call[1], call[2], CLEARED_INPUT))
        if self.p.clear_at_least and sum(_reclaimed(s, p, text) for _, _, p, text in chosen) < self.p.clear_at_least:
            return []
        return [t for t in chosen if (t[0], t[1]) not in self.cleared]

    # --- clear_thinking_20251015 ----------------------------------------------------------------------------

    def thinking_targets(self, s: SessionView) -> list[Target]:
        """Reasoning parts of all but the last ``keep_thinking_turns`` assistant turns with thinking (a turn:
        every assistant message between two user prompts)."""
        if self.p.keep_thinking_turns == 0:
            return []
        old = [turn for turn in self.thinking if turn][:-self.p.keep_thinking_turns]
        return [(m, j, p, "") for turn in old for m, parts in turn for j, p in parts if (m, j) not in self.cleared]


def _reclaimed(s: SessionView, p: Part, text: str) -> int:
    """Tokens clearing this part takes out of the original prompt."""
    return s.counter.part(p) - (s.count(p.name + text) if isinstance(p, ToolCall) else s.count(text))


@strategy("anthropic-context-editing", params=AnthropicContextEditingParams,
          upstream="Claude API docs, Context editing (clear_tool_uses_20250919, clear_thinking_20251015; 2026-09)",
          summary="server-side: over 100k input tokens, clear all but the 3 newest tool results; never summarizes",
          presets={"thinking": {"edits": (CLEAR_THINKING, CLEAR_TOOL_USES)},
                   "docs-example": {"trigger_value": 30_000, "keep": 3, "clear_at_least": 5_000,
                                    "exclude_tools": ("web_search",)}})
def anthropic_context_editing(p: AnthropicContextEditingParams) -> AnthropicContextEditing:
    return AnthropicContextEditing(p)
