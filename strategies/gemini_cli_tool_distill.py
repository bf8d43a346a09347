"""``compbench.strategies.gemini_cli_tool_distill`` — Gemini CLI's ``ToolOutputDistillationService``: what a tool's
output becomes as it is executed, when context management is on (google-gemini/gemini-cli @ 5411f11,
``scheduler/tool-executor.ts`` ``truncateOutputIfNeeded``, ``context/toolDistillationService.ts``,
``context/truncation.ts``, ``utils/fileUtils.ts`` ``saveTruncatedToolOutput``).

A successful result of any tool but ``read_file`` and ``read_many_files`` longer than ``maxOutputTokens`` x 4
characters (10,000 tokens: ``config.ts``; the CLI passes no ``contextManagement`` settings to the core at 5411f11, so
the defaults hold) is saved to a file and cut to its first 20% and last 80% of the characters that ``maxOutputTokens``
are worth (``estimateCharsFromTokens``: 0.33 a token an ASCII character, 1.5 another, judged on the first 1,000),
behind ``[Message Normalized: Tool output exceeded size limit]``, with the file's path; one longer than
``summarizationThresholdTokens`` x 4 (20,000 tokens) and at most 1,000,000 characters also gets a model's
extraction of its facts appended. This replaces the shell tool's own truncation
(``truncateToolOutputThreshold``), which runs only with context management off.
"""

from __future__ import annotations

import math

from compbench.strategies.gemini_cli_history import PROJECT_TEMP_DIR, js_len, js_slice, safe_name

EXEMPT_TOOLS = ("read_file", "read_many_files")  # READ_FILE_TOOL_NAME, READ_MANY_FILES_TOOL_NAME
MAX_DISTILLATION_SIZE = 1_000_000  # toolDistillationService.ts
MIN_TARGET_TOKENS = 10  # truncation.ts
ASCII_TOKENS_PER_CHAR = 0.33  # utils/tokenCalculation.ts (used by estimateCharsFromTokens only)
NON_ASCII_TOKENS_PER_CHAR = 1.5  # utils/tokenCalculation.ts
TOOL_TRUNCATION_PREFIX = "[Message Normalized: Tool output exceeded size limit]"  # truncation.ts
HEAD_RATIO = 0.2  # truncateProportionally's default


def chars_from_tokens(text: str, tokens: int) -> int:
    """``estimateCharsFromTokens``."""
    if not text:
        return 0
    sample = text[:1_000]
    ascii_ratio = sum(1 for c in sample if ord(c) <= 127) / len(sample)
    return math.floor(tokens / (ascii_ratio * ASCII_TOKENS_PER_CHAR + (1 - ascii_ratio) * NON_ASCII_TOKENS_PER_CHAR))


def truncate_proportionally(text: str, target: int, prefix: str = TOOL_TRUNCATION_PREFIX) -> str:
    """``truncateProportionally``: the prefix, the head, ``\\n...\\n``, the tail."""
    if js_len(text) <= target:
        return text
    available = max(0, target - (len(prefix) + len("\n...\n") + 1))
    if available <= 0:
        return prefix
    head = math.floor(available * HEAD_RATIO)
    tail = available - head
    return f"{prefix}\n{js_slice(text, 0, head)}\n...\n{js_slice(text, js_len(text) - tail)}"


def saved_path(tool: str, call_id: str, prompt_id: str) -> str:
    """``saveTruncatedToolOutput(content, tool, callId, projectTempDir, promptId)``."""
    name, ident = safe_name(tool), safe_name(call_id)
    file = f"{ident}.txt" if ident.startswith(name) else f"{name}_{ident}.txt"
    return f"{PROJECT_TEMP_DIR}/tool-outputs/session-{safe_name(prompt_id)}/{file}"


def needs_cut(tool: str, text: str, max_output_tokens: int) -> bool:
    return tool not in EXEMPT_TOOLS and 0 < max_output_tokens * 4 < js_len(text)


def needs_summary(text: str, summary_tokens: int) -> bool:
    return summary_tokens * 4 < js_len(text) <= MAX_DISTILLATION_SIZE


def cut(text: str, tool: str, call_id: str, prompt_id: str, max_output_tokens: int) -> str:
    """``performDistillation`` of a string output, before any extraction is appended."""
    n = js_len(text)
    threshold = max_output_tokens * 4
    tokens = max(MIN_TARGET_TOKENS, math.floor((n / 4) * (threshold / n)))
    truncated = truncate_proportionally(text, chars_from_tokens(text, tokens))
    return f"{truncated}\n\nFull output saved to: {saved_path(tool, call_id, prompt_id)}"
