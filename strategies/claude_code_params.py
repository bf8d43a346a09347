"""``compbench.strategies.claude_code_params`` — ``claude-code``'s parameters: each a behaviour of some Claude Code
version (the presets set them per version, :mod:`.claude_code_versions`) or a setting its users write (the
``Setting`` declarations there name each as they write it)."""

from __future__ import annotations

from dataclasses import dataclass

from compbench.sdk.registry import param
from compbench.strategies.claude_code_restore import (
    RESTORE_BUDGET,
    RESTORE_TOKENS_PER_FILE,
    SKILLS_BUDGET,
    TOKENS_PER_SKILL,
)
from compbench.strategies.claude_code_text import COMPACT_PROMPT, SUMMARY_PREFIX, SUMMARY_SUFFIX
from compbench.strategies.claude_code_window import IDLE_TOKENS

THRESHOLD_RATIO = 0.95  # seed 002: "Triggers at ~95% context capacity"
MAX_SUMMARY_TOKENS = 20_000  # summary budget: Claude Code's compaction call caps output at 20k (same constant)


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
    settings_window: int = param(
        0, "autoCompactWindow in settings.json (or modelSettings.<model>.autoCompactWindow): taken only within "
           "window_floor-1,000,000, else dropped; the environment variable comes first (0: unset).")
    window_floor: int = param(
        0, "The least CLAUDE_CODE_AUTO_COMPACT_WINDOW Claude Code takes: a smaller value is raised to it, a larger "
           "one than 1,000,000 capped (0: taken as it is, as 2.1.85; 100,000 from 2.1.92).")
    window_from_log: bool = param(
        False, "auto_compact_window was read off the log's own first automatic compaction (its tokens before + "
               "the output reserve + the buffer), not set by a user: taken as it is, neither clamped nor capped at "
               "the model's window.")
    large_window: int = param(
        0, "The auto-compact window Anthropic's server gives a model on a 1M window when no setting names one "
           "(0: none; 400,000 in 2.1.92-2.1.137, 500,000 in 2.1.196-2.1.216).")
    source_rule: str = param(
        "", "The version's model defaults (claude_code_window.SOURCE_RULES; '': none, the window is compacted "
            "before the API's limit whatever its source, as before 2.1.191).")
    window_source: str = param(
        "", "The window's source where the log shows it ('': from the settings, the server and the model; 'auto': "
            "compacted only at the API's limit; 'server', 'settings', 'env', 'model-default': before it).")
    disable_1m: bool = param(
        False, "CLAUDE_CODE_DISABLE_1M_CONTEXT: the model runs at 200,000 (a native-1M model held to it by the "
               "proactive check from 2.1.223).")
    precompute: bool = param(
        False, "A summary precomputed at 80% of the window less the reserve, swapped in when the compaction comes: "
               "what came after it kept verbatim (a server flag; the log shows it as compactMetadata.precomputed).")
    idle_compact: bool = param(
        False, "Idle compaction (2.1.299; \"idleCompaction\": false turns it off): a conversation idle 54 minutes on "
               "the one-hour cache compacted before the prompt that ends the gap.")
    idle_compact_tokens: int = param(
        IDLE_TOKENS, "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS: the least tokens an idle conversation is compacted at "
                     "(at least 100,000).")
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
    restore_skills: bool = param(False, "Re-attach the skills the session invoked (2.0.76 on).")
    skills_budget: int = param(
        SKILLS_BUDGET, "Rough tokens of content the re-attached skills may take together (0: no cap, as before "
                       "2.1.84).")
    skill_tokens: int = param(
        TOKENS_PER_SKILL, "Each re-attached skill cut to this many rough tokens (0: whole, as before 2.1.84).")
    restore_plan: bool = param(
        False, "Re-attach the plan file (plan mode) whole through its own channel, not among the files.")
