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
