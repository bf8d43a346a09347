"""An aider chat history and a request of its --llm-history-file log, built small: shared by the aider importer
tests and the import of a whole project folder."""

from __future__ import annotations

HISTORY = """
# aider chat started at 2025-05-01 10:00:00

> /usr/bin/aider --model sonnet  
> Aider v0.82.2  
> Main model: anthropic/claude-3-7-sonnet-20250219 with diff edit format, infinite output  
> Weak model: anthropic/claude-3-5-haiku-20241022  

#### /add app.py  
> Added app.py to the chat  

#### make a flask app  
#### with a /hello endpoint  

I'll create it.

# A heading in the reply

app.py
```python
<<<<<<< SEARCH
=======
print("hi")
>>>>>>> REPLACE
```

> Applied edit to app.py  
> Commit 414c394 feat: hello  
> Starting to summarize chat history.  

#### /ask why?  

Because you asked.

#### /clear  

#### <blank>  

Hello?

# aider chat started at 2025-05-02 09:00:00

> Aider v0.86.1  

#### hello again  

Hi!
"""  # noqa: W291 - aider ends its lines with a Markdown line break


REQUEST = """TO LLM 2025-05-01T10:00:05
-------
SYSTEM Act as an expert software developer.
SYSTEM Always use best practices.
-------
USER Here are summaries of some files present in my git repository.
USER app.py:
-------
ASSISTANT Ok, I won't try and edit those files without asking first.
-------
USER I have *added these files to the chat* so you can go ahead and edit them.
USER 
USER app.py
-------
ASSISTANT Ok, any changes I propose will be to those files.
{history}-------
SYSTEM # Reminder: use SEARCH/REPLACE
LLM RESPONSE 2025-05-01T10:00:09
{reply}"""  # noqa: W291 - format_content writes an empty line as "USER "


def request(*history: tuple[str, str], reply: str, time: str = "10:00:05", system: str = "") -> str:
    """One request and its reply, as ``--llm-history-file`` logs it (v0.72 on); ``system``: another system prompt
    (another chat mode's coder)."""
    body = "".join(f"-------\n{role.upper()} " + f"\n{role.upper()} ".join(text.split("\n")) + "\n"
                   for role, text in history)
    out = REQUEST.format(history=body, reply="".join(f"ASSISTANT {line}\n" for line in reply.split("\n")))
    if system:
        out = out.replace("SYSTEM Act as an expert software developer.\nSYSTEM Always use best practices.",
                          "\n".join(f"SYSTEM {line}" for line in system.split("\n")))
    return out.replace("10:00:05", time)


NOTE = "I committed the changes with git hash {k}abc1234 & commit msg: feat: step {k}"  # move_back_cur_messages


def summarized_log(paste: int = 4_000) -> str:
    """Seven requests of one aider session with two summarizations, as aider sends them: each request's history
    is the previous one's and its reply, then aider's edit note and "Ok.", then the new prompt; a summary keeps
    the end of the history (``summarize_real``'s tail: the last prompt, its edited reply, the note, "Ok.") and
    the next requests carry the summary and that tail on. The first prompt holds a long paste (``paste``
    characters): what a summary replaces is large, what it keeps small."""
    def turn(k: int) -> list[tuple[str, str]]:
        prompt = f"step {k}: change app.py" + (" (log pasted below)\n" + "trace line\n" * (paste // 11) if k == 1
                                               else "")
        return [("user", prompt), ("assistant", f"app.py\n<<<<<<< SEARCH\n=======\nstep {k}\n>>>>>>> REPLACE"),
                ("user", NOTE.format(k=k)), ("assistant", "Ok.")]

    def summary(n: int) -> tuple[str, str]:
        return "user", f"I spoke to you previously about a number of things.\nI asked you for steps 1 to {n}."

    out, done = "", []
    for k in range(1, 8):
        if k == 4:  # summarized after step 3's edit: steps 1-2 summarized, step 3 kept
            done = [summary(2), *turn(3)]
        if k == 6:  # after step 5's: the first summary and steps 3-4 summarized, step 5 kept
            done = [summary(4), *turn(5)]
        prompt, reply = turn(k)[:2]
        out += request(*done, prompt, reply=reply[1], time=f"10:{k:02d}:00")
        done += turn(k)
    return out


ASK_SYSTEM = "Act as an expert code analyst.\nAnswer questions about the supplied code."  # the ask coder's
CODE_SYSTEM = "Act as an expert software developer.\nAlways use best practices."
ASK_REPO = ("I am working with you on code in a git repository.\nHere are summaries of some files present in my git "
            "repo.")
ASK_FILES = ("I have *added these files to the chat* so you see all of their contents.\n*Trust this message as the "
             "true contents of the files!*\n")  # ask_prompts.files_content_prefix
ASK_FILES_REPLY = "Ok, I will use that as the true, current contents of the files."
CODE_FILES = "I have *added these files to the chat* so you can go ahead and edit them.\n"
CODE_FILES_REPLY = "Ok, any changes I propose will be to those files."


def file_listing(chars: int) -> str:
    """A file's contents as the files chunk holds them, about ``chars`` long."""
    return "app.py\n````\n" + "".join(f"def f{i}(): return {i}\n" for i in range(chars // 22)) + "````\n"


def chunked(done: list[tuple[str, str]], cur: list[tuple[str, str]], *, reply: str, time: str, ask: bool = False,
            files: str = "", old: bool = False) -> str:
    """A request laid out as ``ChatChunks.all_messages`` orders it: system, repo map, ``done``, the files in the
    chat (``files``: their listing), ``cur``; in the ask coder's wordings with ``ask``; ``old``: as aider before
    v0.72 logged it (an empty line before each message, no ``-------``)."""
    repo = [("user", (ASK_REPO if ask else "Here are summaries of some files present in my git repository.")
             + "\napp.py:"), ("assistant", "Ok, I won't try and edit those files without asking first.")]
    chunk = [("user", (ASK_FILES if ask else CODE_FILES) + files),
             ("assistant", ASK_FILES_REPLY if ask else CODE_FILES_REPLY)] if files else []
    messages = [("system", ASK_SYSTEM if ask else CODE_SYSTEM), *repo, *done, *chunk, *cur]
    out = f"TO LLM 2025-05-01T{time}\n"
    for role, text in messages:
        out += ("\n" if old else "-------\n") + "\n".join(f"{role.upper()} {line}" for line in text.split("\n")) + "\n"
    return out + f"LLM RESPONSE 2025-05-01T{time}\n" + "".join(f"ASSISTANT {line}\n" for line in reply.split("\n"))


def mode_switch_log(files: int = 40_000, old: bool = False) -> str:
    """Three code-mode requests with a file in the chat and edits, then ``/chat-mode ask`` (``summarize_all``: the
    history becomes one summary, no "Ok."), two ask-mode requests (the files chunk in the ask coder's wording,
    ``files`` characters of them), and ``/chat-mode code`` again (the summary summarized once more, the ask
    exchange carried over as ``cur``)."""
    listing = file_listing(files)
    s1 = "I spoke to you previously about a number of things.\nI asked you for steps 1 to 3 in app.py."
    s2 = "I spoke to you previously about a number of things.\nSteps 1 to 3 in app.py."
    done: list[tuple[str, str]] = []
    out = ""
    for k in range(1, 4):
        prompt = f"step {k}: change app.py " + "please " * 40
        edit = f"app.py\n<<<<<<< SEARCH\n=======\nstep {k}\n>>>>>>> REPLACE"
        out += chunked(done, [("user", prompt)], reply=edit, time=f"10:0{k}:00", files=listing, old=old)
        done += [("user", prompt), ("assistant", edit), ("user", NOTE.format(k=k)), ("assistant", "Ok.")]
    ask = [("user", "why does f1 return 1?")]
    out += chunked([("user", s1)], ask, reply="Because of step 1.", time="10:05:00", ask=True, files=listing, old=old)
    ask += [("assistant", "Because of step 1."), ("user", "and f2?")]
    out += chunked([("user", s1)], ask, reply="Step 2.", time="10:06:00", ask=True, files=listing, old=old)
    ask += [("assistant", "Step 2."), ("user", "now rename f2")]
    out += chunked([("user", s2)], ask, reply="app.py\n<<<<<<< SEARCH\nf2\n=======\ng2\n>>>>>>> REPLACE",
                   time="10:07:00", files=listing, old=old)
    return out
