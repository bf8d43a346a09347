"""``compbench.strategies.gemini_cli`` — ``gemini-cli-compression``: Gemini CLI's chat compression
(google-gemini/gemini-cli).

Read at 5411f113ca (2026-08-21, after v0.49.0-preview.0): ``packages/core/src/context/chatCompressionService.ts``,
``core/client.ts`` (``processTurn``, ``tryCompressChat``, ``startChat``), ``core/tokenLimits.ts``,
``utils/tokenCalculation.ts``, ``utils/fileUtils.ts`` (``formatTruncatedToolOutput``), ``config/config.ts``
(``getTruncateToolOutputThreshold``, ``DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD``), ``utils/environmentContext.ts``,
``prompts/snippets.legacy.ts``; older versions at the tags named in the presets.

When: before every model call (``processTurn`` calls ``tryCompressChat`` first, then masks tool outputs:
:mod:`.gemini_cli_masking`), if the prompt tokens the API reported for the *previous* call reach
``threshold`` x ``tokenLimit(model)`` (``originalTokenCount < threshold * limit`` is the no-op). The
history is the chat before the request being sent (:mod:`.gemini_cli_history`).

What: (1) ``truncateHistoryToBudget``: from the newest function response back, responses are kept whole
while their estimated tokens fit 50,000; each one past the budget becomes ``formatTruncatedToolOutput`` of
its text (saved to a file: first 20% and last 80% of at most min(4 x the tokens left in the window, 40,000)
characters, with the file's path), so only outputs longer than that change. (2) ``findCompressSplitPoint``
at 0.7 of the truncated history's JSON characters: the first user Content without function responses at or
after that mark, else the last such one before it, else everything when the history ends with a model turn
without calls. (3) The summarizer (system: the ``<state_snapshot>`` prompt) gets the original older part
(the truncated one if its estimate reaches the token limit) and an instruction whose anchor asks to fold a
previous ``<state_snapshot>`` (an earlier compbench summary counts as one: the offline summarizers do not
write the tag), then (4) a verification call sees that answer and may replace it (a blank answer keeps the
first). (5) New history: the snapshot as a user message, the model's "Got it. Thanks for the additional
context!", the newer part with its truncated outputs; the request follows.

A truncated output is measured once per text and character cap: cut again, it keeps its first file name.

Failure paths: a blank snapshot is rejected (``COMPRESSION_FAILED_EMPTY_SUMMARY``, the view stays, nothing
remembered); a new history whose estimate (the estimator of :mod:`.gemini_cli_history`, without the system
instruction, as Gemini CLI counts it) exceeds the previous prompt's reported tokens is rejected
(``COMPRESSION_FAILED_INFLATED_TOKEN_COUNT``) and sets ``hasFailedCompressionAttempt``: from then on an
automatic compression only truncates old tool outputs (applied when that estimate is below the last prompt),
until a compression succeeds (``startChat`` resets the flag). A summarizer error leaves the view unchanged
(Gemini CLI's turn would fail with it). ``/compress`` (``manual``) ignores the threshold and the flag.

Presets: ``0.26`` (v0.26-v0.28: truncated outputs show their last 30 lines, the flag stops automatic
compression), ``0.18`` (v0.18-v0.19: threshold 0.5, no truncation, one call with the first prompt, no blank
check, the new history counted as JSON characters / 4) and ``0.17`` (the released v0.17.0, 079dfef2f7: the
same, at 0.5). 0.7 was only in v0.17's previews (6d83d34, 2025-11-14, in v0.17.0-preview.0 to .2; c7b5dcd made
it 0.5, cherry-picked as d3bf3af4a4 into preview.3 and the release); v0.12.0-v0.16.0 shipped 0.2 and v0.11.0
and earlier 0.7, which no preset models. :func:`version_preset` maps a recorded version to its preset.

Not this service (issue 41, read at 5411f11 and v0.38.0/v0.41.0/v0.45.0/v0.56.0): ``experimental.contextManagement``
in ``settings.json`` (a boolean, default false, from v0.37.0-preview.0, dfba0e91e2, where it drove the older
``AgentHistoryProvider``; also ``experimental.generalistProfile``) *replaces* it: ``processTurn`` then skips
``tryCompressChat`` and, from v0.41.0-preview.0 (71f313b51a), renders the history through ``ContextManager`` with
the generalist profile (retainedTokens 65,000, maxTokens 150,000,
coalescingThresholdTokens 5,000; new tool outputs masked past 8,000 tokens and distilled past 15,000, state
snapshots past 150,000, estimated at 3 characters a token with a learned weight). That pipeline is its own
strategy, :mod:`.gemini_cli_context` (``gemini-cli-context``; ``gemini-cli:preset=context`` is Gemini CLI with it
on, tool-output masking still after it); this composition's default stays this service, as the tool ships. The
threshold 0.5, the newest 30% kept and the 50,000-token budget for function responses are this service's, not
that pipeline's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from compbench.errors import UsageError
from compbench.sdk import (
    PREVIOUS_ANSWER,
    Action,
    Compact,
    Followup,
    Insert,
    Keep,
    Message,
    Prune,
    SessionView,
    Setting,
    Slot,
    SummaryRequest,
    Text,
    Tool,
    ToolResult,
    Usage,
    Wake,
)
from compbench.sdk.registry import param, strategy
from compbench.strategies import gemini_cli_prompts as prompts
from compbench.strategies.gemini_cli_history import (
    EMPTY_CONTENT,
    PROJECT_TEMP_DIR,
    Cache,
    Content,
    Measured,
    Ref,
    contents,
    estimate_part,
    estimate_text,
    history_bounds,
    js_len,
    js_slice,
    response_text,
    safe_name,
    stringify,
)

DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5  # chatCompressionService.ts @ 5411f11 and v0.17.0 (0.7 in v0.17's previews)
COMPRESSION_PRESERVE_THRESHOLD = 0.3  # chatCompressionService.ts @ 5411f11
COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000  # chatCompressionService.ts @ 5411f11
DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 40_000  # config/config.ts @ 5411f11
HEAD_FRACTION = 0.2  # fileUtils.ts formatTruncatedToolOutput @ 5411f11: first 20%, last 80%
COMPRESSION_TRUNCATE_LINES = 30  # chatCompressionService.ts @ v0.26.0
MAX_TRUNCATED_LINE_WIDTH = 1_000  # fileUtils.ts @ v0.26.0
MAX_TRUNCATED_CHARS = 4_000  # fileUtils.ts @ v0.26.0 (a single-line output)
CHARS_PER_TOKEN = 4  # config.ts getTruncateToolOutputThreshold: "1 token ~= 4 chars"; tokenCalculation.ts too


@dataclass(frozen=True)
class GeminiCliParams:
    threshold: float = param(DEFAULT_COMPRESSION_TOKEN_THRESHOLD, "compressionThreshold: compress when the previous prompt's tokens reach this fraction of the model's token limit.", hi=1)
    token_limit: int = param(0, "tokenLimit(model) (1,048,576 for Gemini models); 0 takes the simulated window's input limit.")
    preserve_fraction: float = param(COMPRESSION_PRESERVE_THRESHOLD, "COMPRESSION_PRESERVE_THRESHOLD: the newest share of the history, by JSON characters, kept verbatim.", hi=1)
    tool_budget: int = param(COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET, "Estimated tokens of the newest tool outputs kept whole; older outputs are truncated (0: no truncation, as before v0.26).")
    truncation: Literal["chars", "lines"] = param("chars", "How an old tool output is cut: 'chars' keeps its first 20% and last 80% of the allowed characters, 'lines' its last 30 lines (v0.26-v0.28).")
    truncate_threshold: int = param(DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD, "truncateToolOutputThreshold: the most characters kept of an old tool output (also capped at 4 x the tokens left).")
    prompt: Literal["current", "0.26", "0.17"] = param("current", "Which version's system prompt and instruction are sent: 'current', '0.26' or '0.17'.")
    verify: bool = param(True, "Send the self-verification call, use its snapshot, and reject a blank one (v0.26+).")
    after_failure: Literal["truncate", "stop"] = param("truncate", "After a compression rejected for growing the context: 'truncate' old tool outputs only (v0.31+) or 'stop' compressing automatically.")
    new_count: Literal["parts", "json"] = param("parts", "How the new history is counted against the last prompt: 'parts' (estimateTokenCountSync, v0.20+) or 'json' (JSON characters / 4, v0.17-v0.19).")


PROMPTS: dict[str, tuple[str, str | None]] = {  # system prompt, instruction (None: the anchored one)
    "current": (prompts.SYSTEM_PROMPT, None),
    "0.26": (prompts.SYSTEM_PROMPT_026, None),
    "0.17": (prompts.SYSTEM_PROMPT_017, prompts.INSTRUCTION_017),
}
LEGACY = {"tool_budget": 0, "prompt": "0.17", "verify": False, "after_failure": "stop", "new_count": "json"}


class GeminiCli:
    """One replay: ``failed`` is ``hasFailedCompressionAttempt``, ``truncations`` the session's truncation ids."""

    name = "gemini-cli-compression"

    def __init__(self, p: GeminiCliParams) -> None:
        if not 0 < p.preserve_fraction < 1:
            raise UsageError("gemini-cli: preserve_fraction must be between 0 and 1 (findCompressSplitPoint)")
        self.p = p
        self.failed = False
        self.truncations = 0
        self._parts: Cache = {}  # each message's Gemini parts, measured once per rendering
        self._cut: dict[tuple[Ref | None, str, int], Measured] = {}  # truncated outputs, measured once

    def token_limit(self, s: SessionView) -> int:
        return self.p.token_limit or s.limits.input_limit

    def before_step(self, s: SessionView) -> Sequence[Action]:
        u = s.last_usage
        if u is None or self.p.threshold <= 0 or u.input < self.p.threshold * self.token_limit(s):
            return ()
        act = self.compress(s, u.input, force=False)
        return (act,) if act is not None else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """It compresses before a step whose last prompt reached ``threshold`` of the token limit (the
        prompt is at most the usage's input + output)."""
        if self.p.threshold <= 0:
            return Wake()
        return Wake(usage=math.ceil(self.p.threshold * self.token_limit(s)))

    def manual(self, s: SessionView) -> Compact | None:
        """``/compress``: ``tryCompressChat(force=true)``."""
        original = s.last_usage.input if s.last_usage is not None else s.context_tokens
        act = self.compress(s, original, force=True)
        return act if isinstance(act, Compact) else None

    # --- truncateHistoryToBudget ----------------------------------------------------------------------
    def truncate(self, hist: list[Content], original: int, limit: int) -> tuple[list[Content], dict[Ref, str]]:
        """The history with old function responses truncated, and the placeholder of each part it changed."""
        if self.p.tool_budget <= 0:
            return hist, {}
        max_chars = min(CHARS_PER_TOKEN * (limit - original), self.p.truncate_threshold)
        used = 0
        marks: dict[Ref, str] = {}
        out = list(hist)
        for i in range(len(out) - 1, -1, -1):
            c = out[i]
            for j in range(len(c.parts) - 1, -1, -1):
                fr = c.parts[j].get("functionResponse")
                if fr is None:
                    continue
                tokens = c.text_tokens[j]
                if used + tokens <= self.p.tool_budget:
                    used += tokens
                    continue
                self.truncations += 1  # config.getNextCompressionTruncationId()
                text = response_text(fr["response"])
                key = (c.refs[j], text, max_chars)
                cut = self._cut.get(key)
                if cut is None:  # measured once: an output cut again keeps its first file name
                    message = self.format(text, safe_name(fr.get("name") or "unknown_tool"), max_chars)
                    probe = Content(c.role)
                    probe.add({"functionResponse": {**fr, "response": {"output": message}}}, None)
                    cut = self._cut[key] = probe.measured(0)
                if c is hist[i]:
                    c = out[i] = c.copy()
                c.put(j, cut)
                used += cut[3]
                ref = c.refs[j]
                message = cut[0]["functionResponse"]["response"]["output"]
                if ref is not None and message != text:
                    marks[ref] = message
        return out, marks

    def format(self, text: str, tool: str, max_chars: int) -> str:
        """``formatTruncatedToolOutput`` with the file ``saveTruncatedToolOutput`` wrote."""
        if self.p.truncation == "lines":
            path = f"{PROJECT_TEMP_DIR}/{tool}_{self.truncations}.txt"  # v0.26.0: no tool-outputs folder
            return truncate_lines(text, path)
        path = f"{PROJECT_TEMP_DIR}/tool-outputs/{tool}_{self.truncations}.txt"
        return truncate_chars(text, path, max_chars)

    # --- compress ------------------------------------------------------------------------------------
    def compress(self, s: SessionView, original: int, force: bool) -> Action | None:
        head, stop = history_bounds(s.entries)
        if stop == head or (self.failed and not force and self.p.after_failure == "stop"):
            return None  # empty history, or (before v0.31) nothing after a failure: NOOP
        limit = self.token_limit(s)
        hist = contents(s.entries[head:stop], head, self._parts, s.memo("gemini-cli.contents"))
        truncated, marks = self.truncate(hist, original, limit)
        if self.failed and not force:
            if self.p.after_failure == "truncate" and marks \
                    and math.floor(sum(c.estimate() for c in truncated)) < original:
                targets = tuple((ref[0], ref[1], text) for ref, text in marks.items())
                return Prune(targets, "truncation only (a compression failed before)")
            return None
        split = find_split(truncated, 1 - self.p.preserve_fraction)
        if split == 0:
            return None
        span_end = truncated[split - 1].positions[-1] + 1 if split else head
        keep_from = truncated[split].positions[0] if split < len(truncated) else stop
        original_span = math.floor(sum(c.estimate() for c in hist[:split]))
        use_truncated = self.p.tool_budget > 0 and original_span >= limit
        span = self.rendered(s, head, span_end, marks if use_truncated else {})
        previous = [e.message.text for e in s.entries[head:span_end]
                    if e.origin == "summary" or prompts.SNAPSHOT_TAG in e.message.text]
        system, instruction = PROMPTS[self.p.prompt]
        if instruction is None:
            anchor = prompts.ANCHOR_PREVIOUS if previous else prompts.ANCHOR_NEW
            instruction = prompts.INSTRUCTION.format(anchor=anchor)
        request = SummaryRequest(system, (*span, Message("gemini-cli-instruction", "user", (Text(instruction),))),
                                 span, None, previous[-1] if previous else None)
        followups: tuple[Followup, ...] = ()
        if self.p.verify:
            answer = Message("gemini-cli-snapshot", "assistant", (Text(""),), meta={PREVIOUS_ANSWER: True})
            check = Message("gemini-cli-verify", "user", (Text(prompts.VERIFY),))
            followups = (Followup(replace(request, prompt=(*span, answer, check)), replaces=True),)
        kept_marks = tuple((ref[0], ref[1], text) for ref, text in marks.items()
                           if s.position(ref[0]) >= keep_from)
        view: tuple[Slot, ...] = (*(Keep(e.id) for e in s.entries[:head]),
                Insert("user", with_summary=True, origin="summary"),
                Insert("assistant", prompts.MODEL_REPLY, origin="synthetic"),
                *(Keep(e.id) for e in s.entries[keep_from:]))
        kept = truncated[split:]
        reply = {"text": prompts.MODEL_REPLY}
        if self.p.new_count == "json":
            rest: float = (sum(c.json_len() for c in kept) + EMPTY_CONTENT["model"] + js_len(stringify(reply))
                           + EMPTY_CONTENT["user"] + js_len(stringify({"text": ""})))
        else:
            rest = estimate_part(reply) + sum(c.estimate() for c in kept)
        meta = {"original": original, "rest": rest, "forced": force, "split": split, "truncated": len(marks)}
        return Compact("/compress" if force else "last prompt tokens >= threshold x token limit", view, request,
                       on_failure="unchanged", meta=meta, followups=followups, prune=kept_marks)

    def rendered(self, s: SessionView, start: int, stop: int, marks: dict[Ref, str]) -> tuple[Message, ...]:
        """The view's messages ``[start, stop)`` with the truncations in ``marks`` applied."""
        out = []
        for e in s.entries[start:stop]:
            m = e.rendered()
            if any(ref[0] == m.id for ref in marks):
                m = replace(m, parts=tuple(
                    replace(p, output=marks[(m.id, j)], is_error=False)
                    if isinstance(p, ToolResult) and (m.id, j) in marks else p for j, p in enumerate(m.parts)))
            out.append(m)
        return tuple(out)

    # --- the checks on the answer (CompactionCheck) --------------------------------------------------------
    def accept(self, a: Compact, summary: str) -> str | None:
        if "rest" not in a.meta:
            return None
        forced = bool(a.meta["forced"])
        if self.p.verify and not summary.strip():
            return "empty summary (COMPRESSION_FAILED_EMPTY_SUMMARY)"
        rest = float(a.meta["rest"])
        if self.p.new_count == "json":
            new = math.floor((rest + js_len(stringify(summary)) - 2) / CHARS_PER_TOKEN)
        else:
            new = math.floor(rest + estimate_text(summary))
        original = int(a.meta["original"])
        if new > original:
            # client.ts: hasFailed || !force (v0.17: !force, so a /compress that fails clears it)
            self.failed = (self.failed or not forced) if self.p.prompt != "0.17" else not forced
            return f"new history {new} > last prompt {original} (COMPRESSION_FAILED_INFLATED_TOKEN_COUNT)"
        self.failed = False  # startChat(): hasFailedCompressionAttempt = false
        return None



def find_split(hist: Sequence[Content], fraction: float) -> int:
    """``findCompressSplitPoint``: the index of the oldest Content to keep (``len`` = compress everything)."""
    counts = [c.json_len() for c in hist]
    target = sum(counts) * fraction
    last_split = 0
    cumulative = 0
    for i, c in enumerate(hist):
        if c.role == "user" and not c.has_response():
            if cumulative >= target:
                return i
            last_split = i
        cumulative += counts[i]
    if hist and hist[-1].role == "model" and not hist[-1].has_call():
        return len(hist)
    return last_split


def truncate_chars(text: str, path: str, max_chars: int) -> str:
    """``formatTruncatedToolOutput`` @ 5411f11."""
    if js_len(text) <= max_chars:
        return text
    head = math.floor(max_chars * HEAD_FRACTION)
    tail = max_chars - head
    omitted = len(text) - head - tail
    return (f"Output too large. Showing first {head:,} and last {tail:,} characters. For full output see: {path}\n"
            f"{js_slice(text, 0, head)}\n\n... [{omitted:,} characters omitted] ...\n\n{js_slice(text, -tail)}")


def truncate_lines(text: str, path: str) -> str:
    """``formatTruncatedToolOutput`` @ v0.26.0 (no length check: every output past the budget is cut)."""
    lines = text.split("\n")
    if len(lines) > 1:
        last = lines[-COMPRESSION_TRUNCATE_LINES:]
        wide = any(len(x) > MAX_TRUNCATED_LINE_WIDTH for x in last)
        shown = [x[:MAX_TRUNCATED_LINE_WIDTH] + "... [LINE WIDTH TRUNCATED]" if len(x) > MAX_TRUNCATED_LINE_WIDTH else x
                 for x in last]
        note = " (some long lines truncated)" if wide else ""
        return (f"Output too large. Showing the last {len(shown)} of {len(lines)} lines{note}. "
                f"For full output see: {path}\n...\n" + "\n".join(shown))
    return (f"Output too large. Showing the last {MAX_TRUNCATED_CHARS:,} characters of the output. "
            f"For full output see: {path}\n...{text[-MAX_TRUNCATED_CHARS:]}")


@strategy("gemini-cli-compression", params=GeminiCliParams,
          upstream="google-gemini/gemini-cli chatCompressionService.ts @ 5411f11 (presets: v0.17.0, v0.18.0, v0.26.0)",
          summary="before a call at 50% of the token limit: old tool outputs truncated, oldest ~70% into a "
                  "verified <state_snapshot> user message + model ack",
          presets={
              "0.26": {"truncation": "lines", "prompt": "0.26", "after_failure": "stop"},
              "0.18": LEGACY,
              "0.17": LEGACY,  # v0.17.0 as released: chatCompressionService.ts @ v0.17.0 has 0.5, as v0.18.0
          })
def gemini_cli(p: GeminiCliParams) -> GeminiCli:
    return GeminiCli(p)


# The presets of the ``gemini-cli`` composition by the minor version they model (None: no preset models it).
_BY_MINOR = ((17, 17, "0.17"), (18, 19, "0.18"), (26, 28, "0.26"), (31, 10_000, "seed"))
PRESET_VERSIONS = {"seed": "0.31+ (read at 5411f11)", "0.26": "0.26-0.28", "0.18": "0.18-0.19", "0.17": "0.17.0"}


def version_preset(version: str) -> str | None:
    """The ``gemini-cli`` preset of a recorded version: an exact one (``0.21.0``) or the range a log's writer
    shows (``0.33+``, ``0.18-0.32``, ``up to 0.20``: Gemini CLI's logs record no version); a range gets a preset
    only when all of it has the same one."""
    import re

    nums = [int(x) for x in re.findall(r"\b0\.(\d+)", version)]
    if not nums:
        return None
    lo = 0 if version.startswith("up to") else nums[0]
    hi = 10_000 if version.endswith("+") else nums[-1]

    last = _BY_MINOR[-1][0]  # from here on one preset: a range going past it is checked up to it
    picks = {next((p for a, b, p in _BY_MINOR if a <= m <= b), None) for m in range(lo, max(lo, min(hi, last)) + 1)}
    return picks.pop() if len(picks) == 1 else None


# What Gemini CLI's users set (~/.gemini/settings.json; gemini-cli 5411f11 config.ts getCompressionThreshold,
# chatCompressionService.ts): 0 falls back to the default, above 1 never compresses by itself. Its logs record no
# version: the importer gives the range a log's writer shows, and a preset only when all of it has one.
TOOL = Tool(
    "Gemini CLI", ("gemini-cli",), version_preset=version_preset, preset_versions=PRESET_VERSIONS,
    # fidelity replays the version presets: preset=context (experimental.contextManagement, off by default) replaces
    # the compression these logs record
    fidelity_specs=lambda t: [(p, f"gemini-cli:preset={p}") for p in ("seed", "0.26", "0.18", "0.17")],
    settings=(Setting("gemini-cli-compression.threshold", "model.compressionThreshold", "~/.gemini/settings.json",
                      "0.5 (0.7 up to v0.11, 0.2 in v0.12-v0.16)", '{"model": {"compressionThreshold": {value}}}',
                      sweep=(0.3, 0.7), note="a share of the model's token limit; 0 means the default"),))
