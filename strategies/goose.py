"""``compbench.strategies.goose`` — ``goose``: Goose's auto-compaction (the whole conversation summarized; the last user
text re-added).

Sources: block/goose ``crates/goose/src/context_mgmt/mod.rs`` at 331a842972378d64 (``compact_messages``,
``check_if_compaction_needed``, ``do_compact``, ``filter_tool_responses``,
``format_message_for_compacting``), ``crates/goose/src/prompts/compaction.md`` at 11453df8179021e3 and
``crates/goose/src/agents/agent.rs`` at 43025f8890d68643 (where compaction runs). The repository is over
the size a snapshot may have here, so the files were read one by one from a file index; the repository
has since moved to aaif-goose/goose, whose later versions keep this algorithm but ask for a structured
JSON summary rendered by a template, reword the continuation texts and add background summarization of
old tool call/result pairs (``GOOSE_TOOL_PAIR_SUMMARIZATION``), none of which is modelled here.

* When: at the start of a reply, i.e. when a new user prompt arrives (``reply``), if the last request's
  ``total_tokens`` (input + output; before any request, the visible messages counted) over the context
  limit is ``> GOOSE_AUTO_COMPACT_THRESHOLD`` (0.8; 0 or >= 1 disables it); and when the provider rejects a
  request as too long (``ContextLengthExceeded``), which compbench sees before the call: the view is
  over the input limit.
* The summary: every agent-visible message, each written ``[role]: ...`` (tool calls as
  ``tool_request(name): {json}``, results as ``tool_response: text``, thinking left out), joined by
  newlines into ``compaction.md`` as the *system* prompt, with one user message "Please summarize the
  conversation history provided in the system prompt.", sent to the fast model. When that request is
  itself too long, it is retried without 10%, 20%, 50%, then 100% of the tool-response messages, taken from
  the middle outwards; compbench picks the first attempt that fits the input limit, as the retries would
  (if none fits, Goose gives up the reply with an error and compbench leaves the view as it was).
* The new context: the summary as a user message, an assistant message with the continuation text
  ("...Just continue the conversation naturally..." when the preserved prompt was the last message,
  "...Continue calling tools as necessary..." in a tool loop, the manual text for ``/compact``), then the
  text of the most recent user message that has text and no tool content (not for a manual compaction).
  A message of text parts only is kept as it is; otherwise its text is re-added as a new message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.data.transcript import Media, Message, Reasoning, Text, ToolCall, ToolResult, Usage
from compbench.replay.session import Action, Compact, Entry, Insert, Keep, SessionView, Slot, SummaryRequest, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end

DEFAULT_COMPACTION_THRESHOLD = 0.8  # context_mgmt/mod.rs
REMOVAL_PERCENTAGES = (0, 10, 20, 50, 100)  # do_compact
SUMMARIZE_REQUEST = "Please summarize the conversation history provided in the system prompt."  # do_compact
CONVERSATION_CONTINUATION_TEXT = (
    "Your context was compacted. The previous message contains a summary of the conversation so far.\n"
    "Do not mention that you read a summary or that conversation summarization occurred.\n"
    "Just continue the conversation naturally based on the summarized context.")
TOOL_LOOP_CONTINUATION_TEXT = (
    "Your context was compacted. The previous message contains a summary of the conversation so far.\n"
    "Do not mention that you read a summary or that conversation summarization occurred.\n"
    "Continue calling tools as necessary to complete the task.")
MANUAL_COMPACT_CONTINUATION_TEXT = (
    "Your context was compacted at the user's request. The previous message contains a summary of the "
    "conversation so far.\nDo not mention that you read a summary or that conversation summarization occurred.\n"
    "Just continue the conversation naturally based on the summarized context.")
COMPACTION_TEMPLATE = """The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

**Conversation History:**
{{ messages }}

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes with file paths]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, error messages, or references needed to continue]
- [Or "(none)" if not applicable]

RULES:
- Keep each section concise but complete
- Preserve exact file paths, function names, and error messages
- Include code snippets only if they are critical for continuation
- This summary will be read by you (the LLM) to continue the session
- Do not include information that can be easily re-derived from files
"""  # prompts/compaction.md (minijinja, no escaping for .md)


@dataclass(frozen=True)
class GooseParams:
    threshold: float = param(DEFAULT_COMPACTION_THRESHOLD, "Compact when the last request's tokens over the window "
                                                           "exceed this (GOOSE_AUTO_COMPACT_THRESHOLD; 0 or >= 1 off).")
    removal_percentages: tuple[int, ...] = param(REMOVAL_PERCENTAGES, "Shares of tool responses dropped, middle "
                                                                      "out, on each retry of a too-long summary request.")


def format_message(m: Message) -> str:
    """``format_message_for_compacting``."""
    parts: list[str] = []
    for p in m.parts:
        if isinstance(p, Text):
            parts.append(p.text)
        elif isinstance(p, Media):
            parts.append(f"[image: {p.mime or p.kind}]")
        elif isinstance(p, ToolCall):
            try:
                args = json.dumps(json.loads(p.args), separators=(",", ":"), ensure_ascii=False)
            except ValueError:
                args = "<<invalid json>>"
            parts.append(f"tool_request({p.name}): {args}")
        elif isinstance(p, ToolResult):
            parts.append(f"tool_response: {p.output}")
        elif isinstance(p, Reasoning):
            continue
    role = "assistant" if m.role == "assistant" else "user"
    return f"[{role}]: " + "\n".join(parts) if parts else f"[{role}]: <empty message>"


def filter_tool_responses(messages: Sequence[Message], remove_percent: int) -> list[Message]:
    """``filter_tool_responses``: drop ``remove_percent``% (at least one) of the messages holding a tool
    response, alternately just before and just after the middle one."""
    if remove_percent == 0:
        return list(messages)
    tool_indices = [i for i, m in enumerate(messages) if any(isinstance(p, ToolResult) for p in m.parts)]
    if not tool_indices:
        return list(messages)
    num = max(len(tool_indices) * remove_percent // 100, 1)
    middle = len(tool_indices) // 2
    remove: set[int] = set()
    for i in range(num):
        offset = i // 2
        if i % 2 == 0:
            if middle > offset:
                remove.add(tool_indices[middle - offset - 1])
        elif middle + offset < len(tool_indices):
            remove.add(tool_indices[middle + offset])
    return [m for i, m in enumerate(messages) if i not in remove]


def has_text_only(e: Entry) -> bool:
    parts = e.message.parts
    return any(isinstance(p, Text) for p in parts) and not any(isinstance(p, (ToolCall, ToolResult)) for p in parts)


class Goose:
    name = "goose"

    def __init__(self, p: GooseParams) -> None:
        self.p = p
        self.seen = 0  # view positions already looked at for a new user prompt
        self.hopeless: tuple[int, str] | None = None  # (compactions, first message) when no attempt fitted

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.seen = len(s.entries)
        return ()

    def wake(self, s: SessionView) -> Wake:
        """It compacts at a new prompt (if over its threshold) or before a call over the input limit. The
        prompts it has not looked at are those since it was last asked: all of them joined after the
        previous question, which it is asked at."""
        return Wake(user=True, tokens=s.limits.input_limit + 1)

    def needs_compaction(self, s: SessionView) -> bool:
        """``check_if_compaction_needed``: ``total_tokens / context_limit > threshold``."""
        t = self.p.threshold
        if t <= 0.0 or t >= 1.0 or not s.limits.context_window:
            return False
        u = s.last_usage
        current = u.input + u.output if u is not None else sum(e.tokens for e in s.entries[head_end(s.entries):])
        return current / s.limits.context_window > t

    def before_step(self, s: SessionView) -> Sequence[Action]:
        entries = s.entries
        new_prompt = any(e.role == "user" and e.origin == "recorded" and has_text_only(e)
                         for e in entries[min(self.seen, len(entries)):])
        self.seen = len(entries)
        if new_prompt and self.needs_compaction(s):
            c = self.compact(s, "auto")
        elif s.context_tokens > s.limits.input_limit:
            c = self.compact(s, "context length exceeded")
        else:
            return ()
        return (c,) if c is not None else ()

    def manual(self, s: SessionView) -> Compact | None:
        return self.compact(s, "manual")

    def request(self, s: SessionView, messages: Sequence[Message]) -> SummaryRequest | None:
        """``do_compact``: the first attempt whose request fits the window."""
        user = Message("goose-summarize", "user", (Text(SUMMARIZE_REQUEST),))
        for k, percent in enumerate(self.p.removal_percentages):
            kept = filter_tool_responses(messages, percent)
            system = COMPACTION_TEMPLATE.replace("{{ messages }}", "\n".join(format_message(m) for m in kept))
            tokens = s.count(system) + s.counter.message_overhead + s.counter.message(user)
            if tokens <= s.limits.input_limit:
                return SummaryRequest(system, (user,), tuple(kept),
                                      meta={"model": "fast", "attempt": k + 1, "removed_percent": percent})
        return None

    def compact(self, s: SessionView, reason: str) -> Compact | None:
        entries = s.entries
        head = head_end(entries)
        body = entries[head:]
        manual = reason == "manual"
        preserved: Entry | None = None
        if not manual:
            preserved = next((e for e in reversed(body) if e.role == "user" and has_text_only(e)), None)
        most_recent = preserved is not None and preserved is body[-1]
        if self.hopeless == (s.compactions, body[0].id if body else ""):
            return None  # the view only grew since no attempt fitted: none fits now either
        request = self.request(s, [e.rendered() for e in body])
        if request is None:
            self.hopeless = (s.compactions, body[0].id if body else "")
            return None  # "context limit exceeded even after removing all tool responses": the reply ends
        text = MANUAL_COMPACT_CONTINUATION_TEXT if manual else \
            CONVERSATION_CONTINUATION_TEXT if most_recent else TOOL_LOOP_CONTINUATION_TEXT
        view: list[Slot] = [*(Keep(e.id) for e in entries[:head]),
                            Insert("user", with_summary=True, origin="summary"),
                            Insert("assistant", text, origin="synthetic")]
        if preserved is not None:
            if all(isinstance(p, Text) for p in preserved.message.parts) and not preserved.pruned:
                view.append(Keep(preserved.id))
            else:
                view.append(Insert("user", preserved.message.text, origin="synthetic"))
        return Compact(f"goose: {reason}", tuple(view), request, on_failure="unchanged",
                       meta={"preserved": preserved.id if preserved else None, **request.meta})


@strategy("goose", params=GooseParams,
          source="block/goose context_mgmt/mod.rs 331a8429, prompts/compaction.md 11453df8, agents/agent.rs 43025f88",
          summary="at a new prompt, last request > 0.8 of the window (or on overflow): everything summarized into a "
                  "user message + continuation note, the last user text re-added")
def goose(p: GooseParams) -> Goose:
    return Goose(p)
