"""``compbench.strategies.claude_code_text`` — What Claude Code writes around a summary, and what it asks for one.

**The new context**: one user message in Claude Code's wording, copied from the real ``isCompactSummary`` records:
2.0.x ``PREFIX + summary + SUFFIX``; 2.1 a new prefix, a line pointing to the full transcript (its path is the
user's; a placeholder of the same shape here) and, after an auto compaction only, the instruction to continue;
2.1.217 a new continuation after a manual compaction too.

**The summary prompt**: known only through its output. All 16 real summaries (2.0.60–2.1.49) carry the same nine
numbered sections and 14 start with an "Analysis:" block before "Summary:", so the real prompt asks for an analysis,
then those sections: not the six-line community prompt of seed 002 (kept as the seed's). Every preset from ``2.0``
asks for that structure in our own words (the wording is assumed).
"""

from __future__ import annotations

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


