"""``compbench.strategies.openhands_prompts`` — OpenHands' summarizing prompts, verbatim (kept apart from the condenser,
pinned by tests as they are)."""

# All-Hands-AI/OpenHands openhands/memory/condenser/impl/llm_summarizing_condenser.py @ 156d068 (get_condensation)
PROMPT_V0 = """You are maintaining a context-aware state summary for an interactive agent.
You will be given a list of events corresponding to actions taken by the agent, and the most recent previous summary if one exists.
If the events being summarized contain ANY task-tracking, you MUST include a TASK_TRACKING section to maintain continuity.
When referencing tasks make sure to preserve exact task IDs and statuses.

Track:

USER_CONTEXT: (Preserve essential user requirements, goals, and clarifications in concise form)

TASK_TRACKING: {Active tasks, their IDs and statuses - PRESERVE TASK IDs}

COMPLETED: (Tasks completed so far, with brief results)
PENDING: (Tasks that still need to be done)
CURRENT_STATE: (Current variables, data structures, or relevant state)

For code-specific tasks, also include:
CODE_STATE: {File paths, function signatures, data structures}
TESTS: {Failing cases, error messages, outputs}
CHANGES: {Code edits, variable updates}
DEPS: {Dependencies, imports, external calls}
VERSION_CONTROL_STATUS: {Repository state, current branch, PR status, commit history}

PRIORITIZE:
1. Adapt tracking format to match the actual task type
2. Capture key user requirements and goals
3. Distinguish between completed and pending tasks
4. Keep all sections concise and relevant

SKIP: Tracking irrelevant details for the current task type

Example formats:

For code tasks:
USER_CONTEXT: Fix FITS card float representation issue
COMPLETED: Modified mod_float() in card.py, all tests passing
PENDING: Create PR, update documentation
CODE_STATE: mod_float() in card.py updated
TESTS: test_format() passed
CHANGES: str(val) replaces f"{val:.16G}"
DEPS: None modified
VERSION_CONTROL_STATUS: Branch: fix-float-precision, Latest commit: a1b2c3d

For other tasks:
USER_CONTEXT: Write 20 haikus based on coin flip results
COMPLETED: 15 haikus written for results [T,H,T,H,T,H,T,T,H,T,H,T,H,T,H]
PENDING: 5 more haikus needed
CURRENT_STATE: Last flip: Heads, Haiku count: 15/20"""
PREVIOUS_SUMMARY = "<PREVIOUS SUMMARY>\n{summary}\n</PREVIOUS SUMMARY>\n"  # the same get_condensation
EVENT_V0 = "<EVENT id={id}>\n{event}\n</EVENT>\n"  # the same
END = "Now summarize the events using the rules above."  # the same (and the V1 template's last line)

# OpenHands/software-agent-sdk openhands-sdk/openhands/sdk/context/condenser/prompts/summarizing_prompt.j2
# @ 611629e, rendered by jinja2's defaults: the text before the loop, each event as "\n<EVENT>\n{event}\n</EVENT>\n",
# then "\n\n" + END (the file's final newline is dropped)
PROMPT_V1 = PROMPT_V0.replace(
    "and the most recent previous summary if one exists.", "which will include previous summaries.") + "\n\n"
EVENT_V1 = "\n<EVENT>\n{event}\n</EVENT>\n"
