"""``compbench.strategies.langchain_prompts`` — Prompt texts of the LangChain-family strategies, verbatim from their
sources.

``DEFAULT_SUMMARY_PROMPT``: langchain 1.5.0 (PyPI), ``langchain/agents/middleware/summarization.py``.
``DEEPAGENTS_SUMMARY_PROMPT``: deepagents 0.7.32 (PyPI), ``deepagents/middleware/summarization.py``: the
LangChain prompt with ``_MEDIA_REFERENCE_SUMMARY_PROMPT`` spliced in before the ``<messages>`` marker.
"""

from __future__ import annotations

DEFAULT_SUMMARY_PROMPT = (
    '<role>\n'
    'Context Extraction Assistant\n'
    '</role>\n'
    '\n'
    '<primary_objective>\n'
    'Your sole objective in this task is to extract the highest quality/most relevant context from the conversation history below.\n'
    '</primary_objective>\n'
    '\n'
    '<objective_information>\n'
    "You're nearing the total number of input tokens you can accept, so you must extract the highest quality/most relevant pieces of information from your conversation history.\n"
    'This context will then overwrite the conversation history presented below. Because of this, ensure the context you extract is only the most important information to continue working toward your overall goal.\n'
    '</objective_information>\n'
    '\n'
    '<instructions>\n'
    'The conversation history below will be replaced with the context you extract in this step.\n'
    "You want to ensure that you don't repeat any actions you've already completed, so the context you extract from the conversation history should be focused on the most important information to your overall goal.\n"
    '\n'
    'You should structure your summary using the following sections. Each section acts as a checklist - you must populate it with relevant information or explicitly state "None" if there is nothing to report for that section:\n'
    '\n'
    '## SESSION INTENT\n'
    '\n'
    "What is the user's primary goal or request? What overall task are you trying to accomplish? This should be concise but complete enough to understand the purpose of the entire session.\n"
    '\n'
    '## SUMMARY\n'
    '\n'
    'Extract and record all of the most important context from the conversation history. Include important choices, conclusions, or strategies determined during this conversation. Include the reasoning behind key decisions. Document any rejected options and why they were not pursued.\n'
    '\n'
    '## ARTIFACTS\n'
    '\n'
    'What artifacts, files, or resources were created, modified, or accessed during this conversation? For file modifications, list specific file paths and briefly describe the changes made to each. This section prevents silent loss of artifact information.\n'
    '\n'
    '## NEXT STEPS\n'
    '\n'
    'What specific tasks remain to be completed to achieve the session intent? What should you do next?\n'
    '\n'
    '</instructions>\n'
    '\n'
    "The user will message you with the full message history from which you'll extract context to create a replacement. Carefully read through it all and think deeply about what information is most important to your overall goal and should be saved:\n"
    '\n'
    'With all of this in mind, please carefully read over the entire conversation history, and extract the most important and relevant context to replace it so that you can free up space in the conversation history.\n'
    'Respond ONLY with the extracted context. Do not include any additional information, or text before or after the extracted context.\n'
    '\n'
    '<messages>\n'
    'Messages to summarize:\n'
    '{messages}\n'
    '</messages>'
)

MEDIA_REFERENCE_SUMMARY_PROMPT = (
    '<media_reference_information>\n'
    'Conversation history may include XML media reference tags, for example:\n'
    '<image url="/conversation_history/media/{{hash}}.png" />\n'
    'These tags mean the original message included media that was preserved at the referenced backend path.\n'
    'Treat the tag and path as part of the conversation context. Do not infer visual details that are not available from surrounding text.\n'
    'When the media could be important for future context, preserve the media reference in your summary.\n'
    'The model consuming the summary can call `read_file` on the referenced path if it needs to inspect the media.\n'
    '</media_reference_information>'
)

DEEPAGENTS_SUMMARY_PROMPT = DEFAULT_SUMMARY_PROMPT.replace(
    "\n<messages>\n", f"\n{MEDIA_REFERENCE_SUMMARY_PROMPT}\n\n<messages>\n", 1)
