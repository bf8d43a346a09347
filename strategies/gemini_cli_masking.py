"""``compbench.strategies.gemini_cli_masking`` — ``gemini-cli-masking``: Gemini CLI's tool-output masking
(google-gemini/gemini-cli).

Read at 5411f113ca (2026-08-21): ``packages/core/src/context/toolOutputMaskingService.ts``, ``core/client.ts``
(``processTurn`` → ``tryMaskToolOutputs(getHistory())`` after ``tryCompressChat``, unconditionally at this
commit; opt-in through ``toolOutputMasking.enabled`` when it came in, v0.29), ``config/config.ts``
(``getToolOutputMaskingConfig``: settings, else remote flags, else the defaults below),
``tools/definitions/base-declarations.ts`` (tool names).

Before every model call, over the history before the request being sent (:mod:`.gemini_cli_history`):
scanning back from the newest Content (the latest one skipped when ``protectLatestTurn``), each function
response not of an exempt tool and not already masked (its pretty JSON holds ``<tool_output_masked``)
adds its estimated tokens to the protected total until that total exceeds 50,000; the response that
crosses it and every older one are prunable. Nothing happens unless the prunable tokens reach 30,000.
Then each prunable response whose masked form is smaller becomes ``<tool_output_masked>`` + a preview +
the path of the file holding the full output: for ``run_shell_command`` its sections (``Output:`` as its
first and last 10 lines when longer than 20), for other tools the first and last 250 characters of the
response's pretty JSON when that is longer than 500.

Before a call the latest Content of the history is the model turn that asked for the tools (their
responses are the request being sent, ``useGeminiStream`` → ``submitQuery``), so ``protectLatestTurn``
protects no output in the normal flow. A Prune (the view keeps its messages). The file name's random part is derived from the call id (a replay
must be deterministic); the project temp dir and session id are fixed stand-ins. A part another strategy
already replaced (compression's truncation) is counted with its replacement but cannot be masked again.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.sdk import Action, Entry, Message, Prune, SessionView, ToolResult, Usage, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.gemini_cli_history import (
    PROJECT_TEMP_DIR,
    SESSION_ID,
    estimate_part,
    history_bounds,
    random_suffix,
    response_of,
    safe_name,
)

DEFAULT_TOOL_PROTECTION_THRESHOLD = 50_000  # toolOutputMaskingService.ts @ 5411f11
DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD = 30_000  # toolOutputMaskingService.ts @ 5411f11
DEFAULT_PROTECT_LATEST_TURN = True  # toolOutputMaskingService.ts @ 5411f11
MASKING_INDICATOR_TAG = "tool_output_masked"  # toolOutputMaskingService.ts @ 5411f11
EXEMPT_TOOLS = ("activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode")  # EXEMPT_TOOLS, base-declarations.ts
SHELL_TOOL_NAME = "run_shell_command"  # base-declarations.ts SHELL_TOOL_NAME
PREVIEW_CHARS = 250  # toolOutputMaskingService.ts: head + tail preview, 250 chars each, above 500
SIMPLE_PREVIEW_LINES = 10  # formatSimplePreview: first and last 10 lines when over 20
MASKED_TAG = f"<{MASKING_INDICATOR_TAG}"
SHELL_SECTIONS = re.compile(r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", re.M)


@dataclass(frozen=True)
class GeminiCliMaskingParams:
    protection: int = param(DEFAULT_TOOL_PROTECTION_THRESHOLD, "protectionThresholdTokens: estimated tokens of the newest tool outputs never masked.")
    min_prunable: int = param(DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD, "minPrunableThresholdTokens: mask only when the older outputs add up to at least this many estimated tokens.")
    protect_latest_turn: bool = param(DEFAULT_PROTECT_LATEST_TURN, "protectLatestTurn: never mask in the latest Content of the history.")
    exempt_tools: tuple[str, ...] = param(EXEMPT_TOOLS, "Tools whose outputs are never masked.")
    shell_tools: tuple[str, ...] = param((SHELL_TOOL_NAME,), "Tools whose outputs get the shell preview (sections, first and last 10 lines of Output).")


Candidate = tuple[str, int, int, ToolResult]  # message id, part index, estimated tokens, the part as rendered


class GeminiCliMasking:
    name = "gemini-cli-masking"

    def __init__(self, p: GeminiCliMaskingParams) -> None:
        self.p = p
        self._tokens: dict[tuple[str, int, str | None], int] = {}  # a part's estimate, per rendering
        self._total: tuple[SessionView, int, int, int] | None = None  # the wake's: view, revision, entries, total
        self._outputs: tuple[SessionView, int] | None = None  # the view and revision the outputs describe
        self._items: list[Candidate] = []
        self._sums: list[int] = [0]
        self._starts: list[int] = []

    def part_tokens(self, e: Entry, j: int, part: ToolResult) -> int:
        """``estimateTokenCountSync([part])`` of a function response as the view renders it (``part`` as
        recorded; a pruned part with its replacement), cached per rendering."""
        shown = e.pruned.get(j)
        key = (e.id, j, shown)
        n = self._tokens.get(key)
        if n is None:
            if shown is not None:
                part = replace(part, output=shown)
            fr = {"functionResponse": {"id": part.call_id, "name": part.name, "response": response_of(part)}}
            n = self._tokens[key] = math.floor(estimate_part(fr))
        return n

    def outputs(self, s: SessionView) -> tuple[list[Candidate], list[int], list[int]]:
        """The view's maskable outputs in order (a function response of a tool not exempt, not masked yet),
        the sums of their estimates before each, and where each entry's outputs begin: kept as the view grows,
        and built again from where the view diff says it changed."""
        entries = s.entries
        c = self._outputs
        starts = self._starts
        start = min(s.unchanged_below(c[1]), len(starts), len(entries)) if c is not None and c[0] is s else 0
        items, sums = self._items, self._sums
        if start < len(starts):
            del items[starts[start]:], sums[starts[start] + 1:], starts[start:]
        exempt = self.p.exempt_tools
        for k in range(len(starts), len(entries)):
            e = entries[k]
            starts.append(len(items))
            for j, part in enumerate(e.message.parts):
                if not isinstance(part, ToolResult) or (part.name and part.name in exempt):
                    continue
                if MASKED_TAG in e.pruned.get(j, part.output):
                    continue  # already masked (its JSON holds the tag exactly when its text does)
                tokens = self.part_tokens(e, j, part)
                items.append((e.id, j, tokens, part))
                sums.append(sums[-1] + tokens)
        self._outputs = (s, s.revision)
        return items, sums, starts

    def before_step(self, s: SessionView) -> Sequence[Action]:
        head, stop = history_bounds(s.entries)
        end = stop
        if self.p.protect_latest_turn and end > head:  # skip the latest Content (a run of tool messages is one)
            end -= 1
            while end > head and s.entries[end].role == "tool" and s.entries[end - 1].role == "tool":
                end -= 1
        # scanning back from the newest output before ``end``, the protected total passes ``protection`` at the
        # newest output with more than ``protection`` after it and itself: that one and all older are prunable
        items, sums, starts = self.outputs(s)
        a = starts[head] if head < len(starts) else len(items)
        b = starts[end] if end < len(starts) else len(items)
        crossing = min(bisect.bisect_left(sums, sums[b] - self.p.protection, a, b + 1), b) - 1  # sums[i] < that
        if crossing < a:
            return ()
        prunable = sums[crossing + 1] - sums[a]
        if prunable < self.p.min_prunable:
            return ()
        found = items[crossing:a - 1 if a else None:-1]  # newest first, as the scan back finds them
        targets = []
        pruned = {e.id: e.pruned for e in s.entries[head:end] if e.pruned}
        for msg_id, j, tokens, part in found:
            shown = pruned.get(msg_id, {}).get(j)
            if shown is not None:  # a part another strategy replaced is masked as the view renders it
                part = replace(part, output=shown)
            snippet = self.snippet(part)
            masked = {"functionResponse": {"id": part.call_id, "name": part.name, "response": {"output": snippet}}}
            if tokens - math.floor(estimate_part(masked)) > 0:
                targets.append((msg_id, j, snippet))
        return (Prune(tuple(targets), "tool output masking"),) if targets else ()

    def after_step(self, s: SessionView, u: Usage) -> Sequence[Action]:
        return ()

    def wake(self, s: SessionView) -> Wake:
        """Masking needs more than ``protection`` tokens of unmasked outputs and ``min_prunable`` of them
        past it: at least the larger of the two in all (the latest turn and exempt tools counted too, an
        upper bound), which grows by each new message's outputs. The total is kept as the view grows (the
        same view, its revision unchanged: only recorded messages appended since)."""
        entries = s.entries
        c = self._total
        if c is not None and c[0] is s and c[1] == s.revision and c[2] <= len(entries):
            start, total = c[2], c[3]
        else:
            start, total = 0, 0
        for k in range(start, len(entries)):
            e = entries[k]
            for j, part in enumerate(e.message.parts):
                if isinstance(part, ToolResult) and MASKED_TAG not in e.pruned.get(j, part.output):
                    total += self.part_tokens(e, j, part)
        self._total = (s, s.revision, len(entries), total)
        return Wake(grown=(output_tokens, max(self.p.protection + 1, self.p.min_prunable) - total))

    def snippet(self, part: ToolResult) -> str:
        """``formatMaskedSnippet`` with the preview of ``mask()`` and the file it wrote."""
        tool = part.name or "unknown_tool"
        response = response_of(part)
        content = json.dumps(response, indent=2, ensure_ascii=False)  # getToolOutputContent
        call = part.call_id or "0"
        path = (f"{PROJECT_TEMP_DIR}/tool-outputs/session-{safe_name(SESSION_ID)}/"
                f"{safe_name(tool)}_{safe_name(call)}_{random_suffix(call)}.txt")
        if tool in self.p.shell_tools:
            preview = shell_preview(response)
        elif len(content) > 2 * PREVIEW_CHARS:
            preview = f"{content[:PREVIEW_CHARS]}\n... [TRUNCATED] ...\n{content[-PREVIEW_CHARS:]}"
        else:
            preview = content
        return (f"<{MASKING_INDICATOR_TAG}>\n{preview}\n\nOutput too large. Full output available at: {path}\n"
                f"</{MASKING_INDICATOR_TAG}>")


def output_tokens(m: Message) -> int:
    """A recorded message's function responses as ``estimateTokenCountSync`` counts each (the masking's
    wake weight)."""
    return sum(math.floor(estimate_part({"functionResponse": {"id": p.call_id, "name": p.name,
                                                              "response": response_of(p)}}))
               for p in m.parts if isinstance(p, ToolResult))


def simple_preview(content: str) -> str:
    """``formatSimplePreview``."""
    lines = content.split("\n")
    if len(lines) <= 2 * SIMPLE_PREVIEW_LINES:
        return content
    head, tail = lines[:SIMPLE_PREVIEW_LINES], lines[-SIMPLE_PREVIEW_LINES:]
    omitted = len(lines) - len(head) - len(tail)
    return "\n".join(head) + f"\n\n... [{omitted} lines omitted] ...\n\n" + "\n".join(tail)


def shell_preview(response: dict[str, str]) -> str:
    """``formatShellPreview``: the shell tool's sections, Output shortened, the others whole."""
    content = response.get("output") or response.get("stdout") or ""
    parts = SHELL_SECTIONS.split(content)
    if len(parts) < 3:
        preview = simple_preview(content)
    else:
        out = [simple_preview(parts[0].strip())] if parts[0].strip() else []
        for i in range(1, len(parts), 2):
            name, section = parts[i], (parts[i + 1] if i + 1 < len(parts) else "").strip()
            out.append(f"Output: {simple_preview(section)}" if name == "Output" else f"{name}: {section}")
        preview = "\n".join(out)
    error = response.get("error")
    if error and f"Error: {error}" not in content:
        preview += f"\n[Error: {error}]"
    return preview


@strategy("gemini-cli-masking", params=GeminiCliMaskingParams,
          upstream="google-gemini/gemini-cli toolOutputMaskingService.ts @ 5411f11",
          summary="mask tool outputs older than the newest 50k estimated tokens once 30k are prunable; "
                  "preview + file path placeholder")
def gemini_cli_masking(p: GeminiCliMaskingParams) -> GeminiCliMasking:
    return GeminiCliMasking(p)
