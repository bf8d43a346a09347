"""``compbench.strategies.goose`` — ``goose``: Goose's context management: one old tool call and its result summarized
on every turn of the agent loop, and the whole conversation summarized past 0.8 of the window.

Source: block/goose at 9a91fccfb5d7 (2026-02-17; ``crates/goose/src/agents/agent.rs`` at 43025f88, of the
same days, is the same loop), read from a snapshot of a fork holding that upstream commit (the repository is
over the size a snapshot may have here): ``crates/goose/src/context_mgmt/mod.rs`` (``compact_messages``,
``check_if_compaction_needed``, ``do_compact``, ``filter_tool_responses``, ``format_message_for_compacting``,
``tool_id_to_summarize``, ``summarize_tool_call``, ``maybe_summarize_tool_pair``),
``crates/goose/src/agents/agent.rs`` (``reply``, ``reply_internal``) and ``prompts/compaction.md``
(:mod:`compbench.strategies.goose_prompts`).

* **Tool-pair summaries** (on by default from block/goose #6119, 2026-01-28; ``GOOSE_TOOL_CALL_CUTOFF``,
  default 10). At the start of every turn of the loop (every model call) Goose counts the tool calls the
  agent still sees; with more than the cutoff it has the fast model summarize the oldest one with its result
  (``summarize_tool_call``: the two messages, each written ``[role]: …``, under a one-line-summary system
  prompt), in the background while the model answers. When the turn is over (the reply and its tool
  results stored) the call and its result are hidden and the summary is added after them, as a user message.
  The request carries a 64-token budget (:data:`TOOL_PAIR_SUMMARY_TOKENS`, a heuristic standing in for the
  prompt's "a single message").
  One pair per turn: a turn that adds several calls grows the backlog. A call that shares its message with
  other content here (Goose stores one call per message) keeps its name, its arguments and output cleared.
  ``tool_pairs=false`` (``preset=no-tool-pairs``, also ``preset=2026-02-26``, and ``preset=2025`` for the
  builds before #6119) models Goose from #7481 (2026-02-26), which switched it off, until #7938 (2026-03-16)
  brought it back in batches (``preset=2026-03-16``, read at aaif-goose/goose 006bd233
  ``context_mgmt/mod.rs``: ``compute_tool_call_cutoff``, ``tool_ids_to_summarize``; ``agents/agent.rs``):
  unless ``GOOSE_TOOL_CALL_CUTOFF`` is set, the cutoff scales with the window, ``clamp(3 * floor(W * thr) /
  20,000, 10, 500)`` (a threshold outside (0, 1] counts as 0.8: 200k gives 24, 1M 120); the calls of the
  current turn (since the user's prompt) are never summarized, and once the others exceed the cutoff by more
  than a batch (10) the oldest 10 are summarized together, one request each, and applied when the turn ends.
* **Which build.** Goose's logs record no version; a session's start date says which build it ran at the
  latest (``version_preset`` takes ``session of YYYY-MM-DD``). The default models the build of 2026-01-28 to
  2026-02-26 (block/goose 9a91fccf), the one read in full above.
* **Compaction, when**: at the start of a reply, i.e. when a new user prompt arrives (``reply``), after the
  last turn's tool-pair summary was added, if the last request's ``total_tokens`` (input + output; before any
  request, the visible messages counted) over the context limit is ``> GOOSE_AUTO_COMPACT_THRESHOLD`` (0.8;
  0 or >= 1 disables it); and when the provider rejects a request as too long (``ContextLengthExceeded``),
  which compbench sees before the call: the view is over the input limit. Tool-pair summaries make the
  requests smaller, so the 0.8 compaction comes later than it would without them.
* **The summary**: every agent-visible message, each written ``[role]: ...`` (tool calls as
  ``tool_request(name): {json}``, results as ``tool_response: text``, thinking left out), joined by
  newlines into ``compaction.md`` as the *system* prompt, with one user message "Please summarize the
  conversation history provided in the system prompt.", sent to the fast model. When that request is
  itself too long, it is retried without 10%, 20%, 50%, then 100% of the tool-response messages, taken from
  the middle outwards; compbench picks the first attempt that fits the input limit, as the retries would
  (if none fits, Goose gives up the reply with an error and compbench leaves the view as it was).
* **The new context**: the summary as a user message, an assistant message with the continuation text
  ("...Just continue the conversation naturally..." when the preserved prompt was the last message,
  "...Continue calling tools as necessary..." in a tool loop, the manual text for ``/compact``), then the
  text of the most recent user message that has text and no tool content (not for a manual compaction).
  A message of text parts only is kept as it is; otherwise its text is re-added as a new message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    NEXT_QUESTION,
    Accepts,
    Action,
    Compact,
    CompactionEvent,
    Counter,
    Entry,
    Insert,
    Keep,
    Media,
    Message,
    Reasoning,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
    framed_text,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.api_groups import head_end
from compbench.strategies.goose_prompts import COMPACTION_TEMPLATE, TOOL_PAIR_PROMPT

DEFAULT_COMPACTION_THRESHOLD = 0.8  # context_mgmt/mod.rs
DEFAULT_TOOL_CALL_CUTOFF = 10  # agent.rs: GOOSE_TOOL_CALL_CUTOFF
TOOLCALL_SUMMARIZATION_BATCH_SIZE = 10  # context_mgmt/mod.rs 006bd233 (#7938)
CUTOFF_RANGE = (10, 500)  # compute_tool_call_cutoff's clamp
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
TOOL_PAIR = "tool-pair"  # the meta kind of a tool-pair summary (fidelity compares the other compactions)
# A heuristic budget: Goose asks for "a single message that describe what happened" and sets no limit, its
# example is a dozen tokens; compbench's offline summarizers size a summary on real compaction summaries
# (over a thousand tokens) unless the request sets a budget, so a tool-pair request carries this one.
TOOL_PAIR_SUMMARY_TOKENS = 64
FRAMED_MIN_CHARS = 200  # a tool output shorter than this is cheaper to count again than to frame
__all__ = ["COMPACTION_TEMPLATE", "TOOL_PAIR_PROMPT"]


@dataclass(frozen=True)
class GooseParams:
    threshold: float = param(DEFAULT_COMPACTION_THRESHOLD, "Compact when the last request's tokens over the window "
                                                           "exceed this (GOOSE_AUTO_COMPACT_THRESHOLD; 0 or >= 1 off).")
    removal_percentages: tuple[int, ...] = param(REMOVAL_PERCENTAGES, "Shares of tool responses dropped, middle "
                                                                      "out, on each retry of a too-long summary request.", hi=100)
    tool_pairs: bool = param(True, "Summarize the oldest tool call and its result on every turn past the cutoff "
                                   "(on from 2026-01-28 to 2026-02-26).")
    tool_call_cutoff: int = param(DEFAULT_TOOL_CALL_CUTOFF, "Tool calls the agent sees before the oldest is "
                                                            "summarized (GOOSE_TOOL_CALL_CUTOFF; 0 computes it from "
                                                            "the window, as builds from #7938 do).")
    batch: int = param(1, "Tool pairs summarized at once; past 1 (#7938: 10) the calls of the current turn are "
                          "spared and a batch starts only once the others exceed the cutoff by more than it.")


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


def pair_text(counter: Counter, messages: Sequence[Message]) -> Text:
    """The tool pair's messages, each ``format_message``'d, one per line: counted from the longest tool output's
    own count where that is exact (:func:`~compbench.sdk.framed_text`), not tokenized again at every turn."""
    text = "\n".join(format_message(m) for m in messages)
    outputs = [p.output for m in messages for p in m.parts if isinstance(p, ToolResult)]
    longest = max(outputs, key=len, default="")
    at = text.find(longest) if len(longest) > FRAMED_MIN_CHARS else -1
    if at < 0:
        return Text(text)
    return framed_text(counter, text[:at], longest, text[at + len(longest):])


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


@dataclass(frozen=True)
class Pair:
    """A tool call chosen at the start of a turn, summarized while the turn runs, applied when it ends."""

    call: str
    messages: tuple[Message, ...]


class Goose:
    name = "goose"

    def __init__(self, p: GooseParams) -> None:
        self.p = p
        self.seen = 0  # view positions already looked at for a new user prompt
        self.hopeless: tuple[int, str] | None = None  # (compactions, first message) when no attempt fitted
        self.pending: list[Pair] = []  # the tool pairs being summarized during the current turn
        self.done: set[str] = set()  # calls summarized in place (their message holds more)
        self.calls: list[str] = []  # the calls the agent sees, oldest first, not yet summarized
        self.scanned = 0  # view positions whose calls are in ``calls``
        self.revision = 0  # the view's revision ``calls`` describes
        self.stage = ""  # what the last returned action was: "pair" | "auto" | ""
        self.new_prompt = False
        self._refs: dict[int, tuple[Message, frozenset[str]]] = {}  # per message, the calls it names

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.seen = len(s.entries)
        return ()

    def wake(self, s: SessionView) -> Wake:
        """It compacts at a new prompt (if over its threshold) or before a call over the input limit. The
        prompts it has not looked at are those since it was last asked: all of them joined after the
        previous question, which it is asked at. Its tool-pair summaries act during any turn past the cutoff:
        with them on it is asked every question."""
        if self.p.tool_pairs:
            return NEXT_QUESTION
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
        """The end of the last turn (its tool pair applied), then ``reply``'s check if a prompt is new, then this
        turn's tool pair chosen and the call made (over the input limit: Goose's overflow compaction)."""
        entries = s.entries
        self.new_prompt = any(e.role == "user" and e.origin == "recorded" and has_text_only(e)
                              for e in entries[min(self.seen, len(entries)):])
        self.seen = len(entries)
        if self.pending:
            self.visible_calls(s)  # the last turn's calls counted before the pair changes the view
            return self.next_pair(s)
        return self.reply(s)

    def next_pair(self, s: SessionView) -> Sequence[Action]:
        """The next summarized pair of the turn that ended applied (a batch one after the other)."""
        pair = self.pending.pop(0)
        self.stage = "pair"
        return (self.apply_pair(s, pair),)

    def after_compaction(self, s: SessionView, event: CompactionEvent) -> Sequence[Action]:
        """What follows each of its actions within the same moment (``CompactionFollowup``)."""
        stage, self.stage = self.stage, ""
        if stage == "pair":
            if event.ok:  # ``calls`` already has the pair out: it describes the new view as it is
                self.scanned, self.revision = len(s.entries), s.revision
            else:  # the summary failed: the pair stays, and may be chosen again
                self.done.discard(str(event.meta.get("call", "")))
                self.revision = -1
            if self.pending:
                return self.next_pair(s)
            return self.reply(s)
        if stage == "auto":
            return self.turn(s)
        return ()

    def reply(self, s: SessionView) -> Sequence[Action]:
        if self.new_prompt and self.needs_compaction(s):
            c = self.compact(s, "auto")
            if c is not None:
                self.stage = "auto"
                return (c,)
        return self.turn(s)

    def turn(self, s: SessionView) -> Sequence[Action]:
        """``reply_internal``'s loop: the tool pair chosen on this request's conversation, then the call."""
        if self.p.tool_pairs:
            self.pending = self.choose(s)
        if s.context_tokens > s.limits.input_limit:
            c = self.compact(s, "context length exceeded")
            return (c,) if c is not None else ()
        return ()

    def visible_calls(self, s: SessionView) -> list[str]:
        """The calls the agent sees, kept up to date incrementally (a full scan only after the view changed)."""
        entries = s.entries
        if s.revision != self.revision or self.scanned > len(entries):
            self.calls, self.scanned, self.revision = [], 0, s.revision
        for e in entries[self.scanned:]:
            self.calls += [p.id for i, p in enumerate(e.message.parts)
                           if isinstance(p, ToolCall) and i not in e.pruned and p.id not in self.done]
        self.scanned = len(entries)
        return self.calls

    def cutoff(self, s: SessionView) -> int:
        """``GOOSE_TOOL_CALL_CUTOFF``, else (0) ``compute_tool_call_cutoff`` from the window and threshold."""
        if self.p.tool_call_cutoff > 0:
            return self.p.tool_call_cutoff
        t = self.p.threshold if 0.0 < self.p.threshold <= 1.0 else DEFAULT_COMPACTION_THRESHOLD
        return min(max(3 * int(s.limits.context_window * t) // 20_000, CUTOFF_RANGE[0]), CUTOFF_RANGE[1])

    def turn_calls(self, s: SessionView) -> int:
        """The tool calls made since the user's latest prompt (``current_turn_tool_count``)."""
        n = 0
        for e in reversed(s.entries):
            if e.role == "user" and e.origin == "recorded" and has_text_only(e):
                break
            n += sum(1 for p in e.message.parts if isinstance(p, ToolCall))
        return n

    def choose(self, s: SessionView) -> list[Pair]:
        """``tool_id_to_summarize``: past the cutoff, the oldest call the agent sees, with its messages; in
        batches (#7938, ``tool_ids_to_summarize``): the oldest ``batch`` once the calls before this turn exceed
        the cutoff by more than a batch."""
        calls = self.visible_calls(s)
        cutoff = self.cutoff(s)
        if self.p.batch > 1:
            if len(calls) - self.turn_calls(s) <= cutoff + self.p.batch:
                return []
            chosen = calls[:self.p.batch]
        elif len(calls) <= cutoff:
            return []
        else:
            chosen = calls[:1]
        return [Pair(call, tuple(e.rendered() for e in s.entries if call in self.refs(e.message)))
                for call in chosen]

    def refs(self, m: Message) -> frozenset[str]:
        """The calls a message's parts name (its calls' ids, its results' call ids), once per message: the
        pair's messages are found among the whole view's at every turn."""
        hit = self._refs.get(id(m))
        if hit is None or hit[0] is not m:
            hit = self._refs[id(m)] = (m, frozenset(
                p.id if isinstance(p, ToolCall) else p.call_id for p in m.parts
                if isinstance(p, ToolCall | ToolResult)))
        return hit[1]

    def apply_pair(self, s: SessionView, pair: Pair) -> Compact:
        """The turn is over: the pair hidden (cleared where its message holds more), the summary after it."""
        entries = s.entries
        end = len(entries)
        while end > 0 and entries[end - 1].role == "user" and entries[end - 1].origin == "recorded":
            end -= 1  # a prompt that arrived after the turn comes after the summary
        view: list[Slot] = []
        prune: list[tuple[str, int, str]] = []
        for k, e in enumerate(entries):
            if k == end:
                view.append(Insert("user", with_summary=True, origin="summary", meta={"kind": TOOL_PAIR}))
            mine = [i for i, p in enumerate(e.message.parts) if (isinstance(p, ToolCall) and p.id == pair.call)
                    or (isinstance(p, ToolResult) and p.call_id == pair.call)] if pair.call in self.refs(e.message) else []
            if mine and len(mine) == len([p for p in e.message.parts if not isinstance(p, Reasoning)]):
                continue  # the message is the call (or the result) alone: hidden
            view.append(Keep(e.id))
            for i in mine:
                part = e.message.parts[i]
                prune.append((e.id, i, "{}" if isinstance(part, ToolCall) else ""))
        if end == len(entries):
            view.append(Insert("user", with_summary=True, origin="summary", meta={"kind": TOOL_PAIR}))
        prompt = Message("goose-tool-pair", "user", (pair_text(s.counter, pair.messages),))
        request = SummaryRequest(TOOL_PAIR_PROMPT, (prompt,), pair.messages, TOOL_PAIR_SUMMARY_TOKENS,
                                 meta={"model": "fast", "kind": TOOL_PAIR})
        self.done.add(pair.call)
        self.calls = [c for c in self.calls if c != pair.call]
        return Compact("goose: tool-pair summary", tuple(view), request, on_failure="unchanged",
                       meta={"kind": TOOL_PAIR, "call": pair.call, "model": "fast"}, prune=tuple(prune))

    def manual(self, s: SessionView) -> Compact | None:
        self.pending = []  # /compact runs as a command, no loop turn: everything is summarized anyway
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


# Builds by date (Goose's logs record no version; the default is the 2026-01-28 build): before #6119 no tool-pair
# summaries; #6119 (2026-01-28) one pair per turn past 10 (the default); #7481 (2026-02-26) off; #7938 (2026-03-16)
# batches of 10 past a window-scaled cutoff
PRESETS: dict[str, dict[str, object]] = {
    "no-tool-pairs": {"tool_pairs": False},
    "2025": {"tool_pairs": False},
    "2026-02-26": {"tool_pairs": False},
    "2026-03-16": {"tool_call_cutoff": 0, "batch": TOOLCALL_SUMMARIZATION_BATCH_SIZE},
}
BUILDS = (("2026-03-16", "2026-03-16"), ("2026-02-26", "2026-02-26"), ("2026-01-28", "seed"))  # first day, preset
PRESET_VERSIONS = {"seed": "builds of 2026-01-28 to 2026-02-25 (#6119, read at 9a91fccf)", "2025": "builds before "
                   "2026-01-28", "2026-02-26": "builds of 2026-02-26 to 2026-03-15 (#7481)",
                   "2026-03-16": "builds from 2026-03-16 (#7938, read at aaif-goose 006bd233)"}


def version_preset(version: str) -> str:
    """The preset of a Goose build, from the date a log records (``session of YYYY-MM-DD``: the build the session
    ran is at most that recent); "seed" (the default's build) when the text holds no date."""
    import re

    m = re.search(r"\d{4}-\d{2}-\d{2}", version)
    if m is None:
        return "seed"
    return next((preset for first, preset in BUILDS if m.group(0) >= first), "2025")


# What Goose's users set (environment or ~/.config/goose/config.yaml; block/goose context_mgmt/mod.rs).
TOOL = Tool(
    "Goose", ("goose",), newest="2026-03-16", version_preset=version_preset, preset_versions=PRESET_VERSIONS,
    settings=(Setting("threshold", "GOOSE_AUTO_COMPACT_THRESHOLD", "environment (or config.yaml)", "0.8",
                      "export GOOSE_AUTO_COMPACT_THRESHOLD={value}", sweep=(0.6,),
                      note="a value at or below 0, or at or above 1, turns auto-compaction off",
                      accepts=Accepts(0, 1, open_lo=True, open_hi=True, refuse=False,
                                      outside="Goose turns auto-compaction off at or below 0 and at or above 1")),
              Setting("tool_pairs", "GOOSE_TOOL_PAIR_SUMMARIZATION", "environment (or config.yaml)", "true",
                      "export GOOSE_TOOL_PAIR_SUMMARIZATION={value}", sweep=(False,),
                      note="off: no background summaries of old tool calls"),
              Setting("tool_call_cutoff", "GOOSE_TOOL_CALL_CUTOFF", "environment (or config.yaml)",
                      "10 (the 2026-01-28 build); from 2026-03-16 scaled to the window, clamp(3 x W x threshold / "
                      "20,000, 10, 500)", "export GOOSE_TOOL_CALL_CUTOFF={value}")),
    designed={"degenerate": "Goose summarizes old tool calls and their results in the background (one pair a turn "
                            "past its cutoff in the 2026-01-28 build, batches from 2026-03-16): frequent small "
                            "compactions are its design"})

@strategy("goose", params=GooseParams,
          upstream="block/goose 9a91fccf (context_mgmt/mod.rs, agents/agent.rs, prompts/compaction.md)",
          summary="every turn past 10 visible tool calls, the oldest call and result summarized by the fast model; at a "
                  "new prompt, last request > 0.8 of the window (or on overflow): everything summarized into a user "
                  "message + continuation note, the last user text re-added",
          presets=PRESETS, tool=TOOL)
def goose(p: GooseParams) -> Goose:
    return Goose(p)
