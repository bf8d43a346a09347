"""``compbench.strategies.opencode_prompts`` — OpenCode's compaction texts: the seed's (000 §6, 001) and today's
(``preset=current``), verbatim.

Kept apart from :mod:`compbench.strategies.opencode`, which decides when and what to compact, because
these are texts sent to a model, pinned by tests as they are."""

MARKER_TEXT = "What did we do so far?"  # seed 000 §6.3
CONTINUE_TEXT = "Continue if you have next steps"  # seed 000 §4.3, seed 001 process step 9
SYSTEM_PROMPT = """You are a helpful AI assistant tasked with summarizing conversations.

When asked to summarize, provide a detailed but concise summary of the conversation.
Focus on information that would be helpful for continuing the conversation, including:
- What was done
- What is currently being worked on
- Which files are being modified
- What needs to be done next
- Key user requests, constraints, or preferences that should persist
- Important technical decisions and why they were made

Your summary should be comprehensive enough to provide context but concise enough to be quickly understood."""  # seed 000 §6.1
INSTRUCTION = ("Provide a detailed prompt for continuing our conversation above. Focus on information that would be "
               "helpful for continuing the conversation, including what we did, what we're doing, which files we're "
               "working on, and what we're going to do next considering new session will not have access to our "
               "conversation.")  # seed 000 §6.2 (001's "Default Summary Prompt" is the same text, line-wrapped)
CONTINUE_TEXT_CURRENT = ("Continue if you have next steps, or stop and ask for clarification if you are unsure "
                         "how to proceed.")  # current: compaction.ts fd78ec63
SYSTEM_PROMPT_CURRENT = """You are an anchored context summarization assistant for coding sessions.

Summarize only the conversation history you are given. The newest turns may be kept verbatim outside your summary, so focus on the older context that still matters for continuing the work.

If the prompt includes a <previous-summary> block, treat it as the current anchored summary. Update it with the new history by preserving still-true details, removing stale details, and merging in new facts.

Always follow the exact output structure requested by the user prompt. Keep every section.

CRITICAL — Preserve detail that matters for continuing work:
- Exact error messages, stack traces, and failure modes
- Exact file paths, line numbers, function and variable names
- Exact command outputs, return values, and data structures
- User preferences, specifications, style guidance, and constraints
- Architectural decisions and why alternatives were rejected
- Tool configurations, API endpoints, environment details
- Active todos, progress state, and workflow phase

Prefer substantive detail over brevity. A few specific, accurate sentences are better than a terse bullet that loses meaning. When preserving a file path, error message, or identifier, include the exact text so the next agent can use it without guessing.

Do not answer the conversation itself. Do not mention that you are summarizing, compacting, or merging context. Respond in the same language as the conversation.
"""  # current: packages/opencode/src/agent/prompt/compaction.txt 4ab22439
SUMMARY_TEMPLATE = """Output exactly the Markdown structure shown inside <template> and keep the section order unchanged. Do not include the <template> tags in your response.
<template>
## Objective
- [one or two brief sentences describing what the user is trying to accomplish]

## Important Details
- [constraints/preferences, decisions and why, important facts/assumptions, exact context needed to continue, or "(none)"]

## Work State
### Completed
- [finished work, verified facts, or changes made; otherwise "(none)"]

### Active
- [current work, partial changes, or investigation state; otherwise "(none)"]

### Blocked
- [blockers, failing commands, or unknowns; otherwise "(none)"]

## Next Move
1. [immediate concrete action, or "(none)"]
2. [next action if known, or "(none)"]

## Relevant Files
- [file or directory path: why it matters, or "(none)"]
</template>

Rules:
- Keep every section, even when empty.
- Use terse bullets, not prose paragraphs.
- Preserve exact file paths, symbols, commands, error strings, URLs, and identifiers when known.
- Do not mention the summary process or that context was compacted."""  # current: core/src/session/compaction.ts 8b9b5784
ANCHOR_NEW = "Create a new anchored summary from the conversation history."  # current: core buildPrompt 8b9b5784
ANCHOR_UPDATE = ("Update the anchored summary below using the conversation history above.\n"
                 "Preserve still-true details, remove stale details, and merge in the new facts.\n"
                 "<previous-summary>\n{summary}\n</previous-summary>")  # current: core buildPrompt 8b9b5784
