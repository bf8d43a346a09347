"""``compbench.strategies.claude_code`` — ``claude-code``: Claude Code's auto-compact (seed 002 + real sessions of CLI
2.0.60–2.1.49).

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
fits the logs as well as ``W - reserve - 13,000``; the additive form is the bundle's. A session on a
1M window would tell them apart (none in ../shared). **On a 1M window** Claude Code compacts against an
auto-compact window of its own (the user's CLAUDE_CODE_AUTO_COMPACT_WINDOW / ``autoCompactWindow`` first,
then a default it may tune server-side): public reports give 400k from 2.1.92 (367k thresholds seen on
2.1.119) and 500k on 2.1.196, the whole window before 2.1.92. ``current`` uses 400k (``large_window``;
inferred, not checked on a log of ours); ``large_window=0`` models 2.1.21–2.1.91, 500000 later reports.

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

**The summary prompt**: known only through its output. All 16 real summaries (2.0.60–2.1.49) carry the
same nine numbered sections (Primary Request and Intent, Key Technical Concepts, Files and Code
Sections, Errors and fixes, Problem Solving, All user messages, Pending Tasks, Current Work, Optional
Next Step) and 14 start with an "Analysis:" block before "Summary:", so the real prompt asks for an
analysis, then those sections: not the six-line community prompt of seed 002 (kept as the seed's).
``preset=current`` and ``2.0`` ask for that structure in our own words (the wording is assumed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compbench.data.transcript import Media, Message, Reasoning, Text, ToolCall, ToolResult, Usage
from compbench.replay.session import (
    NEVER,
    NEXT_QUESTION,
    Action,
    Compact,
    Insert,
    Keep,
    SessionView,
    Slot,
    SummaryRequest,
    Wake,
)
from compbench.sdk.registry import param, strategy

THRESHOLD_RATIO = 0.95  # seed 002: "Triggers at ~95% context capacity"
OUTPUT_RESERVE_20 = 32_000  # 2.0.x: min(max output, 32,000) reserved; inferred from 2.0.76's 155,000 trigger
OUTPUT_RESERVE = 20_000  # 2.1.21+: MAX_OUTPUT_TOKENS_FOR_SUMMARY (2.1 bundle, issue #31806); 167,000 in the logs
AUTOCOMPACT_BUFFER = 13_000  # AUTOCOMPACT_BUFFER_TOKENS (bundle, issue #12004: ``nx1 = 13000``)
CLAUDE_CODE_WINDOW = 200_000  # the window Claude Code runs a model at unless the 1M window is on
# The auto-compact window on a 1M window (inferred from public reports, none of our logs has one): 2.1.92
# capped it at 400k (anthropics/claude-code #43989: `/context` shows .../400k; #54056: four 2.1.119
# compactions at 360,677-366,989 = 400,000 - 20,000 - 13,000 + the messages since the last call); 2.1.196
# reported 468,102 (#72600: a 500k window); 2.1.91 and earlier used the whole window.
LARGE_WINDOW = 400_000
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
SUMMARY_SUFFIX_21 = TRANSCRIPT_LINE + "\n" + CONTINUE.replace("left it off", "left off")  # 2.1.42–2.1.49, auto


@dataclass(frozen=True)
class ClaudeCodeParams:
    """Seed defaults; ``autocompact_buffer`` > 0 switches to the window - reserve - buffer threshold."""

    threshold_ratio: float = param(
        THRESHOLD_RATIO,
        "Compact when the tokens reach this share of the window (the seed's ~95%; used when "
        "autocompact_buffer is 0).")
    output_reserve: int = param(
        0, "Output tokens reserved below the window, at most the model's max output (2.0: 32k, 2.1: 20k).")
    autocompact_buffer: int = param(
        0, "Extra tokens kept free: threshold = window - reserve - buffer (13k; 0 uses threshold_ratio).")
    count_trailing: bool = param(False, "Add Claude Code 2.1's rough estimate of the messages after the last call.")
    autocompact_pct_override: float = param(
        0.0, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: a percentage that can only lower the threshold (0: unset).")
    auto_compact_window: int = param(
        0, "CLAUDE_CODE_AUTO_COMPACT_WINDOW: a window smaller than the model's (0: unset).")
    large_window: int = param(
        0, "The auto-compact window Claude Code itself uses when the model runs a 1M window and no "
           "CLAUDE_CODE_AUTO_COMPACT_WINDOW is set (0: the whole window; current: 400,000, reported from 2.1.92).")
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


def _js_len(text: str) -> int:
    """JavaScript's ``String.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _rough(text: str) -> int:
    """``roughTokenCountEstimation``: ``Math.round(length / 4)``."""
    return math.floor(_js_len(text) / 4 + 0.5)


def rough_tokens(m: Message) -> int:
    """Claude Code's rough estimate of a message, block by block (text, tool input, tool result, thinking;
    an image or document counts 2,000)."""
    total = 0
    for p in m.parts:
        if isinstance(p, Text):
            total += _rough(p.text)
        elif isinstance(p, ToolCall):
            total += _rough(p.name + p.args)
        elif isinstance(p, ToolResult):
            total += _rough(p.output)
        elif isinstance(p, Reasoning) and not p.encrypted:
            total += _rough(p.text)
        elif isinstance(p, Media):
            total += IMAGE_TOKENS
    return total


class ClaudeCode:
    name = "claude-code"

    def __init__(self, p: ClaudeCodeParams) -> None:
        self.p = p
        self.last: Usage | None = None

    def threshold(self, s: SessionView) -> float:
        w = s.limits.context_window
        if self.p.auto_compact_window > 0:  # the user's setting comes before Claude Code's own default
            w = min(w, self.p.auto_compact_window)
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
        """The whole view is summarized; only the leading system messages survive verbatim."""
        head = 0
        while head < len(s.entries) and s.entries[head].role == "system":
            head += 1
        prompt = (*s.rendered(), Message("claude-code-compact", "user", (Text(self.instruction()),)))
        request = SummaryRequest(system="", prompt=prompt, source=s.rendered(head),
                                 max_output_tokens=self.p.max_summary_tokens)
        suffix = self.p.manual_suffix if reason == "manual" else self.p.summary_suffix
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:head]),
                                  Insert("user", self.p.summary_prefix, suffix, with_summary=True, origin="summary"))
        return Compact(reason, view, request, on_failure="unchanged", meta={"threshold": self.threshold(s)})


V20 = {"output_reserve": OUTPUT_RESERVE_20, "autocompact_buffer": AUTOCOMPACT_BUFFER,
       "compact_prompt": STRUCTURED_PROMPT}
V21 = {"output_reserve": OUTPUT_RESERVE, "autocompact_buffer": AUTOCOMPACT_BUFFER, "count_trailing": True,
       "compact_prompt": STRUCTURED_PROMPT, "summary_prefix": SUMMARY_PREFIX_21, "summary_suffix": SUMMARY_SUFFIX_21,
       "manual_suffix": TRANSCRIPT_LINE, "large_window": LARGE_WINDOW}
FIRST_21_RULE = (2, 1, 21)  # the changelog's "auto-compact triggering too early" fix


def version_preset(version: str) -> str:
    """The preset of a Claude Code version: ``2.0`` before 2.1.21, ``current`` from it on."""
    try:
        parts = tuple(int(x) for x in version.split(".")[:3])
    except ValueError:
        return "current"
    return "2.0" if parts < FIRST_21_RULE else "current"


@strategy("claude-code", params=ClaudeCodeParams, source="seed 002 + Claude Code session files (CLI 2.0.60–2.1.49)",
          summary="at ~95% of the window, summarize the whole history into one continuation message",
          presets={"current": V21, "2.0": V20})
def claude_code(p: ClaudeCodeParams) -> ClaudeCode:
    return ClaudeCode(p)
