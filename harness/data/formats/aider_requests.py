"""``compbench.data.formats.aider_requests`` — One request of aider's ``--llm-history-file`` log taken apart: which of
its messages are the conversation, which are the chunks aider re-sends with every request, what a summary is.

Read against Aider-AI/aider 5dc9490bb35f9729ef2c95d00a19ccd30c26339c (and the prompts of every tag from v0.40):
``Coder.format_chat_chunks`` builds each request as ``ChatChunks.all_messages()``: system, examples,
read-only files, repo map, ``done`` (the history), chat files, ``cur`` (the exchange in progress), reminder.
Only ``done`` + ``cur`` are the conversation. Every other chunk is a fixed text and its fixed reply
(``get_repo_messages``, ``get_readonly_files_messages``, ``get_chat_files_messages``, ``get_images_message``), in
wordings that differ by chat mode (the ask, architect, context and help coders write "I am working with you on
code in a git repository." / "I have *added these files to the chat* so you see all of their contents." / "Ok, I
will use that as the true, current contents of the files."): a pair is a chunk when its user text opens with one
of :data:`CHUNK_USER` or its reply is one of :data:`CHUNK_REPLIES`. Left in, a chunk would sit between ``done``
and ``cur`` as if it were history (the files' whole contents, or an image's base64, re-read at every request).

* A model that takes no system prompt gets it as a user message and "Ok." (``use_system_prompt``); a
  ``reminder == "user"`` model gets the system reminder appended to the last user message (``"\\n\\n" +``
  the reminder the system prompt also ends with): both are the request's, not the conversation's.
* ``--cache-prompts`` wraps a chunk's last message as a content list (``add_cache_control``), which
  ``utils.format_messages`` logs as ``ROLE type: text`` / ``ROLE text: …`` (the text's next lines unprefixed) /
  ``ROLE cache_control: {…}``; an image is ``ROLE type: image_url`` / ``ROLE Image_url URL: data:…``. Such a
  message is read back as its text (an image as :data:`IMAGE`).
* **A summary** is what ``ChatSummary.summarize_all`` returns: one user message, ``prompts.summary_prefix``
  ("I spoke to you previously about a number of things.\\n") then the weak model's text, applied by
  ``summarize_end`` as the head of ``done`` in the next main request. The summarizer's own request (system
  ``prompts.summarize``) and the commit-message writer's (``prompts.commit_system``) go to the weak model
  through ``simple_send_with_retries``, which aider does not log; a log that holds one anyway (a fork, a
  patched aider) has it recognized by its system prompt and left out of the conversation
  (:func:`side_request`).
"""

from __future__ import annotations

from dataclasses import dataclass

SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"  # prompts.summary_prefix
SUMMARIZE_SYSTEM = "*Briefly* summarize this partial conversation about programming."  # prompts.summarize
COMMIT_SYSTEM = "You are an expert software engineer that generates concise"  # prompts.commit_system
EXAMPLES_END = "I switched to a new code base. Please don't consider the above files or try to edit them any longer."
# the chunks' user texts, every coder's prompts from v0.40 to 5dc9490 (repo_content_prefix, read_only_files_prefix,
# files_content_prefix, files_no_full_files, files_no_full_files_with_repo_map; images: get_images_message)
CHUNK_USER = (
    "Here are summaries of some files present in my git repository.",
    "I am working with you on code in a git repository.\nHere are summaries of some files present in my git repo.",
    "Below here are summaries of other files!",
    "Here are some READ ONLY files, provided for your reference.",
    "I have *added these files to the chat* so you",
    "These files have been *added these files to the chat*",
    "Here is the current content of the file",
    "These are some files we have been discussing that we may want to edit after you answer my questions:",
    "I am not sharing any files",
    "I am not sharing the full contents of any files with you yet.",
    "Don't try and edit any existing code without asking me to add the files to the chat!",
    "Image file: ", "PDF file: ",
)
CHUNK_REPLIES = frozenset({
    "Ok, I won't try and edit those files without asking first.", "Ok, I will use these files as references.",
    "Ok, I will use these images as references.", "Ok, any changes I propose will be to those files.",
    "Ok, I will use that as the true, current contents of the files.",
    "Ok, based on your requests I will suggest which files need to be edited and then stop and wait for your "
    "approval."})
# the main system prompts (every coder's ``main_system``), to know one sent as a user message
MAIN_SYSTEM = ("Act as an expert ", "You are an expert on the AI coding tool called Aider")
IMAGE = "[image]"
MIN_REMINDER = 40  # a shorter tail shared with the system prompt is no reminder (a word, a blank line)


@dataclass(frozen=True)
class Anatomy:
    """A request taken apart: its system prompt, its conversation (``done`` + ``cur``: role, text), the characters
    of what it re-sends with every request (chunks, examples, reminder), and what kind of request it is."""

    system: str
    history: tuple[tuple[str, str], ...]
    preamble: int
    side: str = ""  # "summarizer" / "commit message": a weak-model request, not the conversation


def text_of(lines: list[tuple[bool, str]]) -> str:
    """A logged message's content: its lines (``(prefixed, text)``), or a content list's text items read back
    (an image as :data:`IMAGE`; ``type`` and ``cache_control`` are no content)."""
    if not lines or not lines[0][0] or not lines[0][1].startswith(("type: text", "type: image_url")):
        return "\n".join(t for _, t in lines)
    parts: list[list[str]] = []
    item: list[str] | None = None  # the text item being read: its unprefixed lines continue it
    for prefixed, t in lines:
        if not prefixed:
            if item is not None:
                item.append(t)
            continue
        item = None
        if t.startswith("text: "):
            item = [t[len("text: "):]]
            parts.append(item)
        elif t.startswith(("Image_url URL: ", "image_url: ")):
            parts.append([IMAGE])
    return "\n".join("\n".join(p) for p in parts)


def is_summary(message: tuple[str, str]) -> bool:
    """aider's summary: a user message of ``summary_prefix`` and the summarizer's text."""
    role, text = message
    return role == "user" and text.startswith(SUMMARY_PREFIX) and bool(text[len(SUMMARY_PREFIX):].strip())


def _chunk(user: str, reply: str) -> bool:
    return user.startswith(CHUNK_USER) or reply in CHUNK_REPLIES


def side_request(system: str) -> str:
    """A weak-model request by its system prompt: the summarizer's or the commit-message writer's, else ""."""
    if system.startswith(SUMMARIZE_SYSTEM):
        return "summarizer"
    if system.startswith(COMMIT_SYSTEM):
        return "commit message"
    return ""


def anatomy(messages: list[tuple[str, str]]) -> Anatomy:
    """A request's messages (role, text) taken apart (see the module docstring)."""
    msgs = list(messages)
    system = ""
    if msgs and msgs[0][0] == "system":
        system = msgs.pop(0)[1]
    elif len(msgs) > 1 and msgs[0][0] == "user" and msgs[1] == ("assistant", "Ok.") and \
            msgs[0][1].lstrip().startswith(MAIN_SYSTEM):  # use_system_prompt=False: the system prompt, then "Ok."
        system = msgs.pop(0)[1]
        msgs.pop(0)
    if side_request(system):
        return Anatomy(system, tuple(msgs), 0, side_request(system))
    preamble = sum(len(c) for r, c in msgs if r == "system")  # the reminder (reminder == "sys")
    rest = [(r, c) for r, c in msgs if r != "system"]
    end = next((i for i, (r, c) in enumerate(rest) if r == "user" and c.startswith(EXAMPLES_END)), None)
    if end is not None:
        preamble += sum(len(c) for _, c in rest[: end + 2])
        rest = rest[end + 2:]
    history: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        role, content = rest[i]
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        if role == "user" and nxt is not None and nxt[0] == "assistant" and _chunk(content, nxt[1]):
            preamble += len(content) + len(nxt[1])
            i += 2
            continue
        history.append((role, content))
        i += 1
    if history and history[-1][0] == "user":  # reminder == "user": the system reminder on the last user message
        role, content = history[-1]
        cut = _reminder_at(content, system)
        if cut is not None:
            preamble += len(content) - cut
            history[-1] = (role, content[:cut])
    return Anatomy(system, tuple(history), preamble)


def _reminder_at(content: str, system: str) -> int | None:
    """Where the system reminder aider appended to the last user message starts (``"\\n\\n" + reminder``, the
    reminder being what the system prompt ends with), or None."""
    tail = system.rstrip()
    at = content.find("\n\n")
    while at != -1:
        reminder = content[at + 2:].rstrip()
        if len(reminder) >= MIN_REMINDER and tail.endswith(reminder):
            return at
        at = content.find("\n\n", at + 1)
    return None


def same(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """The same history message in two requests, allowing for what aider changes in place: the "^C
    KeyboardInterrupt" it appends to an interrupted prompt, the reasoning it strips from a reply before keeping
    it (the log's response still holds it): one text is the other plus a part joined at a line break."""
    if a == b:
        return True
    if a[0] != b[0] or not a[1] or not b[1]:
        return False
    short, long = sorted((a[1], b[1]), key=len)
    return (long.startswith(short) and long[len(short)] == "\n") or (long.endswith(short) and
                                                                      long[-len(short) - 1] == "\n")
