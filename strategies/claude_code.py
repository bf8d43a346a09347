"""``compbench.strategies.claude_code`` — ``claude-code``: Claude Code's auto-compact (seed 002 + real sessions of CLI
2.0.60–2.1.49 and 2.1.217 + its published packages, 2.0.76–2.1.332 + public reports of its 1M-window rule).

Seed 002: ``/compact [instructions]`` or automatically at ~95% of the window; the whole history is
summarized and the session continues from the summary alone. Custom instructions are appended as
Claude Code does (``"\\n\\nAdditional Instructions:\\n" + text``). Claude Code is closed source: what
follows is read from its own session files (../shared/transcripts, ../shared/real-compactions), its
published packages (the versions read and each preset's boundary: :mod:`.claude_code_versions`; the window's
source, the reactive and idle compactions: :mod:`.claude_code_window`), its changelog, and public analyses of its
bundle, each marked known or inferred.

**Threshold** (``autocompact_buffer`` > 0): ``W - min(max_output, output_reserve) - autocompact_buffer``,
W the window (the environment variable's, settings.json's, the server's or the model's default, each capped at the
model's window, else the model's: :mod:`.claude_code_window`), and with
CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (``autocompact_pct_override``) ``min(floor((W - reserve) * pct / 100),
that)``: the override can only lower it. The formula, the 13,000 buffer and the override's clamp are
from public analyses of the bundle (anthropics/claude-code issues #12004, 2.0.x: ``nx1 = 13000``,
threshold = available input - 13000; #31806: the ``Math.min`` clamp; autoCompact.ts of 2.1.88 as
quoted there: reserve = ``min(maxOutputTokensForModel, MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000)``).
The reserve per version is bounded by the logs' own compactions (:mod:`.claude_code_versions`).

**On a 1M window** Claude Code compacts against an auto-compact window of its own (``large_window``: the server's
default, or none), after the user's settings; the evidence per version range is in :mod:`.claude_code_versions`.
From 2.1.191 a window whose source is ``auto`` is never compacted before the API refuses it
(:mod:`.claude_code_window`).

**Count**: the last call's usage, input with cache reads and writes + output, as Claude Code logs it.
2.0.76 compares that alone (known: c7d2069e's preTokens 155,548 = 154,835 + 713 exactly, with a
1,561-character tool result after the call left out). 2.1 adds its rough estimate of the messages
after the call (``count_trailing``; ``tokenCountWithEstimation``: characters / 4, rounded, per content
block, 2,000 per image; named in the 2.1.88 bundle as quoted by public analyses): seen in preTokens
exceeding the last usage by more than the call's output can be (9d7a9d52: 164,865 → 167,066 after a
thinking block and one short Grep call, whose result the log lacks). When 2.0.x stopped and 2.1 started
doing so is inferred (2.1.21, with the reserve). The check runs before each model call (``autoCompactIfNeeded`` at the top of the query
loop): after a step's tool results are recorded, so they are summarized too.

**New context**: the leading system messages, then one user message in Claude Code's wording
(:mod:`.claude_code_text`). A failed summary leaves the view unchanged.

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
edits after the last read applied), the invoked skills (whole through 2.1.83; from 2.1.84 5,000 rough tokens
each, 25,000 together) and the plan file through its own channel, both from 2.0.76.

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
* *Idle compaction* is modelled from 2.1.299 (:mod:`.claude_code_window`); no log of those versions is in
  ../shared.

**The summary prompt**: the structure the real summaries show, in our words (:mod:`.claude_code_text`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from compbench.errors import UsageError
from compbench.sdk import (
    NEVER,
    NEXT_QUESTION,
    Action,
    Compact,
    Insert,
    Keep,
    Media,
    Message,
    Reasoning,
    SessionView,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    Wake,
    path_key,
    touches,
)
from compbench.sdk.registry import strategy
from compbench.strategies.claude_code_params import ClaudeCodeParams
from compbench.strategies.claude_code_restore import plan_attachment, restored_files, rough, skill_attachments
from compbench.strategies.claude_code_text import (
    ADDITIONAL_INSTRUCTIONS,
    COMPACT_PROMPT,
    RESUME_217,
    SECTIONS,
    STRUCTURED_PROMPT,
    SUMMARY_PREFIX,
    SUMMARY_PREFIX_21,
    SUMMARY_SUFFIX,
    SUMMARY_SUFFIX_21,
    TRANSCRIPT_LINE,
)
from compbench.strategies.claude_code_versions import (
    AUTOCOMPACT_BUFFER,
    NEWEST,
    PRESET_VERSIONS,
    PRESETS,
    SETTINGS,
    WINDOW_CAP,
    log_preset,
    log_settings,
    version_preset,
)
from compbench.strategies.claude_code_window import (
    HELD_WINDOW,
    IDLE_FLOOR,
    PRECOMPUTE_SHARE,
    SOURCE_RULES,
    SOURCES,
    known,
    model_default,
    prompt_after_idle,
    session_model,
)

# re-exported: the parameters and the texts (tests, plug-ins), the real post-compaction view's files
# (validation.reacquisition), a log's preset (run.missing_usage, recorded)
__all__ = ["COMPACT_PROMPT", "NEWEST", "PRESETS", "RESUME_217", "SECTIONS", "STRUCTURED_PROMPT", "SUMMARY_PREFIX",
           "SUMMARY_PREFIX_21", "SUMMARY_SUFFIX", "SUMMARY_SUFFIX_21", "TRANSCRIPT_LINE", "ClaudeCode",
           "ClaudeCodeParams", "restored_files", "rough_tokens", "version_preset"]

CLAUDE_CODE_WINDOW = HELD_WINDOW  # the window Claude Code runs a model at unless the 1M window is on
IMAGE_TOKENS = 2_000  # roughTokenCountEstimation of an image or document block (2.1 bundle)


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
        if p.window_source not in SOURCES or (p.source_rule and p.source_rule not in SOURCE_RULES):
            raise UsageError(f"claude-code: window_source is one of {', '.join(repr(x) for x in SOURCES)} and "
                             f"source_rule one of {', '.join(SOURCE_RULES)}")
        self.p = p
        self.last: Usage | None = None
        self.read_before_edit = p.read_before_edit
        self.armed: str | None = None  # the entry a precomputed summary ends at
        self._model: tuple[SessionView, int, int, str] | None = None  # the view, revision, entries, its model

    def window(self, s: SessionView) -> tuple[int, str]:
        """The window Claude Code compacts against and its source (``TK``): the environment variable, then
        settings.json, then the server's, then the model's default; else the model's whole window, ``auto``."""
        w, p = s.limits.context_window, self.p
        if p.disable_1m:
            w = min(w, HELD_WINDOW)
        if p.auto_compact_window > 0 and p.window_from_log:  # where the log shows its tool compacted
            return p.auto_compact_window, "server"
        if p.auto_compact_window > 0:  # the user's setting comes before Claude Code's own default
            v = p.auto_compact_window
            if p.window_floor:  # clamped to 100k-1M as the tool does (a value it changes is what it does)
                v = min(max(v, p.window_floor), WINDOW_CAP)
            return min(w, v), "env"
        if p.settings_window > 0 and (not p.window_floor or p.window_floor <= p.settings_window <= WINDOW_CAP):
            return min(w, p.settings_window), "settings"  # out of range: the schema drops it (.catch), not clamped
        if p.large_window > 0 and w > CLAUDE_CODE_WINDOW:
            return min(w, p.large_window), "server"
        if p.window_source:
            return w, p.window_source
        if not p.source_rule:
            return w, "model-default"
        model = self.model(s)
        if not model:  # a log that names no model: its source cannot be read, the threshold it always had
            return w, "model-default"
        default = model_default(SOURCE_RULES[p.source_rule], model, w)
        if default is not None:
            return min(w, default), "model-default"
        if SOURCE_RULES[p.source_rule].unknown_model and not known(model):
            return w, "unknown-model"
        return w, "auto"

    def model(self, s: SessionView) -> str:
        """:func:`session_model`, read again only over the entries that joined since the last question (the
        same view, its revision unchanged): a log naming no model is not scanned whole at every question."""
        entries, c = s.entries, self._model
        if c is not None and c[0] is s and c[1] == s.revision and c[2] <= len(entries):
            model = session_model(entries[c[2]:]) or c[3]
        else:
            model = session_model(entries)
        self._model = (s, s.revision, len(entries), model)
        return model

    def threshold(self, s: SessionView) -> float:
        w, _ = self.window(s)
        if self.p.autocompact_buffer <= 0:
            return self.p.threshold_ratio * w
        effective = w - min(s.limits.max_output, self.p.output_reserve)
        threshold = effective - self.p.autocompact_buffer
        pct = self.p.autocompact_pct_override
        if 0 < pct <= 100:
            return min(math.floor(effective * pct / 100), threshold)
        return threshold

    def reactive(self, s: SessionView) -> bool:
        """The proactive check does not run (2.1.191 on, the window's source ``auto``): Claude Code compacts when
        the API refuses the request as longer than the model's window."""
        return bool(self.p.source_rule) and self.window(s)[1] == "auto"

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

    def request_tokens(self, s: SessionView) -> int:
        """What the API counts of the next request: the last call's usage plus the messages since, as the replay
        counts them (Claude Code's own rough estimate undercounts: 2.1.219's 998,659 on a 1M window)."""
        if self.last is None:
            return 0
        trailing = 0
        for e in reversed(s.entries):
            if e.role == "assistant":
                break
            trailing += e.tokens
        return self.last.input + self.last.output + trailing

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        self.last = u
        self._arm(s)
        return ()

    def _arm(self, s: SessionView) -> None:
        """A precomputed summary starts when the count reaches ``min(0.8 x (W - reserve), W - reserve - 13,000)``."""
        if not self.p.precompute or self.armed is not None or not s.entries:
            return
        w, source = self.window(s)
        if source != "auto" and w < HELD_WINDOW:
            return
        effective = w - min(s.limits.max_output, self.p.output_reserve)
        if self.count(s) >= min(effective - round(effective * PRECOMPUTE_SHARE), effective - AUTOCOMPACT_BUFFER):
            self.armed = s.entries[-1].id

    def wake(self, s: SessionView) -> Wake:
        """It compacts before a step whose last usage reached the threshold: asked at the first question
        where the last usage does (the after question that records it, then the next before). Skipped
        after questions record a smaller usage, which would not have compacted either. The rough estimate of
        the trailing messages (2.1), the reactive, idle and precomputed compactions need the view itself: then it
        is asked every question."""
        if not s.limits.context_window:
            return NEVER
        p = self.p
        if p.count_trailing or p.source_rule or p.idle_compact or p.precompute:
            return NEXT_QUESTION
        return Wake(usage=math.ceil(self.threshold(s)))

    def before_step(self, s: SessionView) -> Sequence[Action]:
        """``autoCompactIfNeeded`` before the call, once the step's tool results are in the view; the idle timer
        before it (the prompt that ended the gap joins a compacted conversation); the API's refusal where the
        proactive check does not run."""
        if self.last is None or not s.limits.context_window:
            return ()
        idle = self._idle(s)
        if idle is not None:
            self.last = None
            return [self.compact(s, "idle", stop=idle)]
        if self.reactive(s):
            if self.request_tokens(s) <= s.limits.context_window:
                return ()
            reason = "reactive"
        elif self.count(s) < self.threshold(s):
            return ()
        else:
            reason = "auto"
        self.last = None
        return [self.compact(s, reason)]

    def _idle(self, s: SessionView) -> int | None:
        """Where the prompt that ended an idle gap sits, when the idle timer compacted before it; else None."""
        if not self.p.idle_compact or self.last is None:
            return None
        found = prompt_after_idle(s.entries)
        if found is None or self.last.input + self.last.output < max(IDLE_FLOOR, self.p.idle_compact_tokens):
            return None
        return found[1]

    def manual(self, s: SessionView) -> Compact:
        """``/compact``: the same summary of the whole view, asked by the user."""
        return self.compact(s, "manual")

    def instruction(self) -> str:
        extra = self.p.custom_instructions.strip()
        return self.p.compact_prompt + (ADDITIONAL_INSTRUCTIONS + extra if extra else "")

    def compact(self, s: SessionView, reason: str, stop: int | None = None) -> Compact:
        """The view up to ``stop`` (all of it by default) is summarized; the leading system messages survive
        verbatim, and with ``keep_last_round`` the last API round (2.1.217's preserved segment), with a precomputed
        summary what came after it; then the re-attachments, then what came from ``stop`` on."""
        entries = s.entries
        end = len(entries) if stop is None else stop
        head = 0
        while head < end and entries[head].role == "system":
            head += 1
        split = end
        if self.armed is not None:
            at = next((i for i in range(head, end) if entries[i].id == self.armed), None)
            split = end if at is None else at + 1
        self.armed = None
        if self.p.keep_last_round:
            split = next((i for i in range(split - 1, head - 1, -1) if entries[i].role == "assistant"), split)
        prompt = (*s.rendered(0, split), Message("claude-code-compact", "user", (Text(self.instruction()),)))
        request = SummaryRequest(system="", prompt=prompt, source=s.rendered(head, split),
                                 max_output_tokens=self.p.max_summary_tokens)
        suffix = self.p.manual_suffix if reason == "manual" else self.p.summary_suffix
        rendered = [e.rendered() for e in entries[:end]]
        kept_reads = {t.key for m in rendered[split:] for p in m.parts if isinstance(p, ToolCall)
                      for t in touches(p) if t.verb == "read"}
        restored = (restored_files(rendered, self.p.restore_files, self.p.restore_tokens_per_file,
                                   self.p.restore_budget, kept_reads)
                    if self.p.restore_files > 0 else [])
        plan = plan_attachment(rendered) if self.p.restore_plan else None
        skills = (skill_attachments(rendered, self.p.skills_budget, self.p.skill_tokens, rendered[split:])
                  if self.p.restore_skills else [])
        view: tuple[Slot, ...] = (
            *(Keep(e.id) for e in entries[:head]),
            Insert("user", self.p.summary_prefix, suffix, with_summary=True, origin="summary"),
            *(Keep(e.id) for e in entries[split:end]),
            *(Insert("user", text, meta={"restored": path_key(path)}) for path, text in restored),
            *((Insert("user", plan[1], meta={"restored": path_key(plan[0])}),) if plan else ()),
            *(Insert("user", text, meta={"restored": f"skill:{name}"}) for name, text in skills),
            *(Keep(e.id) for e in entries[end:]))
        source = {"window_source": self.window(s)[1]} if self.p.source_rule else {}
        return Compact(reason, view, request, on_failure="unchanged", meta={"threshold": self.threshold(s), **source})


TOOL = Tool(
    "Claude Code", ("claude-code",), newest=NEWEST, version_preset=version_preset, log_preset=log_preset,
    preset_versions=PRESET_VERSIONS, log_settings=log_settings, settings=SETTINGS)


@strategy("claude-code", params=ClaudeCodeParams,
          upstream="seed 002 + Claude Code session files (CLI 2.0.60–2.1.217) + its packages (2.0.76–2.1.332)",
          summary="at ~95% of the window, summarize the whole history into one continuation message",
          presets=PRESETS, tool=TOOL, version="2")
def claude_code(p: ClaudeCodeParams) -> ClaudeCode:
    return ClaudeCode(p)
