"""``compbench.strategies.claude_code`` — ``claude-code``: Claude Code's auto-compact (seed 002 + real sessions of CLI
2.0.60–2.1.49 and 2.1.217 + public reports of its 1M-window rule, 2.1.92–2.1.196).

Seed 002: ``/compact [instructions]`` or automatically at ~95% of the window; the whole history is
summarized and the session continues from the summary alone. Custom instructions are appended as
Claude Code does (``"\\n\\nAdditional Instructions:\\n" + text``). Claude Code is closed source: what
follows is read from its own session files (../shared/transcripts, ../shared/real-compactions), its
changelog, and public analyses of its bundle, each marked known or inferred.

**Threshold** (``autocompact_buffer`` > 0): ``W - min(max_output, output_reserve) - autocompact_buffer``,
W the window (``min(W, auto_compact_window)`` when CLAUDE_CODE_AUTO_COMPACT_WINDOW is set), and with
CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (``autocompact_pct_override``) ``min(floor((W - reserve) * pct / 100),
that)``: the override can only lower it. The formula, the 13,000 buffer and the override's clamp are
from public analyses of the bundle (anthropics/claude-code issues #12004, 2.0.x: ``nx1 = 13000``,
threshold = available input - 13000; #31806: the ``Math.min`` clamp; autoCompact.ts of 2.1.88 as
quoted there: reserve = ``min(maxOutputTokensForModel, MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000)``).
The reserve per version is inferred from the logs: one real data point fits many formulas, so every
auto compaction of ../shared is a bound: the largest count (as the version's preset counts, on the log
completed as ``evidence`` says) that did not compact, and the count that did (preTokens):

* 2.0.76 (2 sessions, Sonnet 4.5 and Opus 4.5): (152,770, 155,548] and (154,797, 155,250], so the
  threshold lies in (154,797, 155,250]: 155,000 = 200k - 32k - 13k, the reserve min(max output,
  32,000) (the CLI's default max output tokens); any reserve in [31,750, 32,202] fits, 20,000 does not,
  nor does seed 002's 95% (190,000).
* 2.1.25–2.1.49 (7 compactions, 4 sessions, Opus 4.5 and 4.6): the counts that did not compact reach
  166,263 (2.1.29), the smallest that did is 167,066 (2.1.25): (166,263, 167,066] holds 167,000 =
  200k - 20k - 13k (a reserve in [19,934, 20,736]); 155,000 is excluded. The change is the 2.1.21
  changelog entry "Fixed auto-compact triggering too early on models with large output token limits"
  (inferred to be this one: no 2.1.0–2.1.20 auto compaction is in ../shared).

Every session ran a 200k window, so a percentage of the window (77.4–77.6% for 2.0, 83.1–83.5% for 2.1)
fits the logs as well as ``W - reserve - 13,000``; the additive form is the bundle's.

**On a 1M window** Claude Code compacts against an auto-compact window of its own: the user's
CLAUDE_CODE_AUTO_COMPACT_WINDOW / ``autoCompactWindow`` first (``auto_compact_window``), else a default
that Anthropic tunes per model and plan server-side, without a release (anthropics/claude-code #86863, a
maintainer on 2.1.233: "the default window for a model can be tuned on our side without a Claude Code
release"; #65966 names experiment-sourced windows). The rule per version (``large_window``; fidelity picks
the preset from the version a compaction recorded, ``version_preset``) is the default public evidence
shows for each range — a user outside that cohort compacts elsewhere (the Entire team's sessions on the
checkpoint branches of entireio/git-sync and entireio/skills ran to 414k–626k on 1M windows without
compacting, on 2.1.108, 2.1.123, 2.1.126, 2.1.136, 2.1.143, 2.1.146 and 2.1.179):

* 2.1.21–2.1.91, preset ``2.1.21``: the whole window (1M - 20k - 13k = 967,000). #43989: ``/context``
  shows .../1000k on 2.1.91, "sessions routinely ran to 600k+ tokens without compaction", and going back
  to 2.1.91 restores it.
* 2.1.92–2.1.137, preset ``2.1.92``: 400,000 (367,000). #43989: ``/context`` shows .../400k from 2.1.92;
  #54056: four 2.1.119 compactions at 360,677–366,989; issue 25's held-out 2.1.119–2.1.129 sessions
  match it to the step.
* 2.1.138–2.1.195, preset ``2.1.138``: the whole window again (967,000). Issue 25's held-out 2.1.138–2.1.139
  sessions compact 60–80 calls after 367,000; 2.1.138's changelog says only "Internal fixes"; #63627
  (2.1.156): 522k of 1M without a compaction; the CLAUDE_CODE_AUTO_COMPACT_WINDOW documentation (undated,
  as quoted by claude-code-log.com): "Defaults to the model's context window: 200K for standard models or
  1M for extended context models"; #72414 reports 2.1.196's 500k default as new.
* 2.1.196 on, preset ``current``: 500,000 (467,000). #72414: 2.1.196's ``/context`` shows "Auto-compact
  window: auto (500k tokens)" with nothing configured; #72600: a 2.1.196 compaction at preTokens 468,102.

Inferred, not read in a log of ours: the 2.1.138 boundary (2.1.130–2.1.137 unverified), and whole window
rather than 500k for 2.1.138–2.1.195 (reports, no log past 400k that compacted).

**Count**: the last call's usage, input with cache reads and writes + output, as Claude Code logs it.
2.0.76 compares that alone (known: c7d2069e's preTokens 155,548 = 154,835 + 713 exactly, with a
1,561-character tool result after the call left out). 2.1 adds its rough estimate of the messages
after the call (``count_trailing``; ``tokenCountWithEstimation``: characters / 4, rounded, per content
block, 2,000 per image; named in the 2.1.88 bundle as quoted by public analyses): seen in preTokens
exceeding the last usage by more than the call's output can be (9d7a9d52: 164,865 → 167,066 after a
thinking block and one short Grep call, whose result the log lacks). When 2.0.x stopped and 2.1 started
doing so is inferred (2.1.21, with the reserve). The check runs before each model call (``autoCompactIfNeeded`` at the top of the query
loop): after a step's tool results are recorded, so they are summarized too.

**New context**: the leading system messages, then one user message in Claude Code's wording, copied
from the real ``isCompactSummary`` records: 2.0.x ``PREFIX + summary + SUFFIX``; 2.1 a new prefix, a
line pointing to the full transcript (its path is the user's; a placeholder of the same shape here)
and, after an auto compaction only, the instruction to continue. A failed summary leaves the view
unchanged.

**What 2.1.217 keeps** (``preset=2.1.217``; one manual compaction in ../shared/real-compactions, 6c0a282a):
the boundary records ``preservedSegment {headUuid, anchorUuid, tailUuid}`` and ``preservedMessages {uuids,
allUuids}``; the head is the session's last response (the final text reply of the turn), the tail the stop
hook's record after it, the anchor the summary message (``annotateBoundaryWithPreservedSegment`` as public
analyses of the 2.1.88 bundle quote it: the anchor is the last summary message when a suffix is kept), and
``allUuids`` adds three records the file never holds (the turn's three stop hooks, ``hookCount`` 3). The
messages before that response (its tool call and result included) are summarized. So the preset keeps the
last API round: the last response and whatever followed it (after an auto compaction mid-turn, its tool
calls' results: inferred, no 2.1.21x auto compaction is in ../shared). Files a kept message read are not
re-attached (``preservedReadPaths``). The summary keeps 2.1's prefix and transcript line and ends, after a
manual compaction too, with a new continuation (``RESUME_217``); no "Recent messages are preserved
verbatim." line, which 2.1.88 added when it kept a tail.

**Re-attachments** (:mod:`.claude_code_restore`): the recent files as the disk holds them (the agent's own
edits after the last read applied), from 2.1.92 the invoked skills (25,000 rough tokens, 5,000 each) and the
plan file through its own channel.

**Not modelled, and why** (checked against the logs' timestamps):

* *Microcompact after an idle gap* (old tool results replaced by ``[Old tool result content cleared]``, the
  newest 5 kept, once the gap exceeds the cache's lifetime; a GrowthBook-gated ``timeBasedMCConfig`` in the
  2.1.88 bundle): 23 gaps of 59 minutes to 18 hours between calls of 2.1.5-2.1.33 sessions are followed by
  a call as large as the one before (e.g. 80,665 then 83,084 tokens after 1,103 minutes), none by a drop,
  and no log holds the placeholder; the 2.1.217 session's longest gap is 39 minutes (its 1-hour cache
  still read). No evidence it ran in any log of ours.
* The *microcompactions* the logs do record (``microcompact_boundary``, three, in two 2.1.17 sessions) came
  mid-turn, no gap before them (0.0-0.4 minutes), at 135-151k tokens, clearing 7-18 old results of Read,
  Grep, Glob and Edit: a size-triggered mechanism of that version, listed by the importer
  (``meta["microcompactions"]``) and not replayed (three events, one version).
* *Idle compaction* (reported for 2.1.286-2.1.299: a session of 200k tokens or more compacted about 54
  minutes after the last reply; ``idleCompaction``, ``CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS``): no log of
  those versions is in ../shared; the reports are third-party reads of the binary. Evidence thin: not
  modelled.

**The summary prompt**: known only through its output. All 16 real summaries (2.0.60–2.1.49) carry the
same nine numbered sections (Primary Request and Intent, Key Technical Concepts, Files and Code
Sections, Errors and fixes, Problem Solving, All user messages, Pending Tasks, Current Work, Optional
Next Step) and 14 start with an "Analysis:" block before "Summary:", so the real prompt asks for an
analysis, then those sections: not the six-line community prompt of seed 002 (kept as the seed's).
``preset=current`` and ``2.0`` ask for that structure in our own words (the wording is assumed).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.sdk import (
    NEVER,
    NEXT_QUESTION,
    Accepts,
    Action,
    Compact,
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
    Transcript,
    Usage,
    Wake,
    path_key,
    touches,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies.claude_code_restore import (
    RESTORE_BUDGET,
    RESTORE_FILES,
    RESTORE_TOKENS_PER_FILE,
    SKILLS_BUDGET,
    plan_attachment,
    restored_files,
    rough,
    skill_attachments,
)

__all__ = ["restored_files"]  # re-exported: the real post-compaction view (validation.reacquisition) names its files

THRESHOLD_RATIO = 0.95  # seed 002: "Triggers at ~95% context capacity"
OUTPUT_RESERVE_20 = 32_000  # 2.0.x: min(max output, 32,000) reserved; inferred from 2.0.76's 155,000 trigger
OUTPUT_RESERVE = 20_000  # 2.1.21+: MAX_OUTPUT_TOKENS_FOR_SUMMARY (2.1 bundle, issue #31806); 167,000 in the logs
AUTOCOMPACT_BUFFER = 13_000  # AUTOCOMPACT_BUFFER_TOKENS (bundle, issue #12004: ``nx1 = 13000``)
CLAUDE_CODE_WINDOW = 200_000  # the window Claude Code runs a model at unless the 1M window is on
# Claude Code's own auto-compact window on a 1M window, per version (the docstring gives the evidence;
# 0: the whole window): 2.1.92-2.1.137 400k (#43989, #54056), 2.1.196 on 500k (#72414, #72600)
LARGE_WINDOW_92 = 400_000
LARGE_WINDOW = 500_000
IMAGE_TOKENS = 2_000  # roughTokenCountEstimation of an image or document block (2.1 bundle)
MAX_SUMMARY_TOKENS = 20_000  # summary budget: Claude Code's compaction call caps output at 20k (same constant)
COMPACT_PROMPT = """Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions. This summary will be used as context when continuing the conversation, so preserve critical information including:
- What was accomplished
- Current work in progress
- Files involved
- Next steps
- Key user requests or constraints"""  # seed 002, "Prompt (extracted from community)"
SECTIONS = ("Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
            "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step")
# Our wording of what the real summaries show: an analysis, then the nine sections they all carry.
STRUCTURED_PROMPT = (
    "Write a detailed summary of this conversation so far, for continuing the work without it. Pay close "
    "attention to the user's explicit requests and to what you did. First go through the conversation in "
    "order inside <analysis> tags; then write the summary inside <summary> tags with these numbered "
    "sections:\n" + "\n".join(f"{i}. {name}" for i, name in enumerate(SECTIONS, 1))
    + "\nKeep file names, code snippets, errors and their fixes, and every user message.")
ADDITIONAL_INSTRUCTIONS = "\n\nAdditional Instructions:\n"  # Claude Code /compact <instructions>
SUMMARY_PREFIX = ("This session is being continued from a previous conversation that ran out of context. "
                  "The conversation is summarized below:\n")  # real isCompactSummary record (2.0.76)
CONTINUE = ("Please continue the conversation from where we left it off without asking the user any "
            "further questions. Continue with the last task that you were asked to work on.")  # same record
SUMMARY_SUFFIX = ".\n" + CONTINUE  # 2.0.76 after an auto compaction (2.0.60's manual one has no suffix)
SUMMARY_PREFIX_21 = ("This session is being continued from a previous conversation that ran out of context. "
                     "The summary below covers the earlier portion of the conversation.\n\n")  # 2.1.17–2.1.49
TRANSCRIPT_LINE = ("\n\nIf you need specific details from before compaction (like exact code snippets, error "
                   "messages, or content you generated), read the full transcript at: "
                   "~/.claude/projects/<project>/<session>.jsonl")  # 2.1.x; the path is a placeholder
SUMMARY_SUFFIX_21 = TRANSCRIPT_LINE + "\n" + CONTINUE.replace("left it off", "left off")  # 2.1.38–2.1.49, auto ("left it off" through 2.1.37)
RESUME_217 = ("Continue the conversation from where it left off without asking the user any further questions. "
              "Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface "
              "with \"I'll continue\" or similar. Pick up the last task as if the break never happened.")  # 2.1.217, manual too


@dataclass(frozen=True)
class ClaudeCodeParams:
    """Seed defaults; ``autocompact_buffer`` > 0 switches to the window - reserve - buffer threshold."""

    threshold_ratio: float = param(
        THRESHOLD_RATIO,
        "Compact when the tokens reach this share of the window (the seed's ~95%; used when "
        "autocompact_buffer is 0).", hi=1)
    output_reserve: int = param(
        0, "Output tokens reserved below the window, at most the model's max output (2.0: 32k, 2.1: 20k).")
    autocompact_buffer: int = param(
        0, "Extra tokens kept free: threshold = window - reserve - buffer (13k; 0 uses threshold_ratio).")
    count_trailing: bool = param(False, "Add Claude Code 2.1's rough estimate of the messages after the last call.")
    autocompact_pct_override: float = param(
        0.0, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: a percentage that can only lower the threshold (0: unset; a value "
             "out of (0, 100] is ignored, as Claude Code ignores it).", lo=None)
    auto_compact_window: int = param(
        0, "CLAUDE_CODE_AUTO_COMPACT_WINDOW: a window smaller than the model's (0: unset).")
    window_floor: int = param(
        0, "The least CLAUDE_CODE_AUTO_COMPACT_WINDOW Claude Code takes: a smaller value is raised to it (0: none, "
           "as the 2.1.88 source; 100,000 from the 2.1.89 settings schema, and the env var in 2.1.221 and 2.1.258 "
           "decompiles); it is also capped at 1,000,000 then.")
    window_from_log: bool = param(
        False, "auto_compact_window was read off the log's own first automatic compaction (its tokens before + "
               "the output reserve + the buffer), not set by a user: taken as it is, neither clamped nor capped at "
               "the model's window (a compaction past window - 33,000, as a 2.1.219 session's at 998,659 on a 1M "
               "window, shows a window or reserve this table does not know).")
    large_window: int = param(
        0, "The auto-compact window Claude Code itself uses when the model runs a 1M window and no "
           "CLAUDE_CODE_AUTO_COMPACT_WINDOW is set (0: the whole window, as 2.1.21-2.1.91 and 2.1.138-2.1.195; "
           "400,000 in 2.1.92-2.1.137; current: 500,000, 2.1.196 on).")
    custom_instructions: str = param(
        "", "Text added to the summary prompt as 'Additional Instructions' (/compact's argument, CLAUDE.md).")
    max_summary_tokens: int = param(MAX_SUMMARY_TOKENS, "Output budget of the summary request.")
    compact_prompt: str = param(
        COMPACT_PROMPT,
        "The summarization prompt (the seed's is the community one; today's asks for the nine "
        "sections real summaries show).")
    summary_prefix: str = param(SUMMARY_PREFIX, "The text before the summary in the new first user message.")
    summary_suffix: str = param(SUMMARY_SUFFIX, "The text after the summary after an automatic compaction.")
    manual_suffix: str = param("", "The text after the summary after a /compact.")
    restore_files: int = param(
        0, "Files re-attached after a compaction, most recently read or written first (Claude Code: 5; the seed "
           "has none).")
    restore_tokens_per_file: int = param(
        RESTORE_TOKENS_PER_FILE, "A file larger than this is re-attached as a reference (its path), not its content.")
    restore_budget: int = param(RESTORE_BUDGET, "Tokens all re-attached files may take together (rough count).")
    read_before_edit: bool = param(
        False, "Edits need the file read since the compaction (Claude Code refuses them otherwise): a summary "
               "quoting the file does not spare the re-read.")
    keep_last_round: bool = param(
        False, "Keep the last API round (the last response and what followed it) verbatim after the summary "
               "(2.1.217: compactMetadata.preservedSegment / preservedMessages).")
    restore_skills: int = param(
        0, "Rough tokens the invoked skills re-attached after a compaction may take together (25,000 from 2.1.92 "
           "in the presets, each cut to 5,000; 0: none).")
    restore_plan: bool = param(
        False, "Re-attach the plan file (plan mode) whole through its own channel, not among the files.")


def rough_tokens(m: Message) -> int:
    """Claude Code's rough estimate of a message, block by block (text, tool input, tool result, thinking;
    an image or document counts 2,000)."""
    total = 0
    for p in m.parts:
        if isinstance(p, Text):
            total += rough(p.text)
        elif isinstance(p, ToolCall):
            total += rough(p.name + p.args)
        elif isinstance(p, ToolResult):
            total += rough(p.output)
        elif isinstance(p, Reasoning) and not p.encrypted:
            total += rough(p.text)
        elif isinstance(p, Media):
            total += IMAGE_TOKENS
    return total


class ClaudeCode:
    name = "claude-code"

    def __init__(self, p: ClaudeCodeParams) -> None:
        self.p = p
        self.last: Usage | None = None
        self.read_before_edit = p.read_before_edit

    def threshold(self, s: SessionView) -> float:
        w = s.limits.context_window
        if self.p.auto_compact_window > 0 and self.p.window_from_log:  # where the log shows its tool compacted
            w = self.p.auto_compact_window
        elif self.p.auto_compact_window > 0:  # the user's setting comes before Claude Code's own default
            v = self.p.auto_compact_window
            if self.p.window_floor:  # clamped to 100k-1M as the tool does (a value it changes is what it does)
                v = min(max(v, self.p.window_floor), WINDOW_CAP)
            w = min(w, v)
        elif self.p.large_window > 0 and w > CLAUDE_CODE_WINDOW:
            w = min(w, self.p.large_window)
        if self.p.autocompact_buffer <= 0:
            return self.p.threshold_ratio * w
        effective = w - min(s.limits.max_output, self.p.output_reserve)
        threshold = effective - self.p.autocompact_buffer
        pct = self.p.autocompact_pct_override
        if 0 < pct <= 100:
            return min(math.floor(effective * pct / 100), threshold)
        return threshold

    def count(self, s: SessionView) -> int:
        """The tokens Claude Code compares: the last call's usage (+ the messages after it, in 2.1)."""
        if self.last is None:
            return 0
        total = self.last.input + self.last.output
        if self.p.count_trailing:
            for e in reversed(s.entries):
                if e.role == "assistant":
                    break
                total += rough_tokens(e.rendered())
        return total

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.last = u
        return ()

    def wake(self, s: SessionView) -> Wake:
        """It compacts before a step whose last usage reached the threshold: asked at the first question
        where the last usage does (the after question that records it, then the next before). Skipped
        after questions record a smaller usage, which would not have compacted either. The rough estimate of
        the trailing messages (2.1) is no token count: then it is asked every question."""
        if not s.limits.context_window:
            return NEVER
        if self.p.count_trailing:
            return NEXT_QUESTION
        return Wake(usage=math.ceil(self.threshold(s)))

    def before_step(self, s: SessionView) -> Sequence[Action]:
        """``autoCompactIfNeeded`` before the call, once the step's tool results are in the view."""
        if self.last is None or not s.limits.context_window or self.count(s) < self.threshold(s):
            return ()
        self.last = None
        return [self.compact(s, "auto")]

    def manual(self, s: SessionView) -> Compact:
        """``/compact``: the same summary of the whole view, asked by the user."""
        return self.compact(s, "manual")

    def instruction(self) -> str:
        extra = self.p.custom_instructions.strip()
        return self.p.compact_prompt + (ADDITIONAL_INSTRUCTIONS + extra if extra else "")

    def compact(self, s: SessionView, reason: str) -> Compact:
        """The view is summarized; the leading system messages survive verbatim, and with ``keep_last_round``
        the last API round (2.1.217's preserved segment); then the re-attachments."""
        entries = s.entries
        head = 0
        while head < len(entries) and entries[head].role == "system":
            head += 1
        split = len(entries)
        if self.p.keep_last_round:
            split = next((i for i in range(len(entries) - 1, head - 1, -1) if entries[i].role == "assistant"), split)
        prompt = (*s.rendered(0, split), Message("claude-code-compact", "user", (Text(self.instruction()),)))
        request = SummaryRequest(system="", prompt=prompt, source=s.rendered(head, split),
                                 max_output_tokens=self.p.max_summary_tokens)
        suffix = self.p.manual_suffix if reason == "manual" else self.p.summary_suffix
        rendered = [e.rendered() for e in entries]
        kept_reads = {t.key for m in rendered[split:] for p in m.parts if isinstance(p, ToolCall)
                      for t in touches(p) if t.verb == "read"}
        restored = (restored_files(rendered, self.p.restore_files, self.p.restore_tokens_per_file,
                                   self.p.restore_budget, kept_reads)
                    if self.p.restore_files > 0 else [])
        plan = plan_attachment(rendered) if self.p.restore_plan else None
        skills = skill_attachments(rendered, self.p.restore_skills) if self.p.restore_skills > 0 else []
        view: tuple[Slot, ...] = (
            *(Keep(e.id) for e in entries[:head]),
            Insert("user", self.p.summary_prefix, suffix, with_summary=True, origin="summary"),
            *(Keep(e.id) for e in entries[split:]),
            *(Insert("user", text, meta={"restored": path_key(path)}) for path, text in restored),
            *((Insert("user", plan[1], meta={"restored": path_key(plan[0])}),) if plan else ()),
            *(Insert("user", text, meta={"restored": f"skill:{name}"}) for name, text in skills))
        return Compact(reason, view, request, on_failure="unchanged", meta={"threshold": self.threshold(s)})


RESTORE = {"restore_files": RESTORE_FILES, "read_before_edit": True}
V20 = {"output_reserve": OUTPUT_RESERVE_20, "autocompact_buffer": AUTOCOMPACT_BUFFER,
       "compact_prompt": STRUCTURED_PROMPT, **RESTORE}
WINDOW_FLOOR, WINDOW_CAP = 100_000, 1_000_000  # CLAUDE_CODE_AUTO_COMPACT_WINDOW's bounds (2.1.89 schema, 2.1.221)
V21 = {"output_reserve": OUTPUT_RESERVE, "autocompact_buffer": AUTOCOMPACT_BUFFER, "count_trailing": True,
       "compact_prompt": STRUCTURED_PROMPT, "summary_prefix": SUMMARY_PREFIX_21, "summary_suffix": SUMMARY_SUFFIX_21,
       "manual_suffix": TRANSCRIPT_LINE, **RESTORE}
# skills and the plan file re-attached (2.1.88 bundle as public analyses quote it: claude_code_restore)
ATTACH_92 = {"restore_skills": SKILLS_BUDGET, "restore_plan": True}
# 2.1.217: the last API round kept verbatim (compactMetadata.preservedSegment), the continuation after a manual
# compaction too, in its new wording
V217 = {**V21, **ATTACH_92, "large_window": LARGE_WINDOW, "keep_last_round": True,
        "summary_suffix": TRANSCRIPT_LINE + "\n" + RESUME_217, "manual_suffix": TRANSCRIPT_LINE + "\n" + RESUME_217}
PRESETS: dict[str, dict[str, object]] = {
    "2.1.217": {**V217, "window_floor": WINDOW_FLOOR},  # 2.1.217 on
    "current": {**V21, **ATTACH_92, "large_window": LARGE_WINDOW, "window_floor": WINDOW_FLOOR},  # 2.1.196-2.1.216
    "2.1.138": {**V21, **ATTACH_92, "large_window": 0, "window_floor": WINDOW_FLOOR},  # 2.1.138-2.1.195
    "2.1.92": {**V21, **ATTACH_92, "large_window": LARGE_WINDOW_92, "window_floor": WINDOW_FLOOR},  # 2.1.92-2.1.137
    "2.1.21": {**V21, "large_window": 0},  # 2.1.21-2.1.91
    "2.0": V20,  # 2.0.x-2.1.20
}
# The first version each preset models, newest first: the 2.1.21 changelog's "auto-compact triggering too
# early" fix, then the auto-compact window's changes on 1M windows (docstring)
FIRST_VERSIONS = (((2, 1, 217), "2.1.217"), ((2, 1, 196), "current"), ((2, 1, 138), "2.1.138"), ((2, 1, 92), "2.1.92"),
                  ((2, 1, 21), "2.1.21"))
PRESET_VERSIONS = {"2.1.217": "2.1.217 on", "current": "2.1.196-2.1.216", "2.1.138": "2.1.138-2.1.195",
                   "2.1.92": "2.1.92-2.1.137", "2.1.21": "2.1.21-2.1.91", "2.0": "2.0.x-2.1.20"}  # fidelity's rows
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def version_preset(version: str) -> str:
    """The preset of a recorded Claude Code version (``major.minor.patch``, a suffix ignored); ``current``
    for a version it cannot read."""
    m = _VERSION.match(version.strip())
    if m is None:
        return "current"
    parts = tuple(int(x) for x in m.groups())
    return next((preset for first, preset in FIRST_VERSIONS if parts >= first), "2.0")


def log_settings(t: Transcript) -> tuple[dict[str, str], str] | None:
    """A 1M-window session's own auto-compact window, read off its first automatic compaction: Anthropic tunes
    the default per model and plan without a release (#86863), so where a log shows where its tool compacted
    that is the session's window (pre-compaction tokens + the 20,000 output reserve + the 13,000 buffer) and
    the version table serves only logs without one. None on a 200k session, or without such a compaction."""
    first = next((c for c in t.compactions if c.trigger == "auto"), None)
    if first is None or first.tokens_before is None or first.tokens_before <= CLAUDE_CODE_WINDOW:
        return None
    window = first.tokens_before + OUTPUT_RESERVE + AUTOCOMPACT_BUFFER
    return ({"auto_compact_window": str(window), "window_from_log": "true"},
            f"its auto-compact window {window:,} inferred from the log's first automatic compaction at "
            f"{first.tokens_before:,} tokens (+ {OUTPUT_RESERVE:,} output reserve + {AUTOCOMPACT_BUFFER:,} buffer), "
            "not the version's default")


# where an environment variable goes: the shell that starts claude, or settings.json's "env" block (users report the block
# ignored by some versions for this variable: the shell is the sure place)
WHERE_ENV = ("your shell's environment before `claude` starts (or \"env\": {{\"{name}\": \"...\"}} in "
             "~/.claude/settings.json, which some versions are reported to ignore)")
# the override's unset value among the percentages tried: the default threshold is 167,000 of a 200k window's 180,000
# (window less the output reserve), about 92.8%
UNSET_PCT = round(100 * (200_000 - OUTPUT_RESERVE - AUTOCOMPACT_BUFFER) / (200_000 - OUTPUT_RESERVE), 1)


def override_caveat(version: str, window: int) -> str:
    """What limits CLAUDE_AUTOCOMPACT_PCT_OVERRIDE on a log of ``version`` at ``window`` (issue 41's reading of the
    published packages): on 1M windows proactive compaction depends on the version and the window's source (a
    server-side flag can turn it off from 2.1.139); from 2.1.217 a window whose source is "auto" compacts only
    reactively, leaving nothing for the override to lower unless the window is set."""
    from compbench.sdk.tools import version_tuple

    v = version_tuple(version) or ()
    if window > 200_000:
        return ("on a 1M window the override acts only where proactive compaction is on (from 2.1.139 a server-side "
                "flag can turn it off on 1M windows; from 2.1.217 only with the window set, not \"auto\")")
    if v >= (2, 1, 217):
        return ("from 2.1.217 a window whose source is \"auto\" compacts only reactively: set "
                "CLAUDE_CODE_AUTO_COMPACT_WINDOW too for the override to act")
    return ""


# What Claude Code's users set (code.claude.com/docs env-vars and settings; the clamps from the bundle as quoted
# in anthropics/claude-code #31806 and decompiles of 2.1.221/2.1.258): the override can only lower the threshold
# (min(floor((W - reserve) * pct / 100), W - reserve - 13,000)), a value outside (0, 100] is ignored; the window
# is min(the model's, the value).
TOOL = Tool(
    "Claude Code", ("claude-code",), newest="2.1.217", version_preset=version_preset,
    preset_versions=PRESET_VERSIONS, log_settings=log_settings,
    settings=(
        Setting("autocompact_pct_override", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", WHERE_ENV.format(
                    name="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"), "unset: 167,000 of a 200k window",
                "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={value}",
                sweep=(60.0, 80.0), note="a percentage of the window less the output reserve; it can only lower the "
                "threshold (above about 92 on a 200k window it changes nothing), a value outside (0, 100] is ignored",
                unset_at=UNSET_PCT, caveat=override_caveat,
                accepts=Accepts(0, 100, open_lo=True, unset=0, outside="Claude Code ignores any other value")),
        Setting("auto_compact_window", "CLAUDE_CODE_AUTO_COMPACT_WINDOW", "your shell's environment before `claude` "
                "starts (or \"autoCompactWindow\" in ~/.claude/settings.json)",
                "the model's window, or Anthropic's default for a 1M model",
                "export CLAUDE_CODE_AUTO_COMPACT_WINDOW={value}",
                note="never above the model's window; 2.1.221 and later clamp it to 100,000-1,000,000",
                accepts=Accepts(100_000, 1_000_000, unset=0, refuse=False,
                                outside="Claude Code 2.1.221 and later clamp it into that range")),
    ))


@strategy("claude-code", params=ClaudeCodeParams,
          source="seed 002 + Claude Code session files (CLI 2.0.60–2.1.49) + reports of its 1M-window rule (2.1.92–2.1.196)",
          summary="at ~95% of the window, summarize the whole history into one continuation message",
          presets=PRESETS, tool=TOOL)
def claude_code(p: ClaudeCodeParams) -> ClaudeCode:
    return ClaudeCode(p)
