"""``compbench.data.formats.cline`` — Task folders of Cline, Roo Code and Kilo Code
(``<globalStorage>/<extension>/tasks/<taskId>/``), one transcript each.

A task folder holds ``api_conversation_history.json`` (what the model was sent: :mod:`.cline_api`),
``ui_messages.json`` (the requests' token usage and the context-management records: :mod:`.cline_ui`),
``task_metadata.json`` and the tool's other state. The folder is read through its API history; given alone,
``api_conversation_history.json`` is read with the ``ui_messages.json`` beside it when there is one (without
it: no usage and no truncation records, said in a warning). A ``ui_messages.json`` given alone is refused: it
is the UI's record, not the conversation. Which tool wrote the task is decided by :func:`.cline_ui.tool_of`
(the transcript's ``source``: ``cline``, ``roo-code`` or ``kilo-code``); the compactions it recorded by
:mod:`.cline_events`. Writers and commits: see those modules.

Usage joins a request's ``api_req_started`` to the assistant message that answered it: the last request
said before the message was stored (both carry ``ts``), else Cline's ``conversationHistoryIndex`` (the
answer is two messages on), else their order (said in a warning). Without ui messages, Cline's own
``metrics`` on assistant messages (9ee618111d58) give in + out, the cache split unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compbench.data.formats import cline_api, cline_ui, xml_tools
from compbench.data.formats.cline_api import Converted
from compbench.data.formats.cline_events import assemble, find
from compbench.data.formats.cline_ui import Ui
from compbench.data.formats.jsonio import load_json
from compbench.data.transcript import Transcript, Usage
from compbench.errors import TranscriptError

NAME = "cline"
HISTORY_FILES = ("api_conversation_history.json", "claude_messages.json")  # claude_messages.json: the old name
UI_FILE = "ui_messages.json"
METADATA_FILE = "task_metadata.json"
_MODEL_TAG = re.compile(r"<model>([^<\n]{1,200})</model>")


def sniff(head: str, first: dict[str, Any] | None) -> bool:
    """A JSON line is never one of these files: they are whole documents."""
    return False


def sniff_document(doc: Any) -> bool:
    """An API history that fits as a whole, or a task's ui messages (claimed to be refused clearly)."""
    return cline_api.fits(doc) or cline_ui.fits(doc)


def read(path: Path) -> Iterator[Transcript]:
    doc = load_json(path)
    if cline_ui.fits(doc) and not cline_api.fits(doc):
        raise TranscriptError(path, None, "a task's api_conversation_history.json (this is its ui_messages.json, the "
                                          "UI's record: import the task folder or its API history)")
    if not cline_api.fits(doc):
        raise TranscriptError(path, None, cline_api.misfit(doc))
    yield _transcript(path, doc)


def _load_beside(path: Path, name: str, fits: Any, warnings: list[str]) -> Any:
    """A companion file of the task folder, or None (missing, or unreadable: a warning, not a failure)."""
    other = path.parent / name
    if path.name not in HISTORY_FILES or not other.is_file():
        return None
    try:
        doc = load_json(other)
    except TranscriptError as e:
        warnings.append(f"{name} beside it is unreadable ({e.expected}, line {e.line}): ignored")
        return None
    if fits is not None and not fits(doc):
        warnings.append(f"{name} beside it is not a list of ui messages: ignored")
        return None
    return doc


def _join(conv: Converted, doc: Sequence[Any], ui: Ui) -> tuple[dict[int, int], str]:
    """Each request (its ui index) -> the API index of the assistant message answering it, and how."""
    assistants = sorted(conv.assistant_of)
    asked: dict[int, int] = {}
    ts = {i: doc[i].get("ts") for i in assistants}
    if assistants and all(isinstance(t, (int, float)) for t in ts.values()) and all(
            r.ts is not None for r in ui.requests):
        prev = float("-inf")
        for i in assistants:
            t = float(ts[i])
            between = [r for r in ui.requests if r.ts is not None and prev < r.ts < t]
            with_usage = [r for r in between if ui.usage(r, "cline") is not None]
            if between:
                asked[(with_usage or between)[-1].ui] = i
            prev = t
        return asked, "by time"
    if ui.requests and all(r.history_index is not None for r in ui.requests):
        for r in ui.requests:
            if r.history_index is not None and r.history_index + 2 in conv.assistant_of:
                asked[r.ui] = r.history_index + 2
        return asked, "by conversationHistoryIndex"
    done = [r for r in ui.requests if ui.usage(r, "cline") is not None]
    asked.update({r.ui: i for r, i in zip(done, assistants, strict=False)})
    return asked, "by order (no timestamps or history indices)"


def _metrics_usage(raw: Any) -> Usage | None:
    """Cline's ``metrics.tokens {prompt, completion, cached}`` on an assistant message (cache split unknown)."""
    tokens = raw.get("metrics", {}).get("tokens") if isinstance(raw.get("metrics"), dict) else None
    if not isinstance(tokens, dict):
        return None
    n = {k: v for k, v in tokens.items() if isinstance(v, int) and not isinstance(v, bool)}
    if "prompt" not in n:
        return None
    return Usage(input=n["prompt"] + n.get("cached", 0), output=n.get("completion", 0))


def _model(conv: Converted, ui: Ui | None, metadata: Any) -> str:
    if ui is not None and ui.model:
        return ui.model
    for m in conv.messages:
        if isinstance(m.meta.get("model"), str):
            return str(m.meta["model"])
    usage = metadata.get("model_usage") if isinstance(metadata, dict) else None
    if isinstance(usage, list):
        ids = [u.get("model_id") for u in usage if isinstance(u, dict) and isinstance(u.get("model_id"), str)]
        if ids:
            return str(ids[-1])
    for m in conv.messages:  # Roo Code / Kilo Code: the mode section of the environment details
        found = _MODEL_TAG.search(m.text) if m.role == "user" else None
        if found:
            return found.group(1).strip()
    return ""


def _transcript(path: Path, doc: list[Any]) -> Transcript:
    warnings: list[str] = []
    doc, xml = xml_tools.to_native(doc)
    if xml.calls or xml.results:
        warnings.append(xml_tools.describe(xml))
    conv = cline_api.convert(doc)
    raw_ui = _load_beside(path, UI_FILE, cline_ui.fits, warnings)
    metadata = _load_beside(path, METADATA_FILE, None, warnings)
    ui = cline_ui.parse(raw_ui) if raw_ui is not None else None
    tool, evidence = cline_ui.tool_of(ui, doc, str(path.resolve().parent))
    meta: dict[str, Any] = {"path": str(path), "tool_evidence": evidence, "ui_messages": ui is not None}
    if xml.calls or xml.results:
        meta["tool_protocol"] = "xml"
    asked: dict[int, int] = {}
    if ui is not None:
        asked, how = _join(conv, doc, ui)
        meta.update({"requests": len(ui.requests), "usage_joined": how})
        if how.startswith("by order"):
            warnings.append(f"requests joined to answers {how}")
        for r in ui.requests:
            i = asked.get(r.ui)
            u = ui.usage(r, tool) if i is not None else None
            if i is not None and u is not None:
                pos = conv.assistant_of[i]
                m = conv.messages[pos]
                extra = {"cost": r.info["cost"]} if isinstance(r.info.get("cost"), (int, float)) else {}
                conv.messages[pos] = replace(m, usage=u, meta={**m.meta, **extra})
    else:
        for i, pos in conv.assistant_of.items():
            u = _metrics_usage(doc[i])
            if u is not None:
                conv.messages[pos] = replace(conv.messages[pos], usage=u)
        where = "beside it" if path.name in HISTORY_FILES else f"(the file is not named {HISTORY_FILES[0]})"
        warnings.append(f"no {UI_FILE} {where}: no per-request usage and no truncation records")
    found = find(doc, conv, ui, tool, asked)
    warnings += found.warnings
    messages, records = assemble(conv, found)
    model = _model(conv, ui, metadata)
    if model:
        meta["model"] = model
    for k, v in sorted(conv.unknown_blocks.items()):
        warnings.append(f"skipped {v} content blocks of unknown type {k!r}")
    if conv.orphans:
        warnings.append(f"{conv.orphans} tool results have no matching tool call (kept, flagged orphan)")
    tid = path.parent.name if path.name in HISTORY_FILES else path.stem
    meta["task_id"] = tid
    return Transcript(tid, tool, tuple(messages), meta, tuple(records), tuple(warnings))
