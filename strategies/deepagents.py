"""``compbench.strategies.deepagents`` — ``deepagents``: Deep Agents' summarization as ``create_deep_agent`` sets it up
(langchain-ai/deepagents @ 23b83ad, whose ``libs/deepagents/pyproject.toml`` says 0.7.8:
``libs/deepagents/deepagents/middleware/summarization.py`` and ``graph.py``): ``create_summarization_middleware(model,
backend)`` around LangChain's middleware.

- Defaults (``compute_summarization_defaults``): a model whose profile has ``max_input_tokens`` (compbench's
  window is that profile) gets ``trigger=("fraction", 0.85)``, ``keep=("fraction", 0.10)`` and tool-argument
  truncation at the same fractions; a model without one gets ``("tokens", 170000)``, ``("messages", 6)`` and
  truncation at / keeping 20 messages, and no input budget, which is read from the profile
  (``preset=no-profile``). The factory does not trim what the summarizer sees
  (``trim_tokens_to_summarize=None``). The default model is ``claude-sonnet-4-6`` (``ChatAnthropic``), so
  the approximate counter runs at 3.3 characters per token.
- Counting (``wrap_model_call``): the request's system message and tools are counted with the messages
  (compbench's hidden system tokens stand for the tools), usage-scaled as LangChain does. It summarizes on
  the trigger, or when the count is over the input budget ``int(max_input * 0.95) - max_tokens`` (the model's
  ``max_tokens`` defaults to its profile's max output), or when the provider rejects the call as too long.
- Before that, in messages older than the truncation ``keep``, the string arguments of ``write_file`` /
  ``edit_file`` calls longer than 2,000 characters become their first 20 characters +
  ``"...(argument truncated)"`` (a prune of the call's arguments; Deep Agents redoes it on each request
  copy, which only differs from a lasting prune in the call that also summarizes).
- The summary: LangChain's prompt with Deep Agents' media-reference block, over the whole span; the
  evicted messages are offloaded to ``/conversation_history/{session_id}.md`` and the summary message
  says so (the session id is random there, a fixed one of the same length here). The state is not
  rewritten (a ``_summarization_event`` records the cutoff) but the model sees the same list:
  ``[summary, *kept]``.
- ``FilesystemMiddleware`` (langchain-ai/deepagents @ 23b83ad, release 0.7.8: ``middleware/filesystem.py``
  ``wrap_tool_call``, ``middleware/_message_eviction.py``, ``backends/utils.py``) evicts a tool result longer
  than ``4 * tool_token_limit_before_evict`` characters (20,000 tokens: 80,000 characters; ``NUM_CHARS_PER_TOKEN``
  4) to ``/large_tool_results/<tool_call_id>`` before it joins the state: the model only ever sees
  ``TOO_LARGE_TOOL_MSG`` with a head-and-tail preview (5 + 5 numbered lines, each cut at 1,000 characters). Its
  own file tools are exempt (``ls``, ``glob``, ``grep``, ``read_file``, ``edit_file``, ``write_file``, ``delete``);
  ``read_file`` cuts its own output instead (``_truncate_paginated_read``): past 80,000 characters it ends at the
  last whole line that fits with ``READ_FILE_TRUNCATION_MSG``. Another agent's log names its tools otherwise: a
  call is given the role its tool plays (a file read such as Claude Code's ``Read``: ``read_file``'s cut, not an
  eviction; a listing or search, an edit or write: exempt; a shell command: ``execute``, evicted), by name (a
  heuristic on the name's last ``__`` part). A prune the first time the result is in the view, before the call
  that would send it; the summarization counts the evicted or cut text.
- Not modelled: clipping large trailing tool results to files when the summarized request is still over
  budget, the ``ContextOverflowError`` a still-oversized request raises, ``execute``'s capture-at-source on a
  sandbox backend (the default backend has no ``execute``), and the eviction of a user message over 50,000
  tokens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from compbench.errors import UsageError
from compbench.sdk import NEXT_QUESTION, Action, Prune, SessionView, ToolCall, ToolResult, Wake
from compbench.sdk.registry import param, strategy
from compbench.strategies.langchain import LangChainSummarization, parse_clauses, system_head
from compbench.strategies.langchain_messages import ANTHROPIC_CHARS_PER_TOKEN, LCMessage
from compbench.strategies.langchain_prompts import DEEPAGENTS_SUMMARY_PROMPT

PROFILE_TRIGGER = "fraction:0.85"  # compute_summarization_defaults, model with a profile
PROFILE_KEEP = "fraction:0.1"
NO_PROFILE_TRIGGER = "tokens:170000"  # compute_summarization_defaults, model without a profile
NO_PROFILE_KEEP = "messages:6"
NO_PROFILE_TRUNCATE = "messages:20"  # truncate_args_settings trigger and keep without a profile
MAX_ARG_LENGTH = 2000  # _DeepAgentsSummarizationMiddleware: max_length default
TRUNCATION_TEXT = "...(argument truncated)"  # truncation_text default
TRUNCATE_TOOLS = ("write_file", "edit_file")  # _truncate_args: only these tools' arguments
INPUT_BUDGET = 0.95  # _input_budget: 5% headroom below max_input_tokens, less the configured output
TOOL_TOKEN_LIMIT_BEFORE_EVICT = 20_000  # FilesystemMiddleware.__init__ default
NUM_CHARS_PER_TOKEN = 4  # filesystem.py
EXCLUDED_FROM_EVICTION = ("ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete")  # filesystem.py
# Other agents' tools by the role deepagents' own play (a heuristic on the name): reads get read_file's cut, the
# others read_file's siblings' exemption
READ_LIKE = frozenset({"read", "read_file", "view", "view_file", "readfile", "open", "read_many_files",
                       "get_file_contents"})
EXEMPT_LIKE = frozenset({"ls", "glob", "grep", "list", "list_dir", "list_directory", "list_files", "find", "rg",
                         "ripgrep", "search_files", "grep_search", "file_search", "edit", "edit_file", "write",
                         "write_file", "multiedit", "str_replace", "str_replace_editor", "create", "create_file",
                         "delete", "apply_patch", "notebookedit", "replace", "insert", "todowrite"})
READ_FILE_TRUNCATION_MSG = (  # filesystem.py, the read_file tool's own cut
    "\n\n[Output was truncated due to size limits. The file content is very large. Consider reformatting the file "
    "to make it easier to navigate. For example, if this is JSON, use execute(command='jq . {file_path}') to "
    "pretty-print it with line breaks. For other formats, you can use appropriate formatting tools to split long "
    "lines.]")
LARGE_TOOL_RESULTS = "/large_tool_results"  # f"{artifacts_root}/large_tool_results", artifacts_root "/"
TOO_LARGE_TOOL_MSG = (  # _message_eviction.py
    "Tool result too large, the result of this tool call {tool_call_id} was saved in the filesystem at this "
    "path: {file_path}\n\nYou can read the result from the filesystem by using the read_file tool, but make sure "
    "to only read part of the result at a time.\n\nYou can do this by specifying an offset and limit in the "
    "read_file tool call. For example, to read the first 100 lines, you can use the read_file tool with offset=0 "
    "and limit=100.\n\nHere is a preview showing the head and tail of the result (lines of the form `... [N "
    "lines truncated] ...` indicate omitted lines in the middle of the content):\n\n{content_sample}\n")
SESSION_ID = "session_" + "0" * 32  # stands for f"session_{uuid.uuid4().hex}"
HISTORY_PATH = f"/conversation_history/{SESSION_ID}.md"  # _get_history_path under the default StateBackend
SUMMARY_PREFIX = ("You are in the middle of a conversation that has been summarized.\n\nThe full conversation "
                  f"history has been saved to {HISTORY_PATH} should you need to refer back to it for details.\n\n"
                  "A condensed summary follows:\n\n<summary>\n")  # _build_new_messages_with_path
SUMMARY_SUFFIX = "\n</summary>"


@dataclass(frozen=True)
class DeepAgentsParams:
    """``create_summarization_middleware``'s settings for a model with a profile."""

    trigger: str = param(PROFILE_TRIGGER, "When to summarize: kind:value thresholds (tokens, messages, fraction), "
                         "& = all, | = any.")
    keep: str = param(PROFILE_KEEP, "What stays verbatim: messages:N, tokens:N or fraction:F of max input.")
    trim_tokens_to_summarize: int | None = param(None, "Newest tokens of the span the summarizer sees (none: all).")
    chars_per_token: float = param(ANTHROPIC_CHARS_PER_TOKEN, "The approximate counter's characters per token (the "
                                   "default model is an Anthropic chat model: 3.3).", lo=0.1)
    truncate_trigger: str = param(PROFILE_TRIGGER, "When write_file/edit_file arguments in old messages are "
                                  "truncated (one kind:value; empty: never).")
    truncate_keep: str = param(PROFILE_KEEP, "Newest messages whose arguments are never truncated.")
    max_arg_length: int = param(MAX_ARG_LENGTH, "Longer string arguments are truncated to 20 characters + the "
                                "truncation text.")
    input_budget: float = param(INPUT_BUDGET, "Also summarize above this share of max input, less max output "
                                "(0: no budget, a model without a profile).")
    summary_prompt: str = param("", "Summary prompt template with {messages} (empty: Deep Agents' default).")
    tool_token_limit_before_evict: int = param(TOOL_TOKEN_LIMIT_BEFORE_EVICT, "FilesystemMiddleware: a tool result "
                                               "over 4x this many characters is evicted to a file, the model "
                                               "sees a preview (0: never).")

    def __post_init__(self) -> None:
        parse_clauses(self.trigger)
        for what in ("keep", "truncate_keep") + (("truncate_trigger",) if self.truncate_trigger else ()):
            clauses = parse_clauses(getattr(self, what), what)
            if len(clauses) != 1 or len(clauses[0]) != 1:
                raise UsageError(f"deepagents: {what} takes one kind:value, got {getattr(self, what)!r}")
        if self.summary_prompt and "{messages}" not in self.summary_prompt:
            raise UsageError("summary_prompt must contain {messages}")


class DeepAgents(LangChainSummarization):
    name = "deepagents"
    prompt_template = DEEPAGENTS_SUMMARY_PROMPT

    def __init__(self, p: DeepAgentsParams) -> None:
        super().__init__(p)
        self.dp = p
        self.truncate = parse_clauses(p.truncate_trigger, "truncate_trigger")[0][0] if p.truncate_trigger else None
        (((self.truncate_kind, self.truncate_value),),) = parse_clauses(p.truncate_keep, "truncate_keep")
        self.truncated: set[tuple[str, int]] = set()
        self.evicted: dict[tuple[str, int], str] = {}  # tool results evicted to files: their replacement
        self.seen = 0  # view entries already looked at for eviction (a result is evicted as it arrives)
        self.revision = -1

    def wake(self, s: SessionView) -> Wake:
        """Its argument truncation and input budget act without a summary trigger: asked every question."""
        return NEXT_QUESTION

    def total(self, s: SessionView, system: list[LCMessage], messages: list[LCMessage]) -> int:
        """``_count_tokens``: the system message and tools with the messages, usage-scaled."""
        return self.count([*system, *messages], prefix=s.system_tokens)

    def before_step(self, s: SessionView) -> Sequence[Action]:
        head = system_head(s)
        actions: list[Action] = []
        evicted = self.evict(s)
        cut = tuple(x for x in evicted if not x[2].startswith("Tool result too large"))
        if len(cut) < len(evicted):
            actions.append(Prune(tuple(x for x in evicted if x not in cut), "large tool result evicted"))
        if cut:
            actions.append(Prune(cut, "read_file's own cut at 80,000 characters"))
        everything = [replace(m, content=self.evicted[(s.entries[m.entry].id, m.part)])
                      if m.type == "tool" and (s.entries[m.entry].id, m.part) in self.evicted else m
                      for m in self.messages(s, 0)]
        system = [m for m in everything if m.entry < head]
        messages = everything[len(system):]
        total = self.total(s, system, messages)
        targets, messages = self.truncate_args(s, messages, total)
        if targets:
            actions.append(Prune(tuple(targets), "truncate_args"))
            total = self.total(s, system, messages)
        over_budget = self.dp.input_budget > 0 and total > max(
            0, int(s.limits.input_limit * self.dp.input_budget) - s.limits.max_output)
        if self.should_summarize(s, messages, total) or over_budget or s.context_tokens > s.limits.input_limit:
            act = self.summarize(s, head, messages, prefix=SUMMARY_PREFIX, suffix=SUMMARY_SUFFIX)
            if act is not None:
                actions.append(act)
        return actions

    def evict(self, s: SessionView) -> list[tuple[str, int, str]]:
        """``FilesystemMiddleware.wrap_tool_call``: results of the view's new tool messages over the limit."""
        limit = NUM_CHARS_PER_TOKEN * self.dp.tool_token_limit_before_evict
        out: list[tuple[str, int, str]] = []
        if not limit:
            return out
        if s.revision != self.revision:  # the view was rebuilt: look at it whole (evicted results stay so)
            self.seen, self.revision = 0, s.revision
        paths: dict[str, ToolCall] | None = None  # the view's calls, read once a result is evicted
        for e in s.entries[self.seen:]:
            for j, p in enumerate(e.message.parts):
                if (isinstance(p, ToolResult) and len(p.output) >= limit and j not in e.pruned
                        and (e.id, j) not in self.evicted):
                    role = tool_role(p.name)  # eviction past the limit; read_file's cut from it
                    if role == "exempt" or (role == "evict" and len(p.output) == limit):
                        continue
                    if paths is None:
                        paths = {c.id: c for x in s.entries for c in x.message.parts if isinstance(c, ToolCall)}
                    call = paths.get(p.call_id)
                    text = (read_file_cut(p.output, limit, file_path(call)) if role == "read"
                            else evicted_message(p.call_id, p.output))
                    self.evicted[(e.id, j)] = text
                    out.append((e.id, j, text))
        self.seen = len(s.entries)
        return out

    def truncate_args(self, s: SessionView, messages: list[LCMessage],
                      total: int) -> tuple[list[tuple[str, int, str]], list[LCMessage]]:
        """``_truncate_args``: long write_file/edit_file arguments before the truncation cutoff."""
        if self.truncate is None:
            return [], messages
        kind, value = self.truncate
        limit = len(messages) if kind == "messages" else total
        if limit < (value if kind == "messages" else self.threshold(s, kind, value)):
            return [], messages
        cutoff = self.truncate_cutoff(s, messages)
        targets: list[tuple[str, int, str]] = []
        out = list(messages)
        for i in range(min(cutoff, len(messages))):
            m = messages[i]
            if m.type != "ai" or not m.tool_calls:
                continue
            calls = tuple(self.truncate_call(c) if c.get("name") in TRUNCATE_TOOLS else c for c in m.tool_calls)
            if calls == m.tool_calls:
                continue
            out[i] = replace(m, tool_calls=calls)
            e = s.entries[m.entry]
            for new, old in zip(calls, m.tool_calls, strict=True):
                if new is not old:
                    j = next(j for j, p in enumerate(e.message.parts) if isinstance(p, ToolCall) and p.id == old["id"])
                    if (e.id, j) not in self.truncated:
                        self.truncated.add((e.id, j))
                        targets.append((e.id, j, json.dumps(new["args"], ensure_ascii=False)))
        return targets, out

    def truncate_call(self, call: dict[str, object]) -> dict[str, object]:
        args = call.get("args")
        if not isinstance(args, dict):
            return call
        new = {k: v[:20] + TRUNCATION_TEXT if isinstance(v, str) and len(v) > self.dp.max_arg_length else v
               for k, v in args.items()}
        return {**call, "args": new} if new != args else call

    def truncate_cutoff(self, s: SessionView, messages: Sequence[LCMessage]) -> int:
        """``_determine_truncate_cutoff_index``: messages before it may be truncated."""
        if self.truncate_kind == "messages":
            keep = int(self.truncate_value)
            return len(messages) if len(messages) <= keep else len(messages) - keep
        target = max(1, self.threshold(s, self.truncate_kind, self.truncate_value))
        kept = 0
        for i in range(len(messages) - 1, -1, -1):
            tokens = self.count([messages[i]], scaled=False)
            if kept + tokens > target:
                return i + 1
            kept += tokens
        return 0


def tool_role(name: str) -> str:
    """What deepagents would do with this tool's large result: "read" (read_file's own cut), "exempt" (its other
    file tools), "evict" (anything else, ``execute`` included)."""
    base = name.rsplit("__", 1)[-1].lower()
    if base in READ_LIKE:
        return "read"
    return "exempt" if base in EXCLUDED_FROM_EVICTION or base in EXEMPT_LIKE else "evict"


def file_path(call: ToolCall | None) -> str:
    if call is None:
        return ""
    try:
        args = json.loads(call.args)
    except ValueError:
        return ""
    found = next((args[k] for k in ("file_path", "path", "filePath") if isinstance(args, dict) and k in args), "")
    return str(found)


def read_file_cut(text: str, limit: int, path: str) -> str:
    """``_truncate_paginated_read`` of a read over ``limit`` characters: the last whole line that fits with the
    truncation message, or the characters that fit when no line does."""
    msg = READ_FILE_TRUNCATION_MSG.format(file_path=path)
    if len(text) < limit:
        return text
    end = text.rfind("\n", 0, max(0, limit - len(msg)) + 1)
    return (text[:end] if end > 0 else text[:max(0, limit - len(msg))]) + msg


def _numbered(lines: list[str], start: int) -> str:
    """``format_content_with_line_numbers`` of preview lines (each at most 1,000 characters: one row each)."""
    width = max((len(str(start + i)) for i in range(len(lines))), default=0)
    return "\n".join(f"{start + i:>{width}}  {line}" for i, line in enumerate(lines))


def content_preview(text: str, head: int = 5, tail: int = 5) -> str:
    """``_create_content_preview``: the first and last lines, numbered, each cut at 1,000 characters."""
    lines = text.splitlines()
    if len(lines) <= head + tail:
        return _numbered([x[:1000] for x in lines], 1)
    return (_numbered([x[:1000] for x in lines[:head]], 1) + f"\n... [{len(lines) - head - tail} lines truncated] ...\n"
            + _numbered([x[:1000] for x in lines[-tail:]], len(lines) - tail + 1))


def evicted_message(call_id: str, text: str) -> str:
    """What the model sees of an evicted result (``_offload_tool_message_content``)."""
    safe = call_id.replace(".", "_").replace("/", "_").replace("\\", "_") if call_id else "unknown"
    return TOO_LARGE_TOOL_MSG.format(tool_call_id=call_id, file_path=f"{LARGE_TOOL_RESULTS}/{safe}",
                                     content_sample=content_preview(text))


@strategy("deepagents", params=DeepAgentsParams,
          upstream="langchain-ai/deepagents create_summarization_middleware (deepagents 0.7.8 @ 23b83ad)",
          summary="at 85% of max input (or over 95% less output) summarize all but the newest 10% of it",
          presets={"no-profile": {"trigger": NO_PROFILE_TRIGGER, "keep": NO_PROFILE_KEEP,
                                  "truncate_trigger": NO_PROFILE_TRUNCATE, "truncate_keep": NO_PROFILE_TRUNCATE,
                                  "input_budget": 0.0}})
def deepagents(p: DeepAgentsParams) -> DeepAgents:
    return DeepAgents(p)
