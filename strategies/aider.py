"""``compbench.strategies.aider`` — ``aider``: aider's chat-history summary (a small token budget, the head summarized
by the weak model), made after replies that edited files.

Source: Aider-AI/aider at 5dc9490bb35f, read in full: ``aider/history.py`` (``ChatSummary``),
``aider/models.py`` (``max_chat_history_tokens``, ``token_count``), ``aider/prompts.py`` (``summarize``,
``summary_prefix``) and ``aider/coders/base_coder.py`` (``send_message``, ``move_back_cur_messages``,
``summarize_start`` / ``summarize_worker`` / ``summarize_end``, ``format_chat_chunks``).

* **What is counted.** ``ChatSummary`` counts each message as the JSON aider would send
  (``token_count`` of a dict: ``len(tokenizer(json.dumps(message)))``, ``{"role": …, "content": …}`` with
  JSON's escapes, non-ASCII as ``\\uXXXX``); a summary list is counted as litellm counts messages (the text, 4
  per message, 3 for the reply).
* **Budget**: ``max_chat_history_tokens = min(max(max_input_tokens / 16, 1024), 8192)``.
* **Which messages.** aider keeps the exchange in progress apart (``cur_messages``: the prompt, the replies,
  reflections) and moves it into its history (``done_messages``) only after a reply that edited files
  (``send_message``: ``if edited: move_back_cur_messages``). Only the history is ever summarized: a
  conversation without edits (``/ask``) is never. A reply edited files when its log says so (aider's own
  logs: ``edited``, ``edited_files``) or, in other tools' transcripts, when it calls an editing tool
  (:func:`edits_files`, a heuristic on the tool's name).
* **When.** ``move_back_cur_messages`` adds the exchange to the history and calls ``summarize_start``: if
  the history is over the budget, a thread summarizes a snapshot of it (``summarize_worker``), and aider then
  appends its note of the edit ("I committed the changes…", or ``files_content_gpt_edits_no_repo`` without a
  repository: a note always follows an edit) and "Ok." to the history. ``summarize_end``, at the next request,
  uses the summary only if the history is still the snapshot (since v0.72.0).
* **The race** (base_coder.py at 5dc9490, read again for issue 41): two threads race over ``done_messages``. The
  worker's first statement takes its snapshot (``self.summarizing_messages = list(self.done_messages)``); the main
  thread, back from ``Thread.start()``, appends the note in place (``self.done_messages += [...]``). If the worker
  copies first, the snapshot lacks the note, ``summarizing_messages == done_messages`` fails and the summary is
  dropped (its weak-model call paid); the summary is applied only when the main thread appends before the
  worker copies, i.e. when the worker's snapshot loses the race to the main thread's note. On CPython the new
  thread usually holds the GIL through its first statements after ``start()``, so the shipped code, read alone,
  drops nearly every summary; held-out aider logs (issue 41) show summaries applied. Both readings are kept as
  presets: ``0.71`` (the default: the summary applied, as aider up to 0.71 always did and as the logs show) and
  ``snapshot-race`` (every summary dropped, the history growing on, as users report in Aider-AI/aider#3493). No
  log in ``../shared`` settles it: the aider 0.82.2 ``--llm-history-file`` log whose request drops from 38
  messages to 12 switched chat mode there (``summarize_all``, applied in the foreground, no "Ok." after it).
* **What the log must show.** The strategy summarizes after a reply that edited files, counting the history
  as aider does (the JSON of each message of ``done``, which is every message of the conversation at that
  point: ``cur`` has just been moved into it). A log that shows aider's summaries but marks no reply as an
  edit leaves it nothing to act on: :func:`cannot_act` says so in the run's ``preset_source``.
* **No /compact.** aider has no command that compacts on demand. The one other summary it makes is
  ``summarize_all`` of the whole history when the chat mode changes (``Coder.create`` with
  ``summarize_from_coder``): a log shows it as a summary with no kept tail and no "Ok." after it; ``manual``
  is that.
* **How** (``summarize_real``): with more than 4 messages, a tail is kept whose tokens stay under half the
  budget (walking back while ``tail + next < budget // 2``), moved back so the head ends with an assistant
  message; the head, cut to what fits the weak model's input limit minus 512 (the rest of the head is
  dropped), is summarized into one user message ``summary_prefix + summary``. If summary + tail are still
  >= the budget, the same is done again on [summary, tail] one level deeper (``after_compaction``, before
  anything else happens, as aider does it in one go), up to depth 3; beyond that, or with <= 4 messages,
  everything is summarized. An assistant "Ok." follows when the result does not end with an assistant
  message. (A dropped summary's deeper levels are not asked: their cost is missing.)
* **The request**: system ``prompts.summarize``, one user message of ``# USER`` / ``# ASSISTANT`` sections;
  it goes to the weak model first (then the main model).
* **Failure** (where the summary is used): aider catches the error and, its summarized copy still empty, replaces the
  history with it: the whole history is gone (``fallback``).

aider's history holds only user and assistant text: tool calls and results are not part of it (aider
re-sends the files in the chat fresh on each request). compbench maps every message into that history
as aider would hold a command's output it added to the chat: ``tool`` and non-leading ``system``
messages are user messages, and a message's text is its text parts, its tool calls written as
``name(args)`` lines and its tool results' outputs. Leading system messages stay (aider's system prompt).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    Action,
    Compact,
    CompactionEvent,
    Entry,
    Insert,
    Keep,
    Message,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    Wake,
)
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
PER_MESSAGE, REPLY_PRIMING = 4, 3  # litellm.token_counter: 3 per message + 1 for the role; 3 for the reply
DROPPED = ("summarize_end: the history changed since the summarizer's snapshot (the edit note was appended after "
           "the thread started): summary dropped")
# a heuristic: tools that edit files, by name (Claude Code Edit/Write/MultiEdit, Codex apply_patch, OpenCode and
# Crush edit/write/patch, Cline write_to_file/replace_in_file, Gemini CLI replace/write_file, Goose text_editor)
_EDIT_TOOL = re.compile(r"edit|write|patch|replace|insert|create_file|delete_file|rename_file|move_file", re.I)
_READ_ONLY_COMMANDS = frozenset({"view", "read", "list", "undo_edit"})


@dataclass(frozen=True)
class AiderParams:
    max_chat_history_tokens: float = param(0.0, "The history budget; 0 computes aider's min(max(max_input / 16, "
                                                "1024), 8192).")
    weak_max_input: int = param(0, "The weak model's input limit for the summarized head (minus 512); 0 uses the "
                                   "run's input limit.")
    applies: bool = param(True, "The summary replaces the history, as real logs show (false: summarize_end drops "
                                "every summary, the history having changed since the thread's snapshot).")


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


def aider_role(m: Message) -> str:
    return "assistant" if m.role == "assistant" else "user"


def section(m: Message) -> str:
    """One message of ``summarize_all``: its ``# USER`` / ``# ASSISTANT`` section, ending with a newline."""
    content = f"# {'ASSISTANT' if m.role == 'assistant' else 'USER'}\n" + aider_content(m)
    return content if content.endswith("\n") else content + "\n"


def summarize_all_content(messages: Sequence[Message]) -> str:
    """``summarize_all``: ``# USER`` / ``# ASSISTANT`` sections, each ending with a newline."""
    return "".join(section(m) for m in messages)


def edits_files(m: Message) -> bool:
    """Did this reply edit files? aider's logs say so; elsewhere, a call to an editing tool (a heuristic)."""
    if m.meta.get("edited") is True or m.meta.get("edited_files"):
        return True
    for p in m.parts:
        if isinstance(p, ToolCall) and _EDIT_TOOL.search(p.name.rsplit("__", 1)[-1]):
            if p.name.endswith("text_editor"):
                try:
                    command = json.loads(p.args).get("command")
                except (ValueError, AttributeError):
                    command = None
                if command in _READ_ONLY_COMMANDS:
                    continue
            return True
    return False


def edit_weight(m: Message) -> int:
    """1 for a reply that edited files (:func:`edits_files`), else 0: the weight of :meth:`Aider.wake`."""
    return 1 if edits_files(m) else 0


@dataclass(frozen=True)
class Level:
    """A summarize_real level under way: its depth, the tail it kept."""

    depth: int
    tail: tuple[str, ...]


class Aider:
    name = "aider"

    def __init__(self, p: AiderParams) -> None:
        self.p = p
        self.level: Level | None = None

    def budget(self, s: SessionView) -> float:
        if self.p.max_chat_history_tokens:
            return self.p.max_chat_history_tokens
        return min(max(s.limits.input_limit / BUDGET_DIVISOR, MIN_BUDGET), MAX_BUDGET)

    def tokens(self, s: SessionView, e: Entry) -> int:
        """``ChatSummary.token_count`` of the message's dict: the tokens of its JSON (once per message)."""
        def count() -> int:
            m = e.rendered()
            return s.count(json.dumps({"role": aider_role(m), "content": aider_content(m)}))

        if e.pruned:
            return count()
        memo = s.memo(f"aider-json-{id(s.counter)}")
        found = memo.get(e.message)
        if found is None:
            found = count()
            memo.put(e.message, found)
        return int(found)

    def list_tokens(self, s: SessionView, contents: Sequence[str]) -> int:
        """``token_count`` of a message list (litellm's count), as ``summarize_real`` counts its summary."""
        return sum(s.count(c) + PER_MESSAGE for c in contents) + REPLY_PRIMING

    def before_step(self, s: SessionView) -> Sequence[Action]:
        return ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        """``send_message``: a reply that edited files moves the exchange into the history
        (``move_back_cur_messages``), whose ``summarize_start`` checks it against the budget."""
        entries = s.entries
        if not entries or not edits_files(entries[-1].message):
            return ()
        done = list(entries[head_end(entries):])
        if sum(self.tokens(s, e) for e in done) <= self.budget(s):
            return ()
        action = self.summarize(s, done, 0)
        return (action,) if action is not None else ()

    def wake(self, s: SessionView) -> Wake:
        """It acts only after a reply that edited files (``before_step`` never acts, ``after_step`` looks at the
        reply that just joined), and keeps no state where it answers nothing: asked again once such a reply
        has been read."""
        return Wake(grown=(edit_weight, 1))

    def manual(self, s: SessionView) -> Compact:
        """``summarize_all`` on a chat-mode switch: the whole history into one summary, no tail, no "Ok."."""
        entries = s.entries
        head = head_end(entries)
        shown = tuple(e.rendered() for e in entries[head:])
        text = self.request_text(s, entries[head:], shown)
        request = SummaryRequest(SUMMARIZE, (Message("aider-summarize", "user", (text,)),), shown,
                                 meta={"model": "weak", "depth": 0})
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in entries[:head]),
                                  Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"))
        return Compact("aider: summarize_all (chat mode switch)", view, request, on_failure="unchanged",
                       meta={"depth": 0, "budget": self.budget(s), "model": "weak"})

    def accept(self, a: Compact, summary: str) -> str | None:
        """``summarize_end``: a summary is used only if the history is still its snapshot (see the docstring);
        ``summarize_all`` on a mode switch runs in the foreground, no snapshot to check."""
        return None if self.p.applies or not a.reason.startswith("aider: chat history") else DROPPED

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
        if self.list_tokens(s, [aider_content(summary.message)]) + sum(self.tokens(s, e) for e in tail) \
                < self.budget(s):
            return ()
        action = self.summarize(s, [summary, *tail], level.depth + 1)
        return (action,) if action is not None else ()

    def summarize(self, s: SessionView, messages: list[Entry], depth: int) -> Compact | None:
        """``summarize_real`` at ``depth``: which head is summarized and which tail is kept."""
        budget = self.budget(s)
        if len(messages) <= MIN_SPLIT or depth > MAX_DEPTH:
            return self.compact(s, messages, messages, [], depth)
        half = budget // 2
        tail_tokens, split = 0, len(messages)
        for i in range(len(messages) - 1, -1, -1):
            tokens = self.tokens(s, messages[i])
            if tail_tokens + tokens < half:
                tail_tokens += tokens
                split = i
            else:
                break
        while messages[split - 1].role != "assistant" and split > 1:
            split -= 1
        if split <= MIN_SPLIT:
            return self.compact(s, messages, messages, [], depth)
        limit = (self.p.weak_max_input or s.limits.input_limit) - INPUT_RESERVE
        keep: list[Entry] = []
        total = 0
        for e in messages[:split]:
            total += self.tokens(s, e)
            if total > limit:
                break
            keep.append(e)
        return self.compact(s, messages, keep, messages[split:], depth)

    def request_text(self, s: SessionView, head: Sequence[Entry], shown: Sequence[Message]) -> Text:
        """The summary request's one user message. aider sends the whole history again at every
        summarization, and without a working summary (since 0.72) that history only grows: its count is
        the sum of its sections' counts, each section counted once per message (the same count, see
        :attr:`~compbench.measure.tokens.TokenCounter.sections_add_up`), not a tokenizer pass per request."""
        sections = [section(m) for m in shown]
        part = Text("".join(sections))
        counter = s.counter
        if counter.sections_add_up:
            memo = s.memo(f"aider-section-{id(counter)}")
            raw = 0
            for e, text in zip(head, sections, strict=True):
                found = None if e.pruned else memo.get(e.message)
                if found is None:
                    found = counter.count_raw(text)
                    if not e.pruned:
                        memo.put(e.message, found)
                raw += int(found)
            counter.remember_raw(part, raw)
        return part

    def compact(self, s: SessionView, messages: Sequence[Entry], head: Sequence[Entry], tail: Sequence[Entry],
                depth: int) -> Compact:
        shown = tuple(e.rendered() for e in head)
        request = SummaryRequest(SUMMARIZE, (Message("aider-summarize", "user", (self.request_text(s, head, shown),)),),
                                 shown, meta={"model": "weak", "depth": depth})
        entries = s.entries
        systems = [Keep(e.id) for e in entries[:head_end(entries)]]
        view: list[Slot] = [*systems, Insert("user", SUMMARY_PREFIX, with_summary=True, origin="summary"),
                            *(Keep(e.id) for e in tail)]
        if not tail or tail[-1].role != "assistant":
            view.append(Insert("assistant", OK))
        if tail and self.p.applies:
            self.level = Level(depth, tuple(e.id for e in tail))
        lost = Compact("aider: summary failed, history emptied", tuple(systems)) if self.p.applies else None
        return Compact(f"aider: chat history summary (depth {depth})", tuple(view), request, on_failure="unchanged",
                       meta={"depth": depth, "dropped_head": len(messages) - len(head) - len(tail),
                             "budget": self.budget(s), "model": "weak"}, fallback=lost)


# What aider's users set (--max-chat-history-tokens, AIDER_MAX_CHAT_HISTORY_TOKENS or max-chat-history-tokens in
# .aider.conf.yml; aider/models.py at 5dc9490): 0 means the default formula.
def cannot_act(t: Transcript) -> tuple[str | None, str] | None:
    """Where the log shows aider's summaries but marks no reply as editing files, the strategy has nothing to act on
    (it summarizes after such a reply, as aider does): said in ``preset_source`` instead of a silent "never
    compacted". The preset is the one a run takes anyway (the parameters' defaults)."""
    auto = sum(1 for rc in t.compactions if rc.trigger == "auto")
    if not auto or any(edits_files(m) for m in t.messages):
        return None
    return None, (f"the log shows {auto} automatic summar{'ies' if auto != 1 else 'y'} but marks no reply as editing "
                  "files (aider's 'I committed the changes…' note): aider summarizes only after such a reply, so "
                  "the strategy cannot act on this log; the parameters' defaults")


MANUAL_NAME = "summarize_all on a chat-mode switch; aider has no compaction command"  # fidelity: what a manual summary is
AUTO_NAME = "aider's chat-history summary (ChatSummary, after an edit, by the weak model)"  # fidelity's rows
TOOL = Tool(
    "aider", ("aider",), own_count=True, manual_name=MANUAL_NAME, auto_name=AUTO_NAME, log_preset=cannot_act,
    settings=(Setting("max_chat_history_tokens", "max-chat-history-tokens", ".aider.conf.yml (or "
                      "--max-chat-history-tokens, AIDER_MAX_CHAT_HISTORY_TOKENS)",
                      "min(max(max_input / 16, 1024), 8192)", "max-chat-history-tokens: {value}",
                      sweep=(4096.0, 16384.0), note="the history over it has its head summarized by the weak model"),),
    designed={"failed": "preset=snapshot-race drops the summary it made (a reading of summarize_end's snapshot "
                        "check in 0.72+; real logs show the summaries used): its cost without its saving is that "
                        "reading's, not a failure"})


@strategy("aider", params=AiderParams, upstream="Aider-AI/aider 5dc9490bb35f (history.py, models.py, base_coder.py)",
          summary="after a reply that edited files, a history over min(max(max_input/16, 1024), 8192) tokens (counted "
                  "as JSON) has its head summarized by the weak model, a tail under half the budget kept (real logs "
                  "show the summary used; preset=snapshot-race drops it)",
          presets={"0.71": {"applies": True}, "snapshot-race": {"applies": False}}, tool=TOOL)
def aider(p: AiderParams) -> Aider:
    return Aider(p)


OWN_COUNT = True  # fidelity: aider's trigger is its own count of its history, not the API's usage
