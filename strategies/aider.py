"""``compbench.strategies.aider`` — ``aider``: aider's chat-history summary (a small token budget, the head summarized
by the weak model).

Source: Aider-AI/aider at 5dc9490bb35f, read in full: ``aider/history.py`` (``ChatSummary``),
``aider/models.py`` (``max_chat_history_tokens``), ``aider/prompts.py`` (``summarize``,
``summary_prefix``) and ``aider/coders/base_coder.py`` (``summarize_start`` / ``summarize_worker`` /
``summarize_end``, ``move_back_cur_messages``).

* Budget: ``max_chat_history_tokens = min(max(max_input_tokens / 16, 1024), 8192)``.
* When: after an exchange, aider moves the current messages into its history (``done_messages``) and, if
  the history's tokens exceed the budget, summarizes it in a background thread that is joined before the
  next request. compbench runs it after every step (``after_step``): aider moves the messages after a reply
  that edited files, compbench has no notion of edits and treats every reply as the end of an exchange.
* How (``summarize_real``): with more than 4 messages, a tail is kept whose tokens stay under half the
  budget (walking back while ``tail + next < budget // 2``), moved back so the head ends with an assistant
  message; the head, cut to what fits the weak model's input limit minus 512 (the rest of the head is
  dropped), is summarized into one user message ``summary_prefix + summary``. If summary + tail are still
  >= the budget, the same is done again on [summary, tail] one level deeper (``after_compaction``, before
  anything else happens, as aider does it in one go), up to depth 3; beyond that, or with <= 4 messages,
  everything is summarized. An assistant "Ok." follows when the result does not end with an assistant
  message.
* The request: system ``prompts.summarize``, one user message of ``# USER`` / ``# ASSISTANT`` sections;
  it goes to the weak model first (then the main model).
* Failure: aider catches the error and, its summarized copy still empty, replaces the history with it:
  the whole history is gone (``fallback``).

aider's history holds only user and assistant text: tool calls and results are not part of it (aider
re-sends the files in the chat fresh on each request). compbench maps every message into that history
as aider would hold a command's output it added to the chat: ``tool`` and non-leading ``system``
messages are user messages, and a message's text is its text parts, its tool calls written as
``name(args)`` lines and its tool results' outputs. Leading system messages stay (aider's system prompt).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.data.transcript import Message, Text, ToolCall, ToolResult, Usage
from compbench.replay.session import Action, Compact, Entry, Insert, Keep, SessionView, Slot, SummaryRequest, Wake
from compbench.sdk import CompactionEvent
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end

SUMMARIZE = """*Briefly* summarize this partial conversation about programming.
Include less detail about older parts and more detail about the most recent messages.
Start a new paragraph every time the topic changes!

This is only part of a longer conversation so *DO NOT* conclude the summary with language like "Finally, ...". Because the conversation continues after the summary.
The summary *MUST* include the function names, libraries, packages that are being discussed.
The summary *MUST* include the filenames that are being referenced by the assistant inside the ```...``` fenced code blocks!
The summaries *MUST NOT* include ```...``` fenced code blocks!

Phrase the summary with the USER in first person, telling the ASSISTANT about the conversation.
Write *as* the user.
The user should refer to the assistant as *you*.
Start the summary with "I asked you...".
"""  # aider/prompts.py summarize
SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"  # aider/prompts.py summary_prefix
OK = "Ok."  # ChatSummary.summarize
MIN_BUDGET, MAX_BUDGET, BUDGET_DIVISOR = 1_024, 8_192, 16  # models.py max_chat_history_tokens
MIN_SPLIT = 4  # history.py summarize_real
MAX_DEPTH = 3  # history.py: depth > 3 summarizes everything
INPUT_RESERVE = 512  # history.py: "reserve buffer for safety"


@dataclass(frozen=True)
class AiderParams:
    max_chat_history_tokens: float = param(0.0, "The history budget; 0 computes aider's min(max(max_input / 16, "
                                                "1024), 8192).")
    weak_max_input: int = param(0, "The weak model's input limit for the summarized head (minus 512); 0 uses the "
                                   "run's input limit.")


def aider_content(m: Message) -> str:
    """A message as a plain ``content`` string (compbench's mapping; see the module doc)."""
    lines: list[str] = []
    for p in m.parts:
        if isinstance(p, Text):
            lines.append(p.text)
        elif isinstance(p, ToolCall):
            lines.append(f"{p.name}({p.args})")
        elif isinstance(p, ToolResult):
            lines.append(p.output)
    return "\n".join(lines)


def summarize_all_content(messages: Sequence[Message]) -> str:
    """``summarize_all``: ``# USER`` / ``# ASSISTANT`` sections, each ending with a newline."""
    content = ""
    for m in messages:
        content += f"# {'ASSISTANT' if m.role == 'assistant' else 'USER'}\n" + aider_content(m)
        if not content.endswith("\n"):
            content += "\n"
    return content


@dataclass(frozen=True)
class Level:
    """A summarize_real level under way: its depth, the tail it kept, the messages after the history."""

    depth: int
    tail: tuple[str, ...]
    cur: tuple[str, ...]


class Aider:
    name = "aider"

    def __init__(self, p: AiderParams) -> None:
        self.p = p
        self.level: Level | None = None

    def budget(self, s: SessionView) -> float:
        if self.p.max_chat_history_tokens:
            return self.p.max_chat_history_tokens
        return min(max(s.limits.input_limit / BUDGET_DIVISOR, MIN_BUDGET), MAX_BUDGET)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """The history after the system messages is at most the view: it passes the budget only once the
        context (view + system overhead) does."""
        return Wake(tokens=s.system_tokens + math.floor(self.budget(s)) + 1)

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        """``move_back_cur_messages`` then ``summarize_start``: is the history too big?"""
        entries = s.entries
        done = list(entries[head_end(entries):])
        if sum(e.tokens for e in done) <= self.budget(s):
            return ()
        action = self.summarize(s, done, (), 0)
        return (action,) if action is not None else ()

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
        """The next level of ``summarize_real`` when summary + tail are not under the budget."""
        level, self.level = self.level, None
        if level is None or not event.ok:
            return ()
        entries = s.entries
        head = head_end(entries)
        summary = entries[head]
        by_id = {e.id: e for e in entries}
        tail = [by_id[i] for i in level.tail]
        if summary.tokens + sum(e.tokens for e in tail) < self.budget(s):
            return ()
        action = self.summarize(s, [summary, *tail], level.cur, level.depth + 1)
        return (action,) if action is not None else ()

    def summarize(self, s: SessionView, messages: list[Entry], cur: Sequence[str], depth: int) -> Compact | None:
        """``summarize_real`` at ``depth``: which head is summarized and which tail is kept."""
        budget = self.budget(s)
        if len(messages) <= MIN_SPLIT or depth > MAX_DEPTH:
            return self.compact(s, messages, messages, [], cur, depth)
        half = budget // 2
        tail_tokens, split = 0, len(messages)
        for i in range(len(messages) - 1, -1, -1):
            if tail_tokens + messages[i].tokens < half:
                tail_tokens += messages[i].tokens
                split = i
            else:
                break
        while messages[split - 1].role != "assistant" and split > 1:
            split -= 1
        if split <= MIN_SPLIT:
            return self.compact(s, messages, messages, [], cur, depth)
        limit = (self.p.weak_max_input or s.limits.input_limit) - INPUT_RESERVE
        keep: list[Entry] = []
        total = 0
        for e in messages[:split]:
            total += e.tokens
            if total > limit:
                break
            keep.append(e)
        return self.compact(s, messages, keep, messages[split:], cur, depth)

    def compact(self, s: SessionView, messages: Sequence[Entry], head: Sequence[Entry], tail: Sequence[Entry],
                cur: Sequence[str], depth: int) -> Compact:
        shown = tuple(e.rendered() for e in head)
        request = SummaryRequest(SUMMARIZE, (Message("aider-summarize", "user", (Text(summarize_all_content(shown)),)),),
                                 shown, meta={"model": "weak", "depth": depth})
        entries = s.entries
        systems = [Keep(e.id) for e in entries[:head_end(entries)]]
        view: list[Slot] = [*systems, Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                            *(Keep(e.id) for e in tail)]
        if not tail or tail[-1].role != "assistant":
            view.append(Insert("assistant", OK))
        view += [Keep(i) for i in cur]
        if tail:
            self.level = Level(depth, tuple(e.id for e in tail), tuple(cur))
        lost = Compact("aider: summary failed, history emptied", (*systems, *(Keep(i) for i in cur)))
        return Compact(f"aider: chat history summary (depth {depth})", tuple(view), request, on_failure="unchanged",
                       meta={"depth": depth, "dropped_head": len(messages) - len(head) - len(tail),
                             "budget": self.budget(s), "model": "weak"}, fallback=lost)


@strategy("aider", params=AiderParams, source="Aider-AI/aider 5dc9490bb35f (history.py, models.py, base_coder.py)",
          summary="history over min(max(max_input/16, 1024), 8192) tokens: the weak model summarizes the head, a tail "
                  "under half the budget stays, recursively up to depth 3")
def aider(p: AiderParams) -> Aider:
    return Aider(p)
