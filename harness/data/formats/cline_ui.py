"""``compbench.data.formats.cline_ui`` — A task's ``ui_messages.json`` (``ClineMessage[]``): the requests and
their token usage, the context-management events, and which tool wrote it.

Writers followed: cline/cline 9ee618111d58 (``src/shared/ExtensionMessage.ts``; ``message-state.ts``
``addToClineMessages`` stamps every message with ``conversationHistoryIndex`` and the
``conversationHistoryDeletedRange`` in effect; ``api_req_started``'s ``text`` is ``ClineApiReqInfo`` JSON
``{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost, cancelReason}``, said before the request's
user message joins the history) and 21cb8d25 (the SDK path's ``say:"compaction"`` ``ClineCompactionInfo``);
RooCodeInc/Roo-Code cb836567180a (``packages/types/src/message.ts``: ``say:"condense_context"`` with
``contextCondense {cost, prevContextTokens, newContextTokens, summary, condenseId}``,
``say:"sliding_window_truncation"`` with ``contextTruncation {truncationId, messagesRemoved,
prevContextTokens, newContextTokens}``; ``api_req_started`` carries ``apiProtocol``); Kilo-Org/kilocode-legacy
56b73d3bdad4 (the same, and ``metadata.kiloCode`` on messages).

Token usage: Cline counts a request as ``tokensIn + tokensOut + cacheWrites + cacheReads`` (tokensIn
without the cache, Anthropic's convention, whatever the provider); Roo Code's tokensIn holds the cache
tokens since 416fa5727e (v3.29.5), before it only for the OpenAI protocol. A Roo Code / Kilo Code task
whose requests ever show ``tokensIn < cacheReads + cacheWrites`` is read in the older convention (a
heuristic, per task: a cached call of the older convention shows it, the newer one cannot).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compbench.data.formats.xml_tools import KILO_ONLY, ROO_TOOLS, kilo_named
from compbench.data.transcript import Usage

TOOLS = ("cline", "roo-code", "kilo-code")
ROO_SAYS = frozenset({"condense_context", "condense_context_error", "sliding_window_truncation", "checkpoint_saved",
                      "api_req_retry_delayed", "api_req_rate_limit_wait", "rooignore_error", "subtask_result",
                      "codebase_search_result", "user_edit_todos", "too_many_tools_warning"})
CLINE_SAYS = frozenset({"checkpoint_created", "deleted_api_reqs", "task_progress", "clineignore_error", "compaction",
                        "hook_status", "hook_output_stream", "subagent_usage", "conditional_rules_applied",
                        "load_mcp_documentation"})
CLINE_KEYS = frozenset({"conversationHistoryDeletedRange", "modelInfo", "lastCheckpointHash", "isCheckpointCheckedOut"})


@dataclass(frozen=True)
class Request:
    """One ``api_req_started``: its place among the ui messages, time, API history index, usage and range."""

    ui: int
    ts: float | None
    history_index: int | None
    info: dict[str, Any]
    deleted_range: tuple[int, int] | None


@dataclass(frozen=True)
class Event:
    """A context-management record of the ui messages (its ``kind`` is the writer's ``say``/``ask``)."""

    ui: int
    ts: float | None
    kind: str
    data: dict[str, Any]
    after_request: bool  # the previous ui message is an api_req_started: inside a request (automatic)


@dataclass
class Ui:
    messages: list[dict[str, Any]]
    requests: list[Request] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    ranges: list[tuple[int, tuple[int, int] | None]] = field(default_factory=list)  # (ui index, range) per message
    model: str = ""
    anthropic_inputs: bool = False  # Roo Code's older convention: tokensIn excludes the cache

    def usage(self, r: Request, tool: str) -> Usage | None:
        """The request's usage in compbench's convention (input includes the cache), or None if not recorded."""
        i = r.info
        if not any(isinstance(i.get(k), (int, float)) for k in ("tokensIn", "tokensOut")):
            return None
        n = {k: int(i[k]) if isinstance(i.get(k), (int, float)) and not isinstance(i.get(k), bool) else 0
             for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")}
        cache = n["cacheReads"] + n["cacheWrites"]
        older = tool == "cline" or (self.anthropic_inputs and i.get("apiProtocol") != "openai")
        total = n["tokensIn"] + cache if older else max(n["tokensIn"], cache)
        return Usage(input=total, output=n["tokensOut"], cache_read=n["cacheReads"], cache_write=n["cacheWrites"])


def fits(doc: Any) -> bool:
    """A whole ``ClineMessage[]``: every element has a numeric ``ts`` and ``type`` say/ask with its string kind."""
    return isinstance(doc, list) and bool(doc) and all(
        isinstance(m, dict) and isinstance(m.get("ts"), (int, float)) and m.get("type") in ("say", "ask")
        and isinstance(m.get(m["type"]), str) for m in doc)


def _info(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        return {}
    try:
        obj = json.loads(text)
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _range(m: dict[str, Any]) -> tuple[int, int] | None:
    r = m.get("conversationHistoryDeletedRange")
    if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in r):
        return (r[0], r[1])
    return None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def parse(doc: Sequence[dict[str, Any]]) -> Ui:
    """The requests and events of a document that :func:`fits`."""
    ui = Ui(list(doc))
    prev_kind = ""
    for k, m in enumerate(doc):
        kind = str(m.get(m["type"]))
        rng = _range(m)
        ui.ranges.append((k, rng))
        if isinstance(m.get("modelInfo"), dict) and isinstance(m["modelInfo"].get("modelId"), str):
            ui.model = ui.model or m["modelInfo"]["modelId"]
        if m["type"] == "say" and kind == "api_req_started":
            hi = m.get("conversationHistoryIndex")
            info = _info(m.get("text"))
            ui.requests.append(Request(k, _num(m.get("ts")), hi if isinstance(hi, int) else None, info, rng))
            ins = [_num(info.get(x)) or 0 for x in ("tokensIn", "cacheReads", "cacheWrites")]
            if info.get("apiProtocol") != "openai" and ins[1] + ins[2] > ins[0]:
                ui.anthropic_inputs = True
        elif kind in ("condense_context", "sliding_window_truncation", "condense_context_error", "compaction",
                      "condense", "summarize_task") or (kind == "tool" and _info(m.get("text")).get("tool")
                                                        == "summarizeTask"):
            data = m.get("contextCondense") or m.get("contextTruncation") or _info(m.get("text"))
            if kind in ("condense", "summarize_task", "condense_context_error"):
                data = {"text": m.get("text")} if isinstance(m.get("text"), str) else {}
            if not m.get("partial"):
                ui.events.append(Event(k, _num(m.get("ts")), kind, data if isinstance(data, dict) else {},
                                       prev_kind == "api_req_started"))
        if not m.get("partial"):
            prev_kind = kind
    return ui


_STORAGE = re.compile(r"globalStorage[/\\]([^/\\]+)", re.I)  # an editor's extension storage: its extension's id
_KILOCODE_DIR = re.compile(r"(?:^|[\s/'\"(])\.kilocode/", re.M)


def _kilo_fork(api: Sequence[Any], text: str) -> tuple[str, str] | None:
    """Kilo Code's marks in a Roo Code-family task: a tool only Kilo Code has, called; its ``.kilocode/`` project
    folder in the first prompts. None without them."""
    called = {b.get("name") for m in api if isinstance(m, dict) and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
    own = sorted(str(n) for n in called & (KILO_ONLY - ROO_TOOLS))
    if own:
        return "kilo-code", f"Kilo Code's own tool{'s' * (len(own) != 1)} ({', '.join(own)}) in a Roo Code-family " \
                            "task: a Kilo Code fork"
    if _KILOCODE_DIR.search(text):
        return "kilo-code", "Kilo Code's .kilocode/ project folder in a Roo Code-family task: a Kilo Code fork"
    return None


def tool_of(ui: Ui | None, api: Sequence[Any], home: str) -> tuple[str, str]:
    """Which tool wrote the task, and on what evidence: the VS Code extension folder the task sits in (a Kilo Code
    fork's, whose id names Kilo), else what only one of them writes (Kilo Code's ``metadata.kiloCode``; Roo
    Code's says and API keys, within which Kilo Code's own tools or ``.kilocode/`` folder say a Kilo Code fork;
    Cline's)."""
    for ext, tool in (("saoudrizwan.claude-dev", "cline"), ("rooveterinaryinc.roo-cline", "roo-code"),
                      ("kilocode.kilo-code", "kilo-code")):
        if ext in home.lower():
            return tool, f"in {ext}'s storage"
    storage = _STORAGE.search(home)
    if storage and kilo_named(storage.group(1)):
        return "kilo-code", f"in {storage.group(1)}'s storage: a Kilo Code fork's"
    msgs = ui.messages if ui is not None else []
    if any(isinstance(m.get("metadata"), dict) and "kiloCode" in m["metadata"] for m in msgs):
        return "kilo-code", "Kilo Code's metadata.kiloCode on ui messages"
    text = "\n".join(b.get("text", "") for m in api[:8] if isinstance(m, dict) and m.get("role") == "user"
                     for b in (m["content"] if isinstance(m.get("content"), list) else [{"text": m.get("content")}])
                     if isinstance(b, dict) and isinstance(b.get("text"), str))
    roo_keys = ("isSummary", "condenseParent", "truncationParent", "isTruncationMarker")
    if any(isinstance(m.get("say"), str) and m["say"] in ROO_SAYS for m in msgs) or any(
            isinstance(m, dict) and any(k in m for k in roo_keys) for m in api) or any(
            m.get("say") == "api_req_started" and "apiProtocol" in _info(m.get("text")) for m in msgs):
        return _kilo_fork(api, text) or ("roo-code", "Roo Code's records (its say types, API keys or apiProtocol)")
    if any((isinstance(m.get("say"), str) and m["say"] in CLINE_SAYS) or CLINE_KEYS & m.keys() for m in msgs) or any(
            isinstance(m, dict) and "modelInfo" in m for m in api):
        return "cline", "Cline's records (its say types or message keys)"
    if re.search(r"# Current Mode\n<slug>", text):
        return _kilo_fork(api, text) or (
            "roo-code", "Roo Code's mode section (<slug>) in the environment details (Kilo Code writes the same)")
    if re.search(r"# Current Mode\n(?:ACT|PLAN) MODE", text):
        return "cline", "Cline's mode line in the environment details"
    return "cline", "no tool-specific record: Cline assumed"
